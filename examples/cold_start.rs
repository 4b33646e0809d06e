//! Cold start: wall time from process start to the first verified GEMM result.
//!
//! ```text
//! cargo run --release --example cold_start -- [SIZE | M N K] [--types f32|f16|f16acc16|bf16|i8]
//!     [--backend auto|simt|coopmat|wgsl-coopmat] [--b-column-major] [--cache-dir DIR] [--no-cache]
//! ```
//! Times each step of what a fresh process does before it has a correct C (default 1024³ f32):
//! creating the context (instance, adapter, device, backends; this loads the persisted
//! pipeline caches), building the pipeline, generating and uploading A, B and C, the GEMM
//! itself (submit and wait), downloading C, and checking it against the CPU reference (a
//! sample of 1024 elements past 512³ multiply-adds, everything below). Prints a table and one
//! JSON line (`{"cold_start": ...}`) for scripts. `pre_main_ms` is the time from the kernel
//! starting the process to `main` (from `/proc/self/stat`, 10 ms resolution; Linux only;
//! under `cargo run`, which execs the program in its own process, it includes cargo's start).
//!
//! Run it twice with the same cache directory to see the warm-cache effect: the first run
//! compiles the pipelines and writes the driver's pipeline cache (`--cache-dir`, else
//! `COOPGEMM_CACHE_DIR`, else `~/.cache/coopgemm`), the second feeds it back to the driver:
//!
//! ```text
//! rm -rf /tmp/cg-cache
//! cargo run --release --example cold_start -- --cache-dir /tmp/cg-cache   # cold
//! cargo run --release --example cold_start -- --cache-dir /tmp/cg-cache   # warm
//! ```
//! How much the second run saves depends on the driver: where the Vulkan pipeline cache holds
//! compiled code (usual on discrete GPUs) the second run skips compiling, though drivers with
//! a disk cache of their own (Mesa's, NVIDIA's) may do that without coopgemm's cache too.
//! Mesa lavapipe (25.0) exports only a 32-byte header as its pipeline cache, but keeps compiled shaders in Mesa's own disk cache (`MESA_SHADER_CACHE_DIR`,
//! default `~/.cache/mesa_shader_cache_db`), and compiles with LLVM at the first dispatch,
//! not at pipeline creation. So on lavapipe the cold cost shows in the `gemm` step, and only
//! with a fresh Mesa cache: 1024³ f32 on 2 cores, medians of 3, both caches empty 5.8 s
//! total (5.6 s of it the first GEMM), Mesa's cache warm 0.71 s (first GEMM 0.51 s,
//! about a repeat's time), with or without coopgemm's cache. `gemm_repeat_ms` (the same GEMM
//! again, outside the total) shows how much of the first GEMM was compilation. For a cold
//! run on Mesa drivers, point `MESA_SHADER_CACHE_DIR` at an empty directory.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, ContextOptions, DiskCache, Element, Gemm, GemmBuffers,
    GemmTypes, MatrixLayout,
};

#[allow(dead_code)]
mod common;
use common::cli::{parse_backend_choice, parse_types};

/// Wall time from process start to the first verified GEMM result, step by step; prints a
/// table and one JSON line ({"cold_start": ...}) for scripts.
#[derive(Parser, Debug)]
#[command(name = "cold_start", version, args_override_self = true)]
struct Args {
    /// SIZE (M = N = K) or M N K
    #[arg(value_name = "SIZE", num_args = 0..=3, default_values_t = [1024])]
    sizes: Vec<u32>,
    /// Types by short name: f32, f16, f16acc16, bf16, i8
    #[arg(long, value_parser = parse_types, default_value = "f32")]
    types: GemmTypes,
    /// Backend: auto, simt, coopmat, wgsl-coopmat
    #[arg(long, value_parser = parse_backend_choice, default_value = "auto")]
    backend: BackendChoice,
    /// B column-major (n x k, K contiguous: how `torch.nn.Linear` stores weights) instead
    /// of row-major; the planner may pick another kernel for it
    #[arg(long)]
    b_column_major: bool,
    /// Pipeline-cache directory [default: COOPGEMM_CACHE_DIR, else ~/.cache/coopgemm]
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,
    /// No disk cache
    #[arg(long)]
    no_cache: bool,
}

impl Args {
    /// (m, n, k), or a usage error for two sizes.
    fn shape(&self) -> (u32, u32, u32) {
        match self.sizes[..] {
            [m, n, k] => (m, n, k),
            [s] => (s, s, s),
            [] => (1024, 1024, 1024),
            _ => common::cli::exit_with_usage::<Args>("give one size (M = N = K) or three (M N K)"),
        }
    }

    fn cache(&self) -> DiskCache {
        match (&self.cache_dir, self.no_cache) {
            (_, true) => DiskCache::Off,
            (Some(dir), false) => DiskCache::Dir(dir.clone()),
            (None, false) => DiskCache::Default,
        }
    }
}

/// Milliseconds from the kernel starting this process to now, from `/proc/self/stat`
/// (field 22, start time in clock ticks since boot) and `/proc/uptime`. Linux's USER_HZ,
/// the tick those fields use, is 100.
fn since_process_start_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: count from after it.
    let after_name = &stat[stat.rfind(')')? + 2..];
    let start_ticks: f64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(((uptime - start_ticks / 100.0) * 1e3).max(0.0))
}

/// Named steps and their durations, in order.
#[derive(Default)]
struct Steps(Vec<(&'static str, f64)>);

impl Steps {
    /// Records the time since `*since` as `name`, and restarts the clock.
    fn lap(&mut self, name: &'static str, since: &mut Instant) {
        self.0.push((name, since.elapsed().as_secs_f64() * 1e3));
        *since = Instant::now();
    }
}

struct Outcome {
    steps: Steps,
    kernel: String,
    verified: bool,
    checked: usize,
    max_relative_error: f64,
    gemm_repeat_ms: f64,
    /// From `main` to the verified result.
    total_ms: f64,
}

fn first_result<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    mut steps: Steps,
    clock: &mut Instant,
    started: Instant,
) -> Result<Outcome, coopgemm::Error> {
    let resolved = gemm.resolve()?;
    let kernel = context.prepare(gemm)?.to_string();
    steps.lap("pipeline build", clock);
    let a: Vec<I> = coopgemm::testing::sample_values(resolved.a.required_elements() as usize, 1);
    let b: Vec<I> = coopgemm::testing::sample_values(resolved.b.required_elements() as usize, 2);
    let c: Vec<O> = vec![O::from_f64_lossy(0.0); resolved.c.required_elements() as usize];
    steps.lap("host data", clock);
    let (a_buffer, b_buffer, c_buffer) = (
        context.upload("A", &a)?,
        context.upload("B", &b)?,
        context.upload("C", &c)?,
    );
    // Uploads are queued writes: wait for them so the GEMM step times the GEMM.
    context.queue().submit([]);
    context.wait()?;
    steps.lap("upload", clock);
    let buffers = GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer);
    context.run(gemm, &buffers)?;
    context.wait()?;
    steps.lap("gemm", clock);
    let result: Vec<O> = pollster::block_on(context.download(&c_buffer, c.len()))?;
    steps.lap("download", clock);
    let reference = if gemm.flops() / 2.0 <= 512.0 * 512.0 * 512.0 {
        Reference::compute(&resolved, &a, &b, &c)?
    } else {
        Reference::sampled(&resolved, &a, &b, &c, 1024)?
    };
    let comparison = reference.compare(&result);
    steps.lap("verify", clock);
    let total_ms = started.elapsed().as_secs_f64() * 1e3;

    // Not part of the cold start: the same GEMM again, with everything built.
    let again = Instant::now();
    context.run(gemm, &buffers)?;
    context.wait()?;
    let gemm_repeat_ms = again.elapsed().as_secs_f64() * 1e3;
    Ok(Outcome {
        steps,
        kernel,
        verified: comparison.passed(),
        checked: comparison.checked,
        max_relative_error: comparison.max_relative_error,
        gemm_repeat_ms,
        total_ms,
    })
}

fn main() {
    let started = Instant::now();
    let pre_main_ms = since_process_start_ms();
    let args: Args = common::cli::parse();
    let (m, n, k) = args.shape();
    let cache = args.cache();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cache_dir = cache.directory();
    let mut clock = Instant::now();
    let mut steps = Steps::default();
    steps.lap("startup", &mut clock);
    let outcome = (|| {
        let options = ContextOptions::from_env()?
            .with_backend(args.backend)
            .with_disk_cache(cache.clone());
        let context = pollster::block_on(Context::with_options(options))?;
        steps.lap("instance+device", &mut clock);
        let mut gemm = Gemm::new(m, n, k).types(args.types);
        if args.b_column_major {
            gemm = gemm.b(MatrixLayout::column_major());
        }
        let outcome = match args.types {
            GemmTypes::F32 => first_result::<f32, f32>(&context, &gemm, steps, &mut clock, started),
            GemmTypes::F16_F32 => {
                first_result::<half::f16, f32>(&context, &gemm, steps, &mut clock, started)
            }
            GemmTypes::F16_ACC_F16 => {
                first_result::<half::f16, half::f16>(&context, &gemm, steps, &mut clock, started)
            }
            GemmTypes::BF16_F32 => {
                first_result::<half::bf16, f32>(&context, &gemm, steps, &mut clock, started)
            }
            GemmTypes::I8_I32 => {
                first_result::<i8, i32>(&context, &gemm, steps, &mut clock, started)
            }
            other => Err(coopgemm::Error::Unsupported {
                backend: BackendKind::Simt,
                reason: format!("no host types for {other}"),
            }),
        }?;
        Ok::<_, coopgemm::Error>((context.adapter_info().clone(), outcome))
    })();
    let (adapter, outcome) = outcome.unwrap_or_else(|error| {
        eprintln!("error: {error}");
        std::process::exit(1);
    });

    let cache_files: Vec<(String, u64)> = cache_dir
        .as_deref()
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .map(|entries| {
            let key = coopgemm::DiskCache::file_prefix(&adapter);
            entries
                .filter_map(|entry| entry.ok())
                .filter_map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let kind = name.strip_prefix(&key)?.trim_start_matches('.').to_string();
                    Some((kind, entry.metadata().ok()?.len()))
                })
                .collect()
        })
        .unwrap_or_default();
    println!(
        "adapter: {} ({:?}, {:?}, {})",
        adapter.name, adapter.backend, adapter.device_type, adapter.driver_info
    );
    println!(
        "{m}x{n}x{k} {}{} on {}: {} ({} elements checked, max relative error {:.1e})",
        args.types,
        if args.b_column_major {
            " [B column]"
        } else {
            ""
        },
        outcome.kernel,
        if outcome.verified {
            "verified"
        } else {
            "MISMATCH"
        },
        outcome.checked,
        outcome.max_relative_error
    );
    match &cache_dir {
        Some(dir) => println!(
            "pipeline cache: {} ({})",
            dir.display(),
            if cache_files.is_empty() {
                "no files for this adapter".to_string()
            } else {
                cache_files
                    .iter()
                    .map(|(kind, size)| format!("{kind}: {size} bytes"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        None => println!("pipeline cache: off"),
    }
    if let Some(ms) = pre_main_ms {
        println!(
            "{:<16} {:>10.1} ms  (process start to main)",
            "pre-main", ms
        );
    }
    for (name, ms) in &outcome.steps.0 {
        println!("{name:<16} {ms:>10.1} ms");
    }
    println!(
        "{:<16} {:>10.1} ms  (main to verified result)",
        "total", outcome.total_ms
    );
    println!(
        "{:<16} {:>10.1} ms  (same GEMM again, not in the total)",
        "gemm repeat", outcome.gemm_repeat_ms
    );

    // Through serde_json, so that the adapter's name and the directory come out escaped.
    let key = |name: &str| name.replace(['+', ' '], "_");
    let round = |ms: f64, places: i32| (ms * 10f64.powi(places)).round() / 10f64.powi(places);
    let mut fields = serde_json::Map::new();
    let mut field = |name: String, value: serde_json::Value| fields.insert(name, value);
    field("m".into(), m.into());
    field("n".into(), n.into());
    field("k".into(), k.into());
    field("dtype".into(), args.types.short_name().into());
    field(
        "b_layout".into(),
        if args.b_column_major { "column" } else { "row" }.into(),
    );
    field("kernel".into(), outcome.kernel.clone().into());
    field("adapter".into(), adapter.name.clone().into());
    field("verified".into(), outcome.verified.into());
    field(
        "cache_dir".into(),
        cache_dir
            .as_ref()
            .map(|dir| dir.display().to_string())
            .into(),
    );
    field(
        "cache_bytes".into(),
        cache_files.iter().map(|(_, size)| size).sum::<u64>().into(),
    );
    field(
        "pre_main_ms".into(),
        pre_main_ms.map(|ms| round(ms, 1)).into(),
    );
    for (name, ms) in &outcome.steps.0 {
        field(format!("{}_ms", key(name)), round(*ms, 3).into());
    }
    field("total_ms".into(), round(outcome.total_ms, 3).into());
    field(
        "gemm_repeat_ms".into(),
        round(outcome.gemm_repeat_ms, 3).into(),
    );
    let json = serde_json::json!({ "cold_start": fields });
    println!("{json}");
    if !outcome.verified {
        std::process::exit(1);
    }
}
