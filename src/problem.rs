//! The GEMM description: `C = alpha * A * B + beta * C`, its shapes, layouts and strides.
//!
//! A [`Gemm`] says what to compute; [`Gemm::resolve`] checks it and turns every
//! defaulted leading dimension and batch stride into a number ([`ResolvedGemm`]), which is
//! what the backends and the CPU reference read.

use crate::epilogue::{Activation, BiasAxis, Epilogue};
use crate::error::{Error, Operand, Result};
use crate::types::{Element, GemmTypes};

/// How a matrix is laid out in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Rows are contiguous: element `(row, col)` is at `row * leading_dimension + col`.
    #[default]
    RowMajor,
    /// Columns are contiguous: element `(row, col)` is at `row + col * leading_dimension`.
    ColumnMajor,
    /// B pre-packed for a kernel (see [`Context::pack_b`](crate::Context::pack_b)): the
    /// columns are cut into panels of `width`, each panel stored row-major with rows of
    /// `width` elements, `leading_dimension` rows per panel; columns past the matrix in the
    /// last panel hold zeros. Element `(row, col)` is at
    /// `(col / width) * leading_dimension * width + row * width + col % width`.
    /// Only B may be stored this way.
    ColumnPanels {
        /// Columns per panel (the kernel's workgroup tile width).
        width: u32,
    },
}

impl Order {
    /// Columns per panel for [`Order::ColumnPanels`], `None` otherwise.
    pub fn panel_width(self) -> Option<u32> {
        match self {
            Order::ColumnPanels { width } => Some(width),
            _ => None,
        }
    }
}

/// Where one operand's elements are in its buffer. All values are in elements, not bytes.
///
/// A transposed operand is the same matrix stored in the other [`Order`]: `op(A) = Aᵀ`
/// for a row-major `k × m` array is a column-major `m × k` `A`.
///
/// ```
/// use coopgemm::{MatrixLayout, Order};
/// let a = MatrixLayout::column_major().leading_dimension(100).offset(8);
/// assert_eq!(a.order, Order::ColumnMajor);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MatrixLayout {
    /// Row- or column-major.
    pub order: Order,
    /// Distance between consecutive rows (row-major) or columns (column-major);
    /// `None` means tightly packed.
    pub leading_dimension: Option<u64>,
    /// Distance between consecutive matrices of a batch; `None` means one packed matrix
    /// after the other. `Some(0)` broadcasts one matrix to every batch (inputs only).
    pub batch_stride: Option<u64>,
    /// Index of the first element of the first matrix in the buffer.
    pub offset: u64,
}

impl MatrixLayout {
    /// A packed row-major layout.
    pub fn row_major() -> MatrixLayout {
        MatrixLayout {
            order: Order::RowMajor,
            ..Default::default()
        }
    }

    /// A packed column-major layout.
    pub fn column_major() -> MatrixLayout {
        MatrixLayout {
            order: Order::ColumnMajor,
            ..Default::default()
        }
    }

    /// Sets the leading dimension (elements between rows or columns).
    pub fn leading_dimension(mut self, elements: u64) -> MatrixLayout {
        self.leading_dimension = Some(elements);
        self
    }

    /// Sets the batch stride (elements between matrices of a batch; 0 broadcasts).
    pub fn batch_stride(mut self, elements: u64) -> MatrixLayout {
        self.batch_stride = Some(elements);
        self
    }

    /// Sets the element offset of the first matrix.
    pub fn offset(mut self, elements: u64) -> MatrixLayout {
        self.offset = elements;
        self
    }
}

/// One GEMM: `C[b] = epilogue(alpha * A[b] * B[b] + beta * C[b])` for every batch index `b`,
/// with `A[b]` of `m × k`, `B[b]` of `k × n` and `C[b]` of `m × n`; the [`Epilogue`] adds an
/// optional bias vector and activation.
///
/// When `beta == 0`, C is not read, so it may hold anything (even NaN).
/// `k == 0` scales C by beta; `m`, `n` or `batch == 0` is an empty GEMM.
///
/// ```
/// use coopgemm::{Gemm, GemmTypes, MatrixLayout};
/// let gemm = Gemm::new(64, 32, 128)
///     .types(GemmTypes::F32)
///     .a(MatrixLayout::column_major())
///     .batch(4)
///     .alpha(0.5)
///     .beta(1.0);
/// let resolved = gemm.resolve().unwrap();
/// assert_eq!(resolved.a.leading_dimension, 64); // packed column-major m x k
/// assert_eq!(resolved.c.batch_stride, 64 * 32);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Gemm {
    /// Rows of A and C.
    pub m: u32,
    /// Columns of B and C.
    pub n: u32,
    /// Columns of A, rows of B.
    pub k: u32,
    /// Number of matrices in the batch.
    pub batch: u32,
    /// Element types.
    pub types: GemmTypes,
    /// Layout of A.
    pub a: MatrixLayout,
    /// Layout of B.
    pub b: MatrixLayout,
    /// Layout of C.
    pub c: MatrixLayout,
    /// Scale of the product.
    pub alpha: f32,
    /// Scale of the old C.
    pub beta: f32,
    /// Bias and activation applied before C is stored.
    pub epilogue: Epilogue,
}

impl Gemm {
    /// `C = A * B` in f32, every operand packed row-major, one matrix.
    pub fn new(m: u32, n: u32, k: u32) -> Gemm {
        Gemm {
            m,
            n,
            k,
            batch: 1,
            types: GemmTypes::F32,
            a: MatrixLayout::row_major(),
            b: MatrixLayout::row_major(),
            c: MatrixLayout::row_major(),
            alpha: 1.0,
            beta: 0.0,
            epilogue: Epilogue::default(),
        }
    }

    /// Sets the element types.
    pub fn types(mut self, types: GemmTypes) -> Gemm {
        self.types = types;
        self
    }

    /// Sets the layout of A.
    pub fn a(mut self, layout: MatrixLayout) -> Gemm {
        self.a = layout;
        self
    }

    /// Sets the layout of B.
    pub fn b(mut self, layout: MatrixLayout) -> Gemm {
        self.b = layout;
        self
    }

    /// Sets the layout of C.
    pub fn c(mut self, layout: MatrixLayout) -> Gemm {
        self.c = layout;
        self
    }

    /// Sets the batch count.
    pub fn batch(mut self, batch: u32) -> Gemm {
        self.batch = batch;
        self
    }

    /// Sets alpha.
    pub fn alpha(mut self, alpha: f32) -> Gemm {
        self.alpha = alpha;
        self
    }

    /// Sets beta.
    pub fn beta(mut self, beta: f32) -> Gemm {
        self.beta = beta;
        self
    }

    /// Sets the whole epilogue.
    pub fn epilogue(mut self, epilogue: Epilogue) -> Gemm {
        self.epilogue = epilogue;
        self
    }

    /// Adds a bias vector (f32, in [`GemmBuffers::bias`](crate::GemmBuffers)) along `axis`.
    pub fn bias(mut self, axis: BiasAxis) -> Gemm {
        self.epilogue = self.epilogue.bias(axis);
        self
    }

    /// Sets the activation applied last.
    pub fn activation(mut self, activation: Activation) -> Gemm {
        self.epilogue = self.epilogue.activation(activation);
        self
    }

    /// Floating-point operations of the whole GEMM, counting a multiply-add as two.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch as f64
    }

    /// Checks the description and fills in every default. Buffers are checked later,
    /// against this result.
    pub fn resolve(&self) -> Result<ResolvedGemm> {
        for (operand, layout) in [(Operand::A, self.a), (Operand::C, self.c)] {
            if layout.order.panel_width().is_some() {
                return Err(Error::PanelsOnlyForB { operand });
            }
        }
        if self.b.order.panel_width() == Some(0) {
            return Err(Error::PanelsOnlyForB {
                operand: Operand::B,
            });
        }
        let a = ResolvedMatrix::new(Operand::A, self.a, self.m, self.k, self.batch)?;
        let b = ResolvedMatrix::new(Operand::B, self.b, self.k, self.n, self.batch)?;
        let c = ResolvedMatrix::new(Operand::C, self.c, self.m, self.n, self.batch)?;
        if !self.epilogue.is_identity() && self.types.output.is_integer() {
            return Err(Error::EpilogueNeedsFloatOutput { types: self.types });
        }
        if self.batch > 1 && self.m > 0 && self.n > 0 {
            // Batches of C must not share elements, or their writes race. A batch's
            // elements span `(rows-1)*row_stride + (cols-1)*col_stride + 1`.
            let span = c.span_of_one_matrix();
            if c.batch_stride < span {
                return Err(Error::OverlappingOutputBatches {
                    batch_stride: c.batch_stride,
                    minimum: span,
                });
            }
        }
        let bias = self.epilogue.bias.map(|bias| ResolvedBias {
            offset: bias.offset,
            len: match bias.axis {
                BiasAxis::PerRow => self.m,
                BiasAxis::PerColumn => self.n,
            },
        });
        Ok(ResolvedGemm {
            gemm: *self,
            a,
            b,
            c,
            bias,
        })
    }
}

/// One operand with every default filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedMatrix {
    /// Which operand this is.
    pub operand: Operand,
    /// Row- or column-major.
    pub order: Order,
    /// Rows of one matrix.
    pub rows: u32,
    /// Columns of one matrix.
    pub cols: u32,
    /// Elements between rows (row-major) or columns (column-major).
    pub leading_dimension: u64,
    /// Elements between matrices of the batch (0 = broadcast).
    pub batch_stride: u64,
    /// Element index of the first element.
    pub offset: u64,
    /// Number of matrices.
    pub batch: u32,
}

impl ResolvedMatrix {
    fn new(
        operand: Operand,
        layout: MatrixLayout,
        rows: u32,
        cols: u32,
        batch: u32,
    ) -> Result<Self> {
        // (minimum leading dimension, leading-dimension units per matrix)
        let (contiguous, strided) = match layout.order {
            Order::RowMajor => (cols as u64, rows as u64),
            Order::ColumnMajor => (rows as u64, cols as u64),
            Order::ColumnPanels { width } => (
                rows as u64,
                (cols as u64).div_ceil(width.max(1) as u64) * width as u64,
            ),
        };
        let minimum_ld = contiguous.max(1);
        let leading_dimension = layout.leading_dimension.unwrap_or(minimum_ld);
        if leading_dimension < minimum_ld {
            return Err(Error::LeadingDimensionTooSmall {
                operand,
                leading_dimension,
                minimum: minimum_ld,
            });
        }
        let batch_stride = layout
            .batch_stride
            .unwrap_or(leading_dimension.saturating_mul(strided));
        Ok(ResolvedMatrix {
            operand,
            order: layout.order,
            rows,
            cols,
            leading_dimension,
            batch_stride,
            offset: layout.offset,
            batch,
        })
    }

    /// Element distance between `(r, c)` and `(r + 1, c)` (inside one panel for panels).
    pub fn row_stride(&self) -> u64 {
        match self.order {
            Order::RowMajor => self.leading_dimension,
            Order::ColumnMajor => 1,
            Order::ColumnPanels { width } => width as u64,
        }
    }

    /// Element distance between `(r, c)` and `(r, c + 1)` (inside one panel for panels).
    pub fn col_stride(&self) -> u64 {
        match self.order {
            Order::RowMajor | Order::ColumnPanels { .. } => 1,
            Order::ColumnMajor => self.leading_dimension,
        }
    }

    /// Element distance between consecutive panels (0 when not stored in panels).
    pub fn panel_stride(&self) -> u64 {
        match self.order {
            Order::ColumnPanels { width } => self.leading_dimension.saturating_mul(width as u64),
            _ => 0,
        }
    }

    /// Element index of `(row, col)` of batch `batch`.
    pub fn index(&self, batch: u32, row: u32, col: u32) -> u64 {
        let base = self.offset + batch as u64 * self.batch_stride;
        match self.order {
            Order::ColumnPanels { width } => {
                let width = width as u64;
                base + (col as u64 / width) * self.panel_stride()
                    + row as u64 * width
                    + col as u64 % width
            }
            _ => base + row as u64 * self.row_stride() + col as u64 * self.col_stride(),
        }
    }

    /// Elements from the first element of one matrix to one past the last one a kernel may
    /// read: for panels, through the zero padding of the last panel's last row.
    fn span_of_one_matrix(&self) -> u64 {
        if self.rows == 0 || self.cols == 0 {
            return 0;
        }
        match self.order {
            Order::ColumnPanels { width } => {
                let panels = (self.cols as u64).div_ceil(width as u64);
                (panels - 1)
                    .saturating_mul(self.panel_stride())
                    .saturating_add((self.rows as u64).saturating_mul(width as u64))
            }
            _ => ((self.rows as u64 - 1).saturating_mul(self.row_stride()))
                .saturating_add((self.cols as u64 - 1).saturating_mul(self.col_stride()))
                .saturating_add(1),
        }
    }

    /// Whether the description touches no element of this operand.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0 || self.batch == 0
    }

    /// One past the largest element index the description reaches (0 if it reaches none).
    pub fn end_index(&self) -> u64 {
        if self.is_empty() {
            return 0;
        }
        // Saturating: absurd strides must surface as an index-overflow error, not wrap.
        self.offset
            .saturating_add((self.batch as u64 - 1).saturating_mul(self.batch_stride))
            .saturating_add(self.span_of_one_matrix())
    }

    /// Number of elements a host array must hold for this operand (its [`end_index`](Self::end_index)).
    pub fn required_elements(&self) -> u64 {
        self.end_index()
    }
}

/// A checked [`Gemm`] with every leading dimension and batch stride known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResolvedGemm {
    /// The description this came from.
    pub gemm: Gemm,
    /// A, `m × k`.
    pub a: ResolvedMatrix,
    /// B, `k × n`.
    pub b: ResolvedMatrix,
    /// C, `m × n`.
    pub c: ResolvedMatrix,
    /// The bias vector, when the epilogue has one.
    pub bias: Option<ResolvedBias>,
}

/// Where the bias vector's values are: f32 elements `offset .. offset + len` of its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedBias {
    /// Element index of the first value.
    pub offset: u64,
    /// Number of values (`m` per row, `n` per column).
    pub len: u32,
}

impl ResolvedBias {
    /// One past the last element index read (0 when the vector is empty).
    pub fn end_index(&self) -> u64 {
        if self.len == 0 {
            0
        } else {
            self.offset.saturating_add(self.len as u64)
        }
    }
}

impl ResolvedGemm {
    /// Whether no element of C is written.
    pub fn is_empty(&self) -> bool {
        self.c.is_empty()
    }

    /// Checks that host slices have the element types of `gemm.types` and hold every element
    /// the description addresses.
    pub fn check_host_data<I: Element, O: Element>(&self, a: &[I], b: &[I], c: &[O]) -> Result<()> {
        let types = self.gemm.types;
        for (operand, dtype) in [
            (Operand::A, I::DTYPE),
            (Operand::B, I::DTYPE),
            (Operand::C, O::DTYPE),
        ] {
            let wanted = if operand == Operand::C {
                types.output
            } else {
                types.input
            };
            if dtype != wanted {
                return Err(Error::HostTypeMismatch { operand, types });
            }
        }
        for (operand, len) in [
            (Operand::A, a.len()),
            (Operand::B, b.len()),
            (Operand::C, c.len()),
        ] {
            let needed = self.matrix(operand).map_or(0, |m| m.required_elements());
            if (len as u64) < needed {
                return Err(Error::HostDataLength {
                    operand,
                    expected: needed,
                    actual: len as u64,
                });
            }
        }
        Ok(())
    }

    /// Checks a host bias vector against the epilogue: present exactly when it has a bias,
    /// and long enough.
    pub fn check_host_bias(&self, bias: Option<&[f32]>) -> Result<()> {
        match (self.bias, bias) {
            (Some(resolved), Some(values)) => {
                if (values.len() as u64) < resolved.end_index() {
                    return Err(Error::HostDataLength {
                        operand: Operand::Bias,
                        expected: resolved.end_index(),
                        actual: values.len() as u64,
                    });
                }
                Ok(())
            }
            (Some(_), None) => Err(Error::MissingBiasBuffer),
            (None, Some(_)) => Err(Error::UnexpectedBiasBuffer),
            (None, None) => Ok(()),
        }
    }

    /// The matrix operand with this name (`None` for [`Operand::Bias`], a vector, and for
    /// the operands of networks).
    pub fn matrix(&self, operand: Operand) -> Option<&ResolvedMatrix> {
        match operand {
            Operand::A => Some(&self.a),
            Operand::B => Some(&self.b),
            Operand::C => Some(&self.c),
            Operand::Bias | Operand::Input | Operand::Output | Operand::SetIndices => None,
        }
    }
}
