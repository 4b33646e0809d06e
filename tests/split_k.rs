//! Split-K: GEMMs cut along K into partial products and summed by the reduction pass, on
//! every backend, against the reference: even and uneven splits, every A/B layout, packed B,
//! beta, the epilogue and narrow outputs.

mod common;

use coopgemm::{Activation, BackendKind, BiasAxis, Gemm, GemmTypes, MatrixLayout, SplitKChoice};

use common::{backend_for, backend_tests, check_any};

backend_tests! {
    fn split_k_matches_the_reference_on_every_backend(kind) {
        let shapes = [(5, 7, 2), (17, 33, 100), (64, 130, 513), (1, 300, 64)];
        let mut failures = Vec::new();
        let mut ran = 0;
        for types in [
            GemmTypes::F32,
            GemmTypes::F16_F32,
            GemmTypes::F16_F32_F16,
            GemmTypes::BF16_F32_BF16,
        ] {
            if let Some(context) = backend_for(kind, types) {
                for slices in [2, 3, 7] {
                    let split = context.with_split_k(SplitKChoice::Slices(slices));
                    for (index, &(m, n, k)) in shapes.iter().enumerate() {
                        let mut gemm = Gemm::new(m, n, k).types(types);
                        match index {
                            1 => {
                                gemm = gemm
                                    .a(MatrixLayout::column_major()
                                        .leading_dimension(m as u64 + 2)
                                        .offset(3))
                                    .beta(0.5)
                                    .bias(BiasAxis::PerRow)
                                    .activation(Activation::Gelu)
                            }
                            2 => {
                                gemm = gemm
                                    .b(MatrixLayout::column_major())
                                    .c(MatrixLayout::column_major())
                                    .bias(BiasAxis::PerColumn)
                                    .activation(Activation::Relu)
                            }
                            3 => {
                                gemm = gemm.b(MatrixLayout::row_major().leading_dimension(n as u64 + 5))
                            }
                            _ => {}
                        }
                        let kernel = split
                            .prepare(&gemm)
                            .unwrap_or_else(|e| panic!("{kind} {types} {gemm:?}: {e}"));
                        assert!(kernel.split_k.is_some(), "{kernel:?}");
                        ran += 1;
                        if let Err(message) =
                            check_any(&split, &gemm, (slices * 10) as u64 + index as u64)
                        {
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

    /// Batched GEMMs, integer types and f16 sums are never split; Off never splits.
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
        for types in [GemmTypes::F16_ACC_F16, GemmTypes::I8_I32] {
            if let Some(handle) = backend_for(kind, types) {
                let split = handle.with_split_k(SplitKChoice::Slices(4));
                assert!(split
                    .prepare(&Gemm::new(8, 8, 64).types(types))
                    .unwrap()
                    .split_k
                    .is_none());
            }
        }
    }
}
