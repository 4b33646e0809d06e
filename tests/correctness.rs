//! Every kernel against the CPU reference: shapes (1, 17, 4097, tall, wide), all operand
//! layouts, leading dimensions and offsets, batches with strides and broadcasts, alpha/beta.
//! Each case runs on every backend available here that can compute its types.

mod common;

use coopgemm::{BackendKind, Gemm, GemmTypes};

use common::cases::{
    layout_cases, reduced_precision_cases, shape_cases, stride_cases, REDUCED_PRECISION_TYPES,
};
use common::{assert_none_failed, backends_for, check_any, expect_coopmat, expect_wgsl_coopmat};

/// Runs `cases` on every backend that computes `types`; returns how many ran per backend.
fn run_cases(types: GemmTypes, cases: &[Gemm]) -> Vec<(BackendKind, usize)> {
    let backends = backends_for(types);
    if expect_coopmat() && types == GemmTypes::F16_F32 {
        assert!(
            backends
                .iter()
                .any(|(kind, _)| *kind == BackendKind::Coopmat),
            "coopmat must run f16 here"
        );
    }
    if expect_wgsl_coopmat() && types == GemmTypes::F16_F32 {
        assert!(
            backends
                .iter()
                .any(|(kind, _)| *kind == BackendKind::WgslCoopmat),
            "wgsl-coopmat must run f16 here"
        );
    }
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for (kind, context) in &backends {
        for (index, gemm) in cases.iter().enumerate() {
            let gemm = gemm.types(types);
            if let Err(message) = check_any(context, &gemm, index as u64 + 1) {
                failures.push(format!("{kind}: {message}"));
            }
        }
        counts.push((*kind, cases.len()));
        eprintln!("{types}: {} cases on {kind}", cases.len());
    }
    assert_none_failed(&failures);
    counts
}

#[test]
fn f32_shapes() {
    run_cases(GemmTypes::F32, &shape_cases());
}

#[test]
fn f32_layouts() {
    run_cases(GemmTypes::F32, &layout_cases());
}

#[test]
fn f32_strides_batches_and_scaling() {
    run_cases(GemmTypes::F32, &stride_cases());
}

/// Every reduced-precision combination on every backend that lists it (coopmat on GPUs and
/// with the emulated kernels; on lavapipe without them, SIMT alone).
#[test]
fn reduced_precision_types() {
    let cases = reduced_precision_cases();
    for types in REDUCED_PRECISION_TYPES {
        let counts = run_cases(types, &cases);
        eprintln!("{types}: {counts:?}");
    }
}
