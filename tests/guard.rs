//! Bounds proof for kernels that run without the driver's robust buffer access (the coopmat
//! backend turns it off per pipeline with `VK_EXT_pipeline_robustness`): every operand sits
//! inside poisoned guard regions -- NaN (or 127 for integers) in front of its offset,
//! between its rows (leading dimension > row length), between its batches and after its
//! end -- so a kernel that reads outside A or B gets a wrong answer, and one that writes
//! outside C's matrices changes elements the comparison requires to be untouched.
//! Every layout combination, edge tiles on every side, batches with gaps and broadcasts,
//! on every backend available here.

mod common;

use coopgemm::{BackendKind, Gemm, GemmTypes, MatrixLayout, Order};

use common::{assert_none_failed, backend_for, backend_tests, check_any_guarded};

/// A layout of `order` whose leading dimension exceeds the row length by `gap` and which
/// starts at `offset`.
fn padded(order: Order, rows: u32, cols: u32, gap: u32, offset: u64) -> MatrixLayout {
    let row_length = if order == Order::RowMajor { cols } else { rows };
    MatrixLayout {
        order,
        ..Default::default()
    }
    .leading_dimension((row_length + gap) as u64)
    .offset(offset)
}

fn cases() -> Vec<Gemm> {
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

/// Runs the guarded cases of `types` on the backend `kind`, if it computes them here.
fn run(kind: BackendKind, types: GemmTypes) {
    let Some(context) = backend_for(kind, types) else {
        return;
    };
    let cases = cases();
    let mut failures = Vec::new();
    for (index, gemm) in cases.iter().enumerate() {
        let gemm = gemm.types(types);
        if let Err(message) = check_any_guarded(&context, &gemm, index as u64 + 1) {
            failures.push(format!("{kind}: {message}"));
        }
    }
    // Which configuration the first case ran (CI checks a forced tiling took effect).
    let first = context
        .plan(&cases[0].types(types))
        .map(|plan| plan.kernel.config.to_string())
        .unwrap_or_default();
    eprintln!(
        "{types}: {} guarded cases on {kind} (first with {first})",
        cases.len()
    );
    assert_none_failed(&failures);
}

backend_tests! {
    fn f32_guarded(kind) {
        run(kind, GemmTypes::F32);
    }

    fn f16_guarded(kind) {
        run(kind, GemmTypes::F16_F32);
    }

    fn f16_sums_guarded(kind) {
        run(kind, GemmTypes::F16_ACC_F16);
    }

    fn bf16_guarded(kind) {
        run(kind, GemmTypes::BF16_F32);
    }

    fn i8_guarded(kind) {
        run(kind, GemmTypes::I8_I32);
    }
}
