//! Numerics: NaN and Inf propagate as in a reference GEMM, and f16 inputs summed in f32
//! (the default for f16) do not overflow where an f16 sum would.

mod common;

use coopgemm::testing::Reference;
use coopgemm::{Gemm, GemmTypes};

use common::cases::Rng;
use common::{assert_no_validation_errors, backend_for, backend_tests};

backend_tests! {
    fn nan_and_inf_propagate_like_the_reference(kind) {
        let gemm = Gemm::new(20, 18, 33);
        let resolved = gemm.resolve().unwrap();
        let mut rng = Rng::new(3);
        let mut a: Vec<f32> = rng.values(resolved.a.required_elements() as usize);
        let mut b: Vec<f32> = rng.values(resolved.b.required_elements() as usize);
        let c = vec![0.0f32; resolved.c.required_elements() as usize];
        a[resolved.a.index(0, 3, 7) as usize] = f32::NAN; // row 3 of C becomes NaN
        a[resolved.a.index(0, 9, 0) as usize] = f32::INFINITY; // row 9: ±Inf (or NaN where B is 0)
        b[resolved.b.index(0, 5, 11) as usize] = f32::NEG_INFINITY; // column 11: ±Inf / NaN
        let reference = Reference::compute(&resolved, &a, &b, &c).unwrap();
        let special = reference.expected.iter().filter(|v| !v.is_finite()).count();
        assert!(
            special >= 18 + 18 + 20 - 3,
            "the data must produce NaN and Inf outputs ({special})"
        );
        if let Some(context) = backend_for(kind, GemmTypes::F32) {
            let result = context.multiply(&gemm, &a, &b, &c).unwrap();
            let comparison = reference.compare(&result);
            assert!(comparison.passed(), "{kind}: {comparison:?}");
        }
        assert_no_validation_errors();
    }

    fn f16_inputs_summed_in_f32_do_not_overflow(kind) {
        // Each product 200 * 200 = 40 000 is exact in f16, but the sum over k = 64, 2 560 000,
        // is far beyond f16's largest finite value (65 504): an f16 accumulator would reach Inf.
        // In f32 accumulation with f32 output it is exact.
        let gemm = Gemm::new(16, 16, 64).types(GemmTypes::F16_F32);
        let big = vec![half::f16::from_f32(200.0); 16 * 64];
        let c = vec![0.0f32; 16 * 16];
        let mut ran = 0;
        if let Some(context) = backend_for(kind, GemmTypes::F16_F32) {
            let result = context.multiply(&gemm, &big, &big, &c).unwrap();
            assert!(
                result.iter().all(|v| *v == 2_560_000.0),
                "{kind}: {:?}",
                &result[..4]
            );
            ran += 1;
        }
        eprintln!("f16 overflow check ran on {ran} backends");
        assert_no_validation_errors();
    }
}
