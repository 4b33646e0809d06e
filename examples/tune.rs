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

use coopgemm::{Context, ContextOptions, Gemm, GemmTypes};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let mut shapes = "4096x4096x4096,4096x512x14336".to_string();
    let mut dtypes = "f16".to_string();
    let mut limit = 2.0f64;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--shapes" => shapes = value()?,
            "--dtypes" => dtypes = value()?,
            "--time-limit" => limit = value()?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let options =
        ContextOptions::from_env()?.with_tuning_time_limit(Duration::from_secs_f64(limit));
    let context = pollster::block_on(Context::with_options(options))?;
    eprintln!("adapter: {}", context.adapter_info().name);
    match options_cache_directory() {
        Some(dir) => eprintln!("cache directory: {}", dir.display()),
        None => eprintln!("disk cache off: winners are kept in this process only"),
    }
    for dtype in dtypes.split(',') {
        let types = GemmTypes::parse(dtype).ok_or(format!("unknown dtype {dtype}"))?;
        for shape in shapes.split(',') {
            let dims: Vec<u32> = shape.split('x').map(str::parse).collect::<Result<_, _>>()?;
            let [m, n, k] = dims[..] else {
                return Err(format!("shape {shape} is not MxNxK").into());
            };
            let gemm = Gemm::new(m, n, k).types(types);
            let started = Instant::now();
            let kernel = context.tune(&[gemm])?.remove(0);
            println!(
                "{shape:<18} {dtype:<9} {:<8} {:<48} tuned in {:.2} s",
                kernel.backend.to_string(),
                kernel.to_string(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

fn options_cache_directory() -> Option<std::path::PathBuf> {
    coopgemm::DiskCache::Default.directory()
}
