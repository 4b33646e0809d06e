//! Pre-tunes a list of GEMM shapes into the disk cache, so that later processes run each
//! shape class with its fastest configuration from their first call, without tuning.
//!
//! ```text
//! cargo run --release --example tune -- [--shapes 4096x512x14336,4096x4096x4096] [--dtypes f16,f32]
//!     [--time-limit SECONDS]
//! ```
//! Every shape × dtype is tuned with [`Context::tune`] (up to `--time-limit` seconds per
//! class, default 2): the candidates of the backend that would run it are timed on scratch
//! buffers and the winner is written to the cache directory (`COOPGEMM_CACHE_DIR`, else
//! `~/.cache/coopgemm`). Prints one line per GEMM: shape, dtype, backend, configuration and
//! how long tuning took (near zero for classes already in the cache).

use std::time::{Duration, Instant};

use clap::Parser;
use coopgemm::{Context, ContextOptions, Gemm, GemmTypes};

#[allow(dead_code)]
mod common;
use common::cli::{parse_shape, parse_types};
use common::progress;

/// Pre-tunes GEMM shapes into the disk cache, so that later processes run each shape class
/// with its fastest configuration from their first call.
#[derive(Parser, Debug)]
#[command(name = "tune", version, args_override_self = true)]
struct Args {
    /// GEMM shapes, MxNxK, comma-separated
    #[arg(long, value_name = "MxNxK,...", value_delimiter = ',',
        action = clap::ArgAction::Set, value_parser = parse_shape, default_value = "4096x4096x4096,4096x512x14336")]
    shapes: Vec<(u32, u32, u32)>,
    /// Types by short name (f32, f16, bf16, i8, ...), comma-separated
    #[arg(long, value_name = "TYPES,...", value_delimiter = ',',
        action = clap::ArgAction::Set, value_parser = parse_types, default_value = "f16")]
    dtypes: Vec<GemmTypes>,
    /// Longest time tuning one shape class may take, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = parse_seconds)]
    time_limit: f64,
    /// No progress bar
    #[arg(long, short)]
    quiet: bool,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => Ok(seconds),
        _ => Err(format!("{text} is not a number of seconds")),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Args = common::cli::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let options = ContextOptions::from_env()?
        .with_tuning_time_limit(Duration::from_secs_f64(args.time_limit));
    let context = pollster::block_on(Context::with_options(options))?;
    eprintln!("adapter: {}", context.adapter_info().name);
    match options_cache_directory() {
        Some(dir) => eprintln!("cache directory: {}", dir.display()),
        None => eprintln!("disk cache off: winners are kept in this process only"),
    }
    let bar = progress::bar((args.dtypes.len() * args.shapes.len()) as u64, args.quiet);
    bar.enable_steady_tick(Duration::from_millis(250));
    for &types in &args.dtypes {
        let dtype = types.short_name();
        for &(m, n, k) in &args.shapes {
            let shape = format!("{m}x{n}x{k}");
            bar.set_message(format!(
                "{shape} {dtype}: tuning (up to {} s)",
                args.time_limit
            ));
            let gemm = Gemm::new(m, n, k).types(types);
            let started = Instant::now();
            let kernel = context.tune(&[gemm])?.remove(0);
            let line = format!(
                "{shape:<18} {dtype:<9} {:<8} {:<48} tuned in {:.2} s",
                kernel.backend.to_string(),
                kernel.to_string(),
                started.elapsed().as_secs_f64()
            );
            bar.suspend(|| println!("{line}"));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(())
}

fn options_cache_directory() -> Option<std::path::PathBuf> {
    coopgemm::DiskCache::Default.directory()
}
