//! Randomized differential tests: seeded random descriptions (dimensions 1..300, every
//! layout, padded leading dimensions, offsets, batches with strides and broadcasts,
//! alpha/beta, fused bias and activation for float outputs) checked against the f64
//! reference on every backend available, for every type combination.
//!
//! `COOPGEMM_RANDOM_CASES=N` sets the number of descriptions per type (default 150),
//! `COOPGEMM_RANDOM_SEED=S` the seed (default 1); case i uses seed S + i. A failure prints
//! its description and the settings that replay exactly that case.

mod common;

use coopgemm::{BackendKind, GemmTypes};

use common::cases::{random_gemm, NARROW_OUTPUT_TYPES, REDUCED_PRECISION_TYPES};
use common::{assert_none_failed, backend_for, backend_tests, check_any};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run_random(kind: BackendKind, types: GemmTypes, cases: u64) {
    let seed = setting("COOPGEMM_RANDOM_SEED", 1);
    let mut failures = Vec::new();
    if let Some(context) = backend_for(kind, types) {
        for case in 0..cases {
            let gemm = random_gemm(seed + case, types);
            if let Err(message) = check_any(&context, &gemm, seed + case) {
                failures.push(format!(
                    "{kind} (replay: COOPGEMM_RANDOM_SEED={} COOPGEMM_RANDOM_CASES=1): {message}",
                    seed + case
                ));
            }
        }
        eprintln!("{types}: {cases} random cases on {kind}");
    }
    common::report_data_counts();
    assert_none_failed(&failures);
}

fn cases() -> u64 {
    setting("COOPGEMM_RANDOM_CASES", 150)
}

backend_tests! {
    fn random_f32(kind) {
        run_random(kind, GemmTypes::F32, cases());
    }

    /// The tensor-core workhorses, on every backend that runs them (SIMT for the float ones).
    fn random_reduced_precision(kind) {
        for types in REDUCED_PRECISION_TYPES {
            run_random(kind, types, cases());
        }
    }

    /// Output conversion to f16/bf16 (a quarter of the cases each: the same code paths).
    fn random_narrow_outputs(kind) {
        for types in NARROW_OUTPUT_TYPES {
            run_random(kind, types, cases().div_ceil(4));
        }
    }
}
