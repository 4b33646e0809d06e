//! What the two WGSL backends (SIMT and wgsl-coopmat) share to record a GEMM with plain
//! wgpu: which operands load as quads, the uniform block of `wgsl/tile_loads.wgsl`
//! ([`GemmParams`]), the bind group layout, and one compute dispatch ([`WgslDispatch`]).

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use crate::bindings::{storage_entry, uniform_entry, uniform_u32, BindingPlan, GemmBuffers};
use crate::problem::{Order, ResolvedGemm, ResolvedMatrix};
use crate::vulkan::pipeline_cache::WgpuPipelineCache;

/// Whether the SIMT kernel can load `matrix` (A when `is_a`, else B) a quad at a time: four
/// elements adjacent along its contiguous direction, starting at a multiple of 4, inside a
/// bound range of whole quads. Then the operand binds as vectors
/// ([`simt_source`](super::simt::simt_source)).
/// `tile_stride` is the element distance between the B tiles of neighbouring workgroups.
///
/// Holds when the contiguous direction has stride 1 and the matrix's offset, its other
/// strides and its end (the bound range's end) are multiples of 4: e.g. row-major A with
/// K and the leading dimension multiples of 4.
pub(crate) fn loads_whole_quads(matrix: &ResolvedMatrix, is_a: bool, tile_stride: u64) -> bool {
    loads_whole_groups(matrix, is_a, tile_stride, 4)
}

/// [`loads_whole_quads`] for groups of `width` adjacent elements (8: the octs of the WGSL
/// cooperative-matrix kernel's 16-byte loads of 16-bit operands).
pub(crate) fn loads_whole_groups(
    matrix: &ResolvedMatrix,
    is_a: bool,
    tile_stride: u64,
    width: u64,
) -> bool {
    let (outer_stride, k_stride) = if is_a {
        (matrix.row_stride(), matrix.col_stride())
    } else {
        (matrix.col_stride(), matrix.row_stride())
    };
    let (contiguous, other) = if k_contiguous(matrix, is_a) {
        (k_stride, outer_stride)
    } else {
        (outer_stride, k_stride)
    };
    let aligned = |value: u64| value.is_multiple_of(width);
    contiguous == 1
        && aligned(other)
        && aligned(matrix.offset)
        && aligned(matrix.end_index())
        && (matrix.batch == 1 || aligned(matrix.batch_stride))
        && (is_a || aligned(tile_stride))
}

/// The kernels' uniform block; mirrors `Params` in `wgsl/tile_loads.wgsl` (the SIMT and the
/// WGSL cooperative-matrix kernels share it).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub(crate) struct GemmParams {
    m: u32,
    n: u32,
    k: u32,
    b_tile_stride: u32,
    a_first: u32,
    a_outer_stride: u32,
    a_k_stride: u32,
    a_batch_stride: u32,
    b_first: u32,
    b_outer_stride: u32,
    b_k_stride: u32,
    b_batch_stride: u32,
    c_first: u32,
    c_row_stride: u32,
    c_col_stride: u32,
    c_batch_stride: u32,
    alpha: f32,
    beta: f32,
    bias_first: u32,
    activation: u32,
    bias_axis: u32,
    a_k_contiguous: u32,
    b_k_contiguous: u32,
    padding: u32,
}

impl GemmParams {
    /// Elements between the B tiles (`tile_n` columns wide) of neighbouring workgroups.
    pub(crate) fn b_tile_stride(gemm: &ResolvedGemm, tile_n: u32) -> u64 {
        match gemm.b.order {
            Order::ColumnPanels { .. } => gemm.b.panel_stride(),
            _ => gemm.b.col_stride().saturating_mul(tile_n as u64),
        }
    }

    /// The block for a kernel whose workgroup tile is `tile_n` columns wide.
    pub(crate) fn new(gemm: &ResolvedGemm, plan: &BindingPlan, tile_n: u32) -> GemmParams {
        // A is addressed as (row = outer, k); B as (col = outer, k).
        let (a_outer, a_k) = (gemm.a.row_stride(), gemm.a.col_stride());
        let (b_k, b_outer) = (gemm.b.row_stride(), gemm.b.col_stride());
        GemmParams {
            m: gemm.gemm.m,
            n: gemm.gemm.n,
            k: gemm.gemm.k,
            b_tile_stride: uniform_u32(GemmParams::b_tile_stride(gemm, tile_n)),
            a_first: plan.a.first_element,
            a_outer_stride: uniform_u32(a_outer),
            a_k_stride: uniform_u32(a_k),
            a_batch_stride: uniform_u32(gemm.a.batch_stride),
            b_first: plan.b.first_element,
            b_outer_stride: uniform_u32(b_outer),
            b_k_stride: uniform_u32(b_k),
            b_batch_stride: uniform_u32(gemm.b.batch_stride),
            c_first: plan.c.first_element,
            c_row_stride: uniform_u32(gemm.c.row_stride()),
            c_col_stride: uniform_u32(gemm.c.col_stride()),
            c_batch_stride: uniform_u32(gemm.c.batch_stride),
            alpha: gemm.gemm.alpha,
            beta: gemm.gemm.beta,
            bias_first: plan.bias.map_or(0, |bias| bias.first_element),
            activation: gemm.gemm.epilogue.activation.shader_code(),
            bias_axis: gemm.gemm.epilogue.bias_code(),
            a_k_contiguous: u32::from(k_contiguous(&gemm.a, true)),
            b_k_contiguous: u32::from(k_contiguous(&gemm.b, false)),
            padding: 0,
        }
    }
}

/// The bind group layout of the WGSL GEMM kernels (SIMT and WGSL cooperative-matrix): 0 the
/// uniform `Params`, 1 A, 2 B (read-only), 3 C, 4 the bias vector (read-only).
pub(crate) fn gemm_bind_group_layout(device: &wgpu::Device, label: &str) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &[
            uniform_entry(0, std::mem::size_of::<GemmParams>() as u64),
            storage_entry(1, true),
            storage_entry(2, true),
            storage_entry(3, false),
            storage_entry(4, true),
        ],
    })
}

/// One dispatch of a WGSL GEMM kernel whose bindings follow [`gemm_bind_group_layout`].
pub(crate) struct WgslDispatch<'a> {
    pub device: &'a wgpu::Device,
    pub layout: &'a wgpu::BindGroupLayout,
    pub pipeline: &'a wgpu::ComputePipeline,
    pub params: GemmParams,
    pub plan: &'a BindingPlan,
    pub buffers: &'a GemmBuffers<'a>,
    pub grid: [u32; 3],
    pub timer: Option<&'a crate::timing::GpuTimer>,
    pub label: &'a str,
}

impl WgslDispatch<'_> {
    /// Records the dispatch in a compute pass of its own on `encoder`.
    pub(crate) fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let params_buffer = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(self.label),
                contents: bytemuck::bytes_of(&self.params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let (plan, buffers) = (self.plan, self.buffers);
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.label),
            layout: self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params_buffer.as_entire_binding(),
                },
                plan.a.bind_group_entry(1, buffers.a),
                plan.b.bind_group_entry(2, buffers.b),
                plan.c.bind_group_entry(3, buffers.c),
                // Without a bias, binding 4 is never read: A's range stands in.
                match (buffers.bias, plan.bias) {
                    (Some(bias), Some(range)) => range.bind_group_entry(4, bias),
                    _ => plan.a.bind_group_entry(4, buffers.a),
                },
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(self.label),
            timestamp_writes: self.timer.and_then(|timer| timer.pass_writes()),
        });
        pass.set_pipeline(self.pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(self.grid[0], self.grid[1], self.grid[2]);
    }
}

/// Whether consecutive k of an operand are adjacent in memory.
pub(crate) fn k_contiguous(matrix: &ResolvedMatrix, k_is_column: bool) -> bool {
    match matrix.order {
        Order::RowMajor | Order::ColumnPanels { .. } => k_is_column,
        Order::ColumnMajor => !k_is_column,
    }
}

/// The pipeline of `module`'s entry point `entry`, specialised by `constants`, on `layout`,
/// through the driver's pipeline cache where there is one (saved to disk afterwards).
/// Workgroup memory is not zero-initialised: every kernel built here writes each element
/// before reading it (wgpu's zero-initialisation is shader code on GL, which llvmpipe took
/// minutes to compile for the network sets' pre-pass).
pub(crate) fn kernel_pipeline(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    entry: &str,
    constants: &[(&str, f64)],
    cache: Option<&WgpuPipelineCache>,
) -> Arc<wgpu::ComputePipeline> {
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(layout),
        module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            zero_initialize_workgroup_memory: false,
        },
        cache: cache.map(WgpuPipelineCache::cache),
    });
    if let Some(cache) = cache {
        cache.save();
    }
    Arc::new(pipeline)
}
