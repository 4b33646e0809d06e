//! The browser suite: the wasm32 build on the browser's own WebGPU, under
//! `wasm-bindgen-test` (CI runs it in headless Chromium, on its SwiftShader, and in Firefox
//! ESR, on Mesa's lavapipe). The native suites' cases (`tests/common/cases.rs`) run through
//! the async API (`Context::new`, `multiply_with_bias_async`, `download`), since nothing
//! may block the browser's thread: correctness over shapes, layouts, batches and scaling,
//! every input type (a typed error where no backend has it), epilogues, split-K, packed B,
//! guard regions, random cases, and typed errors. Every result is checked against the f64
//! reference.
//!
//! ```sh
//! CHROMEDRIVER=$(command -v chromedriver) WASM_BINDGEN_TEST_WEBDRIVER_JSON=.ci/webdriver-chromium.json \
//!     cargo test --target wasm32-unknown-unknown --test web
//! ```
#![cfg(target_arch = "wasm32")]

#[path = "common/cases.rs"]
mod cases;

use std::cell::RefCell;

use coopgemm::testing::Reference;
use coopgemm::{
    BackendChoice, BackendKind, Context, Element, Error, Gemm, GemmBuffers, GemmTypes,
    MatrixLayout, Operand, SplitKChoice,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

use cases::{with_host_types, CaseData};

wasm_bindgen_test_configure!(run_in_browser);

thread_local! {
    /// The context the tests share: the browser runs them one after another on one thread.
    static CONTEXT: RefCell<Option<Context>> = const { RefCell::new(None) };
}

/// The shared context, opened by the first test that asks. Fails unless it runs on the
/// browser's WebGPU.
async fn context() -> Context {
    if let Some(context) = CONTEXT.with(|cell| cell.borrow().clone()) {
        return context;
    }
    let context = Context::new()
        .await
        .expect("the browser's WebGPU adapter (Chromium: --enable-unsafe-webgpu; Firefox: dom.webgpu.enabled)");
    let info = context.adapter_info();
    // wgpu's AdapterInfo on the web carries only the description; the browser's own
    // GPUAdapterInfo says which renderer it is.
    let browser_info = browser_adapter_info().await.as_string().unwrap_or_default();
    console_log!(
        "adapter: {browser_info} ({:?}, {:?}); shader-f16: {}",
        info.device_type,
        info.backend,
        context
            .device()
            .features()
            .contains(wgpu::Features::SHADER_F16)
    );
    assert_eq!(
        info.backend,
        wgpu::Backend::BrowserWebGpu,
        "the context must run on the browser's WebGPU"
    );
    for status in context.backends() {
        console_log!("backend {}: {:?}", status.kind, status.availability);
    }
    CONTEXT.with(|cell| *cell.borrow_mut() = Some(context.clone()));
    context
}

#[wasm_bindgen(inline_js = r#"
export async function browser_adapter_info() {
    const adapter = await navigator.gpu?.requestAdapter();
    if (!adapter) return "no adapter";
    const i = adapter.info ?? {};
    return `vendor "${i.vendor}", architecture "${i.architecture}", device "${i.device}", description "${i.description}"`;
}
"#)]
extern "C" {
    /// The browser's `GPUAdapterInfo` of its default adapter, in words.
    async fn browser_adapter_info() -> JsValue;
}

/// A handle forced onto each backend that can run `types` here.
async fn backends_for(types: GemmTypes) -> Vec<(BackendKind, Context)> {
    let context = context().await;
    let probe = Gemm::new(64, 64, 64).types(types);
    BackendKind::ALL
        .into_iter()
        .map(|kind| (kind, context.with_backend(BackendChoice::Force(kind))))
        .filter(|(_, handle)| handle.select(&probe).is_ok())
        .collect()
}

/// Runs `gemm` with the case's data and checks C against the reference.
async fn run_case<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    data: CaseData<I, O>,
) -> Result<(), String> {
    let result = context
        .multiply_with_bias_async(gemm, &data.a, &data.b, &data.c, data.bias.as_deref())
        .await;
    data.verify(result)
}

/// Checks `gemm` with seeded data (guarded: with its operands' surroundings poisoned).
async fn check(context: &Context, gemm: &Gemm, seed: u64, guarded: bool) -> Result<(), String> {
    with_host_types!(gemm.types, |I, O| {
        let data = if guarded {
            CaseData::<I, O>::guarded(gemm, seed)?
        } else {
            CaseData::<I, O>::new(gemm, seed)?
        };
        run_case(context, gemm, data).await
    })
}

/// Runs `cases` (each with its seed) of `types` on every backend that has them; where none
/// does, the GEMM must be refused with a typed error naming every backend's reason. Returns
/// how many cases ran.
async fn run_cases(types: GemmTypes, cases: &[(Gemm, u64)], guarded: bool) -> usize {
    let backends = backends_for(types).await;
    if backends.is_empty() {
        assert_refused(types).await;
        return 0;
    }
    let mut failures = Vec::new();
    for (kind, context) in &backends {
        for (gemm, seed) in cases {
            if let Err(message) = check(context, &gemm.types(types), *seed, guarded).await {
                failures.push(format!("{kind}: {message}"));
            }
        }
        console_log!("{types}: {} cases on {kind}", cases.len());
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    cases.len() * backends.len()
}

/// `types` has no backend here: selection says so with every backend's reason, a forced
/// backend with `Unsupported`, and the host path returns the error instead of a result.
async fn assert_refused(types: GemmTypes) {
    let context = context().await;
    let gemm = Gemm::new(8, 8, 8).types(types);
    match context.select(&gemm) {
        Err(Error::NoBackend { reasons }) => {
            assert_eq!(reasons.len(), BackendKind::ALL.len(), "{reasons:?}");
            console_log!("{types}: no backend here: {reasons:?}");
        }
        other => panic!("{types}: expected NoBackend, got {other:?}"),
    }
    let simt = context.with_backend(BackendChoice::Force(BackendKind::Simt));
    assert!(
        matches!(
            simt.select(&gemm),
            Err(Error::Unsupported {
                backend: BackendKind::Simt,
                ..
            })
        ),
        "{types}: forced SIMT must be Unsupported"
    );
    let refused: Result<(), String> = async {
        with_host_types!(types, |I, O| {
            let data = CaseData::<I, O>::new(&gemm, 1)?;
            let result = context
                .multiply_async(&gemm, &data.a, &data.b, &data.c)
                .await;
            match result {
                Err(Error::NoBackend { .. }) => Ok(()),
                other => Err(format!("{types}: expected NoBackend, got {other:?}")),
            }
        })
    }
    .await;
    refused.unwrap();
}

fn seeded(cases: Vec<Gemm>) -> Vec<(Gemm, u64)> {
    cases
        .into_iter()
        .enumerate()
        .map(|(index, gemm)| (gemm, index as u64 + 1))
        .collect()
}

#[wasm_bindgen_test]
async fn the_adapter_is_the_browsers_webgpu() {
    let context = context().await;
    assert_eq!(context.adapter_info().backend, wgpu::Backend::BrowserWebGpu);
    // The coopmat backend is raw Vulkan: not built for the web, and it says so.
    assert!(!context.backend(BackendKind::Coopmat).is_available());
    let simt = context.select(&Gemm::new(64, 64, 64)).unwrap();
    console_log!("a 64^3 f32 GEMM selects {simt:?}");
}

#[wasm_bindgen_test]
async fn f32_shapes() {
    run_cases(GemmTypes::F32, &seeded(cases::shape_cases()), false).await;
}

#[wasm_bindgen_test]
async fn f32_layouts() {
    run_cases(GemmTypes::F32, &seeded(cases::layout_cases()), false).await;
}

#[wasm_bindgen_test]
async fn f32_strides_batches_and_scaling() {
    run_cases(GemmTypes::F32, &seeded(cases::stride_cases()), false).await;
}

/// f16 and bf16 inputs run wherever the SIMT kernel has f16 storage (WGSL's f16 pack and
/// unpack, without `shader-f16`); i8 has no backend on WebGPU and gets a typed error.
#[wasm_bindgen_test]
async fn reduced_precision_types() {
    let cases = seeded(cases::reduced_precision_cases());
    let mut ran = 0;
    for types in cases::REDUCED_PRECISION_TYPES {
        ran += run_cases(types, &cases, false).await;
    }
    assert!(ran > 0, "no reduced-precision type ran");
}

#[wasm_bindgen_test]
async fn every_epilogue_and_output_type() {
    let mut ran = 0;
    for types in cases::EPILOGUE_TYPES {
        ran += run_cases(types, &cases::epilogue_cases(types), false).await;
    }
    assert!(ran > 0, "no epilogue case ran");
}

#[wasm_bindgen_test]
async fn activations_at_extremes() {
    let inputs = cases::ACTIVATION_EXTREMES;
    let n = inputs.len() as u32;
    for activation in coopgemm::Activation::ALL {
        for (kind, context) in backends_for(GemmTypes::F32).await {
            let gemm = Gemm::new(1, n, 1)
                .bias(coopgemm::BiasAxis::PerColumn)
                .activation(activation);
            let (a, b, c) = ([1.0f32], vec![0.0f32; n as usize], vec![0.0f32; n as usize]);
            let result = context
                .multiply_with_bias_async(&gemm, &a, &b, &c, Some(&inputs))
                .await
                .unwrap_or_else(|e| panic!("{kind} {activation}: {e}"));
            let reference =
                Reference::compute_with_bias(&gemm.resolve().unwrap(), &a, &b, &c, Some(&inputs))
                    .unwrap();
            assert!(
                reference.compare(&result).passed(),
                "{kind} {activation}: {result:?} vs {:?}",
                reference.expected
            );
        }
    }
}

#[wasm_bindgen_test]
async fn split_k_matches_the_reference() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for types in cases::SPLIT_K_TYPES {
        for (kind, context) in backends_for(types).await {
            for slices in cases::SPLIT_K_SLICES {
                let split = context.with_split_k(SplitKChoice::Slices(slices));
                for (gemm, seed) in cases::split_k_cases(types, slices) {
                    let kernel = split.prepare(&gemm).unwrap();
                    assert!(kernel.split_k.is_some(), "{kind}: not split: {kernel:?}");
                    ran += 1;
                    if let Err(message) = check(&split, &gemm, seed, false).await {
                        failures.push(format!("{kind} {slices} slices: {message}"));
                    }
                }
            }
            console_log!("{types}: split-K on {kind}");
        }
    }
    assert!(ran > 0 && failures.is_empty(), "{ran} ran; {failures:#?}");
}

/// B packed on the GPU (`Context::pack_b`), then the GEMM on the packed B, against the
/// reference of the unpacked GEMM.
#[wasm_bindgen_test]
async fn packed_b_matches_unpacked() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for types in cases::PACKING_TYPES {
        for (kind, context) in backends_for(types).await {
            for (gemm, seed) in cases::packing_cases(types) {
                ran += 1;
                let outcome: Result<(), String> = async {
                    with_host_types!(types, |I, O| {
                        let data = CaseData::<I, O>::new(&gemm, seed)?;
                        let result = run_packed(&context, &gemm, &data).await;
                        data.verify(result)
                    })
                }
                .await;
                if let Err(message) = outcome {
                    failures.push(format!("{kind} {types}: {message}"));
                }
            }
            console_log!("{types}: packed B on {kind}");
        }
    }
    assert!(ran > 0 && failures.is_empty(), "{ran} ran; {failures:#?}");
}

async fn run_packed<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    data: &CaseData<I, O>,
) -> coopgemm::Result<Vec<O>> {
    let a = context.upload("A", &data.a)?;
    let b = context.upload("B", &data.b)?;
    let c = context.upload("C", &data.c)?;
    let bias = match &data.bias {
        Some(values) => Some(context.upload("bias", values)?),
        None => None,
    };
    let packed = context.pack_b(gemm, &b)?;
    let mut buffers = GemmBuffers::new(&a, packed.buffer(), &c);
    buffers.bias = bias.as_ref();
    context.run(&packed.gemm(gemm), &buffers)?;
    context.download(&c, data.c.len()).await
}

#[wasm_bindgen_test]
async fn f32_guarded() {
    run_cases(GemmTypes::F32, &seeded(cases::guard_cases()), true).await;
}

#[wasm_bindgen_test]
async fn f16_guarded() {
    run_cases(GemmTypes::F16_F32, &seeded(cases::guard_cases()), true).await;
}

#[wasm_bindgen_test]
async fn bf16_guarded() {
    run_cases(GemmTypes::BF16_F32, &seeded(cases::guard_cases()), true).await;
}

/// Random GEMMs (shapes, layouts, batches, alpha, beta, epilogues), fewer than natively:
/// the browser's software GPUs are slow.
#[wasm_bindgen_test]
async fn random_cases() {
    let mut ran = 0;
    for (types, count) in [(GemmTypes::F32, 24u64)]
        .into_iter()
        .chain(cases::REDUCED_PRECISION_TYPES.map(|t| (t, 8)))
        .chain(cases::NARROW_OUTPUT_TYPES.map(|t| (t, 4)))
    {
        let cases: Vec<(Gemm, u64)> = (1..=count)
            .map(|seed| (cases::random_gemm(seed, types), seed))
            .collect();
        ran += run_cases(types, &cases, false).await;
    }
    console_log!("{ran} random cases; {}", cases::data_counts());
    assert!(ran > 0);
}

#[wasm_bindgen_test]
async fn bad_input_gets_typed_errors() {
    let context = context().await;
    let gemm = Gemm::new(4, 5, 6);
    // Host data of the wrong length.
    let error = context
        .multiply_async(&gemm, &[0.0f32; 23], &[0.0f32; 30], &[0.0f32; 20])
        .await
        .unwrap_err();
    assert_eq!(
        error,
        Error::HostDataLength {
            operand: Operand::A,
            expected: 24,
            actual: 23
        }
    );
    // A leading dimension shorter than a row, caught before anything is encoded.
    let bad = gemm.a(MatrixLayout::row_major().leading_dimension(5));
    let buffer = context.upload("buffer", &[0.0f32; 64]).unwrap();
    assert_eq!(
        context
            .run(&bad, &GemmBuffers::new(&buffer, &buffer, &buffer))
            .unwrap_err(),
        Error::LeadingDimensionTooSmall {
            operand: Operand::A,
            leading_dimension: 5,
            minimum: 6
        }
    );
    // An epilogue with a bias but no bias vector.
    let biased = gemm.bias(coopgemm::BiasAxis::PerRow);
    assert_eq!(
        context
            .multiply_async(&biased, &[0.0f32; 24], &[0.0f32; 30], &[0.0f32; 20])
            .await
            .unwrap_err(),
        Error::MissingBiasBuffer
    );
    // Reading back from a buffer that cannot be copied from.
    let no_copy = context.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("no copy"),
        size: 64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    assert_eq!(
        context.download::<f32>(&no_copy, 16).await.unwrap_err(),
        Error::MissingBufferUsage {
            operand: Operand::C,
            missing: wgpu::BufferUsages::COPY_SRC
        }
    );
    // The raw-Vulkan backend, forced where it is not built, refuses instead of falling back.
    let forced = context.with_backend(BackendChoice::Force(BackendKind::Coopmat));
    assert!(matches!(
        forced.select(&Gemm::new(8, 8, 8)),
        Err(Error::Unsupported {
            backend: BackendKind::Coopmat,
            ..
        })
    ));
}
