//! Concurrency and resource use: one context shared by many threads, a GEMM not held up by
//! another thread's pipeline build, and long runs of GEMMs with the raw Vulkan object
//! counts of the coopmat backend flat.
//! `COOPGEMM_SOAK=N` scales both (default 1: CI-sized).

mod common;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, DiskCache, Gemm, GemmBuffers, GemmTypes, MatrixLayout,
};

use common::cases::Rng;
use common::{assert_no_validation_errors, backend_tests, backends_for, context};

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
                counts_after_warm_up = context.vulkan_objects();
            }
        }
        handle.wait().unwrap();
        if kind == BackendKind::Coopmat {
            let objects = context.vulkan_objects().unwrap();
            assert_eq!(
                objects.in_flight, 0,
                "every recorded GEMM must be reclaimed after the queue is idle"
            );
            let (pipelines, pools, events) =
                (objects.pipelines, objects.descriptor_pools, objects.events);
            let warm = counts_after_warm_up.unwrap();
            let (warm_pipelines, warm_pools, warm_events) =
                (warm.pipelines, warm.descriptor_pools, warm.events);
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

backend_tests! {
    /// One thread builds a slow pipeline (the largest kernel for new layouts, on a context
    /// of its own without a disk cache) while this thread runs GEMMs whose pipeline exists,
    /// back to back: several must complete while the build runs. Before pipelines were built
    /// per key, each waited for the whole build (a coopmat2 pipeline takes 2.2-2.5 s on the
    /// H100; on lavapipe the emulated cooperative-matrix pipelines and the large SIMT tile
    /// take a few hundred ms against a few ms for a small GEMM).
    fn a_pipeline_build_does_not_hold_up_built_gemms(kind) {
        let _turn = one_at_a_time();
        let options = common::test_options()
            .with_disk_cache(DiskCache::Off)
            .with_backend(BackendChoice::Force(kind));
        let context = pollster::block_on(Context::with_options(options)).unwrap();
        let types = context.backend(kind).types;
        let Some(&fast_types) = types
            .iter()
            .find(|types| **types == GemmTypes::F32)
            .or(types.first())
        else {
            return; // the backend is not available here
        };
        let fast = Gemm::new(64, 64, 64).types(fast_types);
        // Built, then timed alone.
        common::check_any(&context, &fast, 1).unwrap();
        let alone = (0..5)
            .map(|seed| {
                let started = Instant::now();
                common::check_any(&context, &fast, seed).unwrap();
                started.elapsed()
            })
            .min()
            .unwrap();
        // The largest kernels: f16 inputs where the backend has them (the emulated
        // cooperative-matrix kernels unroll their software multiply-adds).
        let slow_types = if types.contains(&GemmTypes::F16_F32) {
            GemmTypes::F16_F32
        } else {
            fast_types
        };
        let slow = Gemm::new(2048, 2048, 2048)
            .types(slow_types)
            .a(MatrixLayout::column_major())
            .b(MatrixLayout::column_major());
        let slow_kernel = context.plan(&slow).unwrap().kernel;
        let builder = {
            let context = context.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                context.prepare(&slow).unwrap();
                (started, Instant::now())
            })
        };
        // GEMMs back to back until the build is over: (start, end) of each.
        let mut runs = Vec::new();
        let mut seed = 10;
        while !builder.is_finished() {
            let started = Instant::now();
            common::check_any(&context, &fast, seed).unwrap();
            runs.push((started, Instant::now()));
            seed += 1;
        }
        let (build_start, build_end) = builder.join().expect("the building thread failed");
        let build = build_end - build_start;
        // Started once the build was under way (planning it takes a few ms) and done
        // before it ended: a GEMM that waited for the build cannot be among them.
        let settled = build_start + Duration::from_millis(20);
        let inside = runs
            .iter()
            .filter(|(started, ended)| *started >= settled && *ended < build_end)
            .count();
        eprintln!(
            "{kind}: {inside} of {} built {fast_types} GEMMs ({alone:?} alone) ran during the {build:?} build of {slow_kernel}",
            runs.len()
        );
        if build < alone * 8 + Duration::from_millis(40) {
            eprintln!("{kind}: the build was too short to tell waiting from running");
            return;
        }
        assert!(
            inside >= 2,
            "{kind}: {inside} GEMMs completed during the {build:?} build ({alone:?} each alone): they waited for it"
        );
        assert_no_validation_errors();
    }
}
