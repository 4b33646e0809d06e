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

use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, ContextOptions, Element, Gemm, GemmBuffers, GemmTypes,
    MatrixLayout, Order,
};

struct Args {
    m: u32,
    n: u32,
    k: u32,
    types: GemmTypes,
    backend: BackendChoice,
    runs: usize,
    a_order: Order,
    b_order: Order,
}

fn parse_args() -> Result<Args, String> {
    let mut sizes = Vec::new();
    let mut args = Args {
        m: 1024,
        n: 1024,
        k: 1024,
        types: GemmTypes::F32,
        backend: BackendChoice::Auto,
        runs: 10,
        a_order: Order::RowMajor,
        b_order: Order::RowMajor,
    };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--types" => {
                let name = iter.next().ok_or("--types needs a value")?;
                args.types = GemmTypes::parse(&name).ok_or(format!("unknown types {name}"))?;
            }
            "--backend" => {
                let name = iter.next().ok_or("--backend needs a value")?;
                args.backend = match name.as_str() {
                    "auto" => BackendChoice::Auto,
                    other => BackendChoice::Force(BackendKind::parse(other).ok_or(format!("unknown backend {other}"))?),
                };
            }
            "--a-column-major" => args.a_order = Order::ColumnMajor,
            "--b-column-major" => args.b_order = Order::ColumnMajor,
            "--runs" => args.runs = iter.next().and_then(|v| v.parse().ok()).ok_or("--runs needs a number")?,
            "-h" | "--help" => return Err("usage: gemm [M [N [K]]] [--types f32|f16|f16acc16|bf16|i8|f16-f32-f16|bf16-f32-bf16|f32-f32-f16|f32-f32-bf16] [--backend auto|simt|coopmat|wgsl-coopmat] [--runs N] [--a-column-major] [--b-column-major]".into()),
            size => sizes.push(size.parse::<u32>().map_err(|_| format!("not a size: {size}"))?),
        }
    }
    match sizes.as_slice() {
        [] => {}
        [s] => (args.m, args.n, args.k) = (*s, *s, *s),
        [m, n] => (args.m, args.n, args.k) = (*m, *n, *n),
        [m, n, k] => (args.m, args.n, args.k) = (*m, *n, *k),
        _ => return Err("at most three sizes".into()),
    }
    args.runs = args.runs.max(1);
    Ok(args)
}

fn run<I: Element, O: Element>(context: &Context, args: &Args) -> Result<(), coopgemm::Error> {
    let gemm = Gemm::new(args.m, args.n, args.k)
        .types(args.types)
        .a(MatrixLayout {
            order: args.a_order,
            ..Default::default()
        })
        .b(MatrixLayout {
            order: args.b_order,
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
    for _ in 0..args.runs {
        context.run(&gemm, &buffers)?;
    }
    context.wait()?;
    let seconds_per_run = started.elapsed().as_secs_f64() / args.runs as f64;
    log::debug!("{} runs: {:.3} ms each", args.runs, seconds_per_run * 1e3);
    let result: Vec<O> = pollster::block_on(context.download(&c_buffer, c.len()))?;

    let checked = Instant::now();
    // Past 512³ multiply-adds the full f64 reference takes minutes on one core: check a
    // spread sample of elements (corners included) instead.
    let full_check = gemm.flops() / 2.0 <= 512.0 * 512.0 * 512.0;
    let reference = if full_check {
        Reference::compute(&resolved, &a, &b, &c)?
    } else {
        Reference::sampled(&resolved, &a, &b, &c, 4096)?
    };
    let comparison = reference.compare(&result);
    println!(
        "verify: {} ({} elements, max relative error {:.2e}, worst error/tolerance {:.3}; CPU reference took {:.1} s)",
        if comparison.passed() { "ok" } else { "MISMATCH" },
        comparison.checked,
        comparison.max_relative_error,
        comparison.worst_tolerance_ratio,
        checked.elapsed().as_secs_f64()
    );
    println!(
        "{}x{}x{} {}: {:.3} ms per GEMM (mean of {} back-to-back runs), {:.1} GFLOP/s",
        args.m,
        args.n,
        args.k,
        args.types,
        seconds_per_run * 1e3,
        args.runs,
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
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
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
