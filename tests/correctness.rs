//! Every kernel against the CPU reference: shapes (1, 17, 4097, tall, wide), all operand
//! layouts, leading dimensions and offsets, batches with strides and broadcasts, alpha/beta.
//! Each test runs once per backend (`name::simt`, `name::coopmat`, `name::wgsl_coopmat`), on
//! the backend if it is available here and computes the types.

mod common;

use coopgemm::{BackendKind, Gemm, GemmTypes};

use common::cases::{
    layout_cases, reduced_precision_cases, shape_cases, stride_cases, REDUCED_PRECISION_TYPES,
};
use common::{assert_none_failed, backend_for, backend_tests, check_any};

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
        let cases = reduced_precision_cases();
        for types in REDUCED_PRECISION_TYPES {
            run_cases(kind, types, &cases);
        }
    }
}
