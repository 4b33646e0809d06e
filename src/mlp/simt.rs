//! The fused SIMT network kernel (`wgsl/mlp/mlp_simt.wgsl`): its weight layout, its
//! WGSL, generated per network shape, and its dispatch.

use std::sync::Arc;

use crate::backend::flat_grid;
use crate::bindings::{storage_entry, uniform_entry, BoundRange};
use crate::context::Context;
use crate::error::Result;
use crate::memo::Memo;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::{BoundRows, MlpIo, RowParams};
use crate::mlp::sets::{SetGrouper, SlotParams, SlotRun};
use crate::shader::{wgsl_module, Checks};
use crate::types::DType;

const KERNEL: &str = include_str!("../../wgsl/mlp/mlp_simt.wgsl");
const LOAD_INPUT: &str = include_str!("../../wgsl/mlp/load_input.wgsl");
const INPUT_F32: &str = include_str!("../../wgsl/mlp/input_f32.wgsl");
const INPUT_F16: &str = include_str!("../../wgsl/mlp/input_f16.wgsl");
const OUTPUT_F32: &str = include_str!("../../wgsl/mlp/output_f32.wgsl");
const OUTPUT_F16: &str = include_str!("../../wgsl/mlp/output_f16.wgsl");

/// Rows per workgroup (`WORKGROUP_ROWS` in the kernel).
const WORKGROUP_ROWS: u64 = 128;

/// The start of the kernel's uniform block, which mirrors `Params` in `mlp_simt.wgsl`; a
/// [`LayerPlacement`] per layer follows.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: RowParams,
    groups_x: u32,
    slots: SlotParams,
    /// Vec4s from one weight set to the next.
    set_stride: u32,
    /// Aligns the layer table that follows to 16 bytes.
    padding: u32,
}

/// Outputs per block: each invocation sums a block of outputs at a time in registers.
const OUTPUT_BLOCK: u32 = 4;

/// Where one layer's weights start in a weight set (in vec4s), and its shape: an entry of
/// the kernel's layer table (`Params::layers` in `mlp_simt.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LayerPlacement {
    first: u32,
    inputs: u32,
    /// Blocks of [`OUTPUT_BLOCK`] outputs.
    blocks: u32,
    unused: u32,
}

/// The SIMT kernel's copy of one network: weights in its layout, and its pipelines per row
/// type.
#[derive(Debug)]
pub(crate) struct SimtMlp {
    weights: wgpu::Buffer,
    placements: Vec<LayerPlacement>,
    /// Vec4s from one weight set to the next.
    set_stride: u32,
    /// Weight sets.
    sets: usize,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Memo<MlpIo, Arc<wgpu::ComputePipeline>>,
}

impl SimtMlp {
    /// Uploads every weight set in the kernel's layout, one set after the other.
    pub(crate) fn new(
        context: &Context,
        desc: &MlpDesc,
        sets: &[&[LayerWeights]],
    ) -> Result<SimtMlp> {
        let mut data: Vec<f32> = Vec::new();
        let mut placements = Vec::with_capacity(desc.layers());
        for weights in sets {
            let set_first = data.len();
            for (layer, parameters) in weights.iter().enumerate() {
                let (inputs, outputs) = desc.layer_shape(layer);
                let padded = outputs.next_multiple_of(OUTPUT_BLOCK) as usize;
                if set_first == 0 {
                    placements.push(LayerPlacement {
                        first: (data.len() / 4) as u32,
                        inputs,
                        blocks: outputs.div_ceil(OUTPUT_BLOCK),
                        unused: 0,
                    });
                }
                // Input-major: input i's weights for every output, zero-padded to whole blocks.
                for i in 0..inputs as usize {
                    data.extend(
                        (0..outputs as usize)
                            .map(|o| parameters.weights[o * inputs as usize + i].to_f32()),
                    );
                    data.resize(data.len() + padded - outputs as usize, 0.0);
                }
                data.extend(parameters.bias.iter().map(|b| b.to_f32()));
                data.resize(data.len() + padded - outputs as usize, 0.0);
            }
        }
        let set_stride = u32::try_from(data.len() / 4 / sets.len().max(1))
            .map_err(|_| crate::error::Error::Device("network weights above 64 GiB".into()))?;
        let buffer = context.upload("coopgemm network weights (simt)", &data)?;
        let device = context.device();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("coopgemm network (simt)"),
            entries: &[
                uniform_entry(0, Self::uniform_size(&placements)),
                storage_entry(1, true),
                storage_entry(2, false),
                storage_entry(3, true),
                storage_entry(4, true),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("coopgemm network (simt)"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        Ok(SimtMlp {
            weights: buffer,
            placements,
            set_stride,
            sets: sets.len(),
            layout,
            pipeline_layout,
            pipelines: Memo::new("network pipeline"),
        })
    }

    /// Bytes of the uniform block: [`Params`] and the layer table.
    fn uniform_size(placements: &[LayerPlacement]) -> u64 {
        std::mem::size_of_val(placements) as u64 + std::mem::size_of::<Params>() as u64
    }

    /// Whether this kernel can run `desc` on rows of `io` (always: it takes every width up
    /// to [`MAX_MLP_WIDTH`](crate::MAX_MLP_WIDTH) and both row types).
    pub(crate) fn supports(&self, _desc: &MlpDesc, _io: MlpIo) -> std::result::Result<(), String> {
        Ok(())
    }

    /// The kernel's WGSL for `desc` on rows of `io`.
    fn source(&self, desc: &MlpDesc, io: MlpIo) -> String {
        // Layer l reads activations[r][l % 2] and writes the other.
        let mut layers = String::new();
        for (layer, activation) in desc.activations().iter().enumerate() {
            let (first_set, second_set) = if self.sets > 1 {
                ("slot0.set_first", "slot1.set_first")
            } else {
                ("0u", "0u")
            };
            layers.push_str(&format!(
                "layer({}u, params.layers[{layer}], {first_set}, {second_set}, {}u, {:?});\n    ",
                layer % 2,
                activation.code(),
                activation.slope(),
            ));
        }
        layers.push_str(&format!(
            "if (slot0.stores) {{\n        store_output(0u, slot0.row, {0}u);\n    }}\n    if (slot1.stores) {{\n        store_output(1u, slot1.row, {0}u);\n    }}",
            self.placements.len() % 2
        ));
        let input = if io.input == DType::F16 {
            INPUT_F16
        } else {
            INPUT_F32
        };
        let output = if io.output == DType::F16 {
            OUTPUT_F16
        } else {
            OUTPUT_F32
        };
        let constants = format!(
            "const LAYERS: u32 = {}u;\nconst WIDTH: u32 = {}u;\nconst INPUT_WIDTH: u32 = {}u;\nconst OUTPUT_WIDTH: u32 = {}u;\n",
            desc.layers(),
            desc.max_width().next_multiple_of(OUTPUT_BLOCK),
            desc.input_width(),
            desc.output_width(),
        );
        [
            constants.as_str(),
            &KERNEL.replace("// @layers", &layers),
            input,
            LOAD_INPUT,
            output,
        ]
        .join("\n")
    }

    /// The pipeline for rows of `io`, built on first use.
    fn pipeline(
        &self,
        device: &wgpu::Device,
        desc: &MlpDesc,
        io: MlpIo,
    ) -> Result<Arc<wgpu::ComputePipeline>> {
        self.pipelines.get_or_build(io, |&io| {
            let label = format!("coopgemm network {desc} {io} (simt)");
            // With wgpu's runtime checks: without them, lavapipe's LLVM took over 24 GB
            // compiling mlp64 with weight sets (the process was killed), where the checked
            // module builds in a second and runs as fast.
            let module = wgsl_module(device, &label, &self.source(desc, io), Checks::Default);
            Ok(Arc::new(device.create_compute_pipeline(
                &wgpu::ComputePipelineDescriptor {
                    label: Some(&label),
                    layout: Some(&self.pipeline_layout),
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                },
            )))
        })
    }

    /// Records one dispatch over every row into `encoder`, after the sets' pre-pass where
    /// the run has set indices (`indices`, checked).
    pub(crate) fn record(
        &self,
        context: &Context,
        desc: &MlpDesc,
        chunk: &BoundRows<'_>,
        sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<()> {
        let &BoundRows {
            ref buffers,
            input,
            output,
        } = chunk;
        let rows = buffers.layout.rows;
        if rows == 0 {
            return Ok(());
        }
        let device = context.device();
        let pipeline = self.pipeline(device, desc, buffers.io)?;
        let slots = match sets {
            Some((grouper, indices)) => {
                Some(grouper.record(context, indices, rows, buffers.grouping, None, encoder)?)
            }
            None => None,
        };
        let grid = flat_grid(
            u64::from(rows).div_ceil(WORKGROUP_ROWS),
            1,
            &device.limits(),
        )?;
        let params = Params {
            rows: RowParams::new(&buffers.layout, input, output),
            groups_x: grid[0],
            slots: slots
                .as_ref()
                .map_or_else(SetGrouper::unindexed, |slots| slots.params),
            set_stride: self.set_stride,
            padding: 0,
        };
        // Without set indices the weights stand in for the unused run buffer.
        let run_entry = slots.as_ref().map_or_else(
            || wgpu::BindGroupEntry {
                binding: 4,
                resource: self.weights.as_entire_binding(),
            },
            |slots: &SlotRun| slots.range.bind_group_entry(4, &slots.buffer),
        );
        let uniform = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("coopgemm network params"),
                contents: &[
                    bytemuck::bytes_of(&params),
                    bytemuck::cast_slice(&self.placements),
                ]
                .concat(),
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coopgemm network (simt)"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                input.bind_group_entry(1, buffers.input),
                output.bind_group_entry(2, buffers.output),
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: self.weights.as_entire_binding(),
                },
                run_entry,
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("coopgemm network (simt)"),
            timestamp_writes: context.timer().and_then(|(timer, _)| timer.pass_writes()),
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
        Ok(())
    }
}
