//! Benchmark: shapes × dtypes × backends, median of timed runs, GFLOP/s, ratio to a
//! reference table, machine-readable JSON.
//!
//! ```text
//! cargo run --release --example bench -- [--shapes 1024x1024x1024,64x4096x4096] [--dtypes f32,f16,bf16]
//!     [--backends simt,coopmat] [--runs 10] [--reference ../shared/anchors/h100-cublas.txt] [--json out.json]
//!     [--gpu-timestamps]
//! ```
//! Times each case as the median of `--runs` samples, each the wall-clock time of 5 GEMMs
//! submitted back to back until they complete, divided by 5. `--gpu-timestamps` uses GPU
//! timestamps written just before and after each GEMM's command buffers instead (where the
//! adapter has `TIMESTAMP_QUERY_INSIDE_ENCODERS`); on the H100 these stamps, taken between
//! separate command buffers, came out up to 4x too long, so they are not the default. Each
//! record says which timing it used. Progress goes to stderr, the table to stdout.

use std::fmt::Write as _;
use std::time::Instant;

use coopgemm::{
    BackendChoice, BackendKind, Context, DType, Element, Gemm, GemmBuffers, GemmTypes, Reference,
};

const DEFAULT_SHAPES: &str = "1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096";

/// Bytes between the resolved timestamps of consecutive runs (wgpu's resolve-offset alignment).
const RESOLVE_STRIDE: u64 = wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;

struct Args {
    shapes: Vec<(u32, u32, u32)>,
    dtypes: Vec<GemmTypes>,
    backends: Vec<BackendKind>,
    runs: usize,
    reference: Option<String>,
    json: Option<String>,
    timestamps: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        shapes: Vec::new(),
        dtypes: vec![GemmTypes::F32, GemmTypes::F16_F32, GemmTypes::BF16_F32],
        backends: BackendKind::ALL.to_vec(),
        runs: 10,
        reference: None,
        json: None,
        timestamps: false,
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
            "--gpu-timestamps" => args.timestamps = true,
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
    max_relative_error: f64,
    passed: bool,
}

fn measure<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    runs: usize,
    use_timestamps: bool,
) -> Result<Measurement, coopgemm::Error> {
    let resolved = gemm.resolve()?;
    let a: Vec<I> = coopgemm::sample_values(resolved.a.required_elements() as usize, 1);
    let b: Vec<I> = coopgemm::sample_values(resolved.b.required_elements() as usize, 2);
    let c: Vec<O> = vec![O::from_f64_lossy(0.0); resolved.c.required_elements() as usize];
    let (a_buffer, b_buffer, c_buffer) = (
        context.upload("A", &a)?,
        context.upload("B", &b)?,
        context.upload("C", &c)?,
    );
    let buffers = GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer);
    let config = context.prepare(gemm)?.config;
    // Warm up for a while, not a fixed count: on the H100 a case timed right after two
    // warm-up runs on fresh buffers measured up to 4x slow (8192³ f16: 60 vs 255 TFLOP/s).
    let warm_up = Instant::now();
    let mut warm_up_runs = 0;
    while warm_up_runs < 3 || warm_up.elapsed().as_secs_f64() < WARM_UP_SECONDS {
        context.run(gemm, &buffers)?;
        context.wait()?;
        warm_up_runs += 1;
    }
    let timestamped = if use_timestamps {
        time_with_timestamps(context, gemm, &buffers, runs)?
    } else {
        None
    };
    let (mut seconds, timing) = match timestamped {
        Some(seconds) => (seconds, "gpu-timestamps"),
        None => (
            time_with_wall_clock(context, gemm, &buffers, runs)?,
            "wall-clock",
        ),
    };
    seconds.sort_by(f64::total_cmp);
    let median_seconds = seconds[seconds.len() / 2];

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
        max_relative_error: comparison.max_relative_error,
        passed: comparison.passed(),
    })
}

/// Per-run GPU time from timestamps written right before and after the GEMM's command
/// buffers; `None` where the adapter has no timestamps inside encoders, or they do not
/// advance (some CPU drivers stamp at submission).
fn time_with_timestamps(
    context: &Context,
    gemm: &Gemm,
    buffers: &GemmBuffers<'_>,
    runs: usize,
) -> Result<Option<Vec<f64>>, coopgemm::Error> {
    let device = context.device();
    if !device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    {
        return Ok(None);
    }
    let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("bench"),
        ty: wgpu::QueryType::Timestamp,
        count: 2 * runs as u32,
    });
    let resolve = context.create_buffer(
        "bench timestamps",
        RESOLVE_STRIDE * runs as u64,
        wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
    )?;
    for run in 0..runs as u32 {
        let mut begin = device.create_command_encoder(&Default::default());
        begin.write_timestamp(&queries, 2 * run);
        let recorded = context.record(gemm, buffers)?;
        let mut end = device.create_command_encoder(&Default::default());
        end.write_timestamp(&queries, 2 * run + 1);
        end.resolve_query_set(
            &queries,
            2 * run..2 * run + 2,
            &resolve,
            RESOLVE_STRIDE * run as u64,
        );
        context.queue().submit(
            std::iter::once(begin.finish())
                .chain(recorded.command_buffers)
                .chain(std::iter::once(end.finish())),
        );
    }
    // Each run's two u64 timestamps start a RESOLVE_STRIDE-byte block; read them as 32-bit
    // words (little endian).
    let words: Vec<i32> =
        pollster::block_on(context.download(&resolve, runs * RESOLVE_STRIDE as usize / 4))?;
    let tick = |word: usize| words[word] as u32 as u64 | ((words[word + 1] as u32 as u64) << 32);
    let period_ns = context.queue().get_timestamp_period() as f64;
    let seconds: Vec<f64> = (0..runs)
        .map(|run| {
            let base = run * RESOLVE_STRIDE as usize / 4;
            tick(base + 2).wrapping_sub(tick(base)) as f64 * period_ns * 1e-9
        })
        .collect();
    Ok(seconds
        .iter()
        .all(|s| *s > 0.0 && s.is_finite())
        .then_some(seconds))
}

/// GEMMs submitted back to back per wall-clock sample, so that one submit-and-wait round
/// trip does not dominate short GEMMs.
const GEMMS_PER_SAMPLE: usize = 5;

/// Minimum time each case runs before it is timed.
const WARM_UP_SECONDS: f64 = 0.3;

/// Per-GEMM time of `runs` samples, each the host time from submitting GEMMS_PER_SAMPLE
/// GEMMs back to back to their completion, divided by their number.
fn time_with_wall_clock(
    context: &Context,
    gemm: &Gemm,
    buffers: &GemmBuffers<'_>,
    runs: usize,
) -> Result<Vec<f64>, coopgemm::Error> {
    let mut seconds = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        for _ in 0..GEMMS_PER_SAMPLE {
            context.run(gemm, buffers)?;
        }
        context.wait()?;
        seconds.push(started.elapsed().as_secs_f64() / GEMMS_PER_SAMPLE as f64);
    }
    Ok(seconds)
}

fn measure_types(
    context: &Context,
    gemm: &Gemm,
    runs: usize,
    use_timestamps: bool,
) -> Result<Measurement, coopgemm::Error> {
    match gemm.types {
        GemmTypes::F32 => measure::<f32, f32>(context, gemm, runs, use_timestamps),
        GemmTypes::F16_F32 => measure::<half::f16, f32>(context, gemm, runs, use_timestamps),
        GemmTypes::F16_ACC_F16 => {
            measure::<half::f16, half::f16>(context, gemm, runs, use_timestamps)
        }
        GemmTypes::BF16_F32 => measure::<half::bf16, f32>(context, gemm, runs, use_timestamps),
        GemmTypes::I8_I32 => measure::<i8, i32>(context, gemm, runs, use_timestamps),
        other => Err(coopgemm::Error::Unsupported {
            backend: BackendKind::Simt,
            reason: format!("no host types for {other}"),
        }),
    }
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
    let context = Context::new_blocking().unwrap_or_else(|error| {
        eprintln!("error: {error}");
        std::process::exit(1);
    });
    let adapter = context.adapter_info().name.clone();
    eprintln!("adapter: {adapter}");
    let mut cases = Vec::new();
    for &shape in &args.shapes {
        for &types in &args.dtypes {
            for &kind in &args.backends {
                cases.push((shape, types, kind));
            }
        }
    }
    let number = |value: f64| {
        if value.is_finite() {
            format!("{value}")
        } else {
            "null".to_string()
        }
    };
    let mut json = String::from("[\n");
    println!(
        "{:<10} {:<8} {:>16} {:>10} {:>11} {:>7} {:>9}  config",
        "backend", "dtype", "m x n x k", "median ms", "GFLOP/s", "ratio", "max rel"
    );
    let mut failures = 0;
    for (index, &((m, n, k), types, kind)) in cases.iter().enumerate() {
        eprintln!(
            "[{}/{}] {m}x{n}x{k} {} on {kind}",
            index + 1,
            cases.len(),
            types.short_name()
        );
        let handle = context.with_backend(BackendChoice::Force(kind));
        let gemm = Gemm::new(m, n, k).types(types);
        if let Err(error) = handle.select(&gemm) {
            eprintln!("    skipped: {error}");
            continue;
        }
        let measurement = match measure_types(&handle, &gemm, args.runs, args.timestamps) {
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
        let reference_tflops = reference.as_ref().and_then(|entries| {
            entries
                .iter()
                .find(|(label, shape, _)| {
                    label.contains(reference_label(types)) && *shape == (m, n, k)
                })
                .map(|(_, _, value)| *value)
        });
        let ratio = reference_tflops.map(|r| gflops / 1e3 / r);
        println!(
            "{:<10} {:<8} {:>16} {:>10.3} {:>11.1} {:>7} {:>9.1e}  {}{}",
            kind.name(),
            types.short_name(),
            format!("{m}x{n}x{k}"),
            measurement.median_seconds * 1e3,
            gflops,
            ratio.map_or("-".to_string(), |r| format!("{r:.2}")),
            measurement.max_relative_error,
            measurement.config,
            if measurement.passed { "" } else { "  MISMATCH" }
        );
        let _ = writeln!(
            json,
            "  {{\"backend\": \"{}\", \"dtype\": \"{}\", \"m\": {m}, \"n\": {n}, \"k\": {k}, \"batch\": 1, \"config\": \"{}\", \"timing\": \"{}\", \"median_ms\": {}, \"gflops\": {}, \"max_rel_error\": {}, \"verified\": {}, \"reference_tflops\": {}, \"ratio\": {}, \"adapter\": \"{}\"}},",
            kind.name(),
            types.short_name(),
            measurement.config,
            measurement.timing,
            number(measurement.median_seconds * 1e3),
            number(gflops),
            number(measurement.max_relative_error),
            measurement.passed,
            reference_tflops.map_or("null".to_string(), |r| r.to_string()),
            ratio.map_or("null".to_string(), |r| format!("{r:.4}")),
            adapter.replace('"', "'"),
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
