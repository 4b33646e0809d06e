//! Prepared GEMMs (`Context::prepare_gemm`, `Context::run_prepared`) on every backend: each
//! launch computes what `Context::run` computes (guarded data against the f64 reference,
//! launched twice), GEMMs launched together in one submission run in order (a chain where
//! each reads the previous one's output), bad buffers are typed errors when preparing, and a
//! prepared GEMM runs only on the context that prepared it.

mod common;

use coopgemm::{
    Activation, BiasAxis, Context, Element, Error, Gemm, GemmBuffers, GemmTypes, MatrixLayout,
    SplitKChoice,
};

use common::cases::{skinny_cases, stride_cases, with_host_types, CaseData};
use common::{backend_for, backend_tests};

/// Few-row, strided, batched, split and epilogue GEMMs: the raw dispatch, and the plans
/// that record per launch (wgpu passes).
fn prepared_cases() -> Vec<Gemm> {
    let mut cases: Vec<Gemm> = skinny_cases().into_iter().step_by(9).collect();
    cases.extend(stride_cases().into_iter().take(4));
    cases.push(
        Gemm::new(70, 45, 38)
            .bias(BiasAxis::PerColumn)
            .activation(Activation::Relu),
    );
    cases.push(Gemm::new(33, 65, 300).c(MatrixLayout::column_major()));
    cases
}

/// Prepares `gemm` on uploaded guarded data, launches it twice (once when beta reads C),
/// and checks C.
fn check_prepared<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<(), String> {
    let data = CaseData::<I, O>::guarded(gemm, seed)?;
    let describe = data.describe().to_string();
    let upload = |label, values: &[I]| context.upload(label, values).expect("upload");
    let (a, b) = (upload("A", &data.a), upload("B", &data.b));
    let c = context.upload("C", &data.c).expect("upload");
    let bias = data
        .bias
        .as_ref()
        .map(|values| context.upload("bias", values).expect("upload"));
    let mut buffers = GemmBuffers::new(&a, &b, &c);
    buffers.bias = bias.as_ref();
    let prepared = context
        .prepare_gemm(gemm, &buffers)
        .map_err(|e| format!("{describe}: prepare: {e}"))?;
    let launches = if gemm.beta == 0.0 { 2 } else { 1 };
    for _ in 0..launches {
        context
            .run_prepared(&[&prepared])
            .map_err(|e| format!("{describe}: run: {e}"))?;
    }
    data.verify(pollster::block_on(context.download(&c, data.c.len())))
}

backend_tests! {
    fn prepared_gemms_match_the_reference(kind) {
        let mut failures = Vec::new();
        let mut ran = 0;
        for types in [GemmTypes::F32, GemmTypes::F16_F32] {
            let Some(context) = backend_for(kind, types) else {
                continue;
            };
            for (index, gemm) in prepared_cases().into_iter().enumerate() {
                let gemm = gemm.types(types);
                let seed = 7000 + index as u64;
                let result = with_host_types!(types, |I, O| check_prepared::<I, O>(
                    &context, &gemm, seed
                ));
                ran += 1;
                if let Err(message) = result {
                    failures.push(format!("{kind} {types}: {message}"));
                }
            }
            // Split GEMMs: on the cooperative-matrix backend their partial products and
            // reduction are bound once (partials of their own), elsewhere recorded per
            // launch. Three equal slices; then three and a one-k remainder (two partial
            // GEMMs) with beta, a bias and an activation in the reduction.
            let split = context.with_split_k(SplitKChoice::Slices(3));
            let split_cases = [
                Gemm::new(20, 24, 300),
                Gemm::new(9, 40, 301)
                    .beta(0.5)
                    .bias(BiasAxis::PerRow)
                    .activation(Activation::Gelu),
            ];
            for (index, gemm) in split_cases.into_iter().enumerate() {
                let gemm = gemm.types(types);
                if !split.prepare(&gemm).is_ok_and(|kernel| kernel.split_k.is_some()) {
                    continue;
                }
                ran += 1;
                let result = with_host_types!(types, |I, O| check_prepared::<I, O>(
                    &split,
                    &gemm,
                    7100 + index as u64
                ));
                if let Err(message) = result {
                    failures.push(format!("{kind} {types} split: {message}"));
                }
            }
        }
        eprintln!("{kind}: {ran} prepared GEMMs checked");
        if kind == coopgemm::BackendKind::Simt {
            common::assert_all_passed(ran, &failures);
        } else {
            common::assert_none_failed(&failures);
        }
    }

    /// C1 = A B1, C2 = C1 B2, C3 = C2 B3 launched in one submission: each must see the
    /// previous one's result (C1 and C2 start as NaN).
    fn prepared_gemms_run_in_order(kind) {
        let Some(context) = backend_for(kind, GemmTypes::F32) else {
            return;
        };
        let (m, n) = (9, 40);
        let a: Vec<f32> = (0..m * n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0).collect();
        let weights: Vec<Vec<f32>> = (0..3)
            .map(|layer| {
                (0..n * n)
                    .map(|i| ((i * 5 + layer * 3) % 11) as f32 / 16.0 - 0.3)
                    .collect()
            })
            .collect();
        let a_buffer = context.upload("A", &a).unwrap();
        let b_buffers: Vec<_> = weights.iter().map(|w| context.upload("B", w).unwrap()).collect();
        let c_buffers: Vec<_> = (0..3)
            .map(|_| context.upload("C", &vec![f32::NAN; m * n]).unwrap())
            .collect();
        let gemm = Gemm::new(m as u32, n as u32, n as u32);
        let prepared: Vec<_> = (0..3)
            .map(|layer| {
                let input = if layer == 0 { &a_buffer } else { &c_buffers[layer - 1] };
                context
                    .prepare_gemm(&gemm, &GemmBuffers::new(input, &b_buffers[layer], &c_buffers[layer]))
                    .unwrap()
            })
            .collect();
        context.run_prepared(&prepared.iter().collect::<Vec<_>>()).unwrap();
        let mut expected = a.clone();
        for (layer, w) in weights.iter().enumerate() {
            let reference = coopgemm::testing::Reference::compute(
                &gemm.resolve().unwrap(),
                &expected,
                w,
                &vec![0f32; m * n],
            )
            .unwrap();
            let result: Vec<f32> =
                pollster::block_on(context.download(&c_buffers[layer], m * n)).unwrap();
            let comparison = reference.compare(&result);
            assert!(
                comparison.passed(),
                "{kind}: GEMM {layer} of the chain: {:?}",
                comparison.first_mismatch
            );
            // The next GEMM reads what the GPU wrote.
            expected = result;
        }
    }

    /// Split GEMMs launched together: [C1 = A B1, C3 = A B3, C2 = C1 B2, C4 += A B4 twice]
    /// in one `run_prepared`, each split in three along K (full-mantissa f16 data). On the
    /// cooperative-matrix backend independent splits run their parts before the earlier
    /// ones' reductions; C2 reads C1, so it must wait for C1's reduction, and the two C4
    /// launches (sharing partial sums) must sum in order.
    fn prepared_split_batches_run_in_order(kind) {
        use coopgemm::testing::{sample_data, Reference, SampleData};
        use half::f16;
        let Some(context) = backend_for(kind, GemmTypes::F16_F32) else {
            return;
        };
        let split = context.with_split_k(SplitKChoice::Slices(3));
        let (m, n) = (9u32, 96u32);
        let chained = Gemm::new(m, n, n).types(GemmTypes::F16_F32_F16);
        let accumulated = Gemm::new(m, n, n).types(GemmTypes::F16_F32).beta(0.5);
        for gemm in [&chained, &accumulated] {
            if !split.prepare(gemm).is_ok_and(|kernel| kernel.split_k.is_some()) {
                return;
            }
        }
        let values = |count: u32, seed| sample_data::<f16>(SampleData::FullMantissa, count as usize, seed);
        let a = values(m * n, 1);
        let weights: Vec<Vec<f16>> = (0..4).map(|seed| values(n * n, 10 + seed)).collect();
        let c4_start: Vec<f32> = sample_data(SampleData::FullMantissa, (m * n) as usize, 20);
        let a_buffer = split.upload("A", &a).unwrap();
        let b: Vec<_> = weights.iter().map(|w| split.upload("B", w).unwrap()).collect();
        let nan = vec![f16::NAN; (m * n) as usize];
        let c: Vec<_> = (0..3).map(|_| split.upload("C", &nan).unwrap()).collect();
        let c4 = split.upload("C4", &c4_start).unwrap();
        let prepare = |gemm: &Gemm, a: &wgpu::Buffer, b: &wgpu::Buffer, c: &wgpu::Buffer| {
            split.prepare_gemm(gemm, &GemmBuffers::new(a, b, c)).unwrap()
        };
        let p1 = prepare(&chained, &a_buffer, &b[0], &c[0]);
        let p2 = prepare(&chained, &c[0], &b[1], &c[1]);
        let p3 = prepare(&chained, &a_buffer, &b[2], &c[2]);
        let p4 = prepare(&accumulated, &a_buffer, &b[3], &c4);
        split.run_prepared(&[&p1, &p3, &p2, &p4, &p4]).unwrap();
        let download = |buffer: &wgpu::Buffer| -> Vec<f16> {
            pollster::block_on(split.download(buffer, (m * n) as usize)).unwrap()
        };
        let zero = vec![f16::ZERO; (m * n) as usize];
        let (c1, c2, c3) = (download(&c[0]), download(&c[1]), download(&c[2]));
        let resolved = chained.resolve().unwrap();
        for (name, input, w, got) in [
            ("C1 = A B1", &a, &weights[0], &c1),
            ("C3 = A B3", &a, &weights[2], &c3),
            ("C2 = C1 B2 (C1 as the GPU wrote it)", &c1, &weights[1], &c2),
        ] {
            let comparison = Reference::compute(&resolved, input, w, &zero).unwrap().compare(got);
            assert!(comparison.passed(), "{kind}: {name}: {:?}", comparison.first_mismatch);
        }
        // Two launches of C = A B + 0.5 C: C = 1.5 A B + 0.25 C0.
        let twice = accumulated.alpha(1.5).beta(0.25).resolve().unwrap();
        let got: Vec<f32> = pollster::block_on(split.download(&c4, (m * n) as usize)).unwrap();
        let comparison = Reference::compute(&twice, &a, &weights[3], &c4_start)
            .unwrap()
            .compare(&got);
        assert!(
            comparison.passed(),
            "{kind}: C4 launched twice: {:?}",
            comparison.first_mismatch
        );
    }

    fn prepared_gemm_errors(kind) {
        let Some(context) = backend_for(kind, GemmTypes::F32) else {
            return;
        };
        let gemm = Gemm::new(8, 8, 8);
        let small = context.upload("small", &[0f32; 8]).unwrap();
        let full = context.upload("full", &[0f32; 64]).unwrap();
        let c = context.upload("C", &[0f32; 64]).unwrap();
        assert!(matches!(
            context.prepare_gemm(&gemm, &GemmBuffers::new(&small, &full, &c)),
            Err(Error::BufferTooSmall { .. })
        ));
        assert!(matches!(
            context.prepare_gemm(&gemm, &GemmBuffers::new(&full, &full, &full)),
            Err(Error::OutputAliasesInput { .. })
        ));
        assert!(matches!(
            context.prepare_gemm(&gemm, &GemmBuffers::new(&full, &small, &c)),
            Err(Error::BufferTooSmall { .. })
        ));
        let prepared = context
            .prepare_gemm(&gemm, &GemmBuffers::new(&full, &full, &c))
            .unwrap();
        // Another context (its own device) cannot launch it.
        let other = pollster::block_on(Context::with_options(common::test_options())).unwrap();
        assert!(matches!(
            other.run_prepared(&[&prepared]),
            Err(Error::PreparedElsewhere)
        ));
        // A clone of the preparing context can, also after the GEMM is dropped mid-flight.
        let clone = context.clone();
        clone.run_prepared(&[&prepared]).unwrap();
        drop(prepared);
        clone.wait().unwrap();
        common::assert_no_validation_errors();
    }
}
