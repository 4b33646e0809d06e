//! Every kernel against the CPU reference: shapes (1, 17, 4097, tall, wide), all operand
//! layouts, leading dimensions and offsets, batches with strides and broadcasts, alpha/beta.
//! Each test runs once per backend (`name::simt`, `name::coopmat`, `name::wgsl_coopmat`), on
//! the backend if it is available here and computes the types.

mod common;

use coopgemm::{BackendKind, Gemm, GemmTypes, MatrixLayout, Order};

use common::{assert_none_failed, backend_for, backend_tests, check_any};

const SHAPES: [(u32, u32, u32); 12] = [
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

fn layout(order: Order) -> MatrixLayout {
    MatrixLayout {
        order,
        ..Default::default()
    }
}

/// Runs `cases` on the backend `kind` if it computes `types` here.
fn run_cases(kind: BackendKind, types: GemmTypes, cases: &[Gemm]) {
    let Some(context) = backend_for(kind, types) else {
        return;
    };
    let mut failures = Vec::new();
    for (index, gemm) in cases.iter().enumerate() {
        let gemm = gemm.types(types);
        if let Err(message) = check_any(&context, &gemm, index as u64 + 1) {
            failures.push(format!("{kind}: {message}"));
        }
    }
    eprintln!("{types}: {} cases on {kind}", cases.len());
    assert_none_failed(&failures);
}

fn shape_cases() -> Vec<Gemm> {
    SHAPES.iter().map(|&(m, n, k)| Gemm::new(m, n, k)).collect()
}

fn layout_cases() -> Vec<Gemm> {
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

fn stride_cases() -> Vec<Gemm> {
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

backend_tests! {
    fn f32_shapes(kind) {
        run_cases(kind, GemmTypes::F32, &shape_cases());
    }

    fn f32_layouts(kind) {
        run_cases(kind, GemmTypes::F32, &layout_cases());
    }

    fn f32_strides_batches_and_scaling(kind) {
        run_cases(kind, GemmTypes::F32, &stride_cases());
    }

    /// Every reduced-precision combination on the backend, where it lists it (coopmat on
    /// GPUs and with the emulated kernels; on lavapipe without them, SIMT alone).
    fn reduced_precision_types(kind) {
        let mut cases = shape_cases();
        cases.truncate(9);
        cases.extend(layout_cases().into_iter().step_by(3));
        cases.extend(stride_cases());
        for types in [
            GemmTypes::F16_F32,
            GemmTypes::F16_ACC_F16,
            GemmTypes::BF16_F32,
            GemmTypes::I8_I32,
        ] {
            run_cases(kind, types, &cases);
        }
    }
}
