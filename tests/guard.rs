//! Bounds proof for kernels that run without the driver's robust buffer access (the coopmat
//! backend turns it off per pipeline with `VK_EXT_pipeline_robustness`): every operand sits
//! inside poisoned guard regions -- NaN (or 127 for integers) in front of its offset,
//! between its rows (leading dimension > row length), between its batches and after its
//! end -- so a kernel that reads outside A or B gets a wrong answer, and one that writes
//! outside C's matrices changes elements the comparison requires to be untouched.
//! Every layout combination, edge tiles on every side, batches with gaps and broadcasts,
//! on every backend available here.

mod common;

use coopgemm::{BackendKind, GemmTypes};

use common::cases::guard_cases;
use common::{assert_none_failed, backend_for, backend_tests, check_any_guarded};

/// Runs the guarded cases of `types` on the backend `kind`, if it computes them here.
fn run(kind: BackendKind, types: GemmTypes) {
    let Some(context) = backend_for(kind, types) else {
        return;
    };
    let cases = guard_cases();
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
