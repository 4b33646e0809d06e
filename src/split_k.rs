//! Split-K: GEMMs with few output tiles and a long K (e.g. 64 × 4096 × 4096) leave most of a
//! large GPU idle, one workgroup per tile walking all of K. Split-K cuts K into `slices`
//! ranges, computes the partial products of every range at once with the backend's own
//! kernel (as a batch of GEMMs into a scratch buffer, one matrix per slice: f32 for float
//! GEMMs summed in f32, i32 for 8-bit ones, so that their sums stay exact), then sums the
//! slices in one more pass (`wgsl/split_k_reduce.wgsl`) that applies alpha, beta and the
//! epilogue and stores C in its layout and type.
//!
//! The partial GEMMs need no kernel of their own: slice `s` of A starts `s * slice_k`
//! columns in, slice `s` of B `s * slice_k` rows in, so "batch stride" = `slice_k` steps
//! along k describes them for every layout (packed B included). A remainder of K that
//! does not divide evenly is one more GEMM into one more slice.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use crate::backend::snippets;
use crate::backend::{flat_grid, record_wgpu, Backend, KernelConfig, Target};
use crate::bindings::{uniform_u32, BindingPlan, GemmBuffers};
use crate::config::CoopmatPlan;
use crate::error::{Error, Result};
use crate::memo::Memo;
use crate::options::SplitKChoice;
use crate::problem::{Gemm, MatrixLayout, Order, ResolvedGemm};
use crate::scratch::ScratchBuffer;
use crate::timing::GpuTimer;
use crate::types::{DType, GemmTypes};

/// The WGSL body of the reduction pass.
pub const SPLIT_K_REDUCE_WGSL: &str = include_str!("../wgsl/split_k_reduce.wgsl");
/// The reduction's finish for f32 partials (float GEMMs).
const SPLIT_K_FINISH_FLOAT: &str = include_str!("../wgsl/split_k_finish_float.wgsl");
/// The reduction's finish for i32 partials (8-bit GEMMs).
const SPLIT_K_FINISH_I32: &str = include_str!("../wgsl/split_k_finish_i32.wgsl");

/// Workgroups a GEMM should have before splitting stops paying: enough to fill a GPU of
/// ~130 multiprocessors twice.
const TARGET_WORKGROUPS: u64 = 256;

/// Which GEMMs [`SplitKChoice::Auto`] splits on a kernel: those with at most `max_tiles`
/// output tiles and a K of at least `min_k`, into `workgroups / tiles` slices (rounded
/// down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AutoSplit {
    pub max_tiles: u64,
    pub min_k: u32,
    pub workgroups: u64,
}

impl AutoSplit {
    /// The SIMT kernel on a GPU: fewer tiles than fill it twice, and K for two slices.
    pub(crate) const SIMT: AutoSplit = AutoSplit {
        max_tiles: TARGET_WORKGROUPS / 2,
        min_k: 2 * MIN_SLICE_K,
        workgroups: TARGET_WORKGROUPS,
    };
    /// The cooperative-matrix kernels: only a quarter of the target in tiles and a long K.
    /// On the H100 (f16, B column-major, `docs/benchmarks.md`) 64x4096x14336 ran at 308 us
    /// on 64 tiles unsplit and 140 us in 4 slices, while 64x4096x4096 (K = 4096) and
    /// 4096x512x14336 (128 tiles) got slower split: the f32 partials cost more there than
    /// the idle tensor cores.
    pub(crate) const COOPMAT: AutoSplit = AutoSplit {
        max_tiles: TARGET_WORKGROUPS / 4,
        min_k: 8 * MIN_SLICE_K,
        workgroups: TARGET_WORKGROUPS,
    };
    /// The coopmat2 kernel's few-row tiles
    /// ([`WorkgroupScopeConfig::FEW_ROWS_TILES`](crate::config::WorkgroupScopeConfig::FEW_ROWS_TILES)),
    /// `block_m` rows by `block_n` columns: about 524288 / (`block_m` x `block_n`)
    /// workgroups, counting at most 32 rows (128 for the 64-row tile, 128 columns wide; 256
    /// for the 32-row tile, 64 wide; 512 for the 16-row tile, 64 wide), at least 4096 of K.
    /// That is 4 slices at N = 4096 on the two larger tiles, 8 on the 16-row tile. On the
    /// H200 (f16, 16 rows on the 16-row tile,
    /// `examples/results/h200-2026-12-02-sixteen-row-tiles/`) 16 x 4096 x 14336 ran in
    /// 47.7 us in 8 slices against 61.4 in 4 and 62.3 in 16, 16 x 14336 x 4096 in 48.4 in 2
    /// against 51.5 in 4 and 57.0 in 8 (call 2 there). On the H100 (f16, 16 to 64 rows,
    /// `examples/results/h100-2026-11-27-few-rows/`, `h100-2026-11-27-rows64/` and
    /// `h100-2026-11-27-few-row-tiles/`):
    /// - N = 4096 ran fastest in 4 slices on both tiles (64 x 4096 x 4096: 31-32 us, against
    ///   40-41 in 2 and 55-58 unsplit; 16 x 4096 x 14336 on 32x64 tiles: 73-78 us against
    ///   85-95 in 8 and 98-100 in 2; 32 rows on 32x128 tiles 67-70 against 74-77 in 8);
    /// - N = 8192 in 2 (32 x 8192 x 4096 on 32x128 tiles: 44-46 us, against 56-57 unsplit);
    /// - N = 14336 unsplit on the 64-row tile (64 x 14336 x 4096 71-72 us against 87-90 in 2).
    ///
    /// 8-bit GEMMs (`eight_bit`, i32 partials) only from 8192 of K: on the H100 (i8,
    /// 32x32x128 tiles, column / row-major B, `examples/results/h100-2026-11-28-few-rows-types/`)
    /// 4 slices took 16 x 4096 x 14336 from 92.8 / 107.6 us to 50.8 / 90.7 and
    /// 32 x 4096 x 14336 from 75.6 / 83.5 to 41.1 / 76.4, but K = 4096 from 18.8 / 26.8 to
    /// 20.5 / 30.3 (16 rows) and 13.3 / 21.9 to 17.8 / 27.8 (32 rows).
    pub(crate) fn few_rows(block_m: u32, block_n: u32, eight_bit: bool) -> AutoSplit {
        let area = u64::from(block_m.clamp(1, 32)) * u64::from(block_n.max(1));
        let workgroups = FEW_ROWS_SPLIT_AREA / area;
        AutoSplit {
            max_tiles: workgroups,
            min_k: if eight_bit { 8 } else { 4 } * MIN_SLICE_K,
            workgroups,
        }
    }

    /// Every policy's `min_k` is at least this (SIMT's is the shortest).
    const SHORTEST_K: u32 = AutoSplit::SIMT.min_k;

    /// The policy for `gemm` where it would run unsplit on `config`, on a GPU (`cpu` false)
    /// or a CPU driver (none: its threads are busy without splits). 8-bit GEMMs (i32
    /// partials) split on the coopmat2 kernel only: on its few-row tiles, and on its other
    /// tiles with B column-major (K contiguous). On the H100 (i8, `h100-2026-11-28-few-rows-types/`)
    /// 4 slices took 48 x 4096 x 14336 from 227.9 to 88.1 us and 64 x 4096 x 14336 from
    /// 152.8 to 90.4 with B column-major; with B row-major the slices ran on tiles that read
    /// it badly (64 rows: 152.6 -> 178.9).
    pub(crate) fn for_kernel(
        config: &KernelConfig,
        gemm: &ResolvedGemm,
        cpu: bool,
    ) -> Option<AutoSplit> {
        let eight_bit = gemm.gemm.types.input.size_bytes() == 1;
        let b_column_major = gemm.b.order == Order::ColumnMajor;
        match config {
            _ if cpu => None,
            KernelConfig::Simt(_) => Some(AutoSplit::SIMT),
            KernelConfig::Coopmat(CoopmatPlan::WorkgroupScope(tile)) if tile.is_few_rows_tile() => {
                Some(AutoSplit::few_rows(tile.block_m, tile.block_n, eight_bit))
            }
            // Its subgroups split K within each workgroup.
            KernelConfig::Coopmat(CoopmatPlan::Decode(_)) => None,
            KernelConfig::Coopmat(CoopmatPlan::WorkgroupScope(_)) if eight_bit => {
                b_column_major.then_some(AutoSplit::COOPMAT)
            }
            KernelConfig::Coopmat(_) if eight_bit => None,
            KernelConfig::Coopmat(_) => Some(AutoSplit::COOPMAT),
            KernelConfig::WgslCoopmat(_) => None,
        }
    }

    /// Slices for a GEMM of `tiles` output tiles and depth `k`, before the limits.
    fn slices(&self, tiles: u64, k: u32) -> Option<u32> {
        if tiles > self.max_tiles || k < self.min_k {
            return None;
        }
        let slices = self.workgroups / tiles;
        Some((slices.min(u64::from(MAX_SLICES)) as u32).min(k / MIN_SLICE_K))
    }
}

/// Elements of C times slices that a few-row tile's split aims at, counting at most 32 rows
/// per tile ([`AutoSplit::few_rows`]).
const FEW_ROWS_SPLIT_AREA: u64 = 32 * 16384;

/// The shortest K range worth a slice under `Auto` (the measurement: `docs/benchmarks.md`,
/// SIMT).
const MIN_SLICE_K: u32 = 1024;
/// At most this many slices (the scratch and the reduction grow with it).
const MAX_SLICES: u32 = 32;

/// How one GEMM is split: `slices` ranges of `slice_k`, then `remainder` more k (its own slice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitK {
    /// Equal K ranges.
    pub slices: u32,
    /// Length of each.
    pub slice_k: u32,
    /// K left after them (0, or a last, shorter slice).
    pub remainder: u32,
}

impl SplitK {
    /// The split for `gemm`, if any. `kernel` gives the workgroup tile (rows, columns) of
    /// the kernel it would run on unsplit, and which GEMMs [`SplitKChoice::Auto`] splits on
    /// that kernel ([`AutoSplit::for_kernel`]; none where `None`). It is only asked once a
    /// split is possible: it plans the kernel.
    pub(crate) fn choose(
        gemm: &ResolvedGemm,
        kernel: impl FnOnce() -> Option<((u32, u32), Option<AutoSplit>)>,
        choice: SplitKChoice,
        max_binding_bytes: u64,
    ) -> Option<SplitK> {
        let g = &gemm.gemm;
        // One batch, sums in f32 or i32 (the partials' types; f16 sums are not split),
        // something to sum.
        let partial_sums = matches!(g.types.accumulate, DType::F32 | DType::I32);
        if g.batch != 1 || gemm.is_empty() || !partial_sums || g.k < 2 {
            return None;
        }
        let slices = match choice {
            SplitKChoice::Off => return None,
            SplitKChoice::Slices(slices) => {
                // The kernel must plan, even though its tile does not matter here.
                kernel()?;
                slices.min(g.k)
            }
            // No policy splits a K this short: skip planning the kernel.
            SplitKChoice::Auto if g.k < AutoSplit::SHORTEST_K => return None,
            SplitKChoice::Auto => {
                let (tile, auto) = kernel()?;
                let tiles =
                    (g.m.div_ceil(tile.0.max(1)) as u64) * (g.n.div_ceil(tile.1.max(1)) as u64);
                auto?.slices(tiles, g.k)?
            }
        };
        if slices < 2 {
            return None;
        }
        let split = SplitK {
            slices,
            slice_k: g.k / slices,
            remainder: g.k % slices,
        };
        (split.scratch_bytes(gemm) <= max_binding_bytes).then_some(split)
    }

    /// The partial GEMMs ([`SplitK::partial_gemms`]), resolved, each with its configuration
    /// (`configs`, one per partial GEMM, as the plan made them).
    pub(crate) fn parts_with_configs<'c>(
        &self,
        gemm: &ResolvedGemm,
        configs: &'c [KernelConfig],
    ) -> Result<Vec<(ResolvedGemm, &'c KernelConfig)>> {
        let parts = self.partial_gemms(gemm);
        if parts.len() != configs.len() {
            return Err(Error::Pipeline(format!(
                "{} configurations for {} partial GEMMs",
                configs.len(),
                parts.len()
            )));
        }
        parts
            .iter()
            .zip(configs)
            .map(|(part, config)| Ok((part.resolve()?, config)))
            .collect()
    }

    /// Partial matrices in the scratch buffer.
    pub fn partials(&self) -> u32 {
        self.slices + u32::from(self.remainder > 0)
    }

    /// Bytes of the partials: [`SplitK::partials`] matrices of m × n 32-bit sums.
    pub(crate) fn scratch_bytes(&self, gemm: &ResolvedGemm) -> u64 {
        self.partials() as u64 * gemm.gemm.m as u64 * gemm.gemm.n as u64 * 4
    }

    /// The GEMMs that fill the scratch: all equal slices as one batch, then the remainder.
    pub(crate) fn partial_gemms(&self, gemm: &ResolvedGemm) -> Vec<Gemm> {
        let g = &gemm.gemm;
        let (a, b) = (&gemm.a, &gemm.b);
        // Steps of one k along A (its columns) and along B (its rows).
        let (a_k_step, b_k_step) = (a.col_stride(), b.row_stride());
        let layout = |matrix: &crate::problem::ResolvedMatrix, offset: u64, batch_stride: u64| {
            MatrixLayout {
                order: matrix.order,
                leading_dimension: Some(matrix.leading_dimension),
                batch_stride: Some(batch_stride),
                offset,
            }
        };
        // Partials in the accumulator's type: f32, or i32 for 8-bit inputs.
        let partial_types = GemmTypes::new(g.types.input, g.types.accumulate, g.types.accumulate);
        let one_slice = g.m as u64 * g.n as u64;
        let base = Gemm::new(g.m, g.n, self.slice_k)
            .types(partial_types)
            .c(MatrixLayout::row_major().batch_stride(one_slice));
        let mut gemms = vec![base
            .batch(self.slices)
            .a(layout(a, a.offset, self.slice_k as u64 * a_k_step))
            .b(layout(b, b.offset, self.slice_k as u64 * b_k_step))];
        if self.remainder > 0 {
            let k_done = (self.slices * self.slice_k) as u64;
            let mut last = base
                .a(layout(a, a.offset + k_done * a_k_step, 0))
                .b(layout(b, b.offset + k_done * b_k_step, 0))
                .c(MatrixLayout::row_major().offset(self.slices as u64 * one_slice));
            last.k = self.remainder;
            gemms.push(last);
        }
        gemms
    }
}

/// The reduction pass's uniform block; mirrors `Params` in `wgsl/split_k_reduce.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct ReduceParams {
    m: u32,
    n: u32,
    slices: u32,
    slice_stride: u32,
    c_first: u32,
    c_row_stride: u32,
    c_col_stride: u32,
    alpha: f32,
    beta: f32,
    bias_first: u32,
    activation: u32,
    bias_axis: u32,
}

const REDUCE_WORKGROUP_SIZE: u32 = 256;

/// The reduction of one split GEMM, bound to its partials, C and bias
/// ([`SplitKernels::bind_reduction`]): made per GEMM, or once for a prepared one.
#[derive(Debug)]
pub(crate) struct BoundReduction {
    pipeline: Arc<wgpu::ComputePipeline>,
    bind_group: wgpu::BindGroup,
    grid: [u32; 3],
}

/// The reduction pipelines of one device, one per (input, output) storage.
#[derive(Debug)]
pub(crate) struct SplitKernels {
    device: wgpu::Device,
    limits: wgpu::Limits,
    pipelines: Memo<(DType, DType), Arc<wgpu::ComputePipeline>>,
    /// The partials buffer, reused by every split GEMM.
    scratch: ScratchBuffer,
    /// Stamps the reduction while a GPU timing is under way (set by the context).
    timer: Option<Arc<GpuTimer>>,
}

impl SplitKernels {
    pub(crate) fn new(device: &wgpu::Device, timer: Option<Arc<GpuTimer>>) -> SplitKernels {
        SplitKernels {
            device: device.clone(),
            limits: device.limits(),
            pipelines: Memo::new("split-K pipeline"),
            scratch: ScratchBuffer::new(device, "coopgemm split-K partials"),
            timer,
        }
    }

    fn pipeline(&self, types: GemmTypes) -> Result<Arc<wgpu::ComputePipeline>> {
        self.pipelines
            .get_or_build((types.input, types.output), |_| {
                Ok(self.build_pipeline(types))
            })
    }

    fn build_pipeline(&self, types: GemmTypes) -> Arc<wgpu::ComputePipeline> {
        let source = if types.output == DType::I32 {
            [SPLIT_K_FINISH_I32, SPLIT_K_REDUCE_WGSL].join("\n")
        } else {
            let output_side = snippets::output_side(types.input, types.output);
            [
                output_side.as_str(),
                SPLIT_K_FINISH_FLOAT,
                SPLIT_K_REDUCE_WGSL,
            ]
            .join("\n")
        };
        let module = crate::shader::wgsl_module(
            &self.device,
            "coopgemm split-K reduce",
            &source,
            crate::shader::Checks::Default,
        );
        Arc::new(
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("coopgemm split-K reduce"),
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                }),
        )
    }

    /// Builds what `gemm` split as `split` will run: the partial GEMMs' pipelines (with
    /// `configs`, one per partial GEMM) and the reduction.
    pub(crate) fn prepare(
        &self,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        split: SplitK,
        configs: &[KernelConfig],
    ) -> Result<()> {
        for (part, config) in split.parts_with_configs(gemm, configs)? {
            backend.prepare(&part, config)?;
        }
        self.pipeline(gemm.gemm.types).map(drop)
    }

    /// The reduction of `gemm` split as `split`, bound to its partials (`partials`, at least
    /// [`SplitK::scratch_bytes`]) and to the user's C and bias (checked here).
    pub(crate) fn bind_reduction(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        split: SplitK,
        partials: &wgpu::Buffer,
    ) -> Result<BoundReduction> {
        // Everything about the user's buffers is checked against the real GEMM first.
        let plan = BindingPlan::new(gemm, buffers, &self.limits)?;
        let (m, n) = (gemm.gemm.m, gemm.gemm.n);
        let elements = m as u64 * n as u64;
        let grid = flat_grid(
            elements.div_ceil(REDUCE_WORKGROUP_SIZE as u64),
            1,
            &self.limits,
        )?;
        let pipeline = self.pipeline(gemm.gemm.types)?;
        let params = ReduceParams {
            m,
            n,
            slices: split.partials(),
            slice_stride: elements as u32,
            c_first: plan.c.first_element,
            c_row_stride: uniform_u32(gemm.c.row_stride()),
            c_col_stride: uniform_u32(gemm.c.col_stride()),
            alpha: gemm.gemm.alpha,
            beta: gemm.gemm.beta,
            bias_first: plan.bias.map_or(0, |bias| bias.first_element),
            activation: gemm.gemm.epilogue.activation.shader_code(),
            bias_axis: gemm.gemm.epilogue.bias_code(),
        };
        let params_buffer = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("coopgemm split-K params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: params_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: partials.as_entire_binding(),
            },
            plan.c.bind_group_entry(3, buffers.c),
        ];
        // The epilogue's bias: integer C takes no epilogue, and its finish has no binding 4.
        if !gemm.gemm.types.output.is_integer() {
            entries.push(match (buffers.bias, plan.bias) {
                (Some(bias), Some(range)) => range.bind_group_entry(4, bias),
                // Never read without a bias; the partials stand in.
                _ => wgpu::BindGroupEntry {
                    binding: 4,
                    resource: partials.as_entire_binding(),
                },
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coopgemm split-K reduce"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        Ok(BoundReduction {
            pipeline,
            bind_group,
            grid,
        })
    }

    /// Records `reductions` in order into `target`, one pass each (each stamped while a
    /// GPU timing is under way), in one command buffer: a batch of prepared split GEMMs
    /// pays for one encoder, not one per GEMM.
    pub(crate) fn record_reductions(
        &self,
        reductions: &[&BoundReduction],
        target: Target<'_>,
    ) -> Result<()> {
        record_wgpu(&self.device, "coopgemm split-K reduce", target, |encoder| {
            for reduction in reductions {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("coopgemm split-K reduce"),
                    timestamp_writes: self.timer.as_ref().and_then(|timer| timer.pass_writes()),
                });
                pass.set_pipeline(&reduction.pipeline);
                pass.set_bind_group(0, &reduction.bind_group, &[]);
                let [x, y, z] = reduction.grid;
                pass.dispatch_workgroups(x, y, z);
            }
            Ok(())
        })
    }

    /// Records the partial GEMMs (with `configs`, one per partial GEMM) and the reduction.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        split: SplitK,
        configs: &[KernelConfig],
        target: Target<'_>,
    ) -> Result<()> {
        let scratch = self.scratch.get(split.scratch_bytes(gemm))?;
        let reduction = self.bind_reduction(gemm, buffers, split, &scratch)?;
        let partial_buffers = GemmBuffers::new(buffers.a, buffers.b, &scratch);
        let mut target = target;
        for (part, config) in split.parts_with_configs(gemm, configs)? {
            backend.record(&part, &partial_buffers, target.reborrow(), config)?;
        }
        self.record_reductions(&[&reduction], target)?;
        log::debug!(
            "split-K: {}x{}x{} as {} slices of {} (+{})",
            gemm.gemm.m,
            gemm.gemm.n,
            gemm.gemm.k,
            split.slices,
            split.slice_k,
            split.remainder
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(m: u32, n: u32, k: u32, tile: (u32, u32), auto: AutoSplit) -> Option<u32> {
        let gemm = Gemm::new(m, n, k)
            .types(GemmTypes::F16_F32)
            .resolve()
            .unwrap();
        SplitK::choose(
            &gemm,
            || Some((tile, Some(auto))),
            SplitKChoice::Auto,
            u64::MAX,
        )
        .map(|split| split.slices)
    }

    #[test]
    fn auto_splits_where_measured_to_pay() {
        // The cooperative-matrix kernels: few tiles and a long K only.
        assert_eq!(
            split(64, 4096, 14336, (64, 64), AutoSplit::COOPMAT),
            Some(4)
        );
        assert_eq!(split(64, 4096, 4096, (64, 64), AutoSplit::COOPMAT), None);
        assert_eq!(
            split(4096, 512, 14336, (128, 128), AutoSplit::COOPMAT),
            None
        );
        // The 32- and 64-row tiles: 4 slices at N = 4096 on either, 2 at N = 8192, none for
        // N = 14336 or a short K.
        let (sixteen, narrow, wide) = (
            AutoSplit::few_rows(16, 64, false),
            AutoSplit::few_rows(32, 64, false),
            AutoSplit::few_rows(64, 128, false),
        );
        // The 16-row tile: 8 slices at N = 4096, 2 at N = 14336, 4 where K = 4096.
        assert_eq!(split(16, 4096, 14336, (16, 64), sixteen), Some(8));
        assert_eq!(split(16, 14336, 4096, (16, 64), sixteen), Some(2));
        assert_eq!(split(16, 4096, 4096, (16, 64), sixteen), Some(4));
        assert_eq!(split(16, 4096, 14336, (32, 64), narrow), Some(4));
        assert_eq!(split(32, 4096, 4096, (32, 64), narrow), Some(4));
        assert_eq!(split(32, 8192, 4096, (32, 64), narrow), Some(2));
        assert_eq!(split(32, 14336, 4096, (32, 64), narrow), None);
        assert_eq!(split(16, 4096, 2048, (32, 64), narrow), None);
        assert_eq!(split(64, 4096, 4096, (64, 128), wide), Some(4));
        assert_eq!(split(64, 8192, 4096, (64, 128), wide), Some(2));
        assert_eq!(split(64, 14336, 4096, (64, 128), wide), None);
        // 8-bit few-row tiles only from 8192 of K.
        let eight_bit = AutoSplit::few_rows(32, 32, true);
        assert_eq!(split(16, 4096, 14336, (32, 32), eight_bit), Some(4));
        assert_eq!(split(16, 4096, 4096, (32, 32), eight_bit), None);
        // The 8-bit 16-row tile: 8 slices at N = 4096, none where K = 4096.
        let eight_bit_sixteen = AutoSplit::few_rows(16, 64, true);
        assert_eq!(split(16, 4096, 14336, (16, 64), eight_bit_sixteen), Some(8));
        assert_eq!(split(16, 14336, 4096, (16, 64), eight_bit_sixteen), None);
        // SIMT splits more.
        assert_eq!(split(64, 4096, 4096, (64, 64), AutoSplit::SIMT), Some(4));
        assert_eq!(split(64, 4096, 2047, (64, 64), AutoSplit::SIMT), None);
        assert_eq!(split(4096, 4096, 4096, (64, 64), AutoSplit::SIMT), None);
        // Nothing automatic without a policy, while a forced count always splits.
        let gemm = Gemm::new(64, 64, 4096).resolve().unwrap();
        assert!(SplitK::choose(
            &gemm,
            || Some(((64, 64), None)),
            SplitKChoice::Auto,
            u64::MAX
        )
        .is_none());
        let forced = SplitK::choose(
            &gemm,
            || Some(((64, 64), None)),
            SplitKChoice::Slices(3),
            u64::MAX,
        );
        assert_eq!(
            forced.map(|s| (s.slices, s.slice_k, s.remainder)),
            Some((3, 1365, 1))
        );
    }

    #[test]
    fn no_policy_splits_below_the_shortest_k() {
        for policy in [
            AutoSplit::SIMT,
            AutoSplit::COOPMAT,
            AutoSplit::few_rows(16, 64, false),
            AutoSplit::few_rows(32, 64, false),
            AutoSplit::few_rows(64, 128, false),
            AutoSplit::few_rows(32, 32, true),
        ] {
            assert!(policy.min_k >= AutoSplit::SHORTEST_K, "{policy:?}");
        }
    }

    #[test]
    fn each_kernel_has_its_policy() {
        let simt = KernelConfig::Simt("128x128x8-t8x8".parse().unwrap());
        let gemm = Gemm::new(64, 64, 4096).resolve().unwrap();
        assert_eq!(
            AutoSplit::for_kernel(&simt, &gemm, false),
            Some(AutoSplit::SIMT)
        );
        assert_eq!(AutoSplit::for_kernel(&simt, &gemm, true), None);
    }
}
