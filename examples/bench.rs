//! Benchmark: shapes × dtypes × backends, median of timed runs, GFLOP/s, ratio to a
//! reference table, machine-readable JSON.
//!
//! ```text
//! cargo run --release --example bench -- [--shapes 1024x1024x1024,64x4096x4096] [--dtypes f32,f16,bf16]
//!     [--backends simt,coopmat,wgsl-coopmat] [--runs 10] [--reference ../shared/anchors/h100-cublas.txt] [--json out.json]
//!     [--wall-clock] [--cpu | --no-cpu] [--b-layouts row,column,packed] [--no-tune] [--quiet]
//! ```
//! (`--help` lists every option with its default.) `--json` writes one [`BenchRecord`] per
//! case (`examples/common/record.rs`); `examples/plot.rs` draws them.
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
//! `host_submit_ms`, the median time one `Context::run` held the calling thread
//! (`--prepared [N]`: GEMMs prepared once, N launched per `Context::run_prepared`, host
//! time per GEMM, timing `wall-clock-prepared` or `wall-clock-prepared-xN`). Progress goes
//! to stderr, the table to stdout.
//!
//! `--cpu` (the default when the adapter is a CPU driver such as lavapipe; `--no-cpu` turns
//! it off) also times a CPU GEMM, `matrixmultiply::sgemm`, at every shape with f32: on one
//! thread and with the rows of C split over all cores, verified like the GPU results, and the
//! faster becomes a `cpu-matrixmultiply` record (its `config` says which). Every f32 GPU
//! record on that shape gets `ratio_to_cpu`, its GFLOP/s over the CPU's.
//! (matrixmultiply's own `threading` feature is not used: on a 2-core machine it reached
//! 151 GFLOP/s at 1024³ where splitting the rows over two threads reached 168, one thread 85.)

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, Element, Gemm, GemmBuffers, GemmTypes, PreparedGemm,
};
use indicatif::ProgressBar;

#[allow(dead_code)]
mod common;
use common::cli::{parse_backend, parse_shape, parse_types};
use common::cpu::{measure_cpu, Measurement, DATA};
use common::progress;
use common::record::{self, BenchRecord};
use common::reference::{self as anchors, ReferenceEntry};

const DEFAULT_SHAPES: &str = "1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096";

/// Times GEMMs (shapes x dtypes x backends x B layouts), verifies each against the CPU
/// reference, prints a table to stdout and writes JSON records (--json).
#[derive(Parser, Debug)]
#[command(
    name = "bench",
    args_override_self = true,
    version,
    after_help = "Each case's shape class is tuned first (up to 60 s per class, remembered in the disk cache) unless --no-tune or COOPGEMM_AUTOTUNE=0. Progress goes to stderr (a progress bar where stderr is a terminal), the table to stdout."
)]
struct Args {
    /// GEMM shapes, MxNxK, comma-separated
    #[arg(long, value_name = "MxNxK,...", value_delimiter = ',',
        action = clap::ArgAction::Set, value_parser = parse_shape, default_value = DEFAULT_SHAPES)]
    shapes: Vec<(u32, u32, u32)>,
    /// Types by short name (f32, f16, bf16, f16acc16, i8, f16-f32-f16, ...), comma-separated
    #[arg(long, value_name = "TYPES,...", value_delimiter = ',',
        action = clap::ArgAction::Set, value_parser = parse_types, default_value = "f32,f16,bf16")]
    dtypes: Vec<GemmTypes>,
    /// Backends, comma-separated
    #[arg(long, value_name = "BACKEND,...", value_delimiter = ',',
        action = clap::ArgAction::Set, value_parser = parse_backend, default_values_t = BackendKind::ALL)]
    backends: Vec<BackendKind>,
    /// Timed runs per case (at least; GPU-timed cases run as many as take about 0.2 s)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Reference throughputs to compare with (lines like
    /// `cublas fp16->fp16(fp32acc)  4096x4096x4096:  652.3 TFLOP/s`)
    #[arg(long, value_name = "FILE")]
    reference: Option<PathBuf>,
    /// Write the records as JSON to FILE
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Time with the wall clock even where the adapter has GPU timestamps
    #[arg(long)]
    wall_clock: bool,
    /// Launch GEMMs prepared once (Context::prepare_gemm), N per Context::run_prepared
    /// (default 1): wall-clock timing, host_submit_ms per GEMM
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1",
          value_parser = clap::value_parser!(u32).range(1..))]
    prepared: Option<u32>,
    /// Also time a CPU GEMM (matrixmultiply) at the f32 shapes [default: on a CPU adapter]
    #[arg(long, overrides_with = "no_cpu")]
    cpu: bool,
    /// No CPU baseline, even on a CPU adapter
    #[arg(long, overrides_with = "cpu")]
    no_cpu: bool,
    /// How B is stored, comma-separated: row (k x n), column (n x k, transposed weights),
    /// packed (column, packed once with Context::pack_b, untimed)
    #[arg(long, value_name = "LAYOUT,...", value_delimiter = ',',
        action = clap::ArgAction::Set, value_enum, default_value = "row")]
    b_layouts: Vec<BLayout>,
    /// Keep the backends' heuristic configurations: do not tune
    #[arg(long)]
    no_tune: bool,
    /// No progress bar and no per-case progress lines (errors still go to stderr)
    #[arg(long, short)]
    quiet: bool,
}

/// How B is stored in a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BLayout {
    Row,
    Column,
    Packed,
}

impl BLayout {
    fn name(self) -> &'static str {
        match self {
            BLayout::Row => "row",
            BLayout::Column => "column",
            BLayout::Packed => "packed",
        }
    }
}

impl Args {
    /// Whether to time the CPU baseline: `--cpu`, `--no-cpu`, else on a CPU adapter.
    fn cpu_baseline(&self, cpu_adapter: bool) -> bool {
        (self.cpu || (cpu_adapter && !self.no_cpu)) && self.dtypes.contains(&GemmTypes::F32)
    }
}

/// How long tuning one shape class may take.
const TUNING_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// How a case is measured.
#[derive(Clone, Copy)]
struct How {
    /// Timed runs (at least).
    runs: usize,
    /// GPU timestamps where the adapter has them.
    use_timestamps: bool,
    /// B packed once with `Context::pack_b`.
    pack: bool,
    /// Tune the shape class first.
    tune: bool,
    /// Launch through `Context::prepare_gemm` / `run_prepared`, this many per submission
    /// (wall clock).
    prepared: Option<u32>,
}

/// Measures one case; `bar`'s message says which stage it is in.
fn measure<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    how: How,
    bar: &ProgressBar,
) -> Result<Measurement, coopgemm::Error> {
    let stage = |what: &str| {
        let message = bar.message();
        let case = message.split(": ").next().unwrap_or_default().to_string();
        bar.set_message(format!("{case}: {what}"));
    };
    let How {
        runs,
        use_timestamps,
        pack,
        tune,
        prepared,
    } = how;
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
        stage(&format!(
            "tuning its shape class (up to {} s)",
            TUNING_TIME_LIMIT.as_secs()
        ));
        context
            .tune(std::slice::from_ref(gemm))?
            .remove(0)
            .to_string()
    } else {
        context.prepare(gemm)?.to_string()
    };
    // Warm up until the time per run is steady (common::warm_up says why).
    stage("warming up");
    let gemm_seconds_estimate =
        common::warm_up::until_steady(|| context.run(gemm, &buffers).map(drop), || context.wait())?;
    stage("timing");
    let timestamped = if use_timestamps && prepared.is_none() {
        time_on_gpu(context, gemm, &buffers, runs, gemm_seconds_estimate)?
    } else {
        None
    };
    let (seconds, host_submit_seconds, timing) = match timestamped {
        Some(seconds) => (seconds, None, "gpu-timestamps".to_string()),
        None => {
            let (seconds, submit_seconds) = time_with_wall_clock(
                context,
                gemm,
                &buffers,
                runs,
                gemm_seconds_estimate,
                prepared,
            )?;
            let timing = match prepared {
                Some(1) => "wall-clock-prepared".to_string(),
                Some(batch) => format!("wall-clock-prepared-x{batch}"),
                None => "wall-clock".to_string(),
            };
            (seconds, Some(median(submit_seconds)), timing)
        }
    };
    let median_seconds = median(seconds);

    // Each run computed the same C (beta = 0), so the last result checks them all.
    stage("checking against the CPU reference");
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

/// The median of `values` (not empty).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Per-GEMM time of `runs` samples, each the host time from submitting GEMMS_PER_SAMPLE
/// GEMMs back to back to their completion, divided by their number; and each GEMM's host
/// time in `Context::run` (recording and submitting). With `prepared` = Some(batch), the GEMM
/// is prepared `batch` times and each submission is one `Context::run_prepared` of all of
/// them (one after the other on the same buffers); host times are per GEMM.
fn time_with_wall_clock(
    context: &Context,
    gemm: &Gemm,
    buffers: &GemmBuffers<'_>,
    runs: usize,
    gemm_seconds_estimate: f64,
    prepared: Option<u32>,
) -> Result<(Vec<f64>, Vec<f64>), coopgemm::Error> {
    let batch = prepared.unwrap_or(1).max(1) as usize;
    let prepared = (0..prepared.map_or(0, |_| batch))
        .map(|_| context.prepare_gemm(gemm, buffers))
        .collect::<Result<Vec<_>, _>>()?;
    let prepared: Vec<&PreparedGemm> = prepared.iter().collect();
    let submissions = ((SAMPLE_SECONDS / gemm_seconds_estimate.max(1e-7) / batch as f64).ceil()
        as usize)
        .clamp(MIN_GEMMS_PER_SAMPLE, MAX_GEMMS_PER_SAMPLE);
    let gemms_per_sample = submissions * batch;
    let mut seconds = Vec::with_capacity(runs);
    let mut submit_seconds = Vec::with_capacity(runs * submissions);
    for _ in 0..runs {
        let started = Instant::now();
        for _ in 0..submissions {
            let submitted = Instant::now();
            if prepared.is_empty() {
                context.run(gemm, buffers)?;
            } else {
                context.run_prepared(&prepared)?;
            }
            submit_seconds.push(submitted.elapsed().as_secs_f64() / batch as f64);
        }
        context.wait()?;
        seconds.push(started.elapsed().as_secs_f64() / gemms_per_sample as f64);
    }
    Ok((seconds, submit_seconds))
}

fn measure_types(
    context: &Context,
    gemm: &Gemm,
    how: How,
    bar: &ProgressBar,
) -> Result<Measurement, coopgemm::Error> {
    let (c, g) = (context, gemm);
    match gemm.types {
        GemmTypes::F32 => measure::<f32, f32>(c, g, how, bar),
        GemmTypes::F16_F32 => measure::<half::f16, f32>(c, g, how, bar),
        GemmTypes::F16_ACC_F16 | GemmTypes::F16_F32_F16 => {
            measure::<half::f16, half::f16>(c, g, how, bar)
        }
        GemmTypes::BF16_F32 => measure::<half::bf16, f32>(c, g, how, bar),
        GemmTypes::BF16_F32_BF16 => measure::<half::bf16, half::bf16>(c, g, how, bar),
        GemmTypes::F32_F32_F16 => measure::<f32, half::f16>(c, g, how, bar),
        GemmTypes::F32_F32_BF16 => measure::<f32, half::bf16>(c, g, how, bar),
        GemmTypes::I8_I32 => measure::<i8, i32>(c, g, how, bar),
        other => Err(coopgemm::Error::Unsupported {
            backend: BackendKind::Simt,
            reason: format!("no host types for {other}"),
        }),
    }
}

/// The `backend` of the CPU baseline's records.
const CPU_BACKEND: &str = "cpu-matrixmultiply";

/// One measured case, as a table row and a JSON record.
struct Case<'a> {
    backend: &'a str,
    types: GemmTypes,
    shape: (u32, u32, u32),
    measurement: &'a Measurement,
    /// The reference table's TFLOP/s for this case, if it has one.
    reference_tflops: Option<f64>,
    /// GFLOP/s over the CPU baseline's at this shape (f32 GPU records only).
    ratio_to_cpu: Option<f64>,
    b_layout: BLayout,
    adapter: &'a str,
}

/// Rounded to 4 decimals, as the records have always given ratios and host times.
fn round4(value: f64) -> f64 {
    (value * 1e4).round() / 1e4
}

/// Prints `case`'s table row (above `bar`) and returns its record.
fn report(case: &Case<'_>, bar: &ProgressBar) -> BenchRecord {
    let (m, n, k) = case.shape;
    let measurement = case.measurement;
    let gflops = Gemm::new(m, n, k).flops() / measurement.median_seconds / 1e9;
    let ratio = case.reference_tflops.map(|r| gflops / 1e3 / r);
    let row = format!(
        "{:<18} {:<8} {:>16} {:>10.3} {:>11.1} {:>7} {:>7} {:>9.1e}  {}{}{}",
        case.backend,
        case.types.short_name(),
        format!("{m}x{n}x{k}"),
        measurement.median_seconds * 1e3,
        gflops,
        ratio.map_or("-".to_string(), |r| format!("{r:.2}")),
        case.ratio_to_cpu
            .map_or("-".to_string(), |r| format!("{r:.2}")),
        measurement.max_relative_error,
        measurement.config,
        match case.b_layout {
            BLayout::Row => String::new(),
            other => format!(" [B {}]", other.name()),
        },
        if measurement.passed { "" } else { "  MISMATCH" }
    );
    bar.suspend(|| println!("{row}"));
    BenchRecord {
        backend: case.backend.to_string(),
        dtype: case.types.short_name().to_string(),
        m,
        n,
        k,
        batch: 1,
        b_layout: case.b_layout.name().to_string(),
        config: measurement.config.clone(),
        timing: measurement.timing.clone(),
        median_ms: record::finite(measurement.median_seconds * 1e3),
        host_submit_ms: measurement
            .host_submit_seconds
            .and_then(|s| record::finite(round4(s * 1e3))),
        gflops: record::finite(gflops),
        max_rel_error: record::finite(measurement.max_relative_error),
        verified: measurement.passed,
        reference_tflops: case.reference_tflops,
        ratio: ratio.and_then(|r| record::finite(round4(r))),
        ratio_to_cpu: case.ratio_to_cpu.and_then(|r| record::finite(round4(r))),
        adapter: case.adapter.to_string(),
        extra: Default::default(),
    }
}

fn main() {
    let args: Args = common::cli::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let reference: Option<Vec<ReferenceEntry>> = args
        .reference
        .as_deref()
        .map(anchors::read)
        .transpose()
        .unwrap_or_else(|message| {
            eprintln!("{message}");
            std::process::exit(2);
        });
    // Tuning may take its time here: a benchmark measures the steady state.
    let context = common::open::open_context_with(|options| {
        options.with_tuning_time_limit(TUNING_TIME_LIMIT)
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
    let runs = args.runs as usize;
    let cpu_baseline =
        args.cpu_baseline(context.adapter_info().device_type == wgpu::DeviceType::Cpu);
    // GFLOP/s of the CPU baseline by shape, measured before the first GPU case of the shape.
    let mut cpu_gflops: HashMap<(u32, u32, u32), Option<f64>> = HashMap::new();
    let mut records = Vec::new();
    println!(
        "{:<18} {:<8} {:>16} {:>10} {:>11} {:>7} {:>7} {:>9}  config",
        "backend", "dtype", "m x n x k", "median ms", "GFLOP/s", "ratio", "vs cpu", "max rel"
    );
    let bar = progress::bar(cases.len() as u64, args.quiet);
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let say = |line: String| {
        if !args.quiet {
            progress::note(&bar, line)
        }
    };
    let fail = |line: String| progress::note(&bar, line);
    let mut failures = 0;
    for (index, &((m, n, k), types, kind, b_layout)) in cases.iter().enumerate() {
        let reference_for = |types: GemmTypes| {
            reference
                .as_deref()
                .and_then(|entries| anchors::find(entries, types, (m, n, k)))
                .map(|entry| entry.tflops)
        };
        if cpu_baseline && !cpu_gflops.contains_key(&(m, n, k)) {
            say(format!("[cpu] {m}x{n}x{k} f32 on matrixmultiply"));
            bar.set_message(format!("{m}x{n}x{k} f32 on the CPU (matrixmultiply)"));
            let gflops = match measure_cpu((m, n, k), runs, &bar) {
                Ok(measurement) => {
                    if !measurement.passed {
                        failures += 1;
                    }
                    let gflops = Gemm::new(m, n, k).flops() / measurement.median_seconds / 1e9;
                    records.push(report(
                        &Case {
                            backend: CPU_BACKEND,
                            types: GemmTypes::F32,
                            shape: (m, n, k),
                            measurement: &measurement,
                            reference_tflops: reference_for(GemmTypes::F32),
                            ratio_to_cpu: None,
                            b_layout: BLayout::Row,
                            adapter: &adapter,
                        },
                        &bar,
                    ));
                    measurement.passed.then_some(gflops)
                }
                Err(error) => {
                    fail(format!("    failed: {error}"));
                    failures += 1;
                    None
                }
            };
            cpu_gflops.insert((m, n, k), gflops);
        }
        let name = format!(
            "{m}x{n}x{k} {} on {kind}, B {}",
            types.short_name(),
            b_layout.name()
        );
        say(format!("[{}/{}] {name}", index + 1, cases.len()));
        bar.set_message(name);
        bar.set_position(index as u64);
        let handle = context.with_backend(BackendChoice::Force(kind));
        let mut gemm = Gemm::new(m, n, k).types(types);
        if b_layout != BLayout::Row {
            gemm = gemm.b(coopgemm::MatrixLayout::column_major());
        }
        if let Err(error) = handle.select(&gemm) {
            say(format!("    skipped: {error}"));
            continue;
        }
        let how = How {
            runs,
            use_timestamps: !args.wall_clock,
            pack: b_layout == BLayout::Packed,
            tune: !args.no_tune,
            prepared: args.prepared,
        };
        let measurement = match measure_types(&handle, &gemm, how, &bar) {
            Ok(measurement) => measurement,
            Err(error) => {
                fail(format!("    failed: {error}"));
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
        records.push(report(
            &Case {
                backend: kind.name(),
                types,
                shape: (m, n, k),
                measurement: &measurement,
                reference_tflops: reference_for(types),
                ratio_to_cpu,
                b_layout,
                adapter: &adapter,
            },
            &bar,
        ));
    }
    bar.finish_and_clear();
    if let Some(path) = &args.json {
        if let Err(message) = record::write(path, &records) {
            eprintln!("{message}");
            std::process::exit(1);
        }
        eprintln!("wrote {}", path.display());
    }
    if failures > 0 {
        eprintln!("{failures} cases failed or did not match the reference");
        std::process::exit(1);
    }
}
