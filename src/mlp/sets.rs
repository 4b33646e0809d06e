//! Several weight sets per network (one network per material): the per-run pre-pass
//! (`wgsl/mlp/group_sets.wgsl`) that turns the caller's per-row set indices into the run
//! buffer every network kernel reads its rows' slots from.
//!
//! Slot `s` of a run evaluates row `order[s]` with set `slot_sets[s]`, and skips it where
//! that set is not below the number of sets. Grouped by the library
//! ([`MlpGrouping::Library`]), the pre-pass counting-sorts the rows by set, so that the rows
//! of one set are contiguous slots (the out-of-range ones last) and a subgroup almost
//! always evaluates one set. For a memory-bound network it sorts within windows of rows
//! (32768 and up) instead of across the whole run, so that the rows a subgroup evaluates
//! also lie close together ([`grouped_in_windows`]). Grouped by the caller
//! ([`MlpGrouping::Caller`]), slot `s` is row `s`: kernels without a layer table read the
//! caller's indices in place ([`SetGrouper::caller_slots`]), and for the others the
//! pre-pass only copies them after the table.

use std::sync::Arc;

use crate::backend::{flat_grid, kernel_pipeline};
use crate::bindings::{bound_range, storage_entry, uniform_entry, BoundRange};
use crate::context::Context;
use crate::error::{Error, Operand, Result};
use crate::memo::Memo;
use crate::mlp::MlpDesc;
use crate::problem::{Order, ResolvedMatrix};
use crate::scratch::ScratchBuffer;
use crate::shader::{wgsl_module, Checks};

const KERNEL: &str = include_str!("../../wgsl/mlp/group_sets.wgsl");

/// Rows per workgroup of the pre-pass (`ROWS_PER_GROUP` in the kernel).
const ROWS_PER_GROUP: u64 = 1024;
/// Pre-pass workgroups per window at the least, for a memory-bound network: the library
/// groups its rows by set within windows of rows (32768 rows and up), so that the rows of a
/// subgroup's slots lie close together in the input and output.
const WINDOW_GROUPS: u64 = 32;
/// Below this many FLOPs per byte of a row's f16 input and output a network is
/// memory-bound, and its rows are grouped within windows; above it, across the whole run.
/// Measured on the H200 (16 sets, cooperative vectors, 2^20 and 2^22 rows): windows made
/// the library's grouping of 32→32→32→8 (58 FLOP/B) 16-25 % faster, left 64→…→16
/// (218 FLOP/B) unchanged and made 128→…→32 (333 FLOP/B) 3-5 % slower (the scan's
/// bins grow with the windows).
const WINDOWED_BELOW_FLOP_PER_BYTE: u64 = 128;
/// The most bins (windows × (sets + 1)) the pre-pass's one-workgroup scan walks, about:
/// windows grow past [`WINDOW_GROUPS`] to keep within it.
const MAX_RUN_BINS: u64 = 4096;
/// `order_first` where slot `s` is row `s`.
const NO_ORDER: u32 = u32::MAX;

/// Who groups the rows of a run by weight set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MlpGrouping {
    /// A pre-pass on the device sorts the rows by set (a counting sort, recorded before the
    /// network in the same submission), so that each subgroup evaluates one set. The
    /// default.
    #[default]
    Library,
    /// The rows are already grouped by set (sorted, or in runs of one set of a subgroup's
    /// size or more): evaluated in their own order, only their indices copied. Where they
    /// are not grouped, results are the same, slower.
    Caller,
}

/// How the kernels find a slot's row and set; mirrored in every network kernel's
/// parameters (`indexed, sets, slots_first, order_first`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct SlotParams {
    /// 1 where the run has set indices (else every row uses set 0, in order).
    indexed: u32,
    /// The network's number of sets.
    sets: u32,
    /// Word of the run buffer holding slot 0's set.
    slots_first: u32,
    /// Word of the run buffer holding slot 0's row, or `NO_ORDER`.
    order_first: u32,
}

/// The pre-pass's uniform block; mirrors `Params` in `group_sets.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GroupParams {
    rows: u32,
    sets: u32,
    indices_first: u32,
    counts_first: u32,
    slots_first: u32,
    order_first: u32,
    groups_x: u32,
    /// Workgroups per window.
    groups_per_window: u32,
}

/// A run's slots: the buffer the kernels read them from (the run buffer, or the caller's
/// indices where nothing needs grouping or copying), the range of it they bind, and where
/// in that range the slots are.
#[derive(Debug)]
pub(crate) struct SlotRun {
    pub(crate) buffer: wgpu::Buffer,
    pub(crate) range: BoundRange,
    pub(crate) params: SlotParams,
}

/// The pre-pass of one network: its pipelines (built on first use) and its run buffer,
/// reused from run to run (see `scratch`).
#[derive(Debug)]
pub(crate) struct SetGrouper {
    /// Whether rows are grouped within windows ([`grouped_in_windows`]).
    windowed: bool,
    sets: u32,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Memo<&'static str, Arc<wgpu::ComputePipeline>>,
    run_buffer: ScratchBuffer,
}

/// Checks the caller's index buffer: `rows` u32s from its start, `STORAGE` usage.
pub(crate) fn bind_indices(
    indices: &wgpu::Buffer,
    rows: u32,
    limits: &wgpu::Limits,
) -> Result<BoundRange> {
    let matrix = ResolvedMatrix {
        operand: Operand::SetIndices,
        order: Order::RowMajor,
        rows,
        cols: 1,
        leading_dimension: 1,
        batch_stride: 0,
        offset: 0,
        batch: 1,
    };
    bound_range(&matrix, 4, indices, limits)
}

/// Whether the library groups a network's rows by set within windows of rows rather than
/// across the whole run: where the network is memory-bound, FLOPs per byte of a row's f16
/// input and output below [`WINDOWED_BELOW_FLOP_PER_BYTE`].
fn grouped_in_windows(desc: &MlpDesc) -> bool {
    let widths = desc.widths();
    let io_bytes = 2 * u64::from(widths[0] + widths[widths.len() - 1]);
    desc.flops_per_row() < WINDOWED_BELOW_FLOP_PER_BYTE * io_bytes
}

impl SetGrouper {
    pub(crate) fn new(context: &Context, desc: &MlpDesc, sets: u32) -> SetGrouper {
        let windowed = grouped_in_windows(desc);
        let device = context.device();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("coopgemm network sets"),
            entries: &[
                uniform_entry(0, std::mem::size_of::<GroupParams>() as u64),
                storage_entry(1, true),
                storage_entry(2, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("coopgemm network sets"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        SetGrouper {
            windowed,
            sets,
            layout,
            pipeline_layout,
            pipelines: Memo::new("network sets pipeline"),
            run_buffer: ScratchBuffer::with_usage(
                device,
                "coopgemm network run",
                wgpu::BufferUsages::COPY_DST,
            ),
        }
    }

    /// The parameters of a run without set indices (every row set 0, in order).
    pub(crate) fn unindexed() -> SlotParams {
        SlotParams {
            indexed: 0,
            sets: 1,
            slots_first: 0,
            order_first: NO_ORDER,
        }
    }

    fn pipeline(
        &self,
        device: &wgpu::Device,
        entry: &'static str,
    ) -> Result<Arc<wgpu::ComputePipeline>> {
        self.pipelines.get_or_build(entry, |&entry| {
            let label = format!("coopgemm network sets ({entry})");
            let module = wgsl_module(device, &label, KERNEL, Checks::Default);
            // Each entry point clears the histogram words it reads (clear_histogram).
            Ok(kernel_pipeline(
                device,
                &label,
                &self.pipeline_layout,
                &module,
                entry,
                &[],
                None,
            ))
        })
    }

    /// The slots of a run that needs no pre-pass: rows grouped by the caller, for a kernel
    /// without a layer table. The kernel reads the caller's indices where they are
    /// (out-of-range ones too: it skips every slot whose set is not below the number of
    /// sets). `None` where the run buffer must be filled ([`SetGrouper::record`]).
    pub(crate) fn caller_slots(
        &self,
        indices: (&wgpu::Buffer, BoundRange),
        grouping: MlpGrouping,
        table: Option<&wgpu::Buffer>,
    ) -> Option<SlotRun> {
        (grouping == MlpGrouping::Caller && table.is_none()).then(|| SlotRun {
            buffer: indices.0.clone(),
            range: indices.1,
            params: SlotParams {
                indexed: 1,
                sets: self.sets,
                slots_first: indices.1.first_element,
                order_first: NO_ORDER,
            },
        })
    }

    /// Records into `encoder` what fills the run buffer of `rows` rows whose set indices
    /// are `indices` (checked with [`bind_indices`]): the table copied to its start (for
    /// the raw-Vulkan kernels), the counts cleared, then the pre-pass; or nothing, where
    /// [`SetGrouper::caller_slots`] gives the slots.
    pub(crate) fn record(
        &self,
        context: &Context,
        indices: (&wgpu::Buffer, BoundRange),
        rows: u32,
        grouping: MlpGrouping,
        table: Option<&wgpu::Buffer>,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<SlotRun> {
        if let Some(slots) = self.caller_slots(indices, grouping, table) {
            return Ok(slots);
        }
        let device = context.device();
        let limits = device.limits();
        let groups = u64::from(rows).div_ceil(ROWS_PER_GROUP);
        let set_bins = u64::from(self.sets) + 1;
        let groups_per_window = if self.windowed {
            WINDOW_GROUPS.max((groups * set_bins).div_ceil(MAX_RUN_BINS))
        } else {
            groups.max(1)
        };
        // At most about MAX_RUN_BINS + set_bins (a few thousand): fits u32.
        let bins = (groups.div_ceil(groups_per_window) * set_bins) as u32;
        // The cooperative-matrix kernels' layer table first (so that it stays their binding
        // 3, the run buffer), 256-byte aligned; none for the cooperative-vector kernel.
        let table_bytes = table.map_or(0, wgpu::Buffer::size);
        let Ok(counts_first) = u32::try_from(table_bytes.div_ceil(4).next_multiple_of(64)) else {
            return Err(Error::BufferTooLarge {
                bytes: table_bytes,
                limit: u64::from(u32::MAX),
            });
        };
        let slots_first = (counts_first + 2 * bins).next_multiple_of(64);
        let library = grouping == MlpGrouping::Library;
        let order_first = if library {
            slots_first.checked_add(rows)
        } else {
            Some(NO_ORDER)
        };
        let words = u64::from(slots_first) + u64::from(rows) * if library { 2 } else { 1 };
        let bytes = 4 * words;
        let limit = limits.max_storage_buffer_binding_size;
        let (Some(order_first), true) = (order_first, bytes <= limit) else {
            return Err(Error::BufferTooLarge { bytes, limit });
        };
        let buffer = self.run_buffer.get(bytes)?;
        if let Some(table) = table {
            encoder.copy_buffer_to_buffer(table, 0, &buffer, 0, table_bytes);
        }
        encoder.clear_buffer(
            &buffer,
            4 * u64::from(counts_first),
            Some(8 * u64::from(bins)),
        );
        let grid = flat_grid(u64::from(rows).div_ceil(ROWS_PER_GROUP), 1, &limits)?;
        let params = GroupParams {
            rows,
            sets: self.sets,
            indices_first: indices.1.first_element,
            counts_first,
            slots_first,
            order_first,
            groups_x: grid[0],
            groups_per_window: groups_per_window as u32,
        };
        let uniform = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("coopgemm network sets params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coopgemm network sets"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                indices.1.bind_group_entry(1, indices.0),
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &buffer,
                        offset: 0,
                        size: wgpu::BufferSize::new(bytes),
                    }),
                },
            ],
        });
        let steps: &[(&'static str, [u32; 3])] = if library {
            &[("count", grid), ("scan", [1, 1, 1]), ("scatter", grid)]
        } else {
            &[("copy", grid)]
        };
        let pipelines = steps
            .iter()
            .map(|&(entry, grid)| Ok((self.pipeline(device, entry)?, grid)))
            .collect::<Result<Vec<_>>>()?;
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("coopgemm network sets"),
            timestamp_writes: context.timer().and_then(|(timer, _)| timer.pass_writes()),
        });
        pass.set_bind_group(0, &bind_group, &[]);
        for (pipeline, grid) in &pipelines {
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
        }
        drop(pass);
        Ok(SlotRun {
            buffer,
            range: BoundRange {
                offset_bytes: 0,
                size_bytes: bytes,
                first_element: 0,
            },
            params: SlotParams {
                indexed: 1,
                sets: self.sets,
                slots_first,
                order_first,
            },
        })
    }
}

/// What a raw-Vulkan network kernel binds and dispatches for one run: its pipeline and
/// grid, the run's buffers (`buffers`, their grouping too) with the input and output
/// ranges bound, its parameter buffer (weights; the cooperative-vector kernel's biases
/// too), its layer table where it has one (the cooperative-matrix kernels', with their
/// bias tiles; the cooperative-vector kernel's layers are specialization constants), and
/// the run's set indices (`sets`, checked).
#[cfg(vulkan_interop)]
pub(crate) struct RawNetworkDispatch<'a> {
    pub kernels: &'a crate::vulkan::dispatch::VulkanKernels,
    pub pipeline: ash::vk::Pipeline,
    pub grid: [u32; 3],
    pub buffers: &'a crate::mlp::rows::MlpBuffers<'a>,
    pub input: BoundRange,
    pub output: BoundRange,
    pub parameters: &'a wgpu::Buffer,
    pub table: Option<&'a wgpu::Buffer>,
    pub sets: Option<(&'a SetGrouper, (&'a wgpu::Buffer, BoundRange))>,
}

/// What a raw-Vulkan network kernel makes of a run: its commands now, or its dispatch
/// bound once for many launches ([`crate::PreparedMlp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunTarget {
    Record,
    Prepare,
}

/// A raw network run, as its [`RunTarget`] asked.
pub(crate) enum RunOutput {
    /// Its command buffers, in submission order.
    Recorded(Vec<wgpu::CommandBuffer>),
    /// Its dispatch, bound once.
    #[cfg(vulkan_interop)]
    Prepared(Box<crate::vulkan::prepared::PreparedDispatch>),
    /// No rows: nothing to record or launch.
    Nothing,
    /// Not bound: each run first fills the run buffer (the library's grouping, or the
    /// copy of the caller's indices after a layer table), so each launch records it.
    PerLaunch,
}

impl RunOutput {
    /// The command buffers of a run recorded with [`RunTarget::Record`].
    pub(crate) fn recorded(self) -> Result<Vec<wgpu::CommandBuffer>> {
        match self {
            RunOutput::Recorded(command_buffers) => Ok(command_buffers),
            RunOutput::Nothing => Ok(Vec::new()),
            _ => Err(Error::Device(
                "a network run was prepared, not recorded".into(),
            )),
        }
    }
}

/// Records one run of a raw-Vulkan network kernel (cooperative matrices or vectors), or,
/// for [`RunTarget::Prepare`], binds its dispatch once where no pre-pass must run before
/// each launch.
///
/// With set indices, [`SetGrouper::record`] first fills the run buffer
/// in a command buffer of its own, submitted before the kernel's: the kernel's layer table
/// (if any) at its start, then the slots, whose parameters go into `params` through
/// `slots_of`; the run buffer then replaces the table as binding 3 (or the caller's
/// indices do, where [`SetGrouper::caller_slots`] gives the slots). The bindings are input,
/// parameters, output and table; a kernel without a table and without set indices reads
/// nothing of binding 3, which then binds the parameters again. `params` are the push
/// constants.
#[cfg(vulkan_interop)]
pub(crate) fn record_raw_network<P: bytemuck::Pod>(
    context: &Context,
    dispatch: RawNetworkDispatch<'_>,
    mut params: P,
    slots_of: impl FnOnce(&mut P) -> &mut SlotParams,
    target: RunTarget,
) -> Result<RunOutput> {
    let mut command_buffers = Vec::new();
    let mut slots = None;
    if let Some((grouper, indices)) = dispatch.sets {
        let grouping = dispatch.buffers.grouping;
        let run = match grouper.caller_slots(indices, grouping, dispatch.table) {
            Some(run) => run,
            None if target == RunTarget::Prepare => return Ok(RunOutput::PerLaunch),
            None => {
                let mut encoder =
                    context
                        .device()
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("coopgemm network sets"),
                        });
                let run = grouper.record(
                    context,
                    indices,
                    dispatch.buffers.layout.rows,
                    grouping,
                    dispatch.table,
                    &mut encoder,
                )?;
                command_buffers.push(encoder.finish());
                run
            }
        };
        *slots_of(&mut params) = run.params;
        slots = Some(run);
    }
    let whole = |buffer: &wgpu::Buffer| BoundRange {
        offset_bytes: 0,
        size_bytes: buffer.size(),
        first_element: 0,
    };
    let table = match &slots {
        Some(run) => (&run.buffer, run.range),
        None => {
            let table = dispatch.table.unwrap_or(dispatch.parameters);
            (table, whole(table))
        }
    };
    let bindings = [
        (dispatch.buffers.input, dispatch.input),
        (dispatch.parameters, whole(dispatch.parameters)),
        (dispatch.buffers.output, dispatch.output),
        table,
    ];
    let kernels = dispatch.kernels;
    if target == RunTarget::Prepare {
        let prepared = kernels.prepare_dispatch(
            dispatch.pipeline,
            &bindings,
            bytemuck::bytes_of(&params),
            dispatch.grid,
        )?;
        return Ok(RunOutput::Prepared(Box::new(prepared)));
    }
    let timestamp_pair = context
        .timer()
        .and_then(|(timer, _)| timer.claim_raw(kernels.has_timestamps()));
    command_buffers.extend(kernels.record_raw(
        dispatch.pipeline,
        &bindings,
        bytemuck::bytes_of(&params),
        dispatch.grid,
        timestamp_pair,
    )?);
    Ok(RunOutput::Recorded(command_buffers))
}

#[cfg(test)]
mod tests {
    use super::grouped_in_windows;
    use crate::mlp::{MlpActivation, MlpDesc};

    #[test]
    fn memory_bound_networks_are_grouped_in_windows() {
        let net = |widths: &[u32]| {
            grouped_in_windows(&MlpDesc::uniform(
                widths,
                MlpActivation::Relu,
                MlpActivation::None,
            ))
        };
        // 58 FLOP per byte of f16 input and output, and the sets test's network (75).
        assert!(net(&[32, 32, 32, 8]));
        assert!(net(&[13, 40, 21, 7]));
        // 218 and 333.
        assert!(!net(&[64, 64, 64, 64, 64, 16]));
        assert!(!net(&[128, 128, 128, 128, 32]));
    }
}
