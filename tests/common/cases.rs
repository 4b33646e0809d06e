//! The suites' case lists and case data, shared by the native suites (through `common`) and
//! the browser suite (`tests/web.rs`, which includes this file by path): only GEMM
//! descriptions, seeded data and the comparison with the f64 reference -- nothing here
//! needs a GPU or blocks, so the same cases run on both sides.
#![allow(dead_code)]

use std::sync::Mutex;

use coopgemm::testing::{sample_data, Reference, ResolvedGemm, SampleData};
use coopgemm::{
    Activation, Bias, BiasAxis, DType, Element, Epilogue, Gemm, GemmTypes, MatrixLayout, Order,
};

/// Reproducible pseudo-random numbers (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [low, high].
    pub fn range(&mut self, low: u32, high: u32) -> u32 {
        low + (self.next_u64() % (high - low + 1) as u64) as u32
    }

    /// Values for an operand of type T: full-precision uniform [-1, 1) for f32; for narrow
    /// types, values whose products are exact in the type (multiples of 1/16 in [-1, 1) for
    /// f16/bf16, integers in [-8, 8) for i8), so only the summation can round.
    pub fn values<T: Element>(&mut self, count: usize) -> Vec<T> {
        (0..count)
            .map(|_| {
                let unit = self.unit();
                let value = match T::DTYPE {
                    DType::F32 => unit * 2.0 - 1.0,
                    DType::I8 | DType::I32 => (unit * 16.0).floor() - 8.0,
                    DType::F16 | DType::BF16 => ((unit * 32.0).floor() - 16.0) / 16.0,
                };
                T::from_f64_lossy(value)
            })
            .collect()
    }
}

/// The input and output types the reduced-precision suites run, besides f32.
pub const REDUCED_PRECISION_TYPES: [GemmTypes; 4] = [
    GemmTypes::F16_F32,
    GemmTypes::F16_ACC_F16,
    GemmTypes::BF16_F32,
    GemmTypes::I8_I32,
];

/// The narrow-output combinations (f32 sums rounded to a 16-bit C).
pub const NARROW_OUTPUT_TYPES: [GemmTypes; 4] = [
    GemmTypes::F16_F32_F16,
    GemmTypes::BF16_F32_BF16,
    GemmTypes::F32_F32_F16,
    GemmTypes::F32_F32_BF16,
];

/// Runs the match arm for `types` with `$input` and `$output` naming its host element types
/// (the body may `.await`); types with no host pair give `Err`.
macro_rules! with_host_types {
    ($types:expr, |$input:ident, $output:ident| $body:expr) => {{
        use coopgemm::GemmTypes as T;
        match $types {
            T::F32 => {
                type $input = f32;
                type $output = f32;
                $body
            }
            T::F16_F32 => {
                type $input = half::f16;
                type $output = f32;
                $body
            }
            T::F16_ACC_F16 | T::F16_F32_F16 => {
                type $input = half::f16;
                type $output = half::f16;
                $body
            }
            T::BF16_F32 => {
                type $input = half::bf16;
                type $output = f32;
                $body
            }
            T::BF16_F32_BF16 => {
                type $input = half::bf16;
                type $output = half::bf16;
                $body
            }
            T::I8_I32 => {
                type $input = i8;
                type $output = i32;
                $body
            }
            T::F32_F32_F16 => {
                type $input = f32;
                type $output = half::f16;
                $body
            }
            T::F32_F32_BF16 => {
                type $input = f32;
                type $output = half::bf16;
                $body
            }
            other => Err(format!("no host types for {other}")),
        }
    }};
}
pub(crate) use with_host_types;

// ---- correctness ----

pub const SHAPES: [(u32, u32, u32); 12] = [
    (1, 1, 1),
    (1, 1, 300),
    (17, 33, 65),
    (64, 64, 64),
    (100, 37, 129),
    (130, 260, 70),
    (4097, 7, 9),
    (5, 4097, 3),
    (3, 5, 4097),
    (1000, 9, 40),
    (9, 1000, 40),
    (256, 256, 256),
];

pub fn layout(order: Order) -> MatrixLayout {
    MatrixLayout {
        order,
        ..Default::default()
    }
}

pub fn shape_cases() -> Vec<Gemm> {
    SHAPES.iter().map(|&(m, n, k)| Gemm::new(m, n, k)).collect()
}

pub fn layout_cases() -> Vec<Gemm> {
    let orders = [Order::RowMajor, Order::ColumnMajor];
    let mut cases = Vec::new();
    for a in orders {
        for b in orders {
            for c in orders {
                for (m, n, k) in [(17, 33, 65), (70, 45, 38)] {
                    cases.push(Gemm::new(m, n, k).a(layout(a)).b(layout(b)).c(layout(c)));
                }
            }
        }
    }
    cases
}

pub fn stride_cases() -> Vec<Gemm> {
    vec![
        // Leading dimensions larger than the rows, and offsets.
        Gemm::new(37, 29, 53)
            .a(MatrixLayout::row_major().leading_dimension(60).offset(7))
            .b(MatrixLayout::column_major().leading_dimension(64).offset(3))
            .c(MatrixLayout::row_major().leading_dimension(31).offset(5)),
        Gemm::new(40, 40, 40)
            .a(MatrixLayout::column_major().leading_dimension(41))
            .b(MatrixLayout::row_major().leading_dimension(47))
            .c(MatrixLayout::column_major().leading_dimension(43).offset(1)),
        // Aligned to four elements (offsets, leading dimensions, batch strides, ends): the
        // SIMT kernel loads A and B as vectors, around padding, in batches.
        Gemm::new(36, 44, 28)
            .a(MatrixLayout::row_major().leading_dimension(32).offset(8))
            .b(MatrixLayout::row_major().leading_dimension(48).offset(4))
            .c(MatrixLayout::row_major().leading_dimension(50).offset(3)),
        Gemm::new(20, 24, 36)
            .batch(3)
            .a(MatrixLayout::row_major().batch_stride(36 * 20 + 8))
            .b(MatrixLayout::column_major()
                .leading_dimension(40)
                .batch_stride(24 * 40)),
        // Batches: packed, strided with gaps, and A or B broadcast (stride 0).
        Gemm::new(33, 17, 20).batch(3),
        Gemm::new(20, 24, 36)
            .batch(4)
            .a(MatrixLayout::row_major()
                .leading_dimension(40)
                .batch_stride(20 * 40 + 9))
            .b(MatrixLayout::column_major().batch_stride(36 * 24 + 5))
            .c(MatrixLayout::row_major().batch_stride(20 * 24 + 3)),
        Gemm::new(25, 30, 18)
            .batch(3)
            .a(MatrixLayout::row_major().batch_stride(0)),
        Gemm::new(25, 30, 18)
            .batch(3)
            .b(MatrixLayout::column_major().batch_stride(0)),
        // alpha/beta: beta = 0 (C holds NaN and must not be read), beta != 0, k = 0.
        Gemm::new(31, 19, 23).alpha(1.5),
        Gemm::new(31, 19, 23).alpha(-0.5).beta(0.75),
        Gemm::new(31, 19, 23).alpha(2.0).beta(1.0).batch(2),
        Gemm::new(12, 13, 0).beta(0.5),
        Gemm::new(12, 13, 0),
        // Empty products: nothing may be written.
        Gemm::new(0, 13, 5),
        Gemm::new(12, 0, 5),
        Gemm::new(12, 13, 5).batch(0),
    ]
}

/// The reduced-precision suite's cases: the first nine shapes, every third layout case and
/// every stride case.
pub fn reduced_precision_cases() -> Vec<Gemm> {
    let mut cases = shape_cases();
    cases.truncate(9);
    cases.extend(layout_cases().into_iter().step_by(3));
    cases.extend(stride_cases());
    cases
}

// ---- guard regions ----

fn padded(order: Order, rows: u32, cols: u32, gap: u32, offset: u64) -> MatrixLayout {
    let row_length = if order == Order::RowMajor { cols } else { rows };
    layout(order)
        .leading_dimension((row_length + gap) as u64)
        .offset(offset)
}

/// Every operand order with gaps between rows (one element or 16) and offsets, batches with
/// gaps between matrices, and a broadcast A; run with [`CaseData::guarded`].
pub fn guard_cases() -> Vec<Gemm> {
    let orders = [Order::RowMajor, Order::ColumnMajor];
    // Shapes that end inside a tile on every side (m, n, k not multiples of 16, of the
    // tiles, or of a vector), one that fills whole 16-element vectors, and degenerate ones.
    let shapes = [(37, 45, 29), (130, 67, 70), (64, 128, 48), (1, 19, 1)];
    let mut cases = Vec::new();
    for (index, &(m, n, k)) in shapes.iter().enumerate() {
        for a in orders {
            for b in orders {
                for c in orders {
                    // Gaps of 1 (breaks vector alignment) and 16 (keeps it) alternate.
                    let gap = if (index + cases.len()) % 2 == 0 {
                        1
                    } else {
                        16
                    };
                    cases.push(
                        Gemm::new(m, n, k)
                            .a(padded(a, m, k, gap, 3))
                            .b(padded(b, k, n, gap, 16))
                            .c(padded(c, m, n, gap, 5)),
                    );
                }
            }
        }
    }
    // Batches with gaps between them, and broadcast operands.
    cases.push(
        Gemm::new(33, 40, 24)
            .batch(3)
            .a(MatrixLayout::row_major()
                .leading_dimension(40)
                .batch_stride(33 * 40 + 11)
                .offset(8))
            .b(MatrixLayout::column_major()
                .leading_dimension(25)
                .batch_stride(40 * 25 + 7))
            .c(MatrixLayout::row_major()
                .batch_stride(33 * 40 + 13)
                .offset(2)),
    );
    cases.push(
        Gemm::new(20, 50, 36)
            .batch(2)
            .a(MatrixLayout::row_major().batch_stride(0).offset(1))
            .b(MatrixLayout::row_major().leading_dimension(64).offset(16))
            .beta(0.5),
    );
    cases
}

// ---- few rows (the coopmat backend's skinny kernel) ----

/// Every type the cooperative-matrix kernels compute, which the skinny kernel computes too.
pub const SKINNY_TYPES: [GemmTypes; 7] = [
    GemmTypes::F32,
    GemmTypes::F16_F32,
    GemmTypes::F16_ACC_F16,
    GemmTypes::F16_F32_F16,
    GemmTypes::BF16_F32,
    GemmTypes::BF16_F32_BF16,
    GemmTypes::I8_I32,
];

/// GEMMs of 1 to 32 rows (the skinny kernel's default range), run guarded: every operand
/// order, rows that split evenly or not into blocks of up to 8, n that ends inside a block
/// and k that ends inside a 16-byte chunk or spans several of the workgroup's strides,
/// leading dimensions that keep or break vector alignment, offsets, batches with gaps and
/// broadcasts, alpha/beta and an epilogue on some.
pub fn skinny_cases() -> Vec<Gemm> {
    let orders = [Order::RowMajor, Order::ColumnMajor];
    let mut rng = Rng::new(16);
    let mut cases = Vec::new();
    for (index, &(m, n, k)) in [
        (1, 67, 1031),
        (1, 256, 4100),
        (3, 40, 77),
        (8, 33, 520),
        (9, 130, 64),
        (16, 70, 300),
        (13, 1, 9),
        (2, 300, 1),
        (27, 45, 130),
        (45, 130, 4100),
    ]
    .iter()
    .enumerate()
    {
        for (order_index, (a, (b, c))) in orders
            .into_iter()
            .flat_map(|a| {
                orders
                    .into_iter()
                    .flat_map(move |b| orders.into_iter().map(move |c| (a, (b, c))))
            })
            .enumerate()
        {
            // Gaps of 0, 1 (breaks vector alignment) and 16 (keeps it) in turn.
            let gap = [0, 1, 16][(index + order_index) % 3];
            let offset = [0, 3, 16][(index + 2 * order_index) % 3];
            let mut gemm = Gemm::new(m, n, k)
                .a(padded(a, m, k, gap, offset))
                .b(padded(b, k, n, gap, 16))
                .c(padded(c, m, n, gap, 5));
            if order_index % 4 == 1 {
                gemm = gemm.alpha(0.5 + rng.unit() as f32).beta(-0.75);
            }
            cases.push(gemm);
        }
    }
    cases.push(
        Gemm::new(5, 40, 96)
            .batch(3)
            .a(MatrixLayout::row_major()
                .leading_dimension(100)
                .batch_stride(5 * 100 + 8))
            .b(MatrixLayout::column_major()
                .leading_dimension(104)
                .batch_stride(40 * 104 + 16))
            .c(MatrixLayout::row_major().batch_stride(5 * 40 + 3)),
    );
    cases.push(
        Gemm::new(4, 48, 64)
            .batch(2)
            .a(MatrixLayout::row_major().batch_stride(0).offset(1))
            .b(MatrixLayout::row_major().leading_dimension(64).offset(16))
            .beta(0.5),
    );
    cases
}

// ---- epilogue ----

/// The output types the epilogue suite runs (every float output).
pub const EPILOGUE_TYPES: [GemmTypes; 7] = [
    GemmTypes::F32,
    GemmTypes::F16_F32,
    GemmTypes::BF16_F32,
    GemmTypes::F16_F32_F16,
    GemmTypes::BF16_F32_BF16,
    GemmTypes::F32_F32_F16,
    GemmTypes::F32_F32_BF16,
];

pub fn epilogues() -> Vec<Epilogue> {
    vec![
        Epilogue::default()
            .bias(BiasAxis::PerRow)
            .activation(Activation::Relu),
        Epilogue::default()
            .bias_at(BiasAxis::PerColumn, 3)
            .activation(Activation::Gelu),
        Epilogue::default().activation(Activation::Silu),
        Epilogue::default().bias(BiasAxis::PerColumn),
        Epilogue::default(),
    ]
}

/// `cases` of `types`, and where C is a float a copy of every fifth with an epilogue (each of
/// [`epilogues`] in turn): the few-row suites' epilogue coverage.
pub fn with_epilogues(cases: Vec<Gemm>, types: GemmTypes) -> Vec<Gemm> {
    let mut cases: Vec<Gemm> = cases.into_iter().map(|gemm| gemm.types(types)).collect();
    if types.output != DType::I32 {
        let epilogues = epilogues();
        let with_epilogue: Vec<Gemm> = cases
            .iter()
            .step_by(5)
            .enumerate()
            .map(|(index, gemm)| gemm.epilogue(epilogues[index % epilogues.len()]))
            .collect();
        cases.extend(with_epilogue);
    }
    cases
}

/// Every epilogue on four shapes (odd ones with beta and a column-major C, one batched with
/// a broadcast A), each with its seed.
pub fn epilogue_cases(types: GemmTypes) -> Vec<(Gemm, u64)> {
    let shapes = [(1, 1, 1), (17, 33, 65), (70, 45, 19), (130, 67, 200)];
    let mut cases = Vec::new();
    for (index, epilogue) in epilogues().into_iter().enumerate() {
        for (shape_index, &(m, n, k)) in shapes.iter().enumerate() {
            let mut gemm = Gemm::new(m, n, k).types(types).epilogue(epilogue);
            if shape_index % 2 == 1 {
                gemm = gemm.beta(0.5).c(MatrixLayout::column_major());
            }
            if shape_index == 2 {
                gemm = gemm.batch(2).a(MatrixLayout::row_major().batch_stride(0));
            }
            cases.push((gemm, (index * 10 + shape_index) as u64));
        }
    }
    cases
}

/// Inputs that drive each activation to its extremes (as a per-column bias of a GEMM whose
/// product is zero), NaN included.
pub const ACTIVATION_EXTREMES: [f32; 8] = [-1.0e4, 1.0e4, -90.0, 90.0, -0.5, 0.5, 0.0, f32::NAN];

// ---- split-K ----

pub const SPLIT_K_TYPES: [GemmTypes; 5] = [
    GemmTypes::F32,
    GemmTypes::F16_F32,
    GemmTypes::F16_F32_F16,
    GemmTypes::BF16_F32_BF16,
    GemmTypes::I8_I32,
];

pub const SPLIT_K_SLICES: [u32; 3] = [2, 3, 7];

/// The split-K suite's cases for `slices` slices, each with its seed: small and long K, a
/// padded column-major A with beta, bias and GELU, column-major B and C with ReLU, a padded B.
/// Integer C takes no epilogue: there the second case has beta 1 (the exact integer sum of
/// the partials and C) and the third alpha 3 and beta -2 (the f32 path).
pub fn split_k_cases(types: GemmTypes, slices: u32) -> Vec<(Gemm, u64)> {
    let shapes = [(5, 7, 2), (17, 33, 100), (64, 130, 513), (1, 300, 64)];
    let integer = types.output.is_integer();
    shapes
        .iter()
        .enumerate()
        .map(|(index, &(m, n, k))| {
            let gemm = Gemm::new(m, n, k).types(types);
            let gemm = match index {
                1 => {
                    let gemm = gemm.a(MatrixLayout::column_major()
                        .leading_dimension(m as u64 + 2)
                        .offset(3));
                    if integer {
                        gemm.beta(1.0)
                    } else {
                        gemm.beta(0.5)
                            .bias(BiasAxis::PerRow)
                            .activation(Activation::Gelu)
                    }
                }
                2 => {
                    let gemm = gemm
                        .b(MatrixLayout::column_major())
                        .c(MatrixLayout::column_major());
                    if integer {
                        gemm.alpha(3.0).beta(-2.0)
                    } else {
                        gemm.bias(BiasAxis::PerColumn).activation(Activation::Relu)
                    }
                }
                3 => gemm.b(MatrixLayout::row_major().leading_dimension(n as u64 + 5)),
                _ => gemm,
            };
            (gemm, (slices * 10) as u64 + index as u64)
        })
        .collect()
}

// ---- packing ----

pub const PACKING_TYPES: [GemmTypes; 4] = [
    GemmTypes::F32,
    GemmTypes::F16_F32,
    GemmTypes::BF16_F32,
    GemmTypes::I8_I32,
];

fn packing_layouts(k: u32, n: u32, batch: u32) -> Vec<MatrixLayout> {
    let mut layouts = vec![
        MatrixLayout::row_major(),
        MatrixLayout::column_major(),
        MatrixLayout::column_major()
            .leading_dimension(k as u64 + 3)
            .offset(5),
        MatrixLayout::row_major()
            .leading_dimension(n as u64 + 1)
            .offset(1),
    ];
    if batch > 1 {
        layouts.push(MatrixLayout::row_major().batch_stride(0));
        layouts.push(MatrixLayout::column_major().batch_stride(k as u64 * n as u64 + 7));
    }
    layouts
}

/// The packing suite's GEMMs: each B layout (padded, offset, broadcast, strided batches)
/// on four shapes, one with a bias and beta; each with its seed.
pub fn packing_cases(types: GemmTypes) -> Vec<(Gemm, u64)> {
    let shapes = [
        (19, 33, 17, 1),
        (40, 130, 64, 2),
        (1, 1, 1, 1),
        (150, 300, 37, 1),
    ];
    let mut cases = Vec::new();
    for (shape_index, &(m, n, k, batch)) in shapes.iter().enumerate() {
        for (layout_index, layout) in packing_layouts(k, n, batch).into_iter().enumerate() {
            let mut gemm = Gemm::new(m, n, k).types(types).batch(batch).b(layout);
            if layout_index == 1 && !types.output.is_integer() {
                gemm = gemm.bias(BiasAxis::PerColumn).beta(1.0);
            }
            cases.push((gemm, (shape_index * 10 + layout_index) as u64));
        }
    }
    cases
}

// ---- random ----

fn random_layout(rng: &mut Rng, rows: u32, cols: u32, batch: u32, input: bool) -> MatrixLayout {
    let order = if rng.next_u64().is_multiple_of(2) {
        Order::RowMajor
    } else {
        Order::ColumnMajor
    };
    let (contiguous, strided) = match order {
        Order::RowMajor => (cols as u64, rows as u64),
        _ => (rows as u64, cols as u64),
    };
    // Padding from none to a few elements, and offsets.
    let leading_dimension = contiguous + [0, 0, 1, 3, 8][rng.range(0, 4) as usize];
    let mut layout = layout(order)
        .leading_dimension(leading_dimension)
        .offset([0, 0, 1, 5, 9][rng.range(0, 4) as usize]);
    if batch > 1 {
        let one_matrix = leading_dimension * strided;
        layout = if input && rng.range(0, 3) == 0 {
            layout.batch_stride(0) // broadcast
        } else {
            layout.batch_stride(one_matrix + rng.range(0, 4) as u64)
        };
    }
    layout
}

/// A random GEMM of `types` from `seed`: shapes mostly small (up to 40) or medium (up to
/// 300), random layouts, batches, alpha, beta and, for float outputs, epilogues.
pub fn random_gemm(seed: u64, types: GemmTypes) -> Gemm {
    let mut rng = Rng::new(seed);
    let dimension = |rng: &mut Rng| {
        if rng.range(0, 2) == 0 {
            rng.range(1, 40)
        } else {
            rng.range(1, 300)
        }
    };
    let (m, n, k) = (
        dimension(&mut rng),
        dimension(&mut rng),
        dimension(&mut rng),
    );
    let batch = if rng.range(0, 3) == 0 {
        rng.range(2, 3)
    } else {
        1
    };
    let alpha = [1.0, 0.5, -2.0][rng.range(0, 2) as usize];
    let beta = [0.0, 0.0, 1.0, 0.25][rng.range(0, 3) as usize];
    let mut epilogue = Epilogue::default();
    if !types.output.is_integer() {
        epilogue.activation = Activation::ALL[rng.range(0, 3) as usize];
        epilogue.bias = match rng.range(0, 3) {
            0 => Some(Bias {
                axis: BiasAxis::PerRow,
                offset: rng.range(0, 5) as u64,
            }),
            1 => Some(Bias {
                axis: BiasAxis::PerColumn,
                offset: rng.range(0, 5) as u64,
            }),
            _ => None,
        };
    }
    Gemm::new(m, n, k)
        .types(types)
        .batch(batch)
        .a(random_layout(&mut rng, m, k, batch, true))
        .b(random_layout(&mut rng, k, n, batch, true))
        .c(random_layout(&mut rng, m, n, batch, false))
        .alpha(alpha)
        .beta(beta)
        .epilogue(epilogue)
}

// ---- case data and the check against the reference ----

/// Elements after the end of each operand in guarded cases.
pub const GUARD_ELEMENTS: usize = 97;

/// The host data of one case: A, B (sample data), C (C's GEMM elements NaN when beta is 0,
/// to prove they are not read) and the bias, laid out as the GEMM says.
pub struct CaseData<I, O> {
    pub resolved: ResolvedGemm,
    pub a: Vec<I>,
    pub b: Vec<I>,
    pub c: Vec<O>,
    pub bias: Option<Vec<f32>>,
    description: String,
}

impl<I: Element, O: Element> CaseData<I, O> {
    /// Seeded data for `gemm`.
    pub fn new(gemm: &Gemm, seed: u64) -> Result<Self, String> {
        Self::with_guard(gemm, seed, None)
    }

    /// [`CaseData::new`] with every element of A and B that is not part of the operand
    /// matrices -- the gaps between rows (leading dimension > row length), between batches,
    /// in front of the offset and a tail of [`GUARD_ELEMENTS`] after the end -- poisoned
    /// with NaN (floats) or 127 (integers), and a tail after C. A kernel that reads anything
    /// outside its operands and uses it gets a wrong result; one that writes outside C's
    /// matrices changes elements the comparison requires unchanged.
    pub fn guarded(gemm: &Gemm, seed: u64) -> Result<Self, String> {
        Self::with_guard(gemm, seed, Some(GUARD_ELEMENTS))
    }

    fn with_guard(gemm: &Gemm, seed: u64, guard: Option<usize>) -> Result<Self, String> {
        let data = data_for(gemm.types, seed);
        let description = format!(
            "seed {seed}, {} data{}, {gemm:?}",
            data.name(),
            if guard.is_some() { ", guarded" } else { "" }
        );
        let resolved = gemm
            .resolve()
            .map_err(|e| format!("{description}: resolve: {e}"))?;
        let mut rng = Rng::new(seed);
        count_data(data);
        let tail = guard.unwrap_or(0);
        let mut a: Vec<I> = sample_data(
            data,
            resolved.a.required_elements().max(1) as usize + tail,
            seed,
        );
        let mut b: Vec<I> = sample_data(
            data,
            resolved.b.required_elements().max(1) as usize + tail,
            seed ^ 0x5555,
        );
        if guard.is_some() {
            poison_outside(&mut a, &resolved.a, gemm.batch, gemm.m, gemm.k);
            poison_outside(&mut b, &resolved.b, gemm.batch, gemm.k, gemm.n);
        }
        let mut c: Vec<O> = rng.values(resolved.c.required_elements().max(1) as usize + tail);
        if gemm.beta == 0.0 && !O::DTYPE.is_integer() {
            // Elements of the GEMM must not be read; the rest must survive untouched.
            for batch in 0..gemm.batch {
                for row in 0..gemm.m {
                    for col in 0..gemm.n {
                        c[resolved.c.index(batch, row, col) as usize] = O::from_f64_lossy(f64::NAN);
                    }
                }
            }
        }
        // Bias values in [-1, 1), one past the end of what the epilogue reads.
        let bias: Option<Vec<f32>> = resolved
            .bias
            .map(|bias| rng.values(bias.end_index().max(1) as usize));
        Ok(CaseData {
            resolved,
            a,
            b,
            c,
            bias,
            description,
        })
    }

    /// The case in words (seed, data, GEMM), for failure messages.
    pub fn describe(&self) -> &str {
        &self.description
    }

    /// Checks what the GPU returned (the whole C array) against the f64 reference; the
    /// message names the case.
    pub fn verify(&self, result: coopgemm::Result<Vec<O>>) -> Result<(), String> {
        let describe = self.describe();
        let result = result.map_err(|e| format!("{describe}: {e}"))?;
        let reference = Reference::compute_with_bias(
            &self.resolved,
            &self.a,
            &self.b,
            &self.c,
            self.bias.as_deref(),
        )
        .map_err(|e| format!("{describe}: reference: {e}"))?;
        let comparison = reference.compare(&result);
        if comparison.passed() {
            Ok(())
        } else {
            Err(format!(
                "{describe}: {} of {} elements wrong; first (index, got, expected, tolerance) = {:?}",
                comparison.mismatches, comparison.checked, comparison.first_mismatch
            ))
        }
    }
}

/// `values` with every element that `layout` does not cover poisoned.
fn poison_outside<T: Element>(
    values: &mut [T],
    layout: &coopgemm::testing::ResolvedMatrix,
    batch: u32,
    rows: u32,
    cols: u32,
) {
    let poison = T::from_f64_lossy(if T::DTYPE.is_integer() {
        127.0
    } else {
        f64::NAN
    });
    let mut inside = vec![false; values.len()];
    for b in 0..batch {
        for row in 0..rows {
            for col in 0..cols {
                inside[layout.index(b, row, col) as usize] = true;
            }
        }
    }
    for (value, inside) in values.iter_mut().zip(inside) {
        if !inside {
            *value = poison;
        }
    }
}

/// The data a case checks with, by seed: half the cases exact-product data (sharp on
/// summation and layouts), half full-mantissa data (sharp on products or sums rounded too
/// early), and of those every fourth large-magnitude data where C is f32 and the inputs
/// are floats (f16 products that overflow f16 but not f32).
pub fn data_for(types: GemmTypes, seed: u64) -> SampleData {
    if seed.is_multiple_of(2) {
        SampleData::ExactProducts
    } else if seed % 8 == 7 && types.output == DType::F32 && !types.input.is_integer() {
        SampleData::LargeMagnitude
    } else {
        SampleData::FullMantissa
    }
}

static DATA_COUNTS: Mutex<[usize; 3]> = Mutex::new([0; 3]);

fn count_data(data: SampleData) {
    let index = SampleData::ALL.iter().position(|d| *d == data).unwrap_or(0);
    DATA_COUNTS.lock().unwrap_or_else(|e| e.into_inner())[index] += 1;
}

/// How many checked cases used each kind of data, in words (CI shows these lines).
pub fn data_counts() -> String {
    let counts = *DATA_COUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let parts: Vec<String> = SampleData::ALL
        .iter()
        .zip(counts)
        .map(|(data, count)| format!("{count} {}", data.name()))
        .collect();
    format!("data of the cases checked so far: {}", parts.join(", "))
}
