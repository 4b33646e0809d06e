//! The main job: multiply random matrices on the GPU, check them against the CPU reference,
//! and report the time and throughput.
//!
//! ```text
//! cargo run --release --example gemm -- [M [N [K]]] [--types f32|f16|f16acc16|bf16|i8|f16-f32-f16|bf16-f32-bf16|f32-f32-f16|f32-f32-bf16] [--backend auto|simt|coopmat|wgsl-coopmat] [--runs N]
//!     [--a-column-major] [--b-column-major]
//! ```
//! One size given means M = N = K (default 1024). Set `RUST_LOG=debug` for the tile
//! configuration and per-call timings.

use std::time::Instant;

use clap::Parser;
use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, ContextOptions, Element, Gemm, GemmBuffers, GemmTypes,
    MatrixLayout, Order,
};

#[allow(dead_code)]
mod common;
use common::cli::{parse_backend_choice, parse_types};
use common::progress;

/// Multiplies random matrices on the GPU, checks C against the CPU reference and reports the
/// time and throughput.
#[derive(Parser, Debug)]
#[command(
    name = "gemm",
    args_override_self = true,
    version,
    after_help = "Set RUST_LOG=debug for the tile configuration and per-call timings."
)]
struct Args {
    /// M [N [K]]: one size is M = N = K, two are M and N = K
    #[arg(value_name = "SIZE", num_args = 0..=3, default_values_t = [1024])]
    sizes: Vec<u32>,
    /// Types by short name: f32, f16, f16acc16, bf16, i8, f16-f32-f16, bf16-f32-bf16,
    /// f32-f32-f16, f32-f32-bf16
    #[arg(long, value_parser = parse_types, default_value = "f32")]
    types: GemmTypes,
    /// Backend: auto, simt, coopmat, wgsl-coopmat
    #[arg(long, value_parser = parse_backend_choice, default_value = "auto")]
    backend: BackendChoice,
    /// GEMMs timed back to back (after one warm-up)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// A stored column-major (a transposed row-major array)
    #[arg(long)]
    a_column_major: bool,
    /// B stored column-major (a transposed row-major array)
    #[arg(long)]
    b_column_major: bool,
    /// No progress spinner while the CPU reference runs
    #[arg(long, short)]
    quiet: bool,
}

impl Args {
    /// (m, n, k) from the sizes given.
    fn shape(&self) -> (u32, u32, u32) {
        match self.sizes[..] {
            [m, n, k] => (m, n, k),
            [m, n] => (m, n, n),
            [s] => (s, s, s),
            _ => (1024, 1024, 1024),
        }
    }

    fn order(column_major: bool) -> Order {
        if column_major {
            Order::ColumnMajor
        } else {
            Order::RowMajor
        }
    }
}

fn run<I: Element, O: Element>(context: &Context, args: &Args) -> Result<(), coopgemm::Error> {
    let (m, n, k) = args.shape();
    let gemm = Gemm::new(m, n, k)
        .types(args.types)
        .a(MatrixLayout {
            order: Args::order(args.a_column_major),
            ..Default::default()
        })
        .b(MatrixLayout {
            order: Args::order(args.b_column_major),
            ..Default::default()
        });
    let resolved = gemm.resolve()?;
    let selection = context.select(&gemm)?;
    println!("backend: {} ({})", selection.backend, selection.reason);
    for (kind, why) in &selection.rejected {
        println!("  not {kind}: {why}");
    }
    let a: Vec<I> = coopgemm::testing::sample_values(resolved.a.required_elements() as usize, 1);
    let b: Vec<I> = coopgemm::testing::sample_values(resolved.b.required_elements() as usize, 2);
    let c: Vec<O> = vec![O::from_f64_lossy(0.0); resolved.c.required_elements() as usize];
    let a_buffer = context.upload("A", &a)?;
    let b_buffer = context.upload("B", &b)?;
    let c_buffer = context.upload("C", &c)?;
    let buffers = GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer);

    let started = Instant::now();
    let kernel = context.prepare(&gemm)?;
    println!(
        "kernel: {} (prepared in {:.1} ms)",
        kernel,
        started.elapsed().as_secs_f64() * 1e3
    );
    // Warm-up, then `runs` GEMMs submitted back to back and timed together, so the wall
    // clock measures the GPU rather than one submit-and-wait round trip per GEMM.
    context.run(&gemm, &buffers)?;
    context.wait()?;
    let started = Instant::now();
    let runs = args.runs as usize;
    for _ in 0..runs {
        context.run(&gemm, &buffers)?;
    }
    context.wait()?;
    let seconds_per_run = started.elapsed().as_secs_f64() / runs as f64;
    log::debug!("{} runs: {:.3} ms each", args.runs, seconds_per_run * 1e3);
    let result: Vec<O> = pollster::block_on(context.download(&c_buffer, c.len()))?;

    let checked = Instant::now();
    // Past 512³ multiply-adds the full f64 reference takes minutes on one core: check a
    // spread sample of elements (corners included) instead.
    let full_check = gemm.flops() / 2.0 <= 512.0 * 512.0 * 512.0;
    let spinner = progress::spinner(
        format!(
            "CPU reference ({})",
            if full_check {
                "every element"
            } else {
                "4096 sampled elements"
            }
        ),
        args.quiet,
    );
    let reference = if full_check {
        Reference::compute(&resolved, &a, &b, &c)?
    } else {
        Reference::sampled(&resolved, &a, &b, &c, 4096)?
    };
    let comparison = reference.compare(&result);
    spinner.finish_and_clear();
    println!(
        "verify: {} ({} elements, max relative error {:.2e}, worst error/tolerance {:.3}; CPU reference took {:.1} s)",
        if comparison.passed() { "ok" } else { "MISMATCH" },
        comparison.checked,
        comparison.max_relative_error,
        comparison.worst_tolerance_ratio,
        checked.elapsed().as_secs_f64()
    );
    println!(
        "{m}x{n}x{k} {}: {:.3} ms per GEMM (mean of {runs} back-to-back runs), {:.1} GFLOP/s",
        args.types,
        seconds_per_run * 1e3,
        gemm.flops() / seconds_per_run / 1e9
    );
    if let Some((index, got, want, tolerance)) = comparison.first_mismatch {
        return Err(coopgemm::Error::Readback(format!(
            "{} mismatches; first at element {index}: got {got}, expected {want} ± {tolerance}",
            comparison.mismatches
        )));
    }
    Ok(())
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let args: Args = common::cli::parse();
    let outcome = (|| {
        let options = ContextOptions::from_env()?.with_backend(args.backend);
        let context = pollster::block_on(Context::with_options(options))?;
        let info = context.adapter_info();
        println!(
            "adapter: {} ({:?}, {:?})",
            info.name, info.backend, info.device_type
        );
        match args.types {
            GemmTypes::F32 => run::<f32, f32>(&context, &args),
            GemmTypes::F16_F32 => run::<half::f16, f32>(&context, &args),
            GemmTypes::F16_ACC_F16 => run::<half::f16, half::f16>(&context, &args),
            GemmTypes::BF16_F32 => run::<half::bf16, f32>(&context, &args),
            GemmTypes::I8_I32 => run::<i8, i32>(&context, &args),
            GemmTypes::F16_F32_F16 => run::<half::f16, half::f16>(&context, &args),
            GemmTypes::BF16_F32_BF16 => run::<half::bf16, half::bf16>(&context, &args),
            GemmTypes::F32_F32_F16 => run::<f32, half::f16>(&context, &args),
            GemmTypes::F32_F32_BF16 => run::<f32, half::bf16>(&context, &args),
            other => Err(coopgemm::Error::Unsupported {
                backend: BackendKind::Simt,
                reason: format!("no example path for {other}"),
            }),
        }
    })();
    if let Err(error) = outcome {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
