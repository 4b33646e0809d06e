//! Randomized differential tests: seeded random descriptions (dimensions 1..300, every
//! layout, padded leading dimensions, offsets, batches with strides and broadcasts,
//! alpha/beta, fused bias and activation for float outputs) checked against the f64
//! reference on every backend available, for every type combination.
//!
//! `COOPGEMM_RANDOM_CASES=N` sets the number of descriptions per type (default 150),
//! `COOPGEMM_RANDOM_SEED=S` the seed (default 1); case i uses seed S + i. A failure prints
//! its description and the settings that replay exactly that case.

mod common;

use coopgemm::{Activation, BackendKind, BiasAxis, Epilogue, Gemm, GemmTypes, MatrixLayout, Order};

use common::{assert_none_failed, backend_for, backend_tests, check_any, Rng};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn random_layout(rng: &mut Rng, rows: u32, cols: u32, batch: u32, input: bool) -> MatrixLayout {
    let order = if rng.next_u64().is_multiple_of(2) {
        Order::RowMajor
    } else {
        Order::ColumnMajor
    };
    let (contiguous, strided) = match order {
        Order::RowMajor => (cols as u64, rows as u64),
        _ => (rows as u64, cols as u64),
    };
    let leading_dimension = contiguous + [0, 0, 1, 3, 8][rng.range(0, 4) as usize];
    let mut layout = MatrixLayout {
        order,
        ..Default::default()
    }
    .leading_dimension(leading_dimension)
    .offset([0, 0, 1, 5, 9][rng.range(0, 4) as usize]);
    if batch > 1 {
        let one_matrix = leading_dimension * strided;
        layout = if input && rng.range(0, 3) == 0 {
            layout.batch_stride(0) // broadcast
        } else {
            layout.batch_stride(one_matrix + rng.range(0, 4) as u64)
        };
    }
    layout
}

/// A random description: small dimensions are likelier (edge cases), up to 300.
fn random_gemm(seed: u64, types: GemmTypes) -> Gemm {
    let mut rng = Rng::new(seed);
    let dimension = |rng: &mut Rng| {
        if rng.range(0, 2) == 0 {
            rng.range(1, 40)
        } else {
            rng.range(1, 300)
        }
    };
    let (m, n, k) = (
        dimension(&mut rng),
        dimension(&mut rng),
        dimension(&mut rng),
    );
    let batch = if rng.range(0, 3) == 0 {
        rng.range(2, 3)
    } else {
        1
    };
    let alpha = [1.0, 0.5, -2.0][rng.range(0, 2) as usize];
    let beta = [0.0, 0.0, 1.0, 0.25][rng.range(0, 3) as usize];
    let mut epilogue = Epilogue::default();
    if !types.output.is_integer() {
        epilogue.activation = Activation::ALL[rng.range(0, 3) as usize];
        epilogue.bias = match rng.range(0, 3) {
            0 => Some(coopgemm::Bias {
                axis: BiasAxis::PerRow,
                offset: rng.range(0, 5) as u64,
            }),
            1 => Some(coopgemm::Bias {
                axis: BiasAxis::PerColumn,
                offset: rng.range(0, 5) as u64,
            }),
            _ => None,
        };
    }
    Gemm::new(m, n, k)
        .types(types)
        .batch(batch)
        .a(random_layout(&mut rng, m, k, batch, true))
        .b(random_layout(&mut rng, k, n, batch, true))
        .c(random_layout(&mut rng, m, n, batch, false))
        .alpha(alpha)
        .beta(beta)
        .epilogue(epilogue)
}

fn run_random(kind: BackendKind, types: GemmTypes, cases: u64) {
    let seed = setting("COOPGEMM_RANDOM_SEED", 1);
    let mut failures = Vec::new();
    if let Some(context) = backend_for(kind, types) {
        for case in 0..cases {
            let gemm = random_gemm(seed + case, types);
            if let Err(message) = check_any(&context, &gemm, seed + case) {
                failures.push(format!(
                    "{kind} (replay: COOPGEMM_RANDOM_SEED={} COOPGEMM_RANDOM_CASES=1): {message}",
                    seed + case
                ));
            }
        }
        eprintln!("{types}: {cases} random cases on {kind}");
    }
    common::report_data_counts();
    assert_none_failed(&failures);
}

fn cases() -> u64 {
    setting("COOPGEMM_RANDOM_CASES", 150)
}

backend_tests! {
    fn random_f32(kind) {
        run_random(kind, GemmTypes::F32, cases());
    }

    /// The tensor-core workhorses, on every backend that runs them (SIMT for the float ones).
    fn random_reduced_precision(kind) {
        for types in [
            GemmTypes::F16_F32,
            GemmTypes::F16_ACC_F16,
            GemmTypes::BF16_F32,
            GemmTypes::I8_I32,
        ] {
            run_random(kind, types, cases());
        }
    }

    /// Output conversion to f16/bf16 (a quarter of the cases each: the same code paths).
    fn random_narrow_outputs(kind) {
        for types in [
            GemmTypes::F16_F32_F16,
            GemmTypes::BF16_F32_BF16,
            GemmTypes::F32_F32_F16,
            GemmTypes::F32_F32_BF16,
        ] {
            run_random(kind, types, cases().div_ceil(4));
        }
    }
}
