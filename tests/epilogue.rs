//! The fused epilogue (bias per row or column, ReLU / GELU / SiLU) and output conversion to
//! f16 / bf16, on every backend that runs each type combination, against the CPU reference.

mod common;

use coopgemm::testing::Reference;
use coopgemm::{Activation, BackendKind, BiasAxis, Epilogue, Gemm, GemmTypes, MatrixLayout};

use common::{assert_no_validation_errors, backend_for, backend_tests, check_any, context};

const TYPES: [GemmTypes; 7] = [
    GemmTypes::F32,
    GemmTypes::F16_F32,
    GemmTypes::BF16_F32,
    GemmTypes::F16_F32_F16,
    GemmTypes::BF16_F32_BF16,
    GemmTypes::F32_F32_F16,
    GemmTypes::F32_F32_BF16,
];

fn epilogues() -> Vec<Epilogue> {
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

backend_tests! {
    fn every_epilogue_and_output_type(kind) {
        let shapes = [(1, 1, 1), (17, 33, 65), (70, 45, 19), (130, 67, 200)];
        let mut failures = Vec::new();
        let mut ran = 0;
        for types in TYPES {
            if let Some(context) = backend_for(kind, types) {
                for (index, epilogue) in epilogues().into_iter().enumerate() {
                    for (shape_index, &(m, n, k)) in shapes.iter().enumerate() {
                        let mut gemm = Gemm::new(m, n, k).types(types).epilogue(epilogue);
                        // Vary the rest: beta, column-major C, a batch with broadcast A.
                        if shape_index % 2 == 1 {
                            gemm = gemm.beta(0.5).c(MatrixLayout::column_major());
                        }
                        if shape_index == 2 {
                            gemm = gemm.batch(2).a(MatrixLayout::row_major().batch_stride(0));
                        }
                        ran += 1;
                        if let Err(message) =
                            check_any(&context, &gemm, (index * 10 + shape_index) as u64)
                        {
                            failures.push(format!("{kind} {types}: {message}"));
                        }
                    }
                }
                eprintln!("{types}: epilogues on {kind}");
            }
        }
        // SIMT runs every type; another backend may run none of them here.
        if kind == BackendKind::Simt {
            common::assert_all_passed(ran, &failures);
        } else {
            common::assert_none_failed(&failures);
        }
    }

    /// Large inputs to GELU and SiLU give the limits (x or -0), never NaN, and ReLU keeps NaN.
    fn activations_at_extremes(kind) {
        let inputs = [-1.0e4f32, 1.0e4, -90.0, 90.0, -0.5, 0.5, 0.0, f32::NAN];
        let n = inputs.len() as u32;
        for activation in [Activation::Gelu, Activation::Silu, Activation::Relu] {
            if let Some(context) = backend_for(kind, GemmTypes::F32) {
                // C = A * B + bias with A = [1] and B = [0 ...]: C is the bias, then activated.
                let gemm = Gemm::new(1, n, 1)
                    .bias(BiasAxis::PerColumn)
                    .activation(activation);
                let (a, b, c) = ([1.0f32], vec![0.0f32; n as usize], vec![0.0f32; n as usize]);
                let result = context
                    .multiply_with_bias(&gemm, &a, &b, &c, Some(&inputs))
                    .unwrap_or_else(|e| panic!("{kind} {activation}: {e}"));
                let reference =
                    Reference::compute_with_bias(&gemm.resolve().unwrap(), &a, &b, &c, Some(&inputs))
                        .unwrap();
                let comparison = reference.compare(&result);
                assert!(
                    comparison.passed(),
                    "{kind} {activation}: {result:?} vs {:?}",
                    reference.expected
                );
            }
        }
        assert_no_validation_errors();
    }
}

/// The shared context reports an error, not a panic, for an epilogue on an integer output.
#[test]
fn integer_outputs_take_no_epilogue() {
    let gemm = Gemm::new(4, 4, 4)
        .types(GemmTypes::I8_I32)
        .activation(Activation::Relu);
    assert!(matches!(
        context().select(&gemm),
        Err(coopgemm::Error::EpilogueNeedsFloatOutput { .. })
    ));
}
