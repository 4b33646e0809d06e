//! Concurrency and resource use: one context shared by many threads, and long runs of
//! GEMMs with the raw Vulkan object counts of the coopmat backend flat.
//! `COOPGEMM_SOAK=N` scales both (default 1: CI-sized).

mod common;

use std::sync::{Arc, Mutex, MutexGuard};

use coopgemm::{BackendKind, Gemm, GemmBuffers, GemmTypes, MatrixLayout, Reference};

use common::cases::Rng;
use common::{assert_no_validation_errors, backends_for, context};

fn soak_factor() -> usize {
    std::env::var("COOPGEMM_SOAK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// The two tests share the process's context: the soak's object counts must not see the
/// pipelines the threads' GEMMs build, so they take turns.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn eight_threads_share_one_context() {
    let _turn = one_at_a_time();
    let per_thread = 100 * soak_factor();
    for (kind, handle) in backends_for(GemmTypes::F32)
        .into_iter()
        .chain(backends_for(GemmTypes::F16_F32))
    {
        let handle = Arc::new(handle);
        let threads: Vec<_> = (0..8u64)
            .map(|thread| {
                let handle = handle.clone();
                std::thread::spawn(move || {
                    let mut rng = Rng::new(1000 + thread);
                    for index in 0..per_thread {
                        let (m, n, k) = (rng.range(1, 70), rng.range(1, 70), rng.range(1, 70));
                        let tensor_cores =
                            matches!(kind, BackendKind::Coopmat | BackendKind::WgslCoopmat);
                        let types = if tensor_cores && index % 2 == 1 {
                            GemmTypes::F16_F32
                        } else {
                            GemmTypes::F32
                        };
                        let gemm = Gemm::new(m, n, k)
                            .types(types)
                            .a(MatrixLayout::column_major())
                            .beta(0.5);
                        if handle.select(&gemm).is_err() {
                            continue; // this backend does not run these types here
                        }
                        common::check_any(&handle, &gemm, thread * 1000 + index as u64)
                            .unwrap_or_else(|e| panic!("thread {thread}: {e}"));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("a worker thread failed");
        }
        eprintln!("{kind}: 8 threads x {per_thread} GEMMs verified");
    }
    assert_no_validation_errors();
}

#[test]
fn thousands_of_gemms_keep_raw_objects_flat() {
    let _turn = one_at_a_time();
    soak::<f32, f32>(GemmTypes::F32);
    // The H100 lists no f32 cooperative matrices: soak its coopmat path in f16.
    soak::<half::f16, f32>(GemmTypes::F16_F32);
    assert_no_validation_errors();
}

/// Runs the same accumulating GEMM (beta = 1) thousands of times on every backend that
/// computes `types`, then checks the result and that the coopmat backend reclaimed
/// everything it recorded.
fn soak<I: coopgemm::Element, O: coopgemm::Element>(types: GemmTypes) {
    let rounds = 10_000 * soak_factor();
    let context = context();
    let gemm = Gemm::new(24, 40, 32).types(types).beta(1.0);
    let resolved = gemm.resolve().unwrap();
    let mut rng = Rng::new(7);
    let a: Vec<I> = rng.values(resolved.a.required_elements() as usize);
    let b: Vec<I> = rng.values(resolved.b.required_elements() as usize);
    let c: Vec<O> = rng.values(resolved.c.required_elements() as usize);
    for (kind, handle) in backends_for(types) {
        let (a_buffer, b_buffer, c_buffer) = (
            context.upload("a", &a).unwrap(),
            context.upload("b", &b).unwrap(),
            context.upload("c", &c).unwrap(),
        );
        let buffers = GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer);
        let mut counts_after_warm_up = None;
        for round in 0..rounds {
            handle.run(&gemm, &buffers).unwrap();
            if round % 100 == 99 {
                handle.wait().unwrap();
            }
            if round == 199 {
                counts_after_warm_up = context.coopmat().ok().map(|c| c.object_counts());
            }
        }
        handle.wait().unwrap();
        if kind == BackendKind::Coopmat {
            let coopmat = context.coopmat().unwrap();
            assert_eq!(
                coopmat.in_flight(),
                0,
                "every recorded GEMM must be reclaimed after the queue is idle"
            );
            let (pipelines, pools, events) = coopmat.object_counts();
            let (warm_pipelines, warm_pools, warm_events) = counts_after_warm_up.unwrap();
            assert_eq!(pipelines, warm_pipelines, "pipelines grew");
            assert!(
                pools <= warm_pools + 1 && events <= warm_events + 64,
                "raw objects grew: {:?} -> {:?}",
                (warm_pools, warm_events),
                (pools, events)
            );
        }
        // C accumulated `rounds` times: C_final = C + rounds * A*B, checked against the reference.
        let result: Vec<O> = pollster::block_on(context.download(&c_buffer, c.len())).unwrap();
        let scaled = gemm.alpha(rounds as f32);
        let reference = Reference::compute(&scaled.resolve().unwrap(), &a, &b, &c).unwrap();
        // `rounds` sequential f32 additions of the product: allow for their rounding too.
        let bound = reference
            .expected
            .iter()
            .map(|v| v.abs())
            .fold(0.0, f64::max)
            * rounds as f64
            * f32::EPSILON as f64;
        let worst = result
            .iter()
            .zip(&reference.expected)
            .map(|(r, e)| (r.to_f64() - e).abs())
            .fold(0.0, f64::max);
        assert!(
            worst <= bound.max(1e-3),
            "{kind} {types}: error {worst} after {rounds} GEMMs (bound {bound})"
        );
        eprintln!("{kind}: {rounds} successive {types} GEMMs, objects flat, result verified");
    }
}

/// Eight threads each open a context, run a GEMM and drop it, twice. On the H100 this hung
/// inside the driver until coopgemm set devices up and tore them down one at a time
/// (`src/lifecycle.rs`); a watchdog turns a hang into a failure.
#[test]
fn contexts_open_and_close_on_eight_threads() {
    let threads: Vec<_> = (0..8u64)
        .map(|thread| {
            std::thread::spawn(move || {
                for round in 0..2 {
                    let context =
                        pollster::block_on(coopgemm::Context::with_options(common::test_options()))
                            .expect("a Vulkan or GL adapter");
                    common::check::<f32, f32>(
                        &context,
                        &Gemm::new(33, 17, 40),
                        thread * 10 + round,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !threads.iter().all(|thread| thread.is_finished()) {
        assert!(
            std::time::Instant::now() < deadline,
            "contexts opened and dropped on 8 threads did not finish in 300 s (a hang)"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for thread in threads {
        thread.join().expect("a worker thread failed");
    }
}
