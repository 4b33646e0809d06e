//! A small multi-layer perceptron, run entirely on the GPU: `batch × 784 → 512 → 512 → 10`,
//! each hidden layer one GEMM with its bias and ReLU fused into the kernel, the output layer
//! a GEMM with its bias. The weights are stored like a framework's linear layers (`out × in`,
//! i.e. B column-major) and pre-packed once with `Context::pack_b`. Activations stay in GPU
//! buffers between layers; one forward pass is one submission.
//!
//! ```text
//! cargo run --release --example mlp_gemms -- [--batch 256] [--types f16-f32-f16|f32] [--iterations 50] [--no-pack]
//! ```
//! For every backend that can run the layers here it prints the time per batch, then checks
//! each layer against the CPU reference (fed with the GPU's own input to that layer, so each
//! layer is checked with its exact tolerance).

use std::time::Instant;

#[allow(dead_code)]
mod common;

use coopgemm::testing::Reference;
use coopgemm::{
    Activation, BackendChoice, BackendKind, BiasAxis, Context, Element, Gemm, GemmBuffers,
    GemmTypes, MatrixLayout,
};

const LAYERS: [(u32, u32, Activation); 3] = [
    (784, 512, Activation::Relu),
    (512, 512, Activation::Relu),
    (512, 10, Activation::Identity),
];

/// Runs a batch x 784 -> 512 -> 512 -> 10 MLP (bias and ReLU fused, pre-packed weights) on
/// every backend that can, and checks each layer against the CPU reference.
#[derive(clap::Parser, Debug)]
#[command(name = "mlp_gemms", version, args_override_self = true)]
struct Args {
    /// Rows per batch
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    batch: u32,
    /// Types whose input and output match, as layers feed each other: f32, f16-f32-f16,
    /// bf16-f32-bf16
    #[arg(long, value_parser = parse_layer_types, default_value = "f16-f32-f16")]
    types: GemmTypes,
    /// Forward passes timed per backend
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
    /// Keep the weights as stored (B column-major) instead of packing them once
    #[arg(long)]
    no_pack: bool,
}

/// Types a layer can feed to the next: input and output alike.
fn parse_layer_types(text: &str) -> Result<GemmTypes, String> {
    let types = common::cli::parse_types(text)?;
    if types.input != types.output {
        return Err("layers feed each other: the types' input and output must match (f32, f16-f32-f16, bf16-f32-bf16)".into());
    }
    Ok(types)
}

/// One layer: `y = activation(x · Wᵀ + bias)`, W stored `out × in` row-major.
struct Layer<T> {
    /// The layer as stored (B = Wᵀ column-major): what the reference computes.
    gemm: Gemm,
    /// The layer as it runs: on the packed weights when packing.
    packed_gemm: Gemm,
    weights_host: Vec<T>,
    bias_host: Vec<f32>,
    weights: wgpu::Buffer,
    bias: wgpu::Buffer,
    output: wgpu::Buffer,
}

fn build_layers<T: Element>(context: &Context, args: &Args) -> coopgemm::Result<Vec<Layer<T>>> {
    let mut layers = Vec::new();
    for (index, &(inputs, outputs, activation)) in LAYERS.iter().enumerate() {
        let gemm = Gemm::new(args.batch, outputs, inputs)
            .types(args.types)
            .b(MatrixLayout::column_major()) // Wᵀ: W is out × in, row-major
            .bias(BiasAxis::PerColumn)
            .activation(activation);
        // Scaled so activations stay O(1) through the layers.
        let weights_host: Vec<T> =
            coopgemm::testing::sample_values::<f32>((inputs * outputs) as usize, 10 + index as u64)
                .iter()
                .map(|w| T::from_f64_lossy(*w as f64 / (inputs as f64).sqrt()))
                .collect();
        let bias_host: Vec<f32> =
            coopgemm::testing::sample_values(outputs as usize, 20 + index as u64);
        let raw_weights = context.upload("weights", &weights_host)?;
        let (packed_gemm, weights) = if !args.no_pack {
            let packed = context.pack_b(&gemm, &raw_weights)?;
            (packed.gemm(&gemm), packed.buffer().clone())
        } else {
            (gemm, raw_weights)
        };
        let output = context.upload(
            "activations",
            &vec![T::from_f64_lossy(0.0); (args.batch * outputs) as usize],
        )?;
        let bias = context.upload("bias", &bias_host)?;
        layers.push(Layer {
            gemm,
            packed_gemm,
            weights_host,
            bias_host,
            weights,
            bias,
            output,
        });
    }
    Ok(layers)
}

/// Records the three layers and submits them at once; returns the kernels used.
fn forward<T: Element>(
    context: &Context,
    layers: &[Layer<T>],
    input: &wgpu::Buffer,
) -> coopgemm::Result<String> {
    let mut command_buffers = Vec::new();
    let mut kernels = Vec::new();
    let mut x = input;
    for layer in layers {
        let buffers = GemmBuffers::new(x, &layer.weights, &layer.output).with_bias(&layer.bias);
        let recorded = context.record(&layer.packed_gemm, &buffers)?;
        kernels.push(recorded.kernel.to_string());
        command_buffers.extend(recorded.command_buffers);
        x = &layer.output;
    }
    context.queue().submit(command_buffers);
    Ok(kernels.join(", "))
}

fn run<T: Element>(context: &Context, args: &Args, kind: BackendKind) -> coopgemm::Result<()> {
    let layers = build_layers::<T>(context, args)?;
    let input_host: Vec<T> =
        coopgemm::testing::sample_values((args.batch * LAYERS[0].0) as usize, 1);
    let input = context.upload("input", &input_host)?;

    // Warm-up (pipeline builds), then the timed passes.
    let kernels = forward(context, &layers, &input)?;
    context.wait()?;
    let start = Instant::now();
    for _ in 0..args.iterations as usize {
        forward(context, &layers, &input)?;
    }
    context.wait()?;
    let per_batch = start.elapsed().as_secs_f64() / f64::from(args.iterations);
    let flops: f64 = layers.iter().map(|layer| layer.gemm.flops()).sum();
    println!(
        "{kind}: {:.3} ms per batch of {} ({:.1} GFLOP/s; kernels {kernels})",
        per_batch * 1e3,
        args.batch,
        flops / per_batch / 1e9
    );

    // Check every layer against the reference, fed with the GPU's input to that layer.
    let mut layer_input = input_host;
    for (index, layer) in layers.iter().enumerate() {
        let outputs = LAYERS[index].1;
        let got: Vec<T> =
            pollster::block_on(context.download(&layer.output, (args.batch * outputs) as usize))?;
        let reference = Reference::compute_with_bias(
            &layer.gemm.resolve()?,
            &layer_input,
            &layer.weights_host,
            &vec![T::from_f64_lossy(0.0); got.len()],
            Some(&layer.bias_host),
        )?;
        let comparison = reference.compare(&got);
        println!(
            "  layer {} ({}x{} -> {}, {}): {} (max relative error {:.2e}, worst error/tolerance {:.3})",
            index + 1,
            args.batch,
            LAYERS[index].0,
            outputs,
            layer.gemm.epilogue.name(),
            if comparison.passed() { "ok" } else { "MISMATCH" },
            comparison.max_relative_error,
            comparison.worst_tolerance_ratio
        );
        if !comparison.passed() {
            return Err(coopgemm::Error::Readback(format!(
                "layer {} differs from the reference: {:?}",
                index + 1,
                comparison.first_mismatch
            )));
        }
        layer_input = got;
    }
    Ok(())
}

fn main() {
    env_logger::init();
    let args: Args = common::cli::parse();
    let context = common::open::open_context();
    println!(
        "adapter: {}; MLP {}x784 -> 512 -> 512 -> 10, {}, weights {}",
        context.adapter_info().name,
        args.batch,
        args.types,
        if !args.no_pack {
            "pre-packed"
        } else {
            "as stored (out x in)"
        }
    );
    let mut failed = false;
    for kind in [
        BackendKind::Simt,
        BackendKind::Coopmat,
        BackendKind::WgslCoopmat,
    ] {
        let handle = context.with_backend(BackendChoice::Force(kind));
        let probe = LAYERS.map(|(inputs, outputs, activation)| {
            Gemm::new(args.batch, outputs, inputs)
                .types(args.types)
                .bias(BiasAxis::PerColumn)
                .activation(activation)
        });
        if let Some(Err(why)) = probe.iter().map(|g| handle.select(g)).find(|r| r.is_err()) {
            println!("{kind}: skipped ({why})");
            continue;
        }
        let outcome = match args.types.input {
            coopgemm::DType::F32 => run::<f32>(&handle, &args, kind),
            coopgemm::DType::F16 => run::<half::f16>(&handle, &args, kind),
            coopgemm::DType::BF16 => run::<half::bf16>(&handle, &args, kind),
            other => Err(coopgemm::Error::Unsupported {
                backend: kind,
                reason: format!("no MLP with {other} activations"),
            }),
        };
        if let Err(error) = outcome {
            eprintln!("{kind}: error: {error}");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
