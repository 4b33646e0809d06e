//! Fused networks against the f64 reference, on every network kernel this device has:
//! widths that are and are not multiples of 16 (1 to 256), every activation, f16 and f32
//! rows in and out, one row up to several workgroups and a partial last one, offsets and
//! row strides, full-mantissa inputs, and every element around the rows poisoned (NaN in
//! front of the first row, between rows and after the last, in the input and the output).
//! Networks with several weight sets: random set indices (some out of range, whose output
//! rows must stay unchanged), grouped by the library and by the caller. Then the typed
//! errors for bad networks and bad buffers.
//!
//! Each test body is stamped once per kernel (`cargo test mlp_simt` runs one kernel's).
//! Each kernel is held to its own tolerance (`MlpReference::compute_for`).

mod common;

use coopgemm::testing::{sample_data, sample_set_indices, MlpReference, SampleData};
use coopgemm::{
    Context, Element, Error, Gemm, GemmBuffers, LayerWeights, Mlp, MlpActivation, MlpBuffers,
    MlpDesc, MlpGrouping, MlpIo, MlpKernel, MlpLayout, Operand, MAX_MLP_SETS, MAX_MLP_WIDTH,
};
use half::f16;

use common::{assert_all_passed, assert_no_validation_errors, context};

/// Poison around the rows.
const GUARD: usize = 37;

/// The networks every kernel runs: (widths, hidden activation, output activation).
fn networks() -> Vec<MlpDesc> {
    use MlpActivation::*;
    vec![
        MlpDesc::uniform(&[64, 64, 64, 64, 64, 16], Relu, None),
        MlpDesc::uniform(&[32, 32, 32, 8], Relu, None),
        MlpDesc::uniform(&[128, 128, 32], Gelu, Sigmoid),
        MlpDesc::uniform(&[1, 1], None, None),
        MlpDesc::uniform(&[3, 17, 5], Silu, LeakyRelu(0.125)),
        MlpDesc::uniform(&[33, 100, 47, 7], LeakyRelu(-0.5), Relu),
        MlpDesc::uniform(&[2, 256, 256, 3], Relu, Sigmoid),
        MlpDesc::new(16)
            .layer(48, Gelu)
            .layer(16, Silu)
            .layer(64, Sigmoid)
            .layer(9, None),
    ]
}

/// The context forced onto `kernel`, or `None` where this device does not have it.
fn mlp_on(kernel: MlpKernel, desc: &MlpDesc, seed: u64) -> Option<(Context, Mlp)> {
    let context = context().clone();
    let mlp = context
        .build_mlp(desc, &LayerWeights::seeded(desc, seed))
        .expect("build the network")
        .with_kernel(Some(kernel));
    match context.plan_mlp(&mlp, MlpIo::F32) {
        Ok(_) => Some((context, mlp)),
        Err(why) => {
            // CI's Vulkan pass emulates cooperative matrices (and vectors): the kernel must
            // be there.
            let expected = match kernel {
                MlpKernel::Coopmat => desc.max_width() <= 128,
                MlpKernel::CoopmatRows => rows_kernel_fits(desc, 32 * 1024),
                MlpKernel::Coopvec => desc.layers() <= 8,
                MlpKernel::Simt => false,
            };
            assert!(
                !(expected && common::expect_coopmat()),
                "COOPGEMM_EXPECT_COOPMAT=1 but the {kernel} network kernel is unavailable: {why}"
            );
            eprintln!("network kernel {kernel} unavailable for {desc}: {why}");
            None
        }
    }
}

/// Whether the row kernel's weights and staging rows (see `mlp_coopmat_rows.comp`) fit
/// `shared_bytes` of shared memory (lavapipe's 32 KiB; the H100's 48).
fn rows_kernel_fits(desc: &MlpDesc, shared_bytes: u32) -> bool {
    let padded = |width: u32| width.next_multiple_of(16);
    let weights: u32 = desc
        .widths()
        .windows(2)
        .map(|pair| padded(pair[1]) * (padded(pair[0]) / 8 + 1))
        .sum();
    let staging = 4 * 16 * (padded(desc.max_width()) / 8 + 1).max(5);
    desc.layers() <= 8 && 16 * (weights + staging) <= shared_bytes
}

/// A layout with the given gaps: `offset` elements in front of the first row, `gap`
/// between rows.
fn layout(desc: &MlpDesc, rows: u32, offset: u32, gap: u32) -> MlpLayout {
    MlpLayout {
        rows,
        input_offset: offset,
        input_stride: desc.input_width() + gap,
        output_offset: offset + 3,
        output_stride: desc.output_width() + gap,
    }
}

/// Fills every element of `data` that is not part of a row with NaN.
fn poison<T: Element>(data: &mut [T], rows: u32, offset: u32, stride: u32, width: u32) {
    let in_row = |index: usize| {
        index >= offset as usize && {
            let within = index - offset as usize;
            within / (stride as usize) < rows as usize
                && within % (stride as usize) < width as usize
        }
    };
    for (index, value) in data.iter_mut().enumerate() {
        if !in_row(index) {
            *value = T::from_f64_lossy(f64::NAN);
        }
    }
}

/// Runs `mlp` once on guarded buffers and compares with the reference.
fn check_case<I: Element, O: Element>(
    context: &Context,
    mlp: &Mlp,
    layout: MlpLayout,
    seed: u64,
) -> Result<(), String> {
    check_case_sets::<I, O>(context, mlp, layout, seed, None)
}

/// [`check_case`] with each row's set index and who groups them.
fn check_case_sets<I: Element, O: Element>(
    context: &Context,
    mlp: &Mlp,
    layout: MlpLayout,
    seed: u64,
    sets: Option<(&[u32], MlpGrouping)>,
) -> Result<(), String> {
    let desc = mlp.desc();
    let input_len =
        layout.input_offset as usize + layout.rows as usize * layout.input_stride as usize + GUARD;
    let output_len = layout.output_offset as usize
        + layout.rows as usize * layout.output_stride as usize
        + GUARD;
    let data = if seed.is_multiple_of(3) {
        SampleData::ExactProducts
    } else {
        SampleData::FullMantissa
    };
    let mut input: Vec<I> = sample_data(data, input_len, seed);
    poison(
        &mut input,
        layout.rows,
        layout.input_offset,
        layout.input_stride,
        desc.input_width(),
    );
    let mut output: Vec<O> = sample_data(SampleData::FullMantissa, output_len, seed + 1);
    poison(
        &mut output,
        0,
        layout.output_offset,
        layout.output_stride,
        desc.output_width(),
    );
    let kernel = mlp.forced_kernel().expect("a kernel");
    let weight_sets: Vec<&[LayerWeights]> = mlp.weight_sets().iter().map(Vec::as_slice).collect();
    let reference = MlpReference::compute_sets_for(
        kernel,
        desc,
        &weight_sets,
        sets.map(|(indices, _)| indices),
        &layout,
        &input,
        &output,
    )
    .map_err(|e| format!("reference: {e}"))?;
    let io = MlpIo {
        input: I::DTYPE,
        output: O::DTYPE,
    };
    let input_buffer = context.upload("input", &input).map_err(|e| e.to_string())?;
    let output_buffer = context
        .upload("output", &output)
        .map_err(|e| e.to_string())?;
    let mut buffers =
        MlpBuffers::new(mlp, &input_buffer, &output_buffer, io, layout.rows).with_layout(layout);
    let index_buffer = match sets {
        Some((indices, _)) => Some(
            context
                .upload("set indices", bytemuck::cast_slice::<u32, i32>(indices))
                .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    if let (Some(index_buffer), Some((_, grouping))) = (&index_buffer, sets) {
        buffers = buffers
            .with_set_indices(index_buffer)
            .with_grouping(grouping);
    }
    context
        .run_mlp(mlp, &buffers)
        .map_err(|e| format!("run: {e}"))?;
    let result: Vec<O> = pollster::block_on(context.download(&output_buffer, output.len()))
        .map_err(|e| format!("download: {e}"))?;
    let comparison = reference.compare(&result);
    if comparison.passed() {
        Ok(())
    } else {
        Err(format!(
            "{desc} {io} {layout:?}: {} of {} outside tolerance, first (index, got, want, tolerance) {:?}",
            comparison.mismatches, comparison.checked, comparison.first_mismatch
        ))
    }
}

/// Every network, each row type, a few row counts and layouts.
fn networks_match_reference(kernel: MlpKernel) {
    let mut ran = 0;
    let mut failures = Vec::new();
    for (n, desc) in networks().iter().enumerate() {
        let Some((context, mlp)) = mlp_on(kernel, desc, n as u64) else {
            continue;
        };
        let cases = [(1, 0, 0), (63, 1, 0), (65, 0, 3), (200, 5, 1)];
        // The row kernel's emulated pipelines take lavapipe 25-40 s each to build (its
        // loops over fragments are unrolled): there only the f16 -> f16 case (unaligned
        // rows, through the staging rows; many_rows_match_reference has whole tiles).
        let emulated_rows = kernel == MlpKernel::CoopmatRows && common::emulate_coopmat();
        for (case, &(rows, offset, gap)) in cases.iter().enumerate() {
            if emulated_rows && case != 1 {
                continue;
            }
            let layout = layout(desc, rows, offset, gap);
            let seed = (n * 16 + case) as u64;
            let result = match case % 4 {
                0 => check_case::<f32, f32>(&context, &mlp, layout, seed),
                1 => check_case::<f16, f16>(&context, &mlp, layout, seed),
                2 => check_case::<f16, f32>(&context, &mlp, layout, seed),
                _ => check_case::<f32, f16>(&context, &mlp, layout, seed),
            };
            ran += 1;
            if let Err(why) = result {
                failures.push(format!("{kernel}: {why}"));
            }
        }
    }
    eprintln!("{ran} network cases on {kernel}");
    if ran > 0 || common::expect_coopmat() {
        assert_all_passed(ran, &failures);
    }
}

/// Many rows: several workgroups and a partial last one, all four row types.
fn many_rows_match_reference(kernel: MlpKernel) {
    let desc = MlpDesc::uniform(&[64, 64, 64, 16], MlpActivation::Relu, MlpActivation::None);
    let Some((context, mlp)) = mlp_on(kernel, &desc, 7) else {
        return;
    };
    let mut failures = Vec::new();
    let layout = MlpLayout::new(&desc, 4097);
    for (case, result) in [
        check_case::<f16, f16>(&context, &mlp, layout, 1),
        check_case::<f32, f32>(&context, &mlp, layout, 2),
    ]
    .into_iter()
    .enumerate()
    {
        if let Err(why) = result {
            failures.push(format!("{kernel} case {case}: {why}"));
        }
    }
    assert_all_passed(2, &failures);
}

/// Rows past one storage binding (on devices whose bindings hold at most 256 MiB, such as
/// CI's lavapipe and llvmpipe with 128): the run goes in chunks, and every row is right.
fn rows_past_one_binding_run_in_chunks(kernel: MlpKernel) {
    let desc = MlpDesc::uniform(&[32, 8], MlpActivation::Relu, MlpActivation::None);
    let Some((context, mlp)) = mlp_on(kernel, &desc, 5) else {
        return;
    };
    let limit = context.device().limits().max_storage_buffer_binding_size;
    if limit > 256 << 20 {
        eprintln!("bindings of {limit} bytes: too large a run for a test");
        return;
    }
    // f32 rows of 32 values: a binding's worth of rows and a partial chunk more.
    let rows = (limit / (32 * 4)) as u32 + 4099;
    let layout = MlpLayout::new(&desc, rows);
    if let Err(why) = check_case::<f32, f32>(&context, &mlp, layout, 9) {
        panic!("{kernel}, {rows} rows: {why}");
    }
    // An output one row short: the last chunk cannot bind it, and no chunk runs.
    let input = context
        .create_buffer(
            "input",
            u64::from(rows) * 32 * 4,
            coopgemm::HOST_BUFFER_USAGES,
        )
        .unwrap();
    let output = context
        .upload("output", &vec![7.0f32; (rows as usize - 1) * 8])
        .unwrap();
    let buffers = MlpBuffers::new(&mlp, &input, &output, MlpIo::F32, rows);
    assert!(matches!(
        context.run_mlp(&mlp, &buffers),
        Err(Error::BufferTooSmall {
            operand: Operand::Output,
            ..
        })
    ));
    if kernel == MlpKernel::Simt {
        // Recording into the caller's encoder records no chunk either, even where the
        // caller submits the encoder after the error.
        let mut encoder = context.device().create_command_encoder(&Default::default());
        assert!(context.encode_mlp(&mut encoder, &mlp, &buffers).is_err());
        context.queue().submit([encoder.finish()]);
    }
    let untouched: Vec<f32> =
        pollster::block_on(context.download(&output, (rows as usize - 1) * 8)).unwrap();
    assert!(
        untouched.iter().all(|&v| v == 7.0),
        "{kernel}: a refused run wrote"
    );
    assert_no_validation_errors();
}

/// The host helper agrees with the reference, and zero rows do nothing.
fn evaluate_matches_reference(kernel: MlpKernel) {
    let desc = MlpDesc::uniform(&[5, 24, 3], MlpActivation::Silu, MlpActivation::None);
    let Some((context, mlp)) = mlp_on(kernel, &desc, 3) else {
        return;
    };
    let input: Vec<f32> = sample_data(SampleData::FullMantissa, 5 * 31, 11);
    let output: Vec<f32> = context.evaluate_mlp(&mlp, &input).expect("evaluate");
    let reference = MlpReference::compute_for(
        kernel,
        &desc,
        mlp.weights(),
        &MlpLayout::new(&desc, 31),
        &input,
        &vec![0.0f32; 3 * 31],
    )
    .unwrap();
    let comparison = reference.compare(&output);
    assert!(comparison.passed(), "{comparison:?}");
    let empty: Vec<f32> = context
        .evaluate_mlp(&mlp, &[] as &[f32])
        .expect("zero rows");
    assert!(empty.is_empty());
    assert_no_validation_errors();
}

/// `desc` with weight `sets`, forced onto `kernel`, or `None` where this device cannot run
/// it that way.
fn sets_on(
    context: &Context,
    kernel: MlpKernel,
    desc: &MlpDesc,
    sets: &[Vec<LayerWeights>],
) -> Option<Mlp> {
    let mlp = context
        .build_mlp_sets(desc, sets)
        .expect("build the network")
        .with_kernel(Some(kernel));
    if let Err(why) = context.plan_mlp(&mlp, MlpIo::F32) {
        assert!(
            !common::expect_coopmat(),
            "COOPGEMM_EXPECT_COOPMAT=1 but {kernel} cannot run weight sets: {why}"
        );
        return None;
    }
    Some(mlp)
}

/// Two recorded runs of a two-set network in one submission, the second reading the
/// first's output, with a recorded GEMM between them that reads it too: the runs use
/// different set indices and groupings (so the second run's pre-pass rewrites the run
/// buffer the first run's kernel read), and everything agrees with the reference (the
/// second run evaluated on the first's output as read back; the GEMM, a permutation of the
/// columns, exactly). So the runs of one submission are ordered.
fn recorded_runs_share_one_submission(kernel: MlpKernel) {
    if kernel == MlpKernel::CoopmatRows {
        return row_kernel_refuses_set_indices();
    }
    let context = context().clone();
    let desc = MlpDesc::uniform(&[24, 40, 24], MlpActivation::Gelu, MlpActivation::None);
    let sets: Vec<_> = (0..2)
        .map(|seed| LayerWeights::seeded(&desc, 13 + seed))
        .collect();
    let Some(mlp) = sets_on(&context, kernel, &desc, &sets) else {
        return;
    };
    let rows = 333;
    let values = rows * 24;
    let input: Vec<f32> = sample_data(SampleData::FullMantissa, values, 17);
    // In range, so that every row of both runs is evaluated (and no NaN reaches the GEMM).
    let run_indices = [
        sample_set_indices(rows, 2, 21),
        sample_set_indices(rows, 2, 22),
    ];
    let x = context.upload("x", &input).unwrap();
    let first = context.upload("y1", &vec![f32::NAN; values]).unwrap();
    let second = context.upload("y2", &vec![f32::NAN; values]).unwrap();
    let permuted = context
        .upload("y1 permuted", &vec![f32::NAN; values])
        .unwrap();
    // Column c of the GEMM's output is column 23 - c of the first run's.
    let mut reversal = vec![0.0f32; 24 * 24];
    for c in 0..24 {
        reversal[(23 - c) * 24 + c] = 1.0;
    }
    let reversal = context.upload("reversal", &reversal).unwrap();
    let index_buffers: Vec<_> = run_indices
        .iter()
        .map(|indices| {
            context
                .upload("indices", bytemuck::cast_slice::<u32, i32>(indices))
                .unwrap()
        })
        .collect();
    let mut command_buffers = Vec::new();
    for (run, (from, to)) in [(&x, &first), (&first, &second)].into_iter().enumerate() {
        let grouping = [MlpGrouping::Library, MlpGrouping::Caller][run];
        let buffers = MlpBuffers::new(&mlp, from, to, MlpIo::F32, rows as u32)
            .with_set_indices(&index_buffers[run])
            .with_grouping(grouping);
        let recorded = context.record_mlp(&mlp, &buffers).expect("record");
        assert_eq!(recorded.plan.kernel, kernel);
        command_buffers.extend(recorded.command_buffers);
        if run == 0 {
            let gemm = Gemm::new(rows as u32, 24, 24);
            let recorded = context
                .record(&gemm, &GemmBuffers::new(&first, &reversal, &permuted))
                .expect("record the GEMM");
            command_buffers.extend(recorded.command_buffers);
        }
    }
    context.queue().submit(command_buffers);
    let weight_sets: Vec<&[LayerWeights]> = sets.iter().map(Vec::as_slice).collect();
    let mut run_input = input;
    for (run, output) in [&first, &second].into_iter().enumerate() {
        let result: Vec<f32> = pollster::block_on(context.download(output, values)).unwrap();
        let reference = MlpReference::compute_sets_for(
            kernel,
            &desc,
            &weight_sets,
            Some(&run_indices[run]),
            &MlpLayout::new(&desc, rows as u32),
            &run_input,
            &vec![f32::NAN; values],
        )
        .unwrap();
        let comparison = reference.compare(&result);
        assert!(comparison.passed(), "{kernel}, run {run}: {comparison:?}");
        if run == 0 {
            let gemm: Vec<f32> = pollster::block_on(context.download(&permuted, values)).unwrap();
            for (row, (got, want)) in gemm.chunks(24).zip(result.chunks(24)).enumerate() {
                let reversed: Vec<f32> = want.iter().rev().copied().collect();
                assert!(
                    got.iter()
                        .zip(&reversed)
                        .all(|(g, w)| g.to_bits() == w.to_bits()),
                    "{kernel}: the GEMM's row {row} is {got:?}, not the reversed {reversed:?}"
                );
            }
        }
        run_input = result;
    }
    assert_no_validation_errors();
}

/// Network runs and a GEMM prepared once (`Context::prepare_mlp`, `prepare_gemm`) and
/// launched twice in one `run_prepared` each: the first run (no set indices, or indices the
/// caller grouped: bound once on the raw-Vulkan kernels) writes `y1`, the GEMM reverses
/// its columns, the second run (indices grouped by the library: its pre-pass recorded at
/// each launch) reads `y1`. Between the launches the input and the indices change on the
/// device; every launch agrees with the reference (the GEMM exactly), so prepared launches
/// read their buffers' contents at each launch and run in order.
fn prepared_runs_match_reference(kernel: MlpKernel) {
    let context = context().clone();
    let desc = MlpDesc::uniform(&[24, 40, 24], MlpActivation::Silu, MlpActivation::None);
    // The row kernel takes no set indices: one set, unindexed runs.
    let indexed = kernel != MlpKernel::CoopmatRows;
    let set_count = if indexed { 3 } else { 1 };
    let sets: Vec<_> = (0..set_count)
        .map(|seed| LayerWeights::seeded(&desc, 31 + seed))
        .collect();
    let Some(mlp) = sets_on(&context, kernel, &desc, &sets) else {
        return;
    };
    let rows = 517;
    let values = rows * 24;
    let x = context.upload("x", &vec![0.0f32; values]).unwrap();
    let first = context.upload("y1", &vec![f32::NAN; values]).unwrap();
    let second = context.upload("y2", &vec![f32::NAN; values]).unwrap();
    let permuted = context
        .upload("y1 reversed", &vec![f32::NAN; values])
        .unwrap();
    let mut reversal = vec![0.0f32; 24 * 24];
    for c in 0..24 {
        reversal[(23 - c) * 24 + c] = 1.0;
    }
    let reversal = context.upload("reversal", &reversal).unwrap();
    let first_indices = context.upload("indices 1", &vec![0i32; rows]).unwrap();
    let second_indices = context.upload("indices 2", &vec![0i32; rows]).unwrap();
    let mut first_buffers = MlpBuffers::new(&mlp, &x, &first, MlpIo::F32, rows as u32);
    let mut second_buffers = MlpBuffers::new(&mlp, &first, &second, MlpIo::F32, rows as u32);
    if indexed {
        first_buffers = first_buffers
            .with_set_indices(&first_indices)
            .with_grouping(MlpGrouping::Caller);
        second_buffers = second_buffers
            .with_set_indices(&second_indices)
            .with_grouping(MlpGrouping::Library);
    }
    let first_run = context
        .prepare_mlp(&mlp, &first_buffers)
        .expect("prepare run 1");
    let second_run = context
        .prepare_mlp(&mlp, &second_buffers)
        .expect("prepare run 2");
    assert_eq!(first_run.plan().kernel, kernel);
    // The SIMT kernel records wgpu passes at each launch; the cooperative-matrix kernel
    // copies caller-grouped indices after its layer table at each launch.
    let raw = kernel != MlpKernel::Simt;
    assert_eq!(
        first_run.is_bound(),
        raw && !(indexed && kernel == MlpKernel::Coopmat),
        "{kernel}: run 1 bound once"
    );
    // The library's grouping runs its pre-pass at each launch.
    assert_eq!(
        second_run.is_bound(),
        raw && !indexed,
        "{kernel}: run 2 bound once"
    );
    let gemm = context
        .prepare_gemm(
            &Gemm::new(rows as u32, 24, 24),
            &GemmBuffers::new(&first, &reversal, &permuted),
        )
        .expect("prepare the GEMM");
    let weight_sets: Vec<&[LayerWeights]> = sets.iter().map(Vec::as_slice).collect();
    let reference = |indices: &[u32], input: &[f32]| {
        MlpReference::compute_sets_for(
            kernel,
            &desc,
            &weight_sets,
            indexed.then_some(indices),
            &MlpLayout::new(&desc, rows as u32),
            input,
            &vec![f32::NAN; values],
        )
        .unwrap()
    };
    for launch in 0..2u64 {
        let input: Vec<f32> = sample_data(SampleData::FullMantissa, values, 40 + launch);
        // Sorted for the caller's grouping; random for the library's.
        let mut grouped = sample_set_indices(rows, set_count as u32, 50 + launch);
        grouped.sort_unstable();
        let scattered = sample_set_indices(rows, set_count as u32, 60 + launch);
        context
            .queue()
            .write_buffer(&x, 0, bytemuck::cast_slice(&input));
        context
            .queue()
            .write_buffer(&first_indices, 0, bytemuck::cast_slice(&grouped));
        context
            .queue()
            .write_buffer(&second_indices, 0, bytemuck::cast_slice(&scattered));
        context
            .run_prepared::<dyn coopgemm::PreparedWork>(&[&first_run, &gemm, &second_run])
            .expect("launch");
        let y1: Vec<f32> = pollster::block_on(context.download(&first, values)).unwrap();
        let comparison = reference(&grouped, &input).compare(&y1);
        assert!(
            comparison.passed(),
            "{kernel}, launch {launch}, run 1: {comparison:?}"
        );
        let reversed: Vec<f32> = pollster::block_on(context.download(&permuted, values)).unwrap();
        for (row, (got, want)) in reversed.chunks(24).zip(y1.chunks(24)).enumerate() {
            assert!(
                got.iter()
                    .zip(want.iter().rev())
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "{kernel}, launch {launch}: the GEMM's row {row} is {got:?}, not {want:?} reversed"
            );
        }
        let y2: Vec<f32> = pollster::block_on(context.download(&second, values)).unwrap();
        let comparison = reference(&scattered, &y1).compare(&y2);
        assert!(
            comparison.passed(),
            "{kernel}, launch {launch}, run 2: {comparison:?}"
        );
    }
    // Bad buffers are refused when preparing, as when running.
    let short = context.upload("short", &[0.0f32; 24]).unwrap();
    assert!(matches!(
        context.prepare_mlp(&mlp, &MlpBuffers::new(&mlp, &short, &second, MlpIo::F32, 2)),
        Err(Error::BufferTooSmall {
            operand: Operand::Input,
            ..
        })
    ));
    assert_no_validation_errors();
}

/// `rows` set indices from `seed`: most in `0..sets`, about three in a hundred out of range
/// (`sets`, `u32::MAX`, or a little above `sets`) and two in a hundred set 0.
fn random_sets(rows: usize, sets: u32, seed: u64) -> Vec<u32> {
    let kinds = sample_set_indices(rows, 100, seed ^ 0x5e75);
    sample_set_indices(rows, sets, seed)
        .into_iter()
        .zip(kinds)
        .map(|(set, kind)| match kind {
            0 => sets,
            1 => u32::MAX,
            2 => sets + 1 + set,
            3 | 4 => 0,
            _ => set,
        })
        .collect()
}

/// The row kernel holds one weight set in shared memory: forced onto it, a run with set
/// indices is a typed error that names it.
fn row_kernel_refuses_set_indices() {
    let context = context().clone();
    let desc = MlpDesc::uniform(&[16, 16], MlpActivation::Relu, MlpActivation::None);
    let sets: Vec<_> = (0..2)
        .map(|seed| LayerWeights::seeded(&desc, seed))
        .collect();
    let Some(mlp) = sets_on(&context, MlpKernel::CoopmatRows, &desc, &sets) else {
        return;
    };
    match context.evaluate_mlp_sets::<f32, f32>(&mlp, &[1.0; 32], &[0, 1]) {
        Err(Error::MlpNoKernel { reasons }) => {
            assert_eq!(reasons.len(), 1);
            assert_eq!(reasons[0].0, MlpKernel::CoopmatRows);
            assert!(reasons[0].1.contains("set indices"), "{}", reasons[0].1);
        }
        other => panic!("expected MlpNoKernel, got {other:?}"),
    }
}

/// 1500 weight sets of a small network, rows assigned at random (some out of range) and
/// grouped by the library: the pre-pass's scan walks many bins, and subgroups hold several
/// sets; and three sets over four thousand rows with gaps between them, f16 in and f32 out.
fn many_sets_match_reference(kernel: MlpKernel) {
    if kernel == MlpKernel::CoopmatRows {
        return row_kernel_refuses_set_indices();
    }
    let context = context().clone();
    let desc = MlpDesc::uniform(&[4, 8, 3], MlpActivation::Relu, MlpActivation::Sigmoid);
    let sets: Vec<_> = (0..1500)
        .map(|seed| LayerWeights::seeded(&desc, 7000 + seed))
        .collect();
    let Some(mlp) = sets_on(&context, kernel, &desc, &sets) else {
        return;
    };
    let rows = 3001;
    let indices = random_sets(rows, 1500, 17);
    let few = sets_on(&context, kernel, &desc, &sets[..3]).expect("three sets");
    let few_rows = 4 * 1024 + 5;
    let few_indices = random_sets(few_rows, 3, 18);
    let mut failures = Vec::new();
    for (case, result) in [
        check_case_sets::<f32, f32>(
            &context,
            &mlp,
            MlpLayout::new(&desc, rows as u32),
            21,
            Some((&indices, MlpGrouping::Library)),
        ),
        check_case_sets::<f16, f32>(
            &context,
            &few,
            layout(&desc, few_rows as u32, 2, 1),
            22,
            Some((&few_indices, MlpGrouping::Library)),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        if let Err(why) = result {
            failures.push(format!("{kernel} case {case}: {why}"));
        }
    }
    assert_all_passed(2, &failures);
    assert_no_validation_errors();
}

/// Five weight sets, odd widths: random indices grouped by the library, the same sorted and
/// grouped by the caller, and unsorted rows the caller says are grouped (slower, same
/// results); rows out of range keep their output; rows enough for the library to group them
/// in three windows. Then three sets of a network with whole
/// 16-column output tiles, sorted and grouped by the caller or by the library.
fn sets_match_reference(kernel: MlpKernel) {
    if kernel == MlpKernel::CoopmatRows {
        return row_kernel_refuses_set_indices();
    }
    let context = context().clone();
    let desc = MlpDesc::uniform(&[13, 40, 21, 7], MlpActivation::Silu, MlpActivation::None);
    let sets: Vec<_> = (0..5)
        .map(|seed| LayerWeights::seeded(&desc, 100 + seed))
        .collect();
    let Some(mlp) = sets_on(&context, kernel, &desc, &sets) else {
        return;
    };
    assert_eq!((mlp.sets(), mlp.weights()), (5, &sets[0][..]));
    let rows = 1000;
    let indices = random_sets(rows, 5, 3);
    let mut sorted = indices.clone();
    sorted.sort_unstable();
    let gapped = layout(&desc, rows as u32, 5, 3);
    let packed = MlpLayout::new(&desc, rows as u32);
    // Three windows of the library's grouping (32768 rows each at the least), the last
    // partial.
    let many = 2 * 32768 + 1000 + 3;
    let many_indices = random_sets(many, 5, 4);
    let mut failures = Vec::new();
    for (case, result) in [
        check_case_sets::<f32, f32>(
            &context,
            &mlp,
            packed,
            1,
            Some((&indices, MlpGrouping::Library)),
        ),
        check_case_sets::<f16, f16>(
            &context,
            &mlp,
            gapped,
            2,
            Some((&indices, MlpGrouping::Library)),
        ),
        check_case_sets::<f16, f32>(
            &context,
            &mlp,
            packed,
            4,
            Some((&sorted, MlpGrouping::Caller)),
        ),
        check_case_sets::<f32, f16>(
            &context,
            &mlp,
            gapped,
            5,
            Some((&indices, MlpGrouping::Caller)),
        ),
        // Without indices every row is set 0's.
        check_case_sets::<f32, f32>(&context, &mlp, gapped, 7, None),
        check_case_sets::<f16, f16>(
            &context,
            &mlp,
            MlpLayout::new(&desc, many as u32),
            8,
            Some((&many_indices, MlpGrouping::Library)),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        if let Err(why) = result {
            failures.push(format!("{kernel} case {case}: {why}"));
        }
    }
    assert_all_passed(6, &failures);
    // Whole 16-column output tiles with rows sorted by set (blocks of one set with
    // consecutive rows: a guard for any kernel path that stores such blocks tile by tile),
    // and the same indices grouped by the library.
    let tiled = MlpDesc::uniform(&[16, 48, 16], MlpActivation::Relu, MlpActivation::None);
    let tiled_sets: Vec<_> = (0..3)
        .map(|seed| LayerWeights::seeded(&tiled, 200 + seed))
        .collect();
    let tiled_mlp = context
        .build_mlp_sets(&tiled, &tiled_sets)
        .expect("build the network")
        .with_kernel(Some(kernel));
    let mut tiled_indices = random_sets(rows, 3, 8);
    tiled_indices.sort_unstable();
    let tiled_layout = MlpLayout::new(&tiled, rows as u32);
    for (case, result) in [
        check_case_sets::<f16, f16>(
            &context,
            &tiled_mlp,
            tiled_layout,
            10,
            Some((&tiled_indices, MlpGrouping::Caller)),
        ),
        check_case_sets::<f32, f32>(
            &context,
            &tiled_mlp,
            tiled_layout,
            11,
            Some((&tiled_indices, MlpGrouping::Library)),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        if let Err(why) = result {
            failures.push(format!("{kernel} tiled case {case}: {why}"));
        }
    }
    assert_all_passed(2, &failures);
    // The host helper, with its check of the indices.
    let in_range: Vec<u32> = indices.iter().map(|&i| i % 5).collect();
    let input: Vec<f32> = sample_data(SampleData::FullMantissa, 13 * rows, 9);
    let output: Vec<f32> = context
        .evaluate_mlp_sets(&mlp, &input, &in_range)
        .expect("evaluate");
    let weight_sets: Vec<&[LayerWeights]> = sets.iter().map(Vec::as_slice).collect();
    let reference = MlpReference::compute_sets_for(
        kernel,
        &desc,
        &weight_sets,
        Some(&in_range),
        &packed,
        &input,
        &vec![0.0f32; 7 * rows],
    )
    .unwrap();
    let comparison = reference.compare(&output);
    assert!(comparison.passed(), "{comparison:?}");
    assert_no_validation_errors();
}

macro_rules! per_kernel {
    ($($module:ident => $kernel:expr),* $(,)?) => {$(
        mod $module {
            use super::*;
            #[test]
            fn networks_match_reference() {
                super::networks_match_reference($kernel);
            }
            #[test]
            fn many_rows_match_reference() {
                super::many_rows_match_reference($kernel);
            }
            #[test]
            fn evaluate_matches_reference() {
                super::evaluate_matches_reference($kernel);
            }
            #[test]
            fn sets_match_reference() {
                super::sets_match_reference($kernel);
            }
            #[test]
            fn rows_past_one_binding_run_in_chunks() {
                super::rows_past_one_binding_run_in_chunks($kernel);
            }
            #[test]
            fn recorded_runs_share_one_submission() {
                super::recorded_runs_share_one_submission($kernel);
            }
            #[test]
            fn many_sets_match_reference() {
                super::many_sets_match_reference($kernel);
            }
            #[test]
            fn prepared_runs_match_reference() {
                super::prepared_runs_match_reference($kernel);
            }
        }
    )*};
}

per_kernel!(
    mlp_coopmat => MlpKernel::Coopmat,
    mlp_coopmat_rows => MlpKernel::CoopmatRows,
    mlp_coopvec => MlpKernel::Coopvec,
    mlp_simt => MlpKernel::Simt,
);

#[test]
fn every_kernel_is_stamped() {
    assert_eq!(
        MlpKernel::ALL.len(),
        4,
        "stamp the new kernel in per_kernel!"
    );
}

#[test]
fn bad_networks_are_typed_errors() {
    let context = context();
    let relu = MlpActivation::Relu;
    let build = |desc: &MlpDesc| context.build_mlp(desc, &LayerWeights::seeded(desc, 1));
    assert_eq!(build(&MlpDesc::new(8)).unwrap_err(), Error::MlpNoLayers);
    assert_eq!(
        build(&MlpDesc::new(8).layer(0, relu)).unwrap_err(),
        Error::MlpWidth {
            position: 1,
            width: 0,
            limit: MAX_MLP_WIDTH
        }
    );
    assert!(matches!(
        build(&MlpDesc::new(MAX_MLP_WIDTH + 1).layer(4, relu)),
        Err(Error::MlpWidth { position: 0, .. })
    ));
    assert!(matches!(
        build(&MlpDesc::new(4).layer(4, MlpActivation::LeakyRelu(f32::NAN))),
        Err(Error::MlpActivation { layer: 0, .. })
    ));
    let desc = MlpDesc::new(4).layer(3, relu).layer(2, MlpActivation::None);
    let mut weights = LayerWeights::seeded(&desc, 1);
    weights[1].bias.pop();
    assert_eq!(
        context.build_mlp(&desc, &weights).unwrap_err(),
        Error::MlpWeights {
            set: 0,
            layer: 1,
            what: "bias",
            expected: 2,
            actual: 1
        }
    );
    weights.pop();
    assert!(matches!(
        context.build_mlp(&desc, &weights),
        Err(Error::MlpWeights { what: "layers", .. })
    ));
    assert_no_validation_errors();
}

#[test]
fn bad_buffers_are_typed_errors_and_write_nothing() {
    let context = context();
    let desc = MlpDesc::uniform(&[4, 8, 2], MlpActivation::Relu, MlpActivation::None);
    let mlp = context
        .build_mlp(&desc, &LayerWeights::seeded(&desc, 1))
        .unwrap();
    let input = context.upload("input", &[1.0f32; 40]).unwrap();
    let output = context.upload("output", &[7.0f32; 20]).unwrap();
    let run = |buffers: MlpBuffers<'_>| context.run_mlp(&mlp, &buffers).map(|_| ());
    let buffers = MlpBuffers::new(&mlp, &input, &output, MlpIo::F32, 10);
    assert!(matches!(
        run(MlpBuffers::new(&mlp, &input, &output, MlpIo::F32, 11)),
        Err(Error::BufferTooSmall {
            operand: Operand::Input,
            ..
        })
    ));
    assert!(matches!(
        run(buffers.with_layout(MlpLayout {
            output_stride: 3,
            ..buffers.layout
        })),
        Err(Error::BufferTooSmall {
            operand: Operand::Output,
            ..
        })
    ));
    assert_eq!(
        run(buffers.with_layout(MlpLayout {
            input_stride: 3,
            ..buffers.layout
        })),
        Err(Error::MlpRowStride {
            operand: Operand::Input,
            stride: 3,
            width: 4
        })
    );
    assert!(matches!(
        run(MlpBuffers::new(&mlp, &input, &input, MlpIo::F32, 1)),
        Err(Error::OutputAliasesInput { .. })
    ));
    let bf16 = MlpIo {
        input: coopgemm::DType::BF16,
        output: coopgemm::DType::F32,
    };
    assert_eq!(
        run(MlpBuffers::new(&mlp, &input, &output, bf16, 1)),
        Err(Error::MlpRowType {
            operand: Operand::Input,
            dtype: coopgemm::DType::BF16
        })
    );
    let uniform = context
        .create_buffer("not storage", 256, wgpu::BufferUsages::UNIFORM)
        .unwrap();
    assert!(matches!(
        run(MlpBuffers::new(&mlp, &uniform, &output, MlpIo::F32, 1)),
        Err(Error::MissingBufferUsage { .. })
    ));
    let host: Result<Vec<f32>, _> = context.evaluate_mlp(&mlp, &[1.0f32; 6]);
    assert!(matches!(
        host,
        Err(Error::HostDataLength {
            operand: Operand::Input,
            ..
        })
    ));
    // Nothing was written by any of the refused runs.
    let untouched: Vec<f32> = pollster::block_on(context.download(&output, 20)).unwrap();
    assert!(untouched.iter().all(|&v| v == 7.0), "{untouched:?}");
    assert_no_validation_errors();
}

#[test]
fn bad_weight_sets_are_typed_errors_and_write_nothing() {
    let context = context();
    let desc = MlpDesc::uniform(&[4, 8, 2], MlpActivation::Relu, MlpActivation::None);
    assert_eq!(
        context.build_mlp_sets(&desc, &[]).unwrap_err(),
        Error::MlpSets {
            sets: 0,
            limit: MAX_MLP_SETS
        }
    );
    let mut sets: Vec<_> = (0..4).map(|s| LayerWeights::seeded(&desc, s)).collect();
    sets[2][0].weights.pop();
    assert_eq!(
        context.build_mlp_sets(&desc, &sets).unwrap_err(),
        Error::MlpWeights {
            set: 2,
            layer: 0,
            what: "weights",
            expected: 32,
            actual: 31
        }
    );
    sets[2] = LayerWeights::seeded(&desc, 2);
    let mlp = context.build_mlp_sets(&desc, &sets).unwrap();
    assert_eq!(
        context
            .evaluate_mlp_sets::<f32, f32>(&mlp, &[1.0; 12], &[0, 4, 1])
            .unwrap_err(),
        Error::MlpSetIndex {
            row: 1,
            set: 4,
            sets: 4
        }
    );
    assert!(matches!(
        context.evaluate_mlp_sets::<f32, f32>(&mlp, &[1.0; 12], &[0, 1]),
        Err(Error::HostDataLength {
            operand: Operand::SetIndices,
            ..
        })
    ));
    let input = context.upload("input", &[1.0f32; 40]).unwrap();
    let output = context.upload("output", &[7.0f32; 20]).unwrap();
    let indices = context.upload("indices", &[0i32; 9]).unwrap();
    let uniform = context
        .create_buffer("not storage", 256, wgpu::BufferUsages::UNIFORM)
        .unwrap();
    let run = |buffers: MlpBuffers<'_>| context.run_mlp(&mlp, &buffers).map(|_| ());
    let buffers = MlpBuffers::new(&mlp, &input, &output, MlpIo::F32, 10);
    assert!(matches!(
        run(buffers.with_set_indices(&indices)),
        Err(Error::BufferTooSmall {
            operand: Operand::SetIndices,
            ..
        })
    ));
    assert!(matches!(
        run(buffers.with_set_indices(&uniform)),
        Err(Error::MissingBufferUsage {
            operand: Operand::SetIndices,
            ..
        })
    ));
    let untouched: Vec<f32> = pollster::block_on(context.download(&output, 20)).unwrap();
    assert!(untouched.iter().all(|&v| v == 7.0), "{untouched:?}");
    assert_no_validation_errors();
}
