//! Diagnostic (not part of the suites): the guarded few-row cases of one type on a forced
//! coopmat2 tile (COOPGEMM_COOPMAT2_TILE), one at a time, each checked twice (the first
//! check builds the pipeline), with its plan and times printed before and after, so that
//! a case that stalls is the last one printed.
mod common;

use common::cases::{skinny_cases, with_epilogues};
use common::{check_any_guarded, test_options};
use coopgemm::{BackendKind, Context, GemmTypes};
use std::time::Instant;

#[test]
fn diag_tile() {
    let types = match std::env::var("DIAG_TYPES").as_deref() {
        Ok("f16") => GemmTypes::F16_F32,
        _ => GemmTypes::I8_I32,
    };
    let only_rows: Option<u32> = std::env::var("DIAG_ROWS").ok().and_then(|v| v.parse().ok());
    let mut options = test_options();
    options.kernel_overrides.decode_rows = Some(0);
    let context = pollster::block_on(Context::with_options(options))
        .expect("a context")
        .with_backend(coopgemm::BackendChoice::Force(BackendKind::Coopmat));
    let mut failed = 0;
    for (index, gemm) in with_epilogues(skinny_cases(), types).iter().enumerate() {
        if only_rows.is_some_and(|rows| rows != gemm.m) {
            continue;
        }
        let plan = context
            .plan(gemm)
            .map(|plan| format!("{:?}", plan.kernel.config));
        eprintln!("case {index}: {gemm:?}\n  plan {plan:?}");
        for pass in 0..2 {
            let start = Instant::now();
            let result = check_any_guarded(&context, gemm, 1600 + index as u64);
            eprintln!(
                "  pass {pass}: {:?} in {:?}",
                result.as_ref().err(),
                start.elapsed()
            );
            failed += usize::from(result.is_err());
        }
    }
    assert_eq!(failed, 0);
}
