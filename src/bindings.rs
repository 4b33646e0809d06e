//! The user's buffers, checked against a description and the device's limits, and the
//! byte ranges the kernels bind.
//!
//! Kernels index with 32-bit unsigned arithmetic relative to the start of each bound
//! range, so every check that keeps an index in range happens here, before encoding.

use crate::error::{Error, Operand, Result};
use crate::problem::{ResolvedGemm, ResolvedMatrix};

/// The buffers of one GEMM. Offsets, strides and layouts come from the [`Gemm`](crate::Gemm).
///
/// Every buffer needs `BufferUsages::STORAGE`. C must be a buffer of its own: wgpu does not let
/// one dispatch read a buffer through one binding while writing it through another.
///
/// ```no_run
/// # fn f(a: &wgpu::Buffer, b: &wgpu::Buffer, c: &wgpu::Buffer, bias: &wgpu::Buffer) {
/// let buffers = coopgemm::GemmBuffers::new(a, b, c).with_bias(bias);
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GemmBuffers<'a> {
    /// Holds A.
    pub a: &'a wgpu::Buffer,
    /// Holds B.
    pub b: &'a wgpu::Buffer,
    /// Holds C; read when beta is not 0, always written.
    pub c: &'a wgpu::Buffer,
    /// Holds the epilogue's f32 bias vector; must be set exactly when the epilogue has a bias.
    pub bias: Option<&'a wgpu::Buffer>,
}

impl<'a> GemmBuffers<'a> {
    /// A, B and C, without a bias vector.
    pub fn new(a: &'a wgpu::Buffer, b: &'a wgpu::Buffer, c: &'a wgpu::Buffer) -> Self {
        GemmBuffers {
            a,
            b,
            c,
            bias: None,
        }
    }

    /// Adds the bias vector's buffer.
    pub fn with_bias(mut self, bias: &'a wgpu::Buffer) -> Self {
        self.bias = Some(bias);
        self
    }
}

/// The part of one buffer a kernel binds, and where the matrix starts inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundRange {
    /// Byte offset of the binding (a multiple of the device's storage offset alignment).
    pub offset_bytes: u64,
    /// Byte size of the binding (a multiple of 4, at least 4).
    pub size_bytes: u64,
    /// Element index, relative to the binding, of the operand's first element.
    pub first_element: u32,
}

impl BoundRange {
    /// A bind-group entry binding this range of `buffer` at `binding`.
    pub fn bind_group_entry<'a>(
        &self,
        binding: u32,
        buffer: &'a wgpu::Buffer,
    ) -> wgpu::BindGroupEntry<'a> {
        wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: self.offset_bytes,
                size: wgpu::BufferSize::new(self.size_bytes),
            }),
        }
    }
}

/// The checked ranges of all operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingPlan {
    /// A's range.
    pub a: BoundRange,
    /// B's range.
    pub b: BoundRange,
    /// C's range.
    pub c: BoundRange,
    /// The bias vector's range, when the epilogue has a bias.
    pub bias: Option<BoundRange>,
}

/// Largest element index the kernels' 32-bit arithmetic can form.
pub(crate) const MAX_ELEMENT_INDEX: u64 = u32::MAX as u64;

impl BindingPlan {
    /// Checks the buffers against the description and the limits, and computes the ranges.
    pub fn new(
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        limits: &wgpu::Limits,
    ) -> Result<BindingPlan> {
        for (input, buffer) in [(Operand::A, buffers.a), (Operand::B, buffers.b)]
            .into_iter()
            .chain(buffers.bias.map(|bias| (Operand::Bias, bias)))
        {
            if buffer == buffers.c {
                return Err(Error::OutputAliasesInput { input });
            }
        }
        let bias = match (gemm.bias, buffers.bias) {
            (Some(bias), Some(buffer)) => {
                // The vector as a one-row matrix: the same checks as every operand.
                let vector = ResolvedMatrix {
                    operand: Operand::Bias,
                    order: crate::problem::Order::RowMajor,
                    rows: 1,
                    cols: bias.len,
                    leading_dimension: (bias.len as u64).max(1),
                    batch_stride: 0,
                    offset: bias.offset,
                    batch: 1,
                };
                Some(bound_range(&vector, 4, buffer, limits)?)
            }
            (Some(_), None) => return Err(Error::MissingBiasBuffer),
            (None, Some(_)) => return Err(Error::UnexpectedBiasBuffer),
            (None, None) => None,
        };
        Ok(BindingPlan {
            bias,
            a: bound_range(
                &gemm.a,
                gemm.gemm.types.input.size_bytes(),
                buffers.a,
                limits,
            )?,
            b: bound_range(
                &gemm.b,
                gemm.gemm.types.input.size_bytes(),
                buffers.b,
                limits,
            )?,
            c: bound_range(
                &gemm.c,
                gemm.gemm.types.output.size_bytes(),
                buffers.c,
                limits,
            )?,
        })
    }
}

/// Checks one operand's buffer and computes the range a kernel binds for it.
pub(crate) fn bound_range(
    matrix: &ResolvedMatrix,
    element_bytes: u64,
    buffer: &wgpu::Buffer,
    limits: &wgpu::Limits,
) -> Result<BoundRange> {
    let operand = matrix.operand;
    let missing = wgpu::BufferUsages::STORAGE - buffer.usage();
    if !missing.is_empty() {
        return Err(Error::MissingBufferUsage { operand, missing });
    }
    let buffer_bytes = buffer.size();
    if matrix.is_empty() {
        // Nothing is read: bind the smallest legal range.
        if buffer_bytes < 4 {
            return Err(Error::BufferTooSmall {
                operand,
                required_bytes: 4,
                buffer_bytes,
            });
        }
        return Ok(BoundRange {
            offset_bytes: 0,
            size_bytes: 4,
            first_element: 0,
        });
    }
    // What the description alone demands, whatever the buffer: every index the kernels
    // form must fit 32 bits, and the range must be bindable on this device. The binding
    // starts at the aligned offset at or below the first element.
    let alignment = limits.min_storage_buffer_offset_alignment.max(4) as u64;
    let span_elements = matrix.end_index().saturating_sub(matrix.offset);
    let first_element = matrix.offset % (alignment / element_bytes).max(1);
    let last_index = (first_element + span_elements).saturating_sub(1);
    if last_index > MAX_ELEMENT_INDEX {
        return Err(Error::IndexOverflow {
            operand,
            last_index,
            limit: MAX_ELEMENT_INDEX,
        });
    }
    // Storage bindings are sized in whole 4-byte words.
    let size_bytes = ((first_element + span_elements) * element_bytes).div_ceil(4) * 4;
    let limit = limits.max_storage_buffer_binding_size;
    if size_bytes > limit {
        return Err(Error::BindingTooLarge {
            operand,
            bytes: size_bytes,
            limit,
        });
    }
    let offset_bytes = (matrix.offset - first_element).saturating_mul(element_bytes);
    let required_bytes = offset_bytes.saturating_add(size_bytes);
    if required_bytes > buffer_bytes {
        return Err(Error::BufferTooSmall {
            operand,
            required_bytes,
            buffer_bytes,
        });
    }
    Ok(BoundRange {
        offset_bytes,
        size_bytes,
        first_element: first_element as u32,
    })
}

/// A stride or element index as the kernels' 32-bit uniforms hold it. Every one of a bound
/// operand fits ([`BindingPlan`] rejects larger ranges, see [`MAX_ELEMENT_INDEX`]); the
/// clamp only keeps the values of unbound (empty) operands in range.
pub(crate) fn uniform_u32(value: u64) -> u32 {
    value.min(u32::MAX as u64) as u32
}

/// A compute-stage uniform-buffer entry of a bind group layout, for a block of `bytes`.
pub(crate) fn uniform_entry(binding: u32, bytes: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: wgpu::BufferSize::new(bytes),
        },
        count: None,
    }
}

/// A compute-stage storage-buffer entry of a bind group layout.
pub(crate) fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}
