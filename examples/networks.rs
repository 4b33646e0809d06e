//! Benchmarks fused small-MLP inference: each network kernel, and coopgemm's own
//! layer-by-layer path (one GEMM with a fused bias and activation per layer) on the same
//! networks, verified against the f64 reference on the first and last rows.
//!
//! ```sh
//! cargo run --release --example networks                       # mlp64, mlp128, mlp32 at 2^16, 2^20, 2^22 rows
//! cargo run --release --example networks -- --nets mlp64 --rows 1048576 --json networks.json
//! cargo run --release --example networks -- --nets mlp64 --rows 1048576 --sets 16
//! ```
//!
//! With `--sets N` (N > 1) each kernel that takes weight sets also runs the network with N
//! weight sets, rows assigned a set at random (seeded): grouped by the library's pre-pass
//! (`sets16-library`), pre-sorted by set and grouped by the caller (`sets16-caller`), and
//! in random order without grouping (`sets16-ungrouped`).
//!
//! Times are wall-clock medians of back-to-back runs (each sample runs the network enough
//! times to take about 50 ms, then waits for the queue), so per-run submission work is
//! included where it exceeds the GPU time; and, where the device has timestamp queries, the
//! median GPU time of the dispatches (`Context::time_mlp_on_gpu`; layer by layer, the sum of
//! each layer GEMM's median `Context::time_on_gpu`).
//! `--per-submission N` records N runs of a fused kernel (`Context::record_mlp`) and
//! submits them together, to separate per-submission costs from per-run ones. With
//! `--prepared` the fused runs are prepared once (`Context::prepare_mlp`) and launched N per
//! `Context::run_prepared`.

use std::time::{Duration, Instant};

#[allow(dead_code)]
mod common;

use clap::Parser;
use coopgemm::testing::{sample_data, sample_set_indices, MlpReference, SampleData};
use coopgemm::{
    Activation, BiasAxis, Context, Gemm, GemmBuffers, GemmTypes, LayerWeights, MatrixLayout, Mlp,
    MlpActivation, MlpBuffers, MlpDesc, MlpGrouping, MlpIo, MlpKernel, MlpLayout,
};
use half::f16;
use serde::Serialize;

#[derive(Parser, Debug)]
#[command(about = "Fused small-MLP inference benchmark (coopgemm)")]
struct Args {
    /// Networks: mlp64 (64-64-64-64-64-16), mlp128 (128-128-128-128-32), mlp32 (32-32-32-8),
    /// or widths joined by '-' (ReLU between layers, none after the last).
    #[arg(long, value_delimiter = ',', default_value = "mlp64,mlp128,mlp32")]
    nets: Vec<String>,
    /// Row counts.
    #[arg(long, value_delimiter = ',', default_value = "65536,1048576,4194304")]
    rows: Vec<u32>,
    /// Network kernels to run (coopmat, coopvec, simt); default: every one this device has.
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// Skip coopgemm's layer-by-layer path.
    #[arg(long)]
    no_layer_by_layer: bool,
    /// Samples per case (the median is reported).
    #[arg(long, default_value_t = 7)]
    samples: usize,
    /// Weight sets: above 1, also run N sets with random per-row set indices (grouped by the
    /// library, pre-grouped by the caller, ungrouped).
    #[arg(long, default_value_t = 1)]
    sets: u32,
    /// Network runs per submission (`Context::record_mlp`, then one `Queue::submit`) for the
    /// fused kernels' wall clock; times are per run.
    #[arg(long, default_value_t = 1)]
    per_submission: u32,
    /// Launch the fused kernels' runs prepared once (Context::prepare_mlp), --per-submission
    /// of them per Context::run_prepared, instead of recording each (Context::record_mlp).
    #[arg(long)]
    prepared: bool,
    /// Write one JSON record per case to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// One benchmark result.
#[derive(Serialize, Debug)]
struct Record {
    adapter: String,
    net: String,
    widths: Vec<u32>,
    rows: u32,
    path: String,
    io: String,
    ms: f64,
    /// Median GPU time of the dispatches, where the device has timestamp queries.
    gpu_ms: Option<f64>,
    tflops: f64,
    io_gbs: f64,
    verified: bool,
    worst_tolerance_ratio: f64,
    plan: String,
    timing: &'static str,
    /// Runs per submission of the fused kernels' wall clock (absent in older records: 1).
    per_submission: u32,
    /// How the fused kernels' runs were launched: `recorded` (`Context::record_mlp`) or
    /// `prepared` (`Context::prepare_mlp`, `run_prepared`); absent in older records:
    /// recorded.
    launch: &'static str,
}

fn desc_for(name: &str) -> Option<MlpDesc> {
    let widths: Vec<u32> = match name {
        "mlp64" => vec![64, 64, 64, 64, 64, 16],
        "mlp128" => vec![128, 128, 128, 128, 32],
        "mlp32" => vec![32, 32, 32, 8],
        other => other
            .split('-')
            .map(|w| w.parse().ok())
            .collect::<Option<Vec<u32>>>()?,
    };
    Some(MlpDesc::uniform(
        &widths,
        MlpActivation::Relu,
        MlpActivation::None,
    ))
}

/// Median seconds per call of `run`, which records and submits one evaluation, after a
/// warm-up until the time per run is steady (`common::warm_up` says why).
fn time_runs(context: &Context, mut run: impl FnMut(), samples: usize) -> f64 {
    let estimate = common::warm_up::until_steady(
        || {
            run();
            Ok::<(), coopgemm::Error>(())
        },
        || context.wait(),
    )
    .expect("wait");
    let per_sample = ((common::warm_up::BATCH_SECONDS / estimate) as usize).clamp(1, 2000);
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..per_sample {
                run();
            }
            context.wait().expect("wait");
            started.elapsed().as_secs_f64() / per_sample as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Median seconds per run of a fused network: `--per-submission` runs recorded with
/// `Context::record_mlp` and submitted together, back to back; with `--prepared`, one run
/// prepared once and launched that many times per `Context::run_prepared`.
fn time_fused(context: &Context, mlp: &Mlp, buffers: &MlpBuffers<'_>, args: &Args) -> f64 {
    let runs = args.per_submission.max(1);
    if args.prepared {
        let prepared = context.prepare_mlp(mlp, buffers).expect("prepare");
        let launches: Vec<_> = (0..runs).map(|_| &prepared).collect();
        let seconds = time_runs(
            context,
            || {
                context.run_prepared(&launches).expect("launch");
            },
            args.samples,
        );
        return seconds / f64::from(runs);
    }
    let seconds = time_runs(
        context,
        || {
            let command_buffers = (0..runs).flat_map(|_| {
                context
                    .record_mlp(mlp, buffers)
                    .expect("record")
                    .command_buffers
            });
            context.queue().submit(command_buffers.collect::<Vec<_>>());
        },
        args.samples,
    );
    seconds / f64::from(runs)
}

/// The median of `times` in seconds.
fn median_seconds(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64()
}

/// Checks the first and last `block` rows of `output` against the reference, row `r`
/// with set `indices[r]` where given.
fn verify(
    mlp: &Mlp,
    input: &[f16],
    output: &[f16],
    rows: u32,
    indices: Option<&[u32]>,
) -> (bool, f64) {
    let desc = mlp.desc();
    let block = rows.min(1024);
    let (iw, ow) = (desc.input_width() as usize, desc.output_width() as usize);
    let mut passed = true;
    let mut worst: f64 = 0.0;
    for first in [0, rows - block] {
        let (first, n) = (first as usize, block as usize);
        let sets: Vec<&[LayerWeights]> = mlp.weight_sets().iter().map(Vec::as_slice).collect();
        let reference = MlpReference::compute_sets_for(
            MlpKernel::Coopvec,
            desc,
            &sets,
            indices.map(|indices| &indices[first..first + n]),
            &MlpLayout::new(desc, block),
            &input[first * iw..(first + n) * iw],
            &vec![f16::ZERO; n * ow],
        )
        .expect("reference");
        let comparison = reference.compare(&output[first * ow..(first + n) * ow]);
        passed &= comparison.passed();
        worst = worst.max(comparison.worst_tolerance_ratio);
    }
    (passed, worst)
}

/// coopgemm's layer-by-layer path: one GEMM per layer (f16 in and out, f32 sums, bias and
/// activation fused in the GEMM's store), hidden activations through memory.
struct LayerByLayer {
    gemms: Vec<Gemm>,
    weights: Vec<wgpu::Buffer>,
    biases: Vec<wgpu::Buffer>,
    hidden: Vec<wgpu::Buffer>,
}

impl LayerByLayer {
    fn new(context: &Context, mlp: &Mlp, rows: u32) -> Option<LayerByLayer> {
        let desc = mlp.desc();
        let mut path = LayerByLayer {
            gemms: Vec::new(),
            weights: Vec::new(),
            biases: Vec::new(),
            hidden: Vec::new(),
        };
        for (layer, parameters) in mlp.weights().iter().enumerate() {
            let (inputs, outputs) = (desc.widths()[layer], desc.widths()[layer + 1]);
            let activation = match desc.activations()[layer] {
                MlpActivation::None => Activation::Identity,
                MlpActivation::Relu => Activation::Relu,
                MlpActivation::Gelu => Activation::Gelu,
                MlpActivation::Silu => Activation::Silu,
                _ => return None,
            };
            path.gemms.push(
                Gemm::new(rows, outputs, inputs)
                    .types(GemmTypes::F16_F32_F16)
                    .b(MatrixLayout::column_major())
                    .bias(BiasAxis::PerColumn)
                    .activation(activation),
            );
            path.weights
                .push(context.upload("W", &parameters.weights).ok()?);
            let bias: Vec<f32> = parameters.bias.iter().map(|b| b.to_f32()).collect();
            path.biases.push(context.upload("bias", &bias).ok()?);
            if layer + 1 < desc.layers() {
                let bytes = u64::from(rows) * u64::from(outputs) * 2;
                path.hidden.push(
                    context
                        .create_buffer("hidden", bytes, coopgemm::HOST_BUFFER_USAGES)
                        .ok()?,
                );
            }
        }
        Some(path)
    }

    /// Each layer's GEMM with its buffers.
    fn layers<'a>(
        &'a self,
        input: &'a wgpu::Buffer,
        output: &'a wgpu::Buffer,
    ) -> impl Iterator<Item = (&'a Gemm, GemmBuffers<'a>)> {
        self.gemms.iter().enumerate().map(move |(layer, gemm)| {
            let a = if layer == 0 {
                input
            } else {
                &self.hidden[layer - 1]
            };
            let c = self.hidden.get(layer).unwrap_or(output);
            let buffers =
                GemmBuffers::new(a, &self.weights[layer], c).with_bias(&self.biases[layer]);
            (gemm, buffers)
        })
    }

    fn run(&self, context: &Context, input: &wgpu::Buffer, output: &wgpu::Buffer) {
        for (gemm, buffers) in self.layers(input, output) {
            context.run(gemm, &buffers).expect("layer GEMM");
        }
    }

    /// The sum of the layers' median GPU times, where the device has timestamp queries.
    fn gpu_seconds(
        &self,
        context: &Context,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
        samples: usize,
    ) -> Option<f64> {
        self.layers(input, output)
            .map(|(gemm, buffers)| {
                let times = context
                    .time_on_gpu(gemm, &buffers, samples)
                    .expect("GPU time");
                times.map(median_seconds)
            })
            .sum()
    }
}

fn main() {
    env_logger::init();
    let args = Args::parse();
    let context = common::open::open_context();
    let adapter = context.adapter_info().name.clone();
    eprintln!("adapter: {adapter} ({:?})", context.adapter_info().backend);
    let kernels: Vec<MlpKernel> = if args.kernels.is_empty() {
        MlpKernel::ALL.to_vec()
    } else {
        args.kernels
            .iter()
            .map(|k| MlpKernel::parse(k).unwrap_or_else(|| panic!("unknown kernel {k}")))
            .collect()
    };
    let mut records = Vec::new();
    for net in &args.nets {
        let desc = desc_for(net).unwrap_or_else(|| panic!("unknown network {net}"));
        let weights = LayerWeights::seeded(&desc, 1);
        let mlp = context.build_mlp(&desc, &weights).expect("build");
        for &rows in &args.rows {
            let inputs = rows as usize * desc.input_width() as usize;
            let outputs = rows as usize * desc.output_width() as usize;
            let host_input: Vec<f16> =
                sample_data(SampleData::FullMantissa, inputs, u64::from(rows));
            let input = context.upload("x", &host_input).expect("upload");
            let output = context
                .upload("y", &vec![f16::ZERO; outputs])
                .expect("upload");
            // N weight sets (seeds 1 ..= N, set 0 the one-set network's), random indices
            // and the same sorted.
            let with_sets = (args.sets > 1).then(|| {
                let sets: Vec<_> = (1..=u64::from(args.sets))
                    .map(|seed| LayerWeights::seeded(&desc, seed))
                    .collect();
                let mlp_sets = context.build_mlp_sets(&desc, &sets).expect("build sets");
                let random = sample_set_indices(rows as usize, args.sets, 26);
                let mut sorted = random.clone();
                sorted.sort_unstable();
                let upload = |indices: &[u32]| {
                    context
                        .upload("set indices", bytemuck::cast_slice::<u32, i32>(indices))
                        .expect("upload")
                };
                let (random_buffer, sorted_buffer) = (upload(&random), upload(&sorted));
                (mlp_sets, random, sorted, random_buffer, sorted_buffer)
            });
            let flops = desc.flops_per_row() as f64 * f64::from(rows);
            let bytes = (inputs + outputs) as f64 * 2.0;
            let mut record = |path: String,
                              plan: String,
                              seconds: f64,
                              gpu: Option<f64>,
                              sets: Option<(&Mlp, &[u32])>| {
                let result: Vec<f16> =
                    pollster::block_on(context.download(&output, outputs)).expect("download");
                let (verified, worst) = match sets {
                    Some((mlp, indices)) => verify(mlp, &host_input, &result, rows, Some(indices)),
                    None => verify(&mlp, &host_input, &result, rows, None),
                };
                let r = Record {
                    adapter: adapter.clone(),
                    net: net.clone(),
                    widths: desc.widths().to_vec(),
                    rows,
                    io: MlpIo::F16.to_string(),
                    ms: seconds * 1e3,
                    gpu_ms: gpu.map(|gpu| gpu * 1e3),
                    tflops: flops / seconds / 1e12,
                    io_gbs: bytes / seconds / 1e9,
                    verified,
                    worst_tolerance_ratio: worst,
                    plan,
                    timing: "wall-clock, back-to-back",
                    per_submission: if path.starts_with("fused") {
                        args.per_submission
                    } else {
                        1
                    },
                    launch: if args.prepared && path.starts_with("fused") {
                        "prepared"
                    } else {
                        "recorded"
                    },
                    path,
                };
                let gpu = r.gpu_ms.map_or("-".into(), |ms| format!("{ms:.4}"));
                println!(
                    "{:7} rows {:8} {:16} {:9.4} ms (GPU {gpu} ms) {:7.2} TFLOP/s {:7.1} GB/s  verified {} ({:.2} of tolerance)",
                    r.net, r.rows, r.path, r.ms, r.tflops, r.io_gbs, r.verified, r.worst_tolerance_ratio
                );
                records.push(r);
            };
            for &kernel in &kernels {
                let forced = mlp.with_kernel(Some(kernel));
                let buffers = MlpBuffers::new(&forced, &input, &output, MlpIo::F16, rows);
                let plan = match context.plan_mlp(&forced, MlpIo::F16) {
                    Ok(plan) => plan,
                    Err(why) => {
                        eprintln!("{net}: {kernel} unavailable: {why}");
                        continue;
                    }
                };
                context.queue().write_buffer(
                    &output,
                    0,
                    bytemuck::cast_slice(&vec![f16::NAN; outputs]),
                );
                let seconds = time_fused(&context, &forced, &buffers, &args);
                let gpu = context
                    .time_mlp_on_gpu(&forced, &buffers, args.samples)
                    .expect("GPU time")
                    .map(median_seconds);
                record(
                    format!("fused-{kernel}"),
                    plan.to_string(),
                    seconds,
                    gpu,
                    None,
                );
                let Some((mlp_sets, random, sorted, random_buffer, sorted_buffer)) = &with_sets
                else {
                    continue;
                };
                let forced = mlp_sets.with_kernel(Some(kernel));
                let plan = match context.plan_mlp(&forced, MlpIo::F16) {
                    Ok(plan) => plan,
                    Err(why) => {
                        eprintln!("{net}: {kernel} cannot run {} sets: {why}", args.sets);
                        continue;
                    }
                };
                for (name, grouping, indices, buffer) in [
                    ("library", MlpGrouping::Library, random, random_buffer),
                    ("caller", MlpGrouping::Caller, sorted, sorted_buffer),
                    ("ungrouped", MlpGrouping::Caller, random, random_buffer),
                ] {
                    let buffers = MlpBuffers::new(&forced, &input, &output, MlpIo::F16, rows)
                        .with_set_indices(buffer)
                        .with_grouping(grouping);
                    context.queue().write_buffer(
                        &output,
                        0,
                        bytemuck::cast_slice(&vec![f16::NAN; outputs]),
                    );
                    let seconds = time_fused(&context, &forced, &buffers, &args);
                    let gpu = context
                        .time_mlp_on_gpu(&forced, &buffers, args.samples)
                        .expect("GPU time")
                        .map(median_seconds);
                    record(
                        format!("fused-{kernel}-sets{}-{name}", args.sets),
                        plan.to_string(),
                        seconds,
                        gpu,
                        Some((mlp_sets, indices)),
                    );
                }
            }
            if !args.no_layer_by_layer {
                if let Some(path) = LayerByLayer::new(&context, &mlp, rows) {
                    context.queue().write_buffer(
                        &output,
                        0,
                        bytemuck::cast_slice(&vec![f16::NAN; outputs]),
                    );
                    let seconds = time_runs(
                        &context,
                        || path.run(&context, &input, &output),
                        args.samples,
                    );
                    let plan = context
                        .plan(&path.gemms[0])
                        .map(|p| p.kernel.to_string())
                        .unwrap_or_default();
                    let gpu = path.gpu_seconds(&context, &input, &output, args.samples);
                    record("layer-by-layer".into(), plan, seconds, gpu, None);
                }
            }
        }
    }
    if let Some(file) = args.json {
        // A JSON array, one record per line (as bench writes its records).
        let lines: Vec<String> = records
            .iter()
            .map(|r| serde_json::to_string(r).expect("serialise"))
            .collect();
        std::fs::write(&file, format!("[\n{}\n]\n", lines.join(",\n"))).expect("write records");
        eprintln!("wrote {} records to {}", records.len(), file.display());
    }
}
