//! Benchmark: shapes × dtypes × backends, median of timed runs, GFLOP/s, ratio to a
//! reference table, machine-readable JSON.
//!
//! ```text
//! cargo run --release --example bench -- [--shapes 1024x1024x1024,64x4096x4096] [--dtypes f32,f16,bf16]
//!     [--backends simt,coopmat,wgsl-coopmat] [--runs 10] [--reference ../shared/anchors/h100-cublas.txt] [--json out.json]
//!     [--wall-clock] [--cpu | --no-cpu] [--b-layouts row,column,packed] [--no-tune]
//! ```
//! Each case's shape class is tuned first ([`Context::tune`], up to 60 s per class;
//! remembered in the disk cache), unless `--no-tune` (or `COOPGEMM_AUTOTUNE=0`) leaves the
//! backends' heuristic choices.
//! Times each case with GPU timestamps where the adapter has them
//! ([`Context::time_on_gpu`]: stamps written right before and after every dispatch of the
//! GEMM, inside its own pass or command buffer): the median over at least `--runs` GEMMs
//! run back to back (as many as take about 0.2 s, at most 1000). Elsewhere, or with
//! `--wall-clock`, each of `--runs` samples is the wall-clock time of at least 5 GEMMs (as
//! many as take about 20 ms, at most 200) submitted back to back until they complete,
//! divided by their number: short GEMMs measured 5 at a time varied up to 3x between runs
//! on the H100. Each record says which timing it used; wall-clock records also give
//! `host_submit_ms`, the median time one `Context::run` held the calling thread. Progress
//! goes to stderr, the table to stdout.
//!
//! `--cpu` (the default when the adapter is a CPU driver such as lavapipe; `--no-cpu` turns
//! it off) also times a CPU GEMM, `matrixmultiply::sgemm`, at every shape with f32: on one
//! thread and with the rows of C split over all cores, verified like the GPU results, and the
//! faster becomes a `cpu-matrixmultiply` record (its `config` says which). Every f32 GPU
//! record on that shape gets `ratio_to_cpu`, its GFLOP/s over the CPU's.
//! (matrixmultiply's own `threading` feature is not used: on a 2-core machine it reached
//! 151 GFLOP/s at 1024³ where splitting the rows over two threads reached 168, one thread 85.)

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

use coopgemm::testing::Reference;
use coopgemm::{BackendChoice, BackendKind, Context, DType, Element, Gemm, GemmBuffers, GemmTypes};

const DEFAULT_SHAPES: &str = "1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096";

struct Args {
    shapes: Vec<(u32, u32, u32)>,
    dtypes: Vec<GemmTypes>,
    backends: Vec<BackendKind>,
    runs: usize,
    reference: Option<String>,
    json: Option<String>,
    /// GPU timestamps where the adapter has them (`--wall-clock` turns them off).
    timestamps: bool,
    /// Time the CPU baseline: `Some` when `--cpu` or `--no-cpu` was given.
    cpu: Option<bool>,
    /// How B is stored, per case: `row` (k × n row-major), `column` (transposed weights,
    /// n × k row-major), `packed` (the column layout packed once with `Context::pack_b`,
    /// not timed). Default `row`.
    b_layouts: Vec<&'static str>,
    /// Tune each case's shape class before timing it (`--no-tune` turns it off).
    tune: bool,
}

const B_LAYOUTS: [&str; 3] = ["row", "column", "packed"];

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        shapes: Vec::new(),
        dtypes: vec![GemmTypes::F32, GemmTypes::F16_F32, GemmTypes::BF16_F32],
        backends: BackendKind::ALL.to_vec(),
        runs: 10,
        reference: None,
        json: None,
        timestamps: true,
        cpu: None,
        b_layouts: vec!["row"],
        tune: true,
    };
    let mut shapes = DEFAULT_SHAPES.to_string();
    let mut iter = std::env::args().skip(1);
    while let Some(flag) = iter.next() {
        let mut value = || iter.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--shapes" => shapes = value()?,
            "--dtypes" => {
                args.dtypes = value()?
                    .split(',')
                    .map(|name| GemmTypes::parse(name).ok_or(format!("unknown dtype {name}")))
                    .collect::<Result<_, _>>()?
            }
            "--backends" => {
                args.backends = value()?
                    .split(',')
                    .map(|name| BackendKind::parse(name).ok_or(format!("unknown backend {name}")))
                    .collect::<Result<_, _>>()?
            }
            "--runs" => args.runs = value()?.parse().map_err(|_| "--runs needs a number")?,
            "--reference" => args.reference = Some(value()?),
            "--json" => args.json = Some(value()?),
            "--wall-clock" => args.timestamps = false,
            "--no-tune" => args.tune = false,
            "--cpu" => args.cpu = Some(true),
            "--no-cpu" => args.cpu = Some(false),
            "--b-layouts" => {
                args.b_layouts = value()?
                    .split(',')
                    .map(|name| {
                        B_LAYOUTS
                            .into_iter()
                            .find(|known| *known == name)
                            .ok_or(format!("unknown B layout {name} (row, column, packed)"))
                    })
                    .collect::<Result<_, _>>()?
            }
            other => {
                return Err(format!(
                    "unknown argument {other} (see the file's header for usage)"
                ))
            }
        }
    }
    for shape in shapes.split(',') {
        let numbers: Vec<u32> = shape
            .split('x')
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()
            .ok_or(format!("bad shape {shape}"))?;
        match numbers[..] {
            [m, n, k] => args.shapes.push((m, n, k)),
            _ => return Err(format!("a shape is MxNxK, not {shape}")),
        }
    }
    args.runs = args.runs.max(1);
    Ok(args)
}

/// One reference figure: (label, (m, n, k), TFLOP/s).
type ReferenceEntry = (String, (u32, u32, u32), f64);

/// Reference throughputs (TFLOP/s) by (label, m, n, k) from an anchors file, e.g.
/// `cublas fp16->fp16(fp32acc)  4096x4096x4096:    652.3 TFLOP/s`.
fn read_reference(path: &str) -> Result<Vec<ReferenceEntry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut entries = Vec::new();
    for line in text.lines() {
        let Some((label, rest)) = line.split_once(':').and_then(|(head, rest)| {
            let (label, shape) = head.trim().rsplit_once(char::is_whitespace)?;
            Some((label.trim().to_string(), (shape.to_string(), rest)))
        }) else {
            continue;
        };
        let (shape, rest) = rest;
        let numbers: Option<Vec<u32>> = shape.split('x').map(|v| v.parse().ok()).collect();
        let value = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok());
        if let (Some([m, n, k]), Some(value)) = (
            numbers
                .as_deref()
                .and_then(|n| <[u32; 3]>::try_from(n).ok()),
            value,
        ) {
            entries.push((label, (m, n, k), value));
        }
    }
    Ok(entries)
}

/// Which reference line a dtype compares with.
fn reference_label(types: GemmTypes) -> &'static str {
    match types.input {
        DType::F32 => "fp32 strict",
        DType::F16 => "fp16",
        DType::BF16 => "bf16",
        DType::I8 | DType::I32 => "int8",
    }
}

struct Measurement {
    config: String,
    median_seconds: f64,
    timing: &'static str,
    /// With `--wall-clock`: the median host time a GEMM's `Context::run` took to return
    /// (recording and submitting; what the calling thread is blocked for).
    host_submit_seconds: Option<f64>,
    max_relative_error: f64,
    passed: bool,
}

/// Every result is verified on full-mantissa data: products and sums rounded to a narrower
/// type than the GEMM promises would miss the reference's tolerance (exact-product data
/// would hide them, and report an error of 0).
const DATA: coopgemm::testing::SampleData = coopgemm::testing::SampleData::FullMantissa;

fn measure<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    runs: usize,
    use_timestamps: bool,
    pack: bool,
    tune: bool,
) -> Result<Measurement, coopgemm::Error> {
    let resolved = gemm.resolve()?;
    let a: Vec<I> =
        coopgemm::testing::sample_data(DATA, resolved.a.required_elements() as usize, 1);
    let b: Vec<I> =
        coopgemm::testing::sample_data(DATA, resolved.b.required_elements() as usize, 2);
    let c: Vec<O> = vec![O::from_f64_lossy(0.0); resolved.c.required_elements() as usize];
    let (a_buffer, b_buffer, c_buffer) = (
        context.upload("A", &a)?,
        context.upload("B", &b)?,
        context.upload("C", &c)?,
    );
    // Packed: B is packed once (untimed, like loading weights) and every GEMM reads the panels.
    let packed = if pack {
        Some(context.pack_b(gemm, &b_buffer)?)
    } else {
        None
    };
    let (gemm, buffers) = match &packed {
        Some(packed) => (
            &packed.gemm(gemm),
            GemmBuffers::new(&a_buffer, packed.buffer(), &c_buffer),
        ),
        None => (gemm, GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer)),
    };
    let config = if tune {
        context
            .tune(std::slice::from_ref(gemm))?
            .remove(0)
            .to_string()
    } else {
        context.prepare(gemm)?.to_string()
    };
    // Warm up for a while, not a fixed count, and back to back (a wait every few runs): on
    // the H100 a case timed right after two warm-up runs on fresh buffers measured up to 4x
    // slow (8192³ f16: 60 vs 255 TFLOP/s), and one timed after building its pipeline (the
    // GPU idle for a second or more) with 0.3 s of warm-up, one run at a time, up to 3x slow
    // (512x4096x4096 f16: 65 vs 196).
    let warm_up = Instant::now();
    let mut warm_up_runs = 0;
    while warm_up_runs < 3 || warm_up.elapsed().as_secs_f64() < WARM_UP_SECONDS {
        for _ in 0..WARM_UP_BATCH {
            context.run(gemm, &buffers)?;
        }
        context.wait()?;
        warm_up_runs += WARM_UP_BATCH;
    }
    // Includes a wait per batch: an overestimate, which only shortens the samples.
    let gemm_seconds_estimate = warm_up.elapsed().as_secs_f64() / warm_up_runs as f64;
    let timestamped = if use_timestamps {
        time_on_gpu(context, gemm, &buffers, runs, gemm_seconds_estimate)?
    } else {
        None
    };
    let (seconds, host_submit_seconds, timing) = match timestamped {
        Some(seconds) => (seconds, None, "gpu-timestamps"),
        None => {
            let (seconds, submit_seconds) =
                time_with_wall_clock(context, gemm, &buffers, runs, gemm_seconds_estimate)?;
            (seconds, Some(median(submit_seconds)), "wall-clock")
        }
    };
    let median_seconds = median(seconds);

    // Each run computed the same C (beta = 0), so the last result checks them all.
    let result: Vec<O> = pollster::block_on(context.download(&c_buffer, c.len()))?;
    let reference = if gemm.flops() / 2.0 <= 512.0 * 512.0 * 512.0 {
        Reference::compute(&resolved, &a, &b, &c)?
    } else {
        Reference::sampled(&resolved, &a, &b, &c, 1024)?
    };
    let comparison = reference.compare(&result);
    Ok(Measurement {
        config,
        median_seconds,
        timing,
        host_submit_seconds,
        max_relative_error: comparison.max_relative_error,
        passed: comparison.passed(),
    })
}

/// Wall-clock length the GPU-timed runs of a case aim at, and their most.
const GPU_TIMED_SECONDS: f64 = 0.2;
const MAX_GPU_TIMED_RUNS: usize = 1000;

/// Per-GEMM GPU times of at least `runs` back-to-back runs ([`Context::time_on_gpu`]);
/// `None` where the adapter has no timestamp queries.
fn time_on_gpu(
    context: &Context,
    gemm: &Gemm,
    buffers: &GemmBuffers<'_>,
    runs: usize,
    gemm_seconds_estimate: f64,
) -> Result<Option<Vec<f64>>, coopgemm::Error> {
    let count = ((GPU_TIMED_SECONDS / gemm_seconds_estimate.max(1e-7)).ceil() as usize)
        .clamp(runs, MAX_GPU_TIMED_RUNS.max(runs));
    let times = context.time_on_gpu(gemm, buffers, count)?;
    Ok(times.map(|times| times.iter().map(|t| t.as_secs_f64()).collect()))
}

/// GEMMs submitted back to back per wall-clock sample, so that one submit-and-wait round
/// trip does not dominate short GEMMs.
const MIN_GEMMS_PER_SAMPLE: usize = 5;
const MAX_GEMMS_PER_SAMPLE: usize = 200;
/// Wall-clock length a sample aims at.
const SAMPLE_SECONDS: f64 = 0.02;

/// Minimum time each case runs before it is timed, in batches of back-to-back runs.
const WARM_UP_SECONDS: f64 = 0.5;
const WARM_UP_BATCH: usize = 4;

/// The median of `values` (not empty).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Per-GEMM time of `runs` samples, each the host time from submitting GEMMS_PER_SAMPLE
/// GEMMs back to back to their completion, divided by their number; and each GEMM's host
/// time in `Context::run` (recording and submitting).
fn time_with_wall_clock(
    context: &Context,
    gemm: &Gemm,
    buffers: &GemmBuffers<'_>,
    runs: usize,
    gemm_seconds_estimate: f64,
) -> Result<(Vec<f64>, Vec<f64>), coopgemm::Error> {
    let gemms_per_sample = ((SAMPLE_SECONDS / gemm_seconds_estimate.max(1e-7)).ceil() as usize)
        .clamp(MIN_GEMMS_PER_SAMPLE, MAX_GEMMS_PER_SAMPLE);
    let mut seconds = Vec::with_capacity(runs);
    let mut submit_seconds = Vec::with_capacity(runs * gemms_per_sample);
    for _ in 0..runs {
        let started = Instant::now();
        for _ in 0..gemms_per_sample {
            let submitted = Instant::now();
            context.run(gemm, buffers)?;
            submit_seconds.push(submitted.elapsed().as_secs_f64());
        }
        context.wait()?;
        seconds.push(started.elapsed().as_secs_f64() / gemms_per_sample as f64);
    }
    Ok((seconds, submit_seconds))
}

fn measure_types(
    context: &Context,
    gemm: &Gemm,
    runs: usize,
    use_timestamps: bool,
    pack: bool,
    tune: bool,
) -> Result<Measurement, coopgemm::Error> {
    let (c, g, r, t, p) = (context, gemm, runs, use_timestamps, pack);
    match gemm.types {
        GemmTypes::F32 => measure::<f32, f32>(c, g, r, t, p, tune),
        GemmTypes::F16_F32 => measure::<half::f16, f32>(c, g, r, t, p, tune),
        GemmTypes::F16_ACC_F16 | GemmTypes::F16_F32_F16 => {
            measure::<half::f16, half::f16>(c, g, r, t, p, tune)
        }
        GemmTypes::BF16_F32 => measure::<half::bf16, f32>(c, g, r, t, p, tune),
        GemmTypes::BF16_F32_BF16 => measure::<half::bf16, half::bf16>(c, g, r, t, p, tune),
        GemmTypes::F32_F32_F16 => measure::<f32, half::f16>(c, g, r, t, p, tune),
        GemmTypes::F32_F32_BF16 => measure::<f32, half::bf16>(c, g, r, t, p, tune),
        GemmTypes::I8_I32 => measure::<i8, i32>(c, g, r, t, p, tune),
        other => Err(coopgemm::Error::Unsupported {
            backend: BackendKind::Simt,
            reason: format!("no host types for {other}"),
        }),
    }
}

/// The `backend` of the CPU baseline's records.
const CPU_BACKEND: &str = "cpu-matrixmultiply";

/// One measured case, as a table row and a JSON record.
struct Record<'a> {
    backend: &'a str,
    types: GemmTypes,
    shape: (u32, u32, u32),
    measurement: &'a Measurement,
    /// The reference table's TFLOP/s for this case, if it has one.
    reference_tflops: Option<f64>,
    /// GFLOP/s over the CPU baseline's at this shape (f32 GPU records only).
    ratio_to_cpu: Option<f64>,
    /// How B was stored (`row`, `column`, `packed`).
    b_layout: &'static str,
    adapter: &'a str,
}

/// Prints `record`'s table row and appends its JSON object (and a comma) to `json`.
fn report(json: &mut String, record: &Record<'_>) {
    let number = |value: f64| {
        if value.is_finite() {
            format!("{value}")
        } else {
            "null".to_string()
        }
    };
    let optional = |value: Option<f64>| value.map_or("null".to_string(), |v| format!("{v:.4}"));
    let (m, n, k) = record.shape;
    let measurement = record.measurement;
    let gflops = Gemm::new(m, n, k).flops() / measurement.median_seconds / 1e9;
    let ratio = record.reference_tflops.map(|r| gflops / 1e3 / r);
    println!(
        "{:<18} {:<8} {:>16} {:>10.3} {:>11.1} {:>7} {:>7} {:>9.1e}  {}{}{}",
        record.backend,
        record.types.short_name(),
        format!("{m}x{n}x{k}"),
        measurement.median_seconds * 1e3,
        gflops,
        ratio.map_or("-".to_string(), |r| format!("{r:.2}")),
        record
            .ratio_to_cpu
            .map_or("-".to_string(), |r| format!("{r:.2}")),
        measurement.max_relative_error,
        measurement.config,
        if record.b_layout == "row" {
            String::new()
        } else {
            format!(" [B {}]", record.b_layout)
        },
        if measurement.passed { "" } else { "  MISMATCH" }
    );
    let _ = writeln!(
        json,
        "  {{\"backend\": \"{}\", \"dtype\": \"{}\", \"m\": {m}, \"n\": {n}, \"k\": {k}, \"batch\": 1, \"b_layout\": \"{}\", \"config\": \"{}\", \"timing\": \"{}\", \"median_ms\": {}, \"host_submit_ms\": {}, \"gflops\": {}, \"max_rel_error\": {}, \"verified\": {}, \"reference_tflops\": {}, \"ratio\": {}, \"ratio_to_cpu\": {}, \"adapter\": \"{}\"}},",
        record.backend,
        record.types.short_name(),
        record.b_layout,
        measurement.config.replace('"', "'"),
        measurement.timing,
        number(measurement.median_seconds * 1e3),
        optional(measurement.host_submit_seconds.map(|s| s * 1e3)),
        number(gflops),
        number(measurement.max_relative_error),
        measurement.passed,
        record.reference_tflops.map_or("null".to_string(), |r| r.to_string()),
        optional(ratio),
        optional(record.ratio_to_cpu),
        record.adapter.replace('"', "'"),
    );
}

/// `c = a * b` for row-major `a` (rows × k), `b` (k × n) and `c` (rows × n) on this thread.
fn sgemm_rows(rows: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() >= rows * k && b.len() >= k * n && c.len() >= rows * n);
    // SAFETY: by the assert, every element sgemm addresses with these sizes and row-major
    // strides lies inside the slices; `c` is borrowed mutably, so it aliases neither input.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}

/// `c = a * b` (row-major m × k times k × n) with the rows of C split over `threads` threads.
fn cpu_gemm(threads: usize, (m, n, k): (usize, usize, usize), a: &[f32], b: &[f32], c: &mut [f32]) {
    if threads <= 1 || m == 0 || n == 0 {
        return sgemm_rows(m, n, k, a, b, c);
    }
    let rows_per_thread = m.div_ceil(threads);
    std::thread::scope(|scope| {
        for (index, c_rows) in c.chunks_mut(rows_per_thread * n).enumerate() {
            let rows = c_rows.len() / n;
            let a_rows = &a[index * rows_per_thread * k..][..rows * k];
            scope.spawn(move || sgemm_rows(rows, n, k, a_rows, b, c_rows));
        }
    });
}

/// Longest a CPU configuration is timed for once it has three samples.
const CPU_SECONDS: f64 = 5.0;

/// The CPU baseline at one shape: `matrixmultiply::sgemm` on one thread and on all cores,
/// each the median of up to `runs` calls after one warm-up call; the faster one, verified.
fn measure_cpu((m, n, k): (u32, u32, u32), runs: usize) -> Result<Measurement, coopgemm::Error> {
    let gemm = Gemm::new(m, n, k);
    let resolved = gemm.resolve()?;
    let shape = (m as usize, n as usize, k as usize);
    let a: Vec<f32> =
        coopgemm::testing::sample_data(DATA, resolved.a.required_elements() as usize, 1);
    let b: Vec<f32> =
        coopgemm::testing::sample_data(DATA, resolved.b.required_elements() as usize, 2);
    let mut c = vec![0.0f32; resolved.c.required_elements() as usize];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut timed = Vec::new();
    for threads in [1, cores].into_iter().take(if cores > 1 { 2 } else { 1 }) {
        cpu_gemm(threads, shape, &a, &b, &mut c);
        let started = Instant::now();
        let mut seconds = Vec::new();
        while seconds.len() < runs
            && (seconds.len() < 3 || started.elapsed().as_secs_f64() < CPU_SECONDS)
        {
            let run = Instant::now();
            cpu_gemm(threads, shape, &a, &b, &mut c);
            seconds.push(run.elapsed().as_secs_f64());
        }
        seconds.sort_by(f64::total_cmp);
        timed.push((threads, seconds[seconds.len() / 2]));
    }
    let &(threads, median_seconds) = timed
        .iter()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .ok_or_else(|| coopgemm::Error::Device("no CPU timing".into()))?;
    // Verify the faster configuration's own result.
    cpu_gemm(threads, shape, &a, &b, &mut c);
    let zeros = vec![0.0f32; c.len()];
    let reference = if gemm.flops() / 2.0 <= 512.0 * 512.0 * 512.0 {
        Reference::compute(&resolved, &a, &b, &zeros)?
    } else {
        Reference::sampled(&resolved, &a, &b, &zeros, 1024)?
    };
    let comparison = reference.compare(&c);
    let others: Vec<String> = timed
        .iter()
        .filter(|(t, _)| *t != threads)
        .map(|(t, s)| format!("threads={t}: {:.1} GFLOP/s", gemm.flops() / s / 1e9))
        .collect();
    Ok(Measurement {
        config: format!(
            "sgemm threads={threads}{}{}",
            if threads > 1 { " (rows split)" } else { "" },
            if others.is_empty() {
                String::new()
            } else {
                format!("; {}", others.join(", "))
            }
        ),
        median_seconds,
        timing: "wall-clock",
        host_submit_seconds: None,
        max_relative_error: comparison.max_relative_error,
        passed: comparison.passed(),
    })
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = parse_args().unwrap_or_else(|message| {
        eprintln!("{message}");
        std::process::exit(2);
    });
    let reference = args
        .reference
        .as_deref()
        .map(read_reference)
        .transpose()
        .unwrap_or_else(|message| {
            eprintln!("{message}");
            std::process::exit(2);
        });
    // Tuning may take its time here: a benchmark measures the steady state.
    let options = coopgemm::ContextOptions::from_env()
        .unwrap_or_else(|error| {
            eprintln!("error: {error}");
            std::process::exit(1);
        })
        .with_tuning_time_limit(std::time::Duration::from_secs(60));
    let context = pollster::block_on(Context::with_options(options)).unwrap_or_else(|error| {
        eprintln!("error: {error}");
        std::process::exit(1);
    });
    let adapter = context.adapter_info().name.clone();
    eprintln!("adapter: {adapter}");
    let mut cases = Vec::new();
    for &shape in &args.shapes {
        for &types in &args.dtypes {
            for &kind in &args.backends {
                for &b_layout in &args.b_layouts {
                    cases.push((shape, types, kind, b_layout));
                }
            }
        }
    }
    let cpu_baseline = args
        .cpu
        .unwrap_or(context.adapter_info().device_type == wgpu::DeviceType::Cpu)
        && args.dtypes.contains(&GemmTypes::F32);
    // GFLOP/s of the CPU baseline by shape, measured before the first GPU case of the shape.
    let mut cpu_gflops: HashMap<(u32, u32, u32), Option<f64>> = HashMap::new();
    let mut json = String::from("[\n");
    println!(
        "{:<18} {:<8} {:>16} {:>10} {:>11} {:>7} {:>7} {:>9}  config",
        "backend", "dtype", "m x n x k", "median ms", "GFLOP/s", "ratio", "vs cpu", "max rel"
    );
    let mut failures = 0;
    for (index, &((m, n, k), types, kind, b_layout)) in cases.iter().enumerate() {
        let reference_for = |types: GemmTypes| {
            reference.as_ref().and_then(|entries| {
                entries
                    .iter()
                    .find(|(label, shape, _)| {
                        label.contains(reference_label(types)) && *shape == (m, n, k)
                    })
                    .map(|(_, _, value)| *value)
            })
        };
        if cpu_baseline && !cpu_gflops.contains_key(&(m, n, k)) {
            eprintln!("[cpu] {m}x{n}x{k} f32 on matrixmultiply");
            let gflops = match measure_cpu((m, n, k), args.runs) {
                Ok(measurement) => {
                    if !measurement.passed {
                        failures += 1;
                    }
                    let gflops = Gemm::new(m, n, k).flops() / measurement.median_seconds / 1e9;
                    report(
                        &mut json,
                        &Record {
                            backend: CPU_BACKEND,
                            types: GemmTypes::F32,
                            shape: (m, n, k),
                            measurement: &measurement,
                            reference_tflops: reference_for(GemmTypes::F32),
                            ratio_to_cpu: None,
                            b_layout: "row",
                            adapter: &adapter,
                        },
                    );
                    measurement.passed.then_some(gflops)
                }
                Err(error) => {
                    eprintln!("    failed: {error}");
                    failures += 1;
                    None
                }
            };
            cpu_gflops.insert((m, n, k), gflops);
        }
        eprintln!(
            "[{}/{}] {m}x{n}x{k} {} on {kind}, B {b_layout}",
            index + 1,
            cases.len(),
            types.short_name()
        );
        let handle = context.with_backend(BackendChoice::Force(kind));
        let mut gemm = Gemm::new(m, n, k).types(types);
        if b_layout != "row" {
            gemm = gemm.b(coopgemm::MatrixLayout::column_major());
        }
        if let Err(error) = handle.select(&gemm) {
            eprintln!("    skipped: {error}");
            continue;
        }
        let pack = b_layout == "packed";
        let measurement =
            match measure_types(&handle, &gemm, args.runs, args.timestamps, pack, args.tune) {
                Ok(measurement) => measurement,
                Err(error) => {
                    eprintln!("    failed: {error}");
                    failures += 1;
                    continue;
                }
            };
        if !measurement.passed {
            failures += 1;
        }
        let gflops = gemm.flops() / measurement.median_seconds / 1e9;
        let ratio_to_cpu = match types {
            GemmTypes::F32 => cpu_gflops
                .get(&(m, n, k))
                .copied()
                .flatten()
                .map(|cpu| gflops / cpu),
            _ => None,
        };
        report(
            &mut json,
            &Record {
                backend: kind.name(),
                types,
                shape: (m, n, k),
                measurement: &measurement,
                reference_tflops: reference_for(types),
                ratio_to_cpu,
                b_layout,
                adapter: &adapter,
            },
        );
    }
    if json.ends_with(",\n") {
        json.truncate(json.len() - 2);
        json.push('\n');
    }
    json.push_str("]\n");
    if let Some(path) = &args.json {
        if let Err(error) = std::fs::write(path, &json) {
            eprintln!("{path}: {error}");
            std::process::exit(1);
        }
        eprintln!("wrote {path}");
    }
    if failures > 0 {
        eprintln!("{failures} cases failed or did not match the reference");
        std::process::exit(1);
    }
}
