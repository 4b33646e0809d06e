//! The fused epilogue (bias per row or column, ReLU / GELU / SiLU) and output conversion to
//! f16 / bf16, on every backend that runs each type combination, against the CPU reference.

mod common;

use coopgemm::testing::Reference;
use coopgemm::{Activation, BackendKind, BiasAxis, Gemm, GemmTypes};

use common::cases::{epilogue_cases, ACTIVATION_EXTREMES, EPILOGUE_TYPES};
use common::{assert_no_validation_errors, backend_for, backend_tests, check_any, context};

backend_tests! {
    fn every_epilogue_and_output_type(kind) {
        let mut failures = Vec::new();
        let mut ran = 0;
        for types in EPILOGUE_TYPES {
            if let Some(context) = backend_for(kind, types) {
                for (gemm, seed) in epilogue_cases(types) {
                    ran += 1;
                    if let Err(message) = check_any(&context, &gemm, seed) {
                        failures.push(format!("{kind} {types}: {message}"));
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
        let inputs = ACTIVATION_EXTREMES;
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
