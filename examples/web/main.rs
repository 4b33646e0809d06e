//! The page in `examples/web/`: a verified GEMM in the browser, on its WebGPU.
//!
//! Built for wasm32 as a library the page loads (`cargo build --target
//! wasm32-unknown-unknown --example web`, then `wasm-bindgen --target web`; see the
//! "In a browser" in docs/backends.md). It exports one async function, [`run`], which the page's
//! script calls with the size and types a person picked; elsewhere it builds to nothing.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;

use coopgemm::testing::{sample_data, Reference, SampleData};
use coopgemm::{Context, Element, Gemm, GemmTypes};
use wasm_bindgen::prelude::*;

thread_local! {
    /// One context for the page (opening a device is the slow part of a first run).
    static CONTEXT: RefCell<Option<Context>> = const { RefCell::new(None) };
}

async fn context() -> Result<Context, JsError> {
    if let Some(context) = CONTEXT.with(|cell| cell.borrow().clone()) {
        return Ok(context);
    }
    let context = Context::new().await?;
    CONTEXT.with(|cell| *cell.borrow_mut() = Some(context.clone()));
    Ok(context)
}

/// Multiplies random M x K and K x N matrices of `types` (a name as `GemmTypes::parse`
/// reads it: f32, f16, bf16, ...) on the browser's GPU, twice (the first run builds the
/// pipeline; the second is timed), checks every element of C against the f64 reference,
/// and returns what happened as a JSON object: adapter (wgpu's name for it: on the web the
/// browser's description, often empty), wgpu backend, coopgemm backend, kernel,
/// milliseconds, verification.
#[wasm_bindgen]
pub async fn run(m: u32, n: u32, k: u32, types: String) -> Result<String, JsError> {
    let types =
        GemmTypes::parse(&types).ok_or_else(|| JsError::new(&format!("unknown types {types}")))?;
    let context = context().await?;
    let gemm = Gemm::new(m, n, k).types(types);
    match types {
        GemmTypes::F32 => run_typed::<f32, f32>(&context, &gemm).await,
        GemmTypes::F16_F32 => run_typed::<half::f16, f32>(&context, &gemm).await,
        GemmTypes::F16_ACC_F16 | GemmTypes::F16_F32_F16 => {
            run_typed::<half::f16, half::f16>(&context, &gemm).await
        }
        GemmTypes::BF16_F32 => run_typed::<half::bf16, f32>(&context, &gemm).await,
        GemmTypes::BF16_F32_BF16 => run_typed::<half::bf16, half::bf16>(&context, &gemm).await,
        GemmTypes::I8_I32 => run_typed::<i8, i32>(&context, &gemm).await,
        other => Err(JsError::new(&format!(
            "the page has no host types for {other}"
        ))),
    }
}

async fn run_typed<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
) -> Result<String, JsError> {
    let resolved = gemm.resolve()?;
    let plan = context.plan(gemm)?;
    let a: Vec<I> = sample_data(
        SampleData::FullMantissa,
        resolved.a.required_elements() as usize,
        1,
    );
    let b: Vec<I> = sample_data(
        SampleData::FullMantissa,
        resolved.b.required_elements() as usize,
        2,
    );
    let c = vec![O::from_f64_lossy(0.0); resolved.c.required_elements() as usize];
    context.multiply_async(gemm, &a, &b, &c).await?;
    let start = now();
    let result = context.multiply_async(gemm, &a, &b, &c).await?;
    let milliseconds = now() - start;
    let comparison = Reference::compute(&resolved, &a, &b, &c)?.compare(&result);
    let info = context.adapter_info();
    Ok(format!(
        concat!(
            "{{\"adapter\":{},\"wgpu_backend\":{},\"backend\":{},\"kernel\":{},",
            "\"types\":{},\"milliseconds\":{:.3},\"gflops\":{:.3},",
            "\"verified\":{},\"checked\":{},\"mismatches\":{},\"max_relative_error\":{:e}}}"
        ),
        json(&info.name),
        json(&format!("{:?}", info.backend)),
        json(&plan.selection.backend.to_string()),
        json(&plan.kernel.to_string()),
        json(&gemm.types.to_string()),
        milliseconds,
        2.0 * gemm.m as f64 * gemm.n as f64 * gemm.k as f64 / (milliseconds * 1e6),
        comparison.passed(),
        comparison.checked,
        comparison.mismatches,
        comparison.max_relative_error,
    ))
}

/// Milliseconds on the page's clock (`performance.now()`).
fn now() -> f64 {
    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = performance, js_name = now)]
        fn performance_now() -> f64;
    }
    performance_now()
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    let mut quoted = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            ch if (ch as u32) < 0x20 => quoted.push_str(&format!("\\u{:04x}", ch as u32)),
            ch => quoted.push(ch),
        }
    }
    quoted.push('"');
    quoted
}
