//! Runtime backend selection: what is chosen, why, and that overrides are obeyed.

mod common;

use coopgemm::testing::COOPMAT_MIN_MULTIPLY_ADDS;
use coopgemm::{BackendChoice, BackendKind, Gemm, GemmTypes};

use common::{context, expect_coopmat};

#[test]
fn every_backend_reports_availability_with_a_reason() {
    let statuses = context().backends();
    assert_eq!(statuses.len(), BackendKind::ALL.len());
    for status in &statuses {
        match &status.availability {
            Ok(what) | Err(what) => assert!(!what.is_empty(), "{status:?}"),
        }
    }
    let simt = statuses
        .iter()
        .find(|s| s.kind == BackendKind::Simt)
        .unwrap();
    assert!(simt.availability.is_ok(), "SIMT runs everywhere");
    let coopmat = statuses
        .iter()
        .find(|s| s.kind == BackendKind::Coopmat)
        .unwrap();
    assert_eq!(coopmat, &context().backend(BackendKind::Coopmat));
    if expect_coopmat() {
        assert!(coopmat.availability.is_ok(), "{coopmat:?}");
    }
    let wgsl_coopmat = statuses
        .iter()
        .find(|s| s.kind == BackendKind::WgslCoopmat)
        .unwrap();
    assert_eq!(wgsl_coopmat, &context().backend(BackendKind::WgslCoopmat));
}

#[test]
fn automatic_selection_falls_back_to_simt_with_the_reason() {
    let selection = context().select(&Gemm::new(1024, 1024, 1024)).unwrap();
    let lists_f32 = |types: Vec<GemmTypes>| types.contains(&GemmTypes::F32);
    let lists = |kind| {
        let status = context().backend(kind);
        status.availability.map(|_| lists_f32(status.types))
    };
    let (coopmat, wgsl_coopmat) = (lists(BackendKind::Coopmat), lists(BackendKind::WgslCoopmat));
    match (coopmat, wgsl_coopmat) {
        (Ok(true), _) => assert_eq!(selection.backend, BackendKind::Coopmat, "{selection:?}"),
        (_, Ok(true)) => assert_eq!(selection.backend, BackendKind::WgslCoopmat, "{selection:?}"),
        (coopmat, wgsl_coopmat) => {
            assert_eq!(selection.backend, BackendKind::Simt, "{selection:?}");
            // Every unavailable backend is passed over with its own reason.
            for (kind, status) in [
                (BackendKind::Coopmat, coopmat),
                (BackendKind::WgslCoopmat, wgsl_coopmat),
            ] {
                if let Err(why) = status {
                    assert!(
                        selection
                            .rejected
                            .iter()
                            .any(|(k, reason)| *k == kind && *reason == why),
                        "{selection:?}"
                    );
                    assert!(selection.reason.contains(&why), "{selection:?}");
                }
            }
        }
    }
}

#[test]
fn coopmat_is_chosen_for_the_types_it_lists_and_not_for_tiny_f32() {
    let coopmat = context().backend(BackendKind::Coopmat);
    if !coopmat.is_available() {
        assert!(!expect_coopmat(), "coopmat expected but unavailable");
        return;
    }
    for types in coopmat.types {
        let selection = context()
            .select(&Gemm::new(256, 256, 256).types(types))
            .unwrap();
        // Where the WGSL backend runs the types too, an autotuning context measures both.
        let measured = context()
            .backend(BackendKind::WgslCoopmat)
            .types
            .contains(&types);
        if measured && selection.backend == BackendKind::WgslCoopmat {
            assert!(selection.reason.contains("measured"), "{selection:?}");
        } else {
            assert_eq!(
                selection.backend,
                BackendKind::Coopmat,
                "{types}: {selection:?}"
            );
        }
        let kernel = context()
            .prepare(&Gemm::new(256, 256, 256).types(types))
            .unwrap();
        assert_eq!(kernel.backend, selection.backend);
        assert_eq!(kernel.config.backend(), kernel.backend, "{kernel:?}");
    }
    let tiny = Gemm::new(8, 8, 8);
    const { assert!((8.0f64 * 8.0 * 8.0) < COOPMAT_MIN_MULTIPLY_ADDS) };
    let selection = context().select(&tiny).unwrap();
    assert_eq!(selection.backend, BackendKind::Simt, "{selection:?}");
}

#[test]
fn forced_backends_are_obeyed() {
    let simt = context().with_backend(BackendChoice::Force(BackendKind::Simt));
    assert_eq!(
        simt.backend_choice(),
        BackendChoice::Force(BackendKind::Simt)
    );
    let selection = simt.select(&Gemm::new(2048, 2048, 2048)).unwrap();
    assert_eq!(selection.backend, BackendKind::Simt);
    assert!(selection.reason.contains("forced"), "{selection:?}");
    let coopmat = context().with_backend(BackendChoice::Force(BackendKind::Coopmat));
    // Forced even below the size where automatic selection would prefer SIMT.
    let types = context()
        .backend(BackendKind::Coopmat)
        .types
        .first()
        .copied()
        .unwrap_or(GemmTypes::F32);
    let selection = coopmat.select(&Gemm::new(8, 8, 8).types(types));
    assert_eq!(
        selection.is_ok(),
        context().backend(BackendKind::Coopmat).is_available(),
        "{selection:?}"
    );
}

#[test]
fn backend_names_round_trip() {
    for kind in BackendKind::ALL {
        assert_eq!(BackendKind::parse(kind.name()), Some(kind));
    }
    assert_eq!(BackendKind::parse("cuda"), None);
    for types in GemmTypes::ALL {
        assert_eq!(GemmTypes::parse(&types.short_name()), Some(types));
    }
}

/// `Context::plan` shows the whole decision, and the GEMM runs as planned: the backend, one
/// configuration per kernel launch (one, or for a split the batch of equal slices and the
/// remainder's), each of the planned backend and able to be prepared.
#[test]
fn plan_shows_the_decision_that_runs() {
    let context = context();
    let whole = Gemm::new(96, 80, 64).types(GemmTypes::F32);
    let plan = context.plan(&whole).unwrap();
    assert_eq!(plan.split_k, None);
    assert_eq!(plan.configs.len(), 1);
    assert_eq!(plan.configs[0].backend(), plan.selection.backend, "{plan}");
    assert_eq!(plan.kernel.config, plan.configs[0]);
    assert_eq!(plan.selection, context.select(&whole).unwrap());
    assert_eq!(context.prepare(&whole).unwrap(), plan.kernel, "{plan}");
    let ran = context
        .run(
            &whole,
            &coopgemm::GemmBuffers::new(
                &context.upload("a", &vec![0.5f32; 96 * 64]).unwrap(),
                &context.upload("b", &vec![0.25f32; 64 * 80]).unwrap(),
                &context.upload("c", &vec![0.0f32; 96 * 80]).unwrap(),
            ),
        )
        .unwrap();
    assert_eq!(ran.kernel, plan.kernel);

    let split = context.with_split_k(coopgemm::SplitKChoice::Slices(3));
    let long = Gemm::new(16, 16, 3001).types(GemmTypes::F32);
    let plan = split.plan(&long).unwrap();
    let slices = plan.split_k.expect("three slices asked for");
    assert_eq!((slices.slices, slices.remainder), (3, 1));
    assert_eq!(
        plan.configs.len(),
        2,
        "the slices' batch and the remainder: {plan}"
    );
    assert_eq!(plan.kernel.split_k, Some(slices.partials()));
    assert!(plan
        .configs
        .iter()
        .all(|config| config.backend() == plan.selection.backend));
    assert!(plan.to_string().contains("+splitk"), "{plan}");
    assert_eq!(split.prepare(&long).unwrap(), plan.kernel);
}
