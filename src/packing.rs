//! Pre-packed weights: B copied once into the layout the chosen kernel reads fastest, kept as
//! a [`PackedB`] handle and reused across GEMMs.
//!
//! A kernel's workgroup reads a `k × width` strip of B, `width` being its tile width. Packed
//! into column panels ([`Order::ColumnPanels`]), that strip is one contiguous row-major
//! panel: every workgroup streams its own block of memory, whatever B's original layout
//! (transposed weights included), with rows padded with zeros to the full panel width, so no
//! load needs an N bound. The exception is the coopmat2 kernel with 8-bit inputs, whose
//! tensor-core loads want K contiguous: for it B is packed column-major, each column's K
//! elements padded with zeros to a multiple of 16 bytes (`docs/benchmarks.md` has the
//! measurements). The packing runs on the GPU (`wgsl/pack_b.wgsl`; the
//! column-major form is its panels of width 1, written by tiled transposes through
//! workgroup memory), on every backend. The same kernel stages B for one GEMM at run time
//! (`staging`).

use std::sync::OnceLock;

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use crate::backend::{record_wgpu, PackedForm, Target};
use crate::bindings::{bound_range, uniform_u32};
use crate::error::{Error, Operand, Result};
use crate::problem::{Gemm, MatrixLayout, Order, ResolvedGemm};
use crate::timing::GpuTimer;

/// The WGSL of the packing kernel.
pub const PACK_B_WGSL: &str = include_str!("../wgsl/pack_b.wgsl");

const PACK_WORKGROUP_SIZE: u32 = 256;

/// B packed for one kernel configuration: into column panels of its tile width or, for the
/// coopmat2 kernel with 8-bit inputs, column-major with K padded (its tensor-core loads want
/// K contiguous).
///
/// Use it by giving the GEMM [`PackedB::layout`] as B's layout and [`PackedB::buffer`] as
/// B's buffer; everything else (A, C, alpha, beta, epilogue, m) may change between calls.
///
/// ```no_run
/// # fn main() -> coopgemm::Result<()> {
/// use coopgemm::{Context, Gemm, GemmBuffers, MatrixLayout};
/// let context = Context::new_blocking()?;
/// let layer = Gemm::new(256, 512, 784).b(MatrixLayout::column_major()); // Bᵀ stored
/// let weights = context.upload("W", &vec![0.5f32; 784 * 512])?;
/// let packed = context.pack_b(&layer, &weights)?;
/// let (x, y) = (context.upload("x", &vec![1.0f32; 256 * 784])?, context.upload("y", &vec![0.0f32; 256 * 512])?);
/// context.run(&packed.gemm(&layer), &GemmBuffers::new(&x, packed.buffer(), &y))?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PackedB {
    buffer: wgpu::Buffer,
    layout: MatrixLayout,
    width: u32,
    k: u32,
    n: u32,
}

impl PackedB {
    /// The packed elements (same element type as the original B).
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// B's layout in [`PackedB::buffer`]: column panels of [`PackedB::width`], or
    /// column-major with K padded to a multiple of 16 bytes where the kernel reads B
    /// K-contiguous (then [`PackedB::width`] is 1).
    pub fn layout(&self) -> MatrixLayout {
        self.layout
    }

    /// Columns per panel: the tile width of the kernel it was packed for, or 1 where B is
    /// packed column-major (each column a panel of its own).
    pub fn width(&self) -> u32 {
        self.width
    }

    /// `gemm` with B replaced by this packed B (its k and n must be the packed ones).
    pub fn gemm(&self, gemm: &Gemm) -> Gemm {
        gemm.b(self.layout)
    }

    /// Rows (k) and columns (n) of the packed matrix.
    pub fn shape(&self) -> (u32, u32) {
        (self.k, self.n)
    }
}

/// The packing pipelines of one device, built on first use: `main` for any packed form,
/// `k_contiguous` and `k_contiguous_bytes` (tiled transposes through workgroup memory, the
/// second for word-aligned row-major bytes) for the column-major one.
#[derive(Debug, Default)]
pub(crate) struct PackKernel {
    pipelines: [OnceLock<wgpu::ComputePipeline>; 3],
}

/// The entry points of `wgsl/pack_b.wgsl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PackEntry {
    /// One packed word per invocation, any form.
    PerWord,
    /// The column-major form through a tile of elements, any element size and layout.
    KContiguous,
    /// The column-major form through a tile of source words: 8-bit row-major B whose rows
    /// all start a word.
    KContiguousBytes,
}

impl PackEntry {
    fn name(self) -> &'static str {
        match self {
            PackEntry::PerWord => "main",
            PackEntry::KContiguous => "k_contiguous",
            PackEntry::KContiguousBytes => "k_contiguous_bytes",
        }
    }

    /// Rows and columns of B one workgroup transposes (`TILE_ROWS` x `TILE_COLS`,
    /// `WORD_TILE_ROWS` x `WORD_TILE_COLS`); `None` for the per-word entry.
    fn tile(self) -> Option<(u32, u32)> {
        match self {
            PackEntry::PerWord => None,
            PackEntry::KContiguous => Some((64, 32)),
            PackEntry::KContiguousBytes => Some((128, 64)),
        }
    }
}

/// The packing kernel's uniform block; mirrors `Params` in `wgsl/pack_b.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct PackParams {
    rows: u32,
    cols: u32,
    width: u32,
    panel_rows: u32,
    source_first: u32,
    source_row_stride: u32,
    source_col_stride: u32,
    source_batch_stride: u32,
    words_per_batch: u32,
    element_bits: u32,
    padding: [u32; 2],
}

/// Where packing puts B of one GEMM: its layout and sizes in the packed buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PackedShape {
    form: PackedForm,
    /// B's layout in the packed buffer.
    pub(crate) layout: MatrixLayout,
    width: u32,
    panel_rows: u32,
    matrix_bytes: u64,
    batches: u32,
    /// Bytes of the packed buffer (at least 4).
    pub(crate) total_bytes: u64,
}

impl PackedShape {
    /// The packed layout of the B of `resolved` in `form`, checked against the device's
    /// buffer and binding limits.
    pub(crate) fn new(
        resolved: &ResolvedGemm,
        form: PackedForm,
        limits: &wgpu::Limits,
    ) -> Result<PackedShape> {
        let gemm = &resolved.gemm;
        let (k, n) = (gemm.k, gemm.n);
        let element_bytes = gemm.types.input.size_bytes();
        // Column-major is column panels of width 1, whose rows (K) are padded.
        let (width, panel_rows, order) = match form {
            PackedForm::Panels { width } => (width, k, Order::ColumnPanels { width }),
            PackedForm::KContiguous => {
                let per_16_bytes = (16 / element_bytes).max(1) as u32;
                (1, k.next_multiple_of(per_16_bytes), Order::ColumnMajor)
            }
        };
        let panels = (n as u64).div_ceil(width as u64);
        let matrix_elements = panels * panel_rows as u64 * width as u64;
        let batches = if resolved.b.batch_stride == 0 {
            1
        } else {
            gemm.batch.max(1)
        };
        let matrix_bytes = (matrix_elements * element_bytes).div_ceil(4) * 4;
        let total_bytes = (matrix_bytes * batches as u64).max(4);
        let layout = MatrixLayout {
            order,
            leading_dimension: Some(panel_rows as u64),
            batch_stride: Some(if batches == 1 && resolved.b.batch_stride == 0 {
                0
            } else {
                matrix_bytes / element_bytes
            }),
            offset: 0,
        };
        if total_bytes > limits.max_buffer_size {
            return Err(Error::BufferTooLarge {
                bytes: total_bytes,
                limit: limits.max_buffer_size,
            });
        }
        if total_bytes > limits.max_storage_buffer_binding_size {
            return Err(Error::BindingTooLarge {
                operand: Operand::B,
                bytes: total_bytes,
                limit: limits.max_storage_buffer_binding_size,
            });
        }
        Ok(PackedShape {
            form,
            layout,
            width,
            panel_rows,
            matrix_bytes,
            batches,
            total_bytes,
        })
    }

    fn words_per_batch(&self) -> u32 {
        (self.matrix_bytes / 4) as u32
    }
}

impl PackKernel {
    fn pipeline(&self, device: &wgpu::Device, entry: PackEntry) -> &wgpu::ComputePipeline {
        self.pipelines[entry as usize].get_or_init(|| {
            let module = crate::shader::wgsl_module(
                device,
                "coopgemm pack B",
                PACK_B_WGSL,
                crate::shader::Checks::Default,
            );
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("coopgemm pack B"),
                layout: None,
                module: &module,
                entry_point: Some(entry.name()),
                compilation_options: Default::default(),
                cache: None,
            })
        })
    }

    /// Packs the B of `gemm` (`b` holds it as its layout says) in `form`: a new buffer,
    /// and the command buffer that fills it (none when B is empty).
    pub(crate) fn pack(
        &self,
        device: &wgpu::Device,
        resolved: &ResolvedGemm,
        b: &wgpu::Buffer,
        form: PackedForm,
    ) -> Result<(PackedB, Option<wgpu::CommandBuffer>)> {
        let shape = PackedShape::new(resolved, form, &device.limits())?;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("coopgemm packed B"),
            size: shape.total_bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut command_buffers = Vec::new();
        self.record(
            device,
            resolved,
            b,
            &shape,
            &buffer,
            None,
            Target::CommandBuffers(&mut command_buffers),
        )?;
        let packed = PackedB {
            buffer,
            layout: shape.layout,
            width: shape.width,
            k: resolved.gemm.k,
            n: resolved.gemm.n,
        };
        Ok((packed, command_buffers.pop()))
    }

    /// Records the packing of the B of `resolved` (held in `b`) as `shape` says into
    /// `packed` (at least `shape.total_bytes` long), stamped by `timer` while a GPU timing
    /// is under way. Records nothing when B is empty.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        device: &wgpu::Device,
        resolved: &ResolvedGemm,
        b: &wgpu::Buffer,
        shape: &PackedShape,
        packed: &wgpu::Buffer,
        timer: Option<&GpuTimer>,
        target: Target<'_>,
    ) -> Result<()> {
        if resolved.b.is_empty() {
            return Ok(());
        }
        let gemm = &resolved.gemm;
        let limits = device.limits();
        let element_bytes = gemm.types.input.size_bytes();
        let source = bound_range(&resolved.b, element_bytes, b, &limits)?;
        let params = PackParams {
            rows: gemm.k,
            cols: gemm.n,
            width: shape.width,
            panel_rows: shape.panel_rows,
            source_first: source.first_element,
            source_row_stride: uniform_u32(resolved.b.row_stride()),
            source_col_stride: uniform_u32(resolved.b.col_stride()),
            source_batch_stride: uniform_u32(resolved.b.batch_stride),
            words_per_batch: shape.words_per_batch(),
            element_bits: 8 * element_bytes as u32,
            padding: [0; 2],
        };
        // A tiled transpose where the packed form is column-major and its grid fits: by
        // whole source words for row-major bytes whose rows all start a word, else by
        // element.
        let word_aligned = |elements: u64| (elements * element_bytes).is_multiple_of(4);
        let reads_words = element_bytes == 1
            && resolved.b.col_stride() == 1
            && word_aligned(resolved.b.row_stride())
            && word_aligned(resolved.b.batch_stride)
            && word_aligned(source.first_element as u64);
        let tiled_entry = if reads_words {
            PackEntry::KContiguousBytes
        } else {
            PackEntry::KContiguous
        };
        let tiled = tiled_entry.tile().and_then(|(tile_rows, tile_cols)| {
            let grid = [
                shape.panel_rows.div_ceil(tile_rows),
                gemm.n.div_ceil(tile_cols),
                shape.batches,
            ];
            let fits = grid
                .iter()
                .all(|&groups| groups <= limits.max_compute_workgroups_per_dimension);
            (shape.form == PackedForm::KContiguous && fits).then_some((tiled_entry, grid))
        });
        let (entry, grid) = match tiled {
            Some(tiled) => tiled,
            None => {
                let groups = shape.words_per_batch().div_ceil(PACK_WORKGROUP_SIZE) as u64;
                let grid = crate::backend::flat_grid(groups, shape.batches, &limits)?;
                (PackEntry::PerWord, grid)
            }
        };
        let pipeline = self.pipeline(device, entry);
        let params_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("coopgemm pack B params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coopgemm pack B"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params_buffer.as_entire_binding(),
                },
                source.bind_group_entry(1, b),
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: packed.as_entire_binding(),
                },
            ],
        });
        record_wgpu(device, "coopgemm pack B", target, |encoder| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("coopgemm pack B"),
                timestamp_writes: timer.and_then(|timer| timer.pass_writes()),
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
            Ok(())
        })
    }
}
