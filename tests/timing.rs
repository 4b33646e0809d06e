//! GPU timing (`Context::time_on_gpu`): one time per run, on every backend, for split GEMMs
//! too, and bigger GEMMs take longer.

mod common;

use std::time::Duration;

use coopgemm::{Context, Gemm, GemmBuffers, GemmTypes, SplitKChoice};

use common::{backends_for, context};

/// The median GPU time of `runs` runs of an n³ GEMM of `types` on `context`, checked run by run.
fn median_time(context: &Context, n: u32, types: GemmTypes, runs: usize) -> Option<Duration> {
    let gemm = Gemm::new(n, n, n).types(types);
    let resolved = gemm.resolve().unwrap();
    let upload = |label: &str, elements: u64, size: u64| {
        context
            .create_buffer(
                label,
                elements * size,
                coopgemm::HOST_BUFFER_USAGES | wgpu::BufferUsages::STORAGE,
            )
            .unwrap()
    };
    let a = upload(
        "A",
        resolved.a.required_elements(),
        types.input.size_bytes(),
    );
    let b = upload(
        "B",
        resolved.b.required_elements(),
        types.input.size_bytes(),
    );
    let c = upload(
        "C",
        resolved.c.required_elements(),
        types.output.size_bytes(),
    );
    let times = context
        .time_on_gpu(&gemm, &GemmBuffers::new(&a, &b, &c), runs)
        .unwrap_or_else(|e| panic!("{n}³ {types}: {e}"))?;
    assert_eq!(times.len(), runs, "one time per run");
    for time in &times {
        assert!(
            *time > Duration::ZERO && *time < Duration::from_secs(60),
            "{n}³ {types}: {times:?}"
        );
    }
    let mut sorted = times.clone();
    sorted.sort();
    Some(sorted[runs / 2])
}

#[test]
fn every_backend_times_its_dispatches() {
    let context = context();
    let has_timestamps = context
        .device()
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY);
    let mut timed = 0;
    for types in [GemmTypes::F32, GemmTypes::F16_F32] {
        for (kind, handle) in backends_for(types) {
            let split = handle.with_split_k(SplitKChoice::Slices(2));
            for (what, handle) in [("unsplit", &handle), ("split-K", &split)] {
                // 64³, not smaller: GEMMs of up to 32 rows run on another kernel (the coopmat
                // backend's skinny one), and this compares one kernel's times.
                let small = median_time(handle, 64, types, 5);
                let large = median_time(handle, 256, types, 5);
                let (Some(small), Some(large)) = (small, large) else {
                    assert!(!has_timestamps, "{kind} {what} {types}: no GPU times");
                    continue;
                };
                assert!(
                    large > small,
                    "{kind} {what} {types}: 256³ took {large:?}, 64³ {small:?}"
                );
                timed += 1;
            }
        }
    }
    eprintln!("timed {timed} backend/type/split combinations");
    assert!(!has_timestamps || timed >= 2);
    // Rounds: more runs than one round of query pairs holds.
    if has_timestamps {
        let many = median_time(context, 8, GemmTypes::F32, 300);
        assert!(many.is_some());
    }
    common::assert_no_validation_errors();
}
