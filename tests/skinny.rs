//! GEMMs of few rows (decode: a few activations times a weight matrix), which the coopmat
//! backend runs on its skinny kernel (`glsl/gemm_skinny.comp`): every operand order,
//! alignments, offsets, batches, alpha/beta and epilogues, guarded, for every type; and the
//! planner's choice of that kernel. Each body runs once per backend, so the portable
//! backends are held to the same cases. On the coopmat backend these tests turn its decode
//! kernel off (`KernelOverrides::decode_rows` 0), which would otherwise take 4 to 16 rows of
//! i8 (5 to 16 with B column-major, 16 only with at most 4096 x 4096 weights where the
//! coopmat2 kernel runs):
//! `tests/decode.rs` runs the same cases on that kernel.

mod common;

use coopgemm::config::{CoopmatPlan, SkinnyConfig, SkinnyTile, WorkgroupScopeConfig};
use coopgemm::{
    BackendKind, Context, Gemm, GemmTypes, KernelConfig, KernelOverrides, MatrixLayout,
};

use common::cases::{skinny_cases, with_epilogues, SKINNY_TYPES};
use common::{assert_none_failed, backend_for, backend_tests, check_any_guarded, test_options};

/// A context forced to the coopmat backend with `overrides` applied and the decode kernel
/// off, so that GEMMs of 2 to 16 rows reach the skinny kernel and the few-row tile.
fn coopmat_without_decode(overrides: impl FnOnce(&mut KernelOverrides)) -> Context {
    let mut options = test_options();
    options.kernel_overrides.decode_rows = Some(0);
    overrides(&mut options.kernel_overrides);
    pollster::block_on(Context::with_options(options))
        .expect("a second context")
        .with_backend(coopgemm::BackendChoice::Force(BackendKind::Coopmat))
}

/// `kind`'s context for `types` where it runs them (see [`backend_for`]); on the coopmat
/// backend, `without_decode`'s handle.
fn few_rows_context(
    kind: BackendKind,
    types: GemmTypes,
    without_decode: &std::sync::OnceLock<Context>,
) -> Option<Context> {
    let context = backend_for(kind, types)?;
    Some(match kind {
        BackendKind::Coopmat => without_decode
            .get_or_init(|| coopmat_without_decode(|_| {}))
            .clone(),
        _ => context,
    })
}

fn is_skinny(context: &Context, gemm: &Gemm) -> bool {
    context.plan(gemm).is_ok_and(|plan| {
        matches!(
            plan.kernel.config,
            KernelConfig::Coopmat(CoopmatPlan::Skinny(_))
        )
    })
}

/// Whether `gemm` plans the coopmat2 kernel's few-row tile.
fn is_few_rows_tile(context: &Context, gemm: &Gemm) -> bool {
    context.plan(gemm).is_ok_and(|plan| {
        matches!(
            plan.kernel.config,
            KernelConfig::Coopmat(CoopmatPlan::WorkgroupScope(config)) if config.is_few_rows_tile()
        )
    })
}

/// Whether the planner must send `gemm` (of few rows) to the coopmat2 kernel's few-row tile
/// rather than the skinny kernel: where its types and rows are the tile's and the context
/// runs square GEMMs of those types on the coopmat2 kernel.
fn wants_few_rows_tile(context: &Context, gemm: &Gemm) -> bool {
    let coopmat2 = context
        .plan(&Gemm::new(1024, 1024, 1024).types(gemm.types))
        .is_ok_and(|plan| {
            matches!(
                plan.kernel.config,
                KernelConfig::Coopmat(CoopmatPlan::WorkgroupScope(_))
            )
        });
    coopmat2 && WorkgroupScopeConfig::takes_few_rows(gemm.m, gemm.types, gemm.b.order)
}

/// Whether `gemm` plans the kernel it must: the few-row tile, or the skinny kernel up to
/// its default row count and neither above.
fn plans_its_few_rows_kernel(context: &Context, gemm: &Gemm) -> bool {
    if wants_few_rows_tile(context, gemm) {
        is_few_rows_tile(context, gemm)
    } else {
        is_skinny(context, gemm) == (gemm.m <= SkinnyConfig::DEFAULT_MAX_ROWS)
    }
}

/// The skinny cases of every type (with an epilogue on every fifth where C is a float), guarded.
fn run(kind: BackendKind) {
    let mut failures = Vec::new();
    let without_decode = std::sync::OnceLock::new();
    for types in SKINNY_TYPES {
        let Some(context) = few_rows_context(kind, types, &without_decode) else {
            continue;
        };
        let cases = with_epilogues(skinny_cases(), types);
        let (mut skinny, mut planned) = (0, 0);
        for (index, gemm) in cases.iter().enumerate() {
            skinny += usize::from(is_skinny(&context, gemm));
            planned += usize::from(plans_its_few_rows_kernel(&context, gemm));
            if let Err(message) = check_any_guarded(&context, gemm, 1600 + index as u64) {
                failures.push(format!("{kind}: {message}"));
            }
        }
        eprintln!(
            "{types}: {} cases of few rows on {kind} ({skinny} on the skinny kernel)",
            cases.len()
        );
        if kind == BackendKind::Coopmat && common::skinny_expected() {
            assert_eq!(
                planned,
                cases.len(),
                "{types}: every case of few rows runs on the skinny kernel, or on the coopmat2 \
                 kernel's few-row tile where that takes it"
            );
        }
    }
    assert_none_failed(&failures);
}

backend_tests! {
    fn few_rows_guarded(kind) {
        run(kind);
    }
}

/// The planner sends GEMMs of up to 32 rows to the skinny kernel, except those the coopmat2
/// kernel's few-row tiles take (9 to 64 rows of f16 or bf16 summed in f32, 5 to 64 with B
/// row-major, which it splits along K, and 16 to 32 rows of i8, where the device has that
/// kernel); no GEMM of more rows. `skinny_rows` = 0 turns the skinny kernel off, and a row
/// count sends exactly the GEMMs of that many rows or fewer to it. Decode shapes with both layouts of B
/// (torch.nn.Linear's weights are column-major B).
#[test]
fn few_rows_plan_the_skinny_kernel() {
    let without_decode = std::sync::OnceLock::new();
    let Some(context) = few_rows_context(BackendKind::Coopmat, GemmTypes::F16_F32, &without_decode)
    else {
        return;
    };
    if !common::skinny_expected() {
        return;
    }
    for b in [MatrixLayout::row_major(), MatrixLayout::column_major()] {
        for m in [1, 4, 5, 8, 9, 11, 12, 16, 32, 33, 48, 64] {
            let gemm = Gemm::new(m, 4096, 4096).types(GemmTypes::F16_F32).b(b);
            assert!(
                plans_its_few_rows_kernel(&context, &gemm),
                "{m} rows, {:?}",
                b.order
            );
            if wants_few_rows_tile(&context, &gemm) {
                let plan = context.plan(&gemm).expect("plan");
                assert_eq!(
                    plan.split_k.map(|split| split.slices),
                    Some(4),
                    "{m} rows: 32 or 64 tiles in 4 slices"
                );
            }
        }
        for m in [1, 16, 32] {
            let gemm = Gemm::new(m, 4096, 4096).types(GemmTypes::F16_ACC_F16).b(b);
            assert!(is_skinny(&context, &gemm), "{m} rows, f16 sums");
        }
        // bf16 weights take the same kernels as f16, and 8-bit ones their own few-row tiles
        // (16 to 32 rows), where the device multiplies them.
        for (m, types) in [1, 16, 48]
            .map(|m| (m, GemmTypes::BF16_F32))
            .into_iter()
            .chain([1, 12, 16, 32, 33].map(|m| (m, GemmTypes::I8_I32)))
        {
            for n in [4096, 14336] {
                let gemm = Gemm::new(m, n, 4096).types(types).b(b);
                if context.plan(&gemm).is_ok() {
                    assert!(
                        plans_its_few_rows_kernel(&context, &gemm),
                        "{m}x{n} {types}, {:?}",
                        b.order
                    );
                }
            }
        }
        let gemm = Gemm::new(65, 4096, 4096).types(GemmTypes::F16_F32).b(b);
        assert!(!is_skinny(&context, &gemm), "65 rows");
        assert!(!is_few_rows_tile(&context, &gemm), "65 rows");
    }
    let with_skinny_rows = |rows: u32| coopmat_without_decode(|o| o.skinny_rows = Some(rows));
    let gemm = Gemm::new(1, 4096, 4096).types(GemmTypes::F16_F32);
    assert!(
        !is_skinny(&with_skinny_rows(0), &gemm),
        "skinny_rows = 0 turns it off"
    );
    let gemm = Gemm::new(16, 4096, 4096).types(GemmTypes::F16_F32);
    assert!(
        is_skinny(&with_skinny_rows(32), &gemm),
        "skinny_rows = 32 keeps 16 rows on the skinny kernel"
    );
}

/// A forced skinny configuration (`KernelOverrides::skinny_config`) runs every GEMM of the
/// skinny kernel it is valid for, and computes the right answer; where it is not valid for
/// the layout of B (12 columns are not whole 16-byte vectors of f16), the heuristic's runs.
#[test]
fn forced_skinny_configuration_runs_where_valid() {
    if backend_for(BackendKind::Coopmat, GemmTypes::F16_F32).is_none() {
        return;
    }
    if !common::skinny_expected() {
        return;
    }
    let forced = |tile: &str| {
        coopmat_without_decode(|o| {
            o.skinny_config = Some(tile.parse::<SkinnyTile>().expect("tile"));
        })
    };
    let skinny_tile = |context: &Context, gemm: &Gemm| match context.plan(gemm) {
        Ok(plan) => match plan.kernel.config {
            KernelConfig::Coopmat(CoopmatPlan::Skinny(config)) => Some(SkinnyTile::of(&config)),
            _ => None,
        },
        Err(_) => None,
    };
    let mut failures = Vec::new();
    for (index, tile) in ["1x64x8x2", "2x8x2x4", "1x12x4x1"].into_iter().enumerate() {
        let context = forced(tile);
        for b in [MatrixLayout::row_major(), MatrixLayout::column_major()] {
            let gemm = Gemm::new(2, 300, 1000).types(GemmTypes::F16_F32).b(b);
            let planned = skinny_tile(&context, &gemm).expect("a skinny plan");
            let valid = !(tile == "1x12x4x1" && b.order == coopgemm::Order::RowMajor);
            assert_eq!(
                planned == tile.parse().unwrap(),
                valid,
                "{tile}, {:?}: planned {planned:?}",
                b.order
            );
            if let Err(message) = check_any_guarded(&context, &gemm, 1800 + index as u64) {
                failures.push(format!("{tile} {:?}: {message}", b.order));
            }
        }
    }
    assert_none_failed(&failures);
}

/// Tuning times every configuration of the skinny kernel (all of them must build and run),
/// and the winner it keeps computes the right answer.
#[test]
fn tuning_runs_every_skinny_configuration() {
    let Some(context) = backend_for(BackendKind::Coopmat, GemmTypes::F16_F32) else {
        return;
    };
    if !common::skinny_expected() {
        return;
    }
    let mut failures = Vec::new();
    for (index, m) in [1, 4, 8, 16].into_iter().enumerate() {
        for b in [MatrixLayout::row_major(), MatrixLayout::column_major()] {
            let gemm = Gemm::new(m, 200, 300).types(GemmTypes::F16_F32).b(b);
            let info = context.tune(&[gemm]).expect("tuning");
            if let Err(message) = check_any_guarded(&context, &gemm, 1700 + index as u64) {
                failures.push(format!("tuned {}: {message}", info[0].config));
            }
        }
    }
    assert_none_failed(&failures);
}
