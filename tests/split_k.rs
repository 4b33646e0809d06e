//! Split-K: GEMMs cut along K into partial products and summed by the reduction pass, on
//! every backend, against the reference: even and uneven splits, every A/B layout, packed B,
//! beta, the epilogue, narrow outputs and 8-bit inputs (i32 partials).

mod common;

use coopgemm::{BackendKind, Gemm, GemmTypes, SplitKChoice};

use common::cases::{split_k_cases, SPLIT_K_SLICES, SPLIT_K_TYPES};
use common::{backend_for, backend_tests, check_any};

backend_tests! {
    fn split_k_matches_the_reference_on_every_backend(kind) {
        let mut failures = Vec::new();
        let mut ran = 0;
        for types in SPLIT_K_TYPES {
            if let Some(context) = backend_for(kind, types) {
                for slices in SPLIT_K_SLICES {
                    let split = context.with_split_k(SplitKChoice::Slices(slices));
                    for (gemm, seed) in split_k_cases(types, slices) {
                        let kernel = split
                            .prepare(&gemm)
                            .unwrap_or_else(|e| panic!("{kind} {types} {gemm:?}: {e}"));
                        assert!(kernel.split_k.is_some(), "{kernel:?}");
                        ran += 1;
                        if let Err(message) = check_any(&split, &gemm, seed) {
                            failures.push(format!("{kind} {slices} slices: {message}"));
                        }
                    }
                }
                eprintln!("{types}: split-K on {kind}");
            }
        }
        // SIMT runs every type; another backend may run none of them here.
        if kind == BackendKind::Simt {
            common::assert_all_passed(ran, &failures);
        } else {
            common::assert_none_failed(&failures);
        }
    }

    /// Batched GEMMs and f16 sums are never split; Off never splits.
    fn split_k_only_where_it_applies(kind) {
        let context = common::context();
        let forced = context.with_split_k(SplitKChoice::Slices(4));
        let batched = Gemm::new(8, 8, 64).batch(2);
        assert!(forced.prepare(&batched).unwrap().split_k.is_none());
        let off = context.with_split_k(SplitKChoice::Off);
        assert!(off
            .prepare(&Gemm::new(8, 8, 4096))
            .unwrap()
            .split_k
            .is_none());
        if let Some(handle) = backend_for(kind, GemmTypes::F16_ACC_F16) {
            let split = handle.with_split_k(SplitKChoice::Slices(4));
            assert!(split
                .prepare(&Gemm::new(8, 8, 64).types(GemmTypes::F16_ACC_F16))
                .unwrap()
                .split_k
                .is_none());
        }
    }
}
