//! B staged K-contiguous at run time (`StageBChoice`): with staging forced on, every backend
//! reads the staged copy of row-major B (strided, offset, batched or shared across the batch)
//! and matches the reference, with everything around A and B poisoned; under the default
//! choice only kernels that want B K-contiguous (coopmat2 with 8-bit inputs) get it staged.

mod common;

use coopgemm::{BackendChoice, BackendKind, Context, Gemm, GemmTypes, MatrixLayout, StageBChoice};

fn b_layouts(n: u32, batch: u32) -> Vec<MatrixLayout> {
    let mut layouts = vec![
        MatrixLayout::row_major(),
        MatrixLayout::row_major()
            .leading_dimension(n as u64 + 3)
            .offset(1),
        // Rows that start whole words for 8-bit elements (the packing kernel reads words).
        MatrixLayout::row_major()
            .leading_dimension(n.next_multiple_of(4) as u64 + 4)
            .offset(8),
        MatrixLayout::column_major(),
    ];
    if batch > 1 {
        layouts.push(MatrixLayout::row_major().batch_stride(0));
    }
    layouts
}

#[test]
fn staged_b_matches_the_reference_on_every_backend() {
    common::install_logger();
    let options = common::test_options().with_stage_b(StageBChoice::Always);
    let context = pollster::block_on(Context::with_options(options)).expect("a Vulkan adapter");
    let shapes = [
        (19, 33, 17, 1),
        (40, 130, 64, 2),
        (1, 1, 1, 1),
        (150, 70, 37, 1),
        (64, 64, 70, 3),
    ];
    let (mut ran, mut failures) = (0, Vec::new());
    for types in [
        GemmTypes::F32,
        GemmTypes::F16_F32,
        GemmTypes::BF16_F32,
        GemmTypes::I8_I32,
    ] {
        let probe = Gemm::new(64, 64, 64).types(types);
        for kind in BackendKind::ALL {
            let handle = context.with_backend(BackendChoice::Force(kind));
            if handle.select(&probe).is_err() {
                continue;
            }
            for (shape_index, &(m, n, k, batch)) in shapes.iter().enumerate() {
                for (layout_index, layout) in b_layouts(n, batch).into_iter().enumerate() {
                    let gemm = Gemm::new(m, n, k).types(types).batch(batch).b(layout);
                    ran += 1;
                    let plan = match handle.plan(&gemm) {
                        Ok(plan) => plan,
                        Err(e) => {
                            failures.push(format!("{kind} {types} {gemm:?}: plan: {e}"));
                            continue;
                        }
                    };
                    let row_major = layout.order == coopgemm::Order::RowMajor;
                    if plan.kernel.staged_b != row_major
                        || plan.kernel.to_string().contains("+stageb") != row_major
                    {
                        failures.push(format!(
                            "{kind} {types} {gemm:?}: staged {} ({})",
                            plan.kernel.staged_b, plan.kernel
                        ));
                    }
                    let seed = (shape_index * 10 + layout_index) as u64;
                    if let Err(message) = common::check_any_guarded(&handle, &gemm, seed) {
                        failures.push(format!("{kind} {types} staged: {message}"));
                    }
                }
            }
            eprintln!("{types}: staged B on {kind}");
        }
    }
    common::assert_all_passed(ran, &failures);
    common::assert_no_validation_errors();
}

#[test]
fn by_default_only_kernels_that_want_k_contiguous_b_get_it_staged() {
    let context = common::context();
    for types in [GemmTypes::F32, GemmTypes::F16_F32, GemmTypes::I8_I32] {
        for (m, layout) in [
            (2048, MatrixLayout::row_major()),
            (64, MatrixLayout::row_major()),
            (2048, MatrixLayout::column_major()),
        ] {
            let gemm = Gemm::new(m, 128, 256).types(types).b(layout);
            let Ok(plan) = context.plan(&gemm) else {
                continue;
            };
            let config = plan.kernel.config.to_string();
            eprintln!(
                "{types} m {m} {:?}: {} {}",
                layout.order, plan.selection.backend, plan.kernel
            );
            let wants_it = plan.selection.backend == BackendKind::Coopmat
                && config.starts_with("coopmat2-i8")
                && m >= coopgemm::testing::STAGE_B_MIN_ROWS
                && layout.order == coopgemm::Order::RowMajor;
            assert_eq!(
                plan.kernel.staged_b, wants_it,
                "{types} m {m}: {}",
                plan.kernel
            );
        }
    }
}
