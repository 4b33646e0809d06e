//! The WGSL cooperative-matrix backend outside the shared correctness bodies (which run on it
//! through `backends_for` wherever it is available): its availability reason, selection for
//! the types it lists, recording into the caller's own encoder, and devices the caller
//! created (`Context::from_wgpu`).
//!
//! Lavapipe lists no cooperative matrices, so here only the unavailable paths run; on a GPU
//! that lists them (the H100, Apple GPUs) every test runs the backend itself.
//! `COOPGEMM_EXPECT_WGSL_COOPMAT=1` makes its absence a failure.

mod common;

use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, Error, Gemm, GemmBuffers, GemmTypes, MatrixLayout,
};

use common::cases::Rng;
use common::{assert_no_validation_errors, context, expect_wgsl_coopmat};

#[test]
fn availability_has_a_reason_and_forcing_an_unavailable_backend_says_it() {
    let forced = context().with_backend(BackendChoice::Force(BackendKind::WgslCoopmat));
    let gemm = Gemm::new(64, 64, 64).types(GemmTypes::F16_F32);
    let status = context().backend(BackendKind::WgslCoopmat);
    match &status.availability {
        Ok(description) => {
            assert!(!context().cooperative_matrices().wgsl_shapes.is_empty());
            assert!(description.contains("WGSL cooperative matrices"));
            if status.types.contains(&GemmTypes::F16_F32) {
                let kernel = forced.prepare(&gemm).unwrap();
                assert_eq!(kernel.backend, BackendKind::WgslCoopmat);
            }
        }
        Err(why) => {
            assert!(!expect_wgsl_coopmat(), "wgsl-coopmat expected: {why}");
            assert!(why.contains("cooperative matri"), "{why}");
            let error = forced.select(&gemm).unwrap_err();
            match error {
                Error::Unsupported { backend, reason } => {
                    assert_eq!(backend, BackendKind::WgslCoopmat);
                    assert!(reason.contains(why), "{reason}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_no_validation_errors();
}

/// Automatic selection for a shared encoder: the WGSL cooperative-matrix backend for the
/// types it lists (the Vulkan one cannot share an encoder), SIMT otherwise; and the GEMM it
/// records among the caller's own commands is correct.
#[test]
fn encode_runs_tensor_cores_in_the_callers_encoder() {
    let context = context();
    let types = context
        .backend(BackendKind::WgslCoopmat)
        .types
        .first()
        .copied();
    let Some(types) = types else {
        assert!(!expect_wgsl_coopmat(), "wgsl-coopmat expected");
        return;
    };
    let gemm = Gemm::new(200, 150, 100)
        .types(types)
        .a(MatrixLayout::column_major())
        .beta(0.5);
    let resolved = gemm.resolve().unwrap();
    let mut rng = Rng::new(16);
    let count = |m: &coopgemm::testing::ResolvedMatrix| m.required_elements() as usize;
    let a: Vec<f64> = (0..count(&resolved.a))
        .map(|_| rng.unit() * 2.0 - 1.0)
        .collect();
    let b: Vec<f64> = (0..count(&resolved.b))
        .map(|_| rng.unit() * 2.0 - 1.0)
        .collect();
    let c: Vec<f64> = (0..count(&resolved.c))
        .map(|_| rng.unit() * 2.0 - 1.0)
        .collect();
    match (types.input, types.output) {
        (coopgemm::DType::F16, coopgemm::DType::F32) => {
            run_in_encoder::<half::f16, f32>(context, &gemm, &a, &b, &c)
        }
        (coopgemm::DType::F16, coopgemm::DType::F16) => {
            run_in_encoder::<half::f16, half::f16>(context, &gemm, &a, &b, &c)
        }
        (coopgemm::DType::F32, coopgemm::DType::F32) => {
            run_in_encoder::<f32, f32>(context, &gemm, &a, &b, &c)
        }
        _ => run_in_encoder::<f32, half::f16>(context, &gemm, &a, &b, &c),
    }
    assert_no_validation_errors();
}

fn run_in_encoder<I: coopgemm::Element, O: coopgemm::Element>(
    context: &Context,
    gemm: &Gemm,
    a: &[f64],
    b: &[f64],
    c: &[f64],
) {
    let convert_in = |v: &[f64]| -> Vec<I> { v.iter().map(|x| I::from_f64_lossy(*x)).collect() };
    let (a, b) = (convert_in(a), convert_in(b));
    let c: Vec<O> = c.iter().map(|x| O::from_f64_lossy(*x)).collect();
    let (a_buffer, b_buffer, c_buffer) = (
        context.upload("a", &a).unwrap(),
        context.upload("b", &b).unwrap(),
        context.upload("c", &c).unwrap(),
    );
    let mut encoder = context.device().create_command_encoder(&Default::default());
    let kernel = context
        .encode(
            &mut encoder,
            gemm,
            &GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer),
        )
        .unwrap();
    assert_eq!(kernel.backend, BackendKind::WgslCoopmat, "{kernel:?}");
    context.queue().submit([encoder.finish()]);
    let result: Vec<O> = pollster::block_on(context.download(&c_buffer, c.len())).unwrap();
    let reference = Reference::compute(&gemm.resolve().unwrap(), &a, &b, &c).unwrap();
    let comparison = reference.compare(&result);
    assert!(comparison.passed(), "{kernel:?}: {comparison:?}");
}

/// A device someone else opened: `Context::from_wgpu` finds the WGSL cooperative-matrix
/// backend exactly when the device has wgpu's `EXPERIMENTAL_COOPERATIVE_MATRIX`, and its
/// GEMMs are correct there.
#[test]
fn from_wgpu_devices_with_the_feature_get_the_backend() {
    let device = context().device().clone();
    let queue = context().queue().clone();
    let has_feature = device
        .features()
        .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
    let wrapped = Context::from_wgpu(device, queue);
    let status = wrapped.backend(BackendKind::WgslCoopmat);
    assert_eq!(
        status.is_available(),
        has_feature,
        "{:?}",
        status.availability
    );
    assert_eq!(
        status.is_available(),
        context().backend(BackendKind::WgslCoopmat).is_available()
    );
    if status.is_available() {
        assert_eq!(
            wrapped.cooperative_matrices().wgsl_shapes,
            context().cooperative_matrices().wgsl_shapes
        );
        let forced = wrapped.with_backend(BackendChoice::Force(BackendKind::WgslCoopmat));
        for types in status.types.iter().copied() {
            for (index, gemm) in [
                Gemm::new(130, 70, 260),
                Gemm::new(33, 17, 20).batch(3),
                Gemm::new(17, 33, 65).b(MatrixLayout::column_major()),
            ]
            .into_iter()
            .enumerate()
            {
                common::check_any(&forced, &gemm.types(types), index as u64 + 1)
                    .unwrap_or_else(|e| panic!("from_wgpu: {e}"));
            }
        }
    }
    assert_no_validation_errors();
}
