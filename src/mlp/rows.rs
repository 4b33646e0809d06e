//! Where a network run's rows are: their types ([`MlpIo`]), their layout ([`MlpLayout`]),
//! the caller's buffers ([`MlpBuffers`]) and what both kernels' parameters start with.

use crate::bindings::{bound_range, BoundRange};
use crate::error::{Error, Operand, Result};
use crate::mlp::desc::MlpDesc;
use crate::mlp::sets::MlpGrouping;
use crate::problem::{Order, ResolvedMatrix};
use crate::types::DType;

/// Rows per chunk are a multiple of this where a run is split to fit the bindings
/// ([`MlpLayout::chunks`]): whole workgroups of every network kernel, and 16-byte aligned
/// row starts wherever the first chunk's are.
const CHUNK_ROWS: u32 = 4096;

/// The element types of a network's input and output rows (f16 or f32 each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MlpIo {
    /// The input rows' type.
    pub input: DType,
    /// The output rows' type.
    pub output: DType,
}

impl MlpIo {
    /// f16 in, f16 out.
    pub const F16: MlpIo = MlpIo {
        input: DType::F16,
        output: DType::F16,
    };
    /// f32 in, f32 out.
    pub const F32: MlpIo = MlpIo {
        input: DType::F32,
        output: DType::F32,
    };
    /// f16 in, f32 out.
    pub const F16_F32: MlpIo = MlpIo {
        input: DType::F16,
        output: DType::F32,
    };
    /// f32 in, f16 out.
    pub const F32_F16: MlpIo = MlpIo {
        input: DType::F32,
        output: DType::F16,
    };

    /// Checks that both types are f16 or f32.
    pub(crate) fn check(self) -> Result<()> {
        for (operand, dtype) in [(Operand::Input, self.input), (Operand::Output, self.output)] {
            if !matches!(dtype, DType::F16 | DType::F32) {
                return Err(Error::MlpRowType { operand, dtype });
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for MlpIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}->{}", self.input.name(), self.output.name())
    }
}

/// Where a run's rows are: how many, and the offset and row stride (in elements) of the
/// input and the output arrays. Row `r` of the input is elements `input_offset + r ·
/// input_stride ..` of its buffer, `input_width` of them; the same for the output. Output
/// elements between rows are left unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlpLayout {
    /// Rows to evaluate.
    pub rows: u32,
    /// Element offset of the first input row.
    pub input_offset: u32,
    /// Elements from one input row to the next (at least the input width).
    pub input_stride: u32,
    /// Element offset of the first output row.
    pub output_offset: u32,
    /// Elements from one output row to the next (at least the output width).
    pub output_stride: u32,
}

impl MlpLayout {
    /// `rows` tightly packed rows from the start of both buffers.
    pub fn new(desc: &MlpDesc, rows: u32) -> MlpLayout {
        MlpLayout {
            rows,
            input_offset: 0,
            input_stride: desc.input_width(),
            output_offset: 0,
            output_stride: desc.output_width(),
        }
    }

    /// Checks the strides against `desc`'s widths.
    pub(crate) fn check(&self, desc: &MlpDesc) -> Result<()> {
        for (operand, stride, width) in [
            (Operand::Input, self.input_stride, desc.input_width()),
            (Operand::Output, self.output_stride, desc.output_width()),
        ] {
            if stride < width {
                return Err(Error::MlpRowStride {
                    operand,
                    stride,
                    width,
                });
            }
        }
        Ok(())
    }

    /// One side as a row-major matrix, for the buffer checks GEMM operands get.
    fn matrix(&self, desc: &MlpDesc, operand: Operand) -> ResolvedMatrix {
        let (offset, stride, width) = match operand {
            Operand::Input => (self.input_offset, self.input_stride, desc.input_width()),
            _ => (self.output_offset, self.output_stride, desc.output_width()),
        };
        ResolvedMatrix {
            operand,
            order: Order::RowMajor,
            rows: self.rows,
            cols: width,
            leading_dimension: u64::from(stride),
            batch_stride: 0,
            offset: u64::from(offset),
            batch: 1,
        }
    }

    /// The rows in runs that each fit one storage binding of at most `limits`'
    /// `max_storage_buffer_binding_size` bytes on both sides, in whole multiples of
    /// [`CHUNK_ROWS`] rows: a network of 2^24 rows of 64 f16 values reads 2 GiB, one word
    /// more than a binding holds. Just this layout where it fits (or where no chunk of
    /// [`CHUNK_ROWS`] fits, or offsets would pass 32 bits: binding it then reports why).
    pub(crate) fn chunks(
        &self,
        desc: &MlpDesc,
        io: MlpIo,
        limits: &wgpu::Limits,
    ) -> Vec<MlpLayout> {
        // A binding starts at the aligned offset at or below its first element and ends
        // on a whole word.
        let slack = u64::from(limits.min_storage_buffer_offset_alignment.max(4)) + 4;
        let limit = limits.max_storage_buffer_binding_size;
        // Rows n with ((n - 1) * stride + width) * bytes + slack <= limit.
        let fitting = |stride: u32, width: u32, dtype: DType| {
            let bytes = dtype.size_bytes();
            let room = limit.saturating_sub(slack + u64::from(width) * bytes);
            room / (u64::from(stride.max(1)) * bytes) + 1
        };
        let most = fitting(self.input_stride, desc.input_width(), io.input).min(fitting(
            self.output_stride,
            desc.output_width(),
            io.output,
        ));
        if most >= u64::from(self.rows) || most < u64::from(CHUNK_ROWS) {
            return vec![*self];
        }
        let chunk = (most / u64::from(CHUNK_ROWS) * u64::from(CHUNK_ROWS)) as u32;
        let offset = |first: u32, start: u32, stride: u32| {
            u32::try_from(u64::from(first) + u64::from(start) * u64::from(stride)).ok()
        };
        let chunks: Option<Vec<MlpLayout>> = (0..self.rows)
            .step_by(chunk as usize)
            .map(|start| {
                Some(MlpLayout {
                    rows: chunk.min(self.rows - start),
                    input_offset: offset(self.input_offset, start, self.input_stride)?,
                    output_offset: offset(self.output_offset, start, self.output_stride)?,
                    ..*self
                })
            })
            .collect();
        chunks.unwrap_or_else(|| vec![*self])
    }

    /// Elements the input array must hold.
    pub(crate) fn input_elements(&self, desc: &MlpDesc) -> u64 {
        self.matrix(desc, Operand::Input).end_index()
    }

    /// Elements the output array must hold.
    pub(crate) fn output_elements(&self, desc: &MlpDesc) -> u64 {
        self.matrix(desc, Operand::Output).end_index()
    }
}

/// Where a run's rows are, as both network kernels take it first in their parameters
/// (uniform block or push constants): the row count, then per side the element index of row
/// 0's first element within the bound range and the row stride.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct RowParams {
    rows: u32,
    input_first: u32,
    input_stride: u32,
    output_first: u32,
    output_stride: u32,
}

impl RowParams {
    /// The rows of `layout` in the bound ranges `input` and `output`.
    pub(crate) fn new(layout: &MlpLayout, input: BoundRange, output: BoundRange) -> RowParams {
        RowParams {
            rows: layout.rows,
            input_first: input.first_element,
            input_stride: layout.input_stride,
            output_first: output.first_element,
            output_stride: layout.output_stride,
        }
    }
}

/// One chunk of a run's rows (see `bind_chunks`): its buffers, checked, with the input and
/// output ranges they bind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BoundRows<'a> {
    pub(crate) buffers: MlpBuffers<'a>,
    pub(crate) input: BoundRange,
    pub(crate) output: BoundRange,
}

/// The buffers of one run: input rows in, output rows out (`STORAGE` usage, two different
/// buffers), their element types and where the rows are; for a network with several weight
/// sets, each row's set index and who groups the rows by set.
#[derive(Debug, Clone, Copy)]
pub struct MlpBuffers<'a> {
    /// Holds the input rows.
    pub input: &'a wgpu::Buffer,
    /// Receives the output rows.
    pub output: &'a wgpu::Buffer,
    /// The rows' element types.
    pub io: MlpIo,
    /// How many rows, and where.
    pub layout: MlpLayout,
    /// Each row's weight set: `u32` `r` (from the buffer's start, `STORAGE` usage) is row
    /// `r`'s set. A row whose index is not below the network's number of sets is not
    /// evaluated, its output row left unchanged (indices on the device cannot be checked
    /// on the host; [`Context::evaluate_mlp_sets`](crate::Context::evaluate_mlp_sets)
    /// checks them). `None`: every row uses set 0.
    pub set_indices: Option<&'a wgpu::Buffer>,
    /// Who groups the rows by set (where there are set indices).
    pub grouping: MlpGrouping,
}

impl<'a> MlpBuffers<'a> {
    /// The same buffers with another layout.
    pub fn with_layout(mut self, layout: MlpLayout) -> MlpBuffers<'a> {
        self.layout = layout;
        self
    }

    /// The same buffers with row `r` evaluated with weight set `indices[r]` (`u32`s,
    /// [`MlpBuffers::set_indices`]).
    pub fn with_set_indices(mut self, indices: &'a wgpu::Buffer) -> MlpBuffers<'a> {
        self.set_indices = Some(indices);
        self
    }

    /// The same buffers with the rows grouped by set by `grouping`.
    pub fn with_grouping(mut self, grouping: MlpGrouping) -> MlpBuffers<'a> {
        self.grouping = grouping;
        self
    }

    /// Checks everything against the network and the device, and computes the bound ranges
    /// (input, output).
    pub(crate) fn bind(
        &self,
        desc: &MlpDesc,
        limits: &wgpu::Limits,
    ) -> Result<(BoundRange, BoundRange)> {
        self.io.check()?;
        self.layout.check(desc)?;
        if self.input == self.output {
            return Err(Error::OutputAliasesInput {
                input: Operand::Input,
            });
        }
        let input = bound_range(
            &self.layout.matrix(desc, Operand::Input),
            self.io.input.size_bytes(),
            self.input,
            limits,
        )?;
        let output = bound_range(
            &self.layout.matrix(desc, Operand::Output),
            self.io.output.size_bytes(),
            self.output,
            limits,
        )?;
        Ok((input, output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlp::desc::MlpActivation;

    #[test]
    fn chunks_cover_the_rows_in_bindable_runs() {
        let desc = MlpDesc::uniform(&[32, 8], MlpActivation::Relu, MlpActivation::None);
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: 1 << 20,
            ..wgpu::Limits::default()
        };
        // Fits: one run, as it was.
        let small = MlpLayout::new(&desc, 100);
        assert_eq!(small.chunks(&desc, MlpIo::F32, &limits), vec![small]);
        // 1 MiB of f32 rows of 32 (stride 40, 7 in front): 6553 rows a binding, so chunks
        // of 4096, the last partial.
        let layout = MlpLayout {
            rows: 10_000,
            input_offset: 7,
            input_stride: 40,
            output_offset: 3,
            output_stride: 8,
        };
        let chunks = layout.chunks(&desc, MlpIo::F32, &limits);
        assert_eq!(
            chunks.iter().map(|c| c.rows).collect::<Vec<_>>(),
            [4096, 4096, 1808]
        );
        for (index, chunk) in chunks.iter().enumerate() {
            let start = 4096 * index as u32;
            assert_eq!(chunk.input_offset, 7 + start * 40);
            assert_eq!(chunk.output_offset, 3 + start * 8);
            assert_eq!((chunk.input_stride, chunk.output_stride), (40, 8));
            let matrix = chunk.matrix(&desc, Operand::Input);
            let span = (matrix.end_index() - matrix.offset) * 4;
            assert!(span + 260 <= limits.max_storage_buffer_binding_size);
        }
        // Not even one chunk of rows fits: left to the binding to refuse.
        let wide = MlpLayout {
            input_stride: 1 << 16,
            ..layout
        };
        assert_eq!(wide.chunks(&desc, MlpIo::F32, &limits), vec![wide]);
    }
}
