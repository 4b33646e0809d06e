//! GEMMs of up to 16 rows on the coopmat backend's decode kernel (`glsl/gemm_decode.comp`):
//! the few-row cases of `tests/skinny.rs` (every operand order, alignments, offsets,
//! batches, alpha/beta, epilogues) and a few of many K steps, guarded, for every type the
//! kernel has, on the heuristic's configuration and on a forced one; and the planner's
//! choice of the kernel. (`tests/skinny.rs` tunes GEMMs of 4 to 16 rows, which times every
//! decode configuration too.)

mod common;

use coopgemm::config::{CoopmatPlan, DecodeConfig, DecodeTile};
use coopgemm::{
    BackendChoice, BackendKind, Context, DType, Gemm, GemmTypes, KernelConfig, KernelOverrides,
    MatrixLayout,
};

use common::cases::{skinny_cases, with_epilogues, SKINNY_TYPES};
use common::{assert_none_failed, backend_for, check_any_guarded, test_options};

/// The types the decode kernel has variants for: the few-row types with 16- and 8-bit
/// inputs (f16 sums are summed in f32).
fn decode_types() -> impl Iterator<Item = GemmTypes> {
    SKINNY_TYPES
        .into_iter()
        .filter(|types| types.input != DType::F32)
}

/// The decode configuration `gemm` plans, if it plans the decode kernel.
fn decode_config(context: &Context, gemm: &Gemm) -> Option<DecodeConfig> {
    match context.plan(gemm).ok()?.kernel.config {
        KernelConfig::Coopmat(CoopmatPlan::Decode(config)) => Some(config),
        _ => None,
    }
}

/// A context forced to the coopmat backend with `overrides` applied.
fn coopmat_context(overrides: impl FnOnce(&mut KernelOverrides)) -> Context {
    let mut options = test_options();
    overrides(&mut options.kernel_overrides);
    pollster::block_on(Context::with_options(options))
        .expect("a second context")
        .with_backend(BackendChoice::Force(BackendKind::Coopmat))
}

/// Whether this run must plan the decode kernel where these tests send GEMMs to it: the
/// coopmat backend is expected and nothing that turns the kernel off is forced.
fn decode_expected() -> bool {
    let overrides = test_options().kernel_overrides;
    common::skinny_expected()
        && overrides.skinny_rows.is_none()
        && overrides.decode_rows.is_none_or(|rows| rows >= 16)
}

/// The cases: those of `tests/skinny.rs` with at most 16 rows, and GEMMs whose subgroups
/// each take several K steps, with ragged N and K; an epilogue on every fifth where C is a
/// float.
fn cases(types: GemmTypes) -> Vec<Gemm> {
    let cases = skinny_cases()
        .into_iter()
        .filter(|gemm| gemm.m <= 16)
        .chain([
            Gemm::new(16, 48, 2000),
            Gemm::new(7, 21, 1555).b(MatrixLayout::row_major()),
            Gemm::new(12, 40, 1029).b(MatrixLayout::column_major()),
        ])
        .collect();
    with_epilogues(cases, types)
}

/// Every case of every type on the decode kernel (taking 1 to 16 rows), guarded, with the
/// heuristic's configuration; and the f16 and int8 cases with 16 columns, steps of 64 and
/// 4 subgroups forced (where that is valid for the device's shape, else the heuristic's).
#[test]
fn decode_kernel_guarded() {
    if backend_for(BackendKind::Coopmat, GemmTypes::F16_F32).is_none() || !decode_expected() {
        return;
    }
    let mut failures = Vec::new();
    for (round, tile) in [None, Some("16x64x4")].into_iter().enumerate() {
        let context = coopmat_context(|o| {
            o.decode_rows = Some(16);
            o.decode_config = tile.map(|t| t.parse::<DecodeTile>().expect("tile"));
        });
        for types in decode_types() {
            let forced_types = [GemmTypes::F16_F32, GemmTypes::I8_I32];
            if backend_for(BackendKind::Coopmat, types).is_none()
                || (tile.is_some() && !forced_types.contains(&types))
            {
                continue;
            }
            let cases = cases(types);
            let mut decoded = 0;
            for (index, gemm) in cases.iter().enumerate() {
                decoded += usize::from(decode_config(&context, gemm).is_some());
                let seed = 2100 + 100 * round as u64 + index as u64;
                if let Err(message) = check_any_guarded(&context, gemm, seed) {
                    failures.push(format!("{tile:?}: {message}"));
                }
            }
            eprintln!(
                "{types}, {tile:?}: {} cases, {decoded} on the decode kernel",
                cases.len()
            );
            // f16 must run on it; other types where the device has them, all or none.
            if types == GemmTypes::F16_F32 || decoded > 0 {
                assert_eq!(
                    decoded,
                    cases.len(),
                    "{types}: every case on the decode kernel"
                );
            }
        }
    }
    assert_none_failed(&failures);
}

/// By default the planner sends GEMMs of 8-bit weights to the decode kernel (where the
/// device runs int8): 4 to 16 rows with B row-major, 5 to 16 with B column-major, but not
/// 16 with more than 4096 x 4096 weights where the coopmat2 kernel's few-row tile takes
/// them; and no others:
/// not f16, not 3 rows with B row-major, 4 with B column-major, or 17. `decode_rows` = 16
/// sends every GEMM of 1 to 16 rows of its types there (f16 sums too, summed in f32), 0
/// turns it off, and a forced skinny row count keeps GEMMs on the skinny kernel.
#[test]
fn planner_takes_the_decode_kernel_where_it_pays() {
    let Some(context) = backend_for(BackendKind::Coopmat, GemmTypes::F16_F32) else {
        return;
    };
    if !decode_expected() || test_options().kernel_overrides.decode_rows.is_some() {
        return;
    }
    let gemm = |m, types, b| Gemm::new(m, 4096, 4096).types(types).b(b);
    let (row, column) = (MatrixLayout::row_major(), MatrixLayout::column_major());
    if backend_for(BackendKind::Coopmat, GemmTypes::I8_I32).is_some() {
        // (rows, N, K, B) the decode kernel takes, then some it does not.
        let taken = [
            (4, 4096, 4096, row),
            (16, 4096, 4096, row),
            (8, 14336, 4096, row),
            (16, 14336, 4096, row),
            (5, 4096, 4096, column),
            (12, 14336, 4096, column),
            (15, 14336, 4096, column),
            (16, 4096, 4096, column),
        ];
        let not_taken = [
            (3, 4096, 4096, row),
            (17, 4096, 4096, row),
            (4, 4096, 14336, column),
            (17, 4096, 14336, column),
        ];
        // 16 rows with B column-major and B larger than 4096 x 4096 go to the coopmat2
        // kernel's 16-row tile where the device runs it (it plans 20 rows on that kernel).
        let twenty = Gemm::new(20, 14336, 4096)
            .types(GemmTypes::I8_I32)
            .b(column);
        let few_row_tile = matches!(
            context.plan(&twenty).map(|plan| plan.kernel.config),
            Ok(KernelConfig::Coopmat(CoopmatPlan::WorkgroupScope(_)))
        );
        let beside_the_tile = [(16, 14336, 4096, column), (16, 4096, 14336, column)];
        for (cases, expected) in [
            (&taken[..], true),
            (&not_taken[..], false),
            (&beside_the_tile[..], !few_row_tile),
        ] {
            for &(m, n, k, b) in cases {
                let planned = Gemm::new(m, n, k).types(GemmTypes::I8_I32).b(b);
                let config = decode_config(&context, &planned);
                assert_eq!(config.is_some(), expected, "{planned:?}");
            }
        }
    }
    for b in [row, column] {
        for m in [1, 8, 16] {
            let planned = decode_config(&context, &gemm(m, GemmTypes::F16_F32, b));
            assert!(planned.is_none(), "{m} rows of f16, {:?}", b.order);
        }
    }
    let all = coopmat_context(|o| o.decode_rows = Some(16));
    for b in [row, column] {
        for types in [GemmTypes::F16_F32, GemmTypes::F16_ACC_F16] {
            for m in [1, 2, 8, 16] {
                let config = decode_config(&all, &gemm(m, types, b));
                assert!(config.is_some(), "decode_rows = 16: {m} rows, {types}");
                assert_eq!(config.unwrap().variant.types.accumulate, DType::F32);
            }
            let planned = decode_config(&all, &gemm(17, types, b));
            assert!(planned.is_none(), "decode_rows = 16: 17 rows");
        }
    }
    let i8_row = gemm(16, GemmTypes::I8_I32, row);
    let off = coopmat_context(|o| o.decode_rows = Some(0));
    assert!(decode_config(&off, &i8_row).is_none(), "decode_rows = 0");
    let skinny = coopmat_context(|o| o.skinny_rows = Some(32));
    assert!(
        decode_config(&skinny, &i8_row).is_none(),
        "skinny_rows = 32"
    );
}
