//! Shared test support: one context per test binary, seeded data, the GPU-vs-reference
//! check, and a logger that turns every Vulkan validation message into a test failure.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use coopgemm::testing::{sample_data, Reference, SampleData};
use coopgemm::{
    BackendChoice, BackendKind, Context, ContextOptions, DType, Element, Gemm, GemmTypes,
};

/// Messages the Vulkan validation layer reported through wgpu (warnings and errors).
static VALIDATION_ERRORS: AtomicUsize = AtomicUsize::new(0);
static FIRST_VALIDATION_ERROR: Mutex<Option<String>> = Mutex::new(None);

struct TestLogger;

/// Messages dropped as false positives of an older layer (see below).
static KNOWN_FALSE_POSITIVES: AtomicUsize = AtomicUsize::new(0);

/// With `COOPGEMM_LAYER_1_4_309=1` (the H100 runs, under the newest Khronos layer a package
/// registry has: Debian's 1.4.309), these messages are not counted, only printed. Each is
/// that layer's own limitation, not a fault of the call it names:
/// - it predates `VK_KHR_shader_bfloat16` (Vulkan headers 1.4.311+): it calls the extension
///   unknown, its feature struct (sType 1000141000) invalid, and the bf16 SPIR-V
///   capabilities (5116-5118) and `SPV_KHR_bfloat16` unsupported; the modules it then
///   refuses to parse trip the pipeline checks that depend on them;
/// - its workgroup-size and flexible-dimension checks read the kernels' specialization
///   constants at their defaults (a local size of 1, 64x64 matrices) instead of the
///   specialized values the pipelines are built with (the kernels could not compute
///   correct results at those sizes; the same tests pass without the layer);
/// - it warns that something fetches `vkGetPhysicalDeviceVideoEncodeQualityLevelPropertiesKHR`
///   with `vkGetDeviceProcAddr`: no code of coopgemm's does (it fetches only
///   `VK_KHR_pipeline_executable_properties` functions, and only when asked to).
fn is_known_layer_false_positive(message: &str) -> bool {
    if !std::env::var("COOPGEMM_LAYER_1_4_309").is_ok_and(|v| v == "1") {
        return false;
    }
    const KNOWN: [(&str, &str); 11] = [
        ("VUID-VkDeviceCreateInfo-pNext-pNext", "(1000141000)"),
        (
            "WARNING-CreateDevice-extension-not-found",
            "VK_KHR_shader_bfloat16",
        ),
        (
            "VUID-VkShaderModuleCreateInfo-pCode-08741",
            "SPV_KHR_bfloat16",
        ),
        (
            "VUID-VkShaderModuleCreateInfo-pCode-08737",
            "Invalid capability operand: 511",
        ),
        (
            "VUID-VkShaderModuleCreateInfo-pCode-08739",
            "Unhandled OpCapability",
        ),
        ("VUID-VkPipelineShaderStageCreateInfo-module-parameter", ""),
        (
            "VUID-VkPipelineShaderStageCreateInfo-pSpecializationInfo-06849",
            "",
        ),
        (
            "VUID-VkPipelineShaderStageCreateInfo-pNext-02757",
            "Local workgroup size x (1)",
        ),
        (
            "VUID-VkPipelineShaderStageCreateInfo-flags-02759",
            "X dimension (1)",
        ),
        (
            "VUID-RuntimeSpirv-cooperativeMatrixFlexibleDimensions-1016",
            "",
        ),
        (
            "WARNING-vkGetDeviceProcAddr-device",
            "VideoEncodeQualityLevel",
        ),
    ];
    KNOWN
        .iter()
        .any(|(id, text)| message.contains(id) && message.contains(text))
}

/// Whether a log record is a message of the Vulkan validation layer: wgpu-hal's debug
/// messenger (installed with `InstanceFlags::DEBUG`, which the tests keep) logs each at the
/// layer's severity as `"{message types:?} [{VUID} (0x{id})] ..."`.
fn is_validation_message(record: &log::Record<'_>, message: &str) -> bool {
    record.level() <= log::Level::Warn
        && record.target().starts_with("wgpu_hal::vulkan")
        && [
            "GENERAL",
            "VALIDATION",
            "PERFORMANCE",
            "DEVICE_ADDRESS_BINDING",
        ]
        .iter()
        .any(|kind| message.starts_with(kind))
}

impl log::Log for TestLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = record.args().to_string();
        if is_validation_message(record, &message) && is_known_layer_false_positive(&message) {
            KNOWN_FALSE_POSITIVES.fetch_add(1, Ordering::SeqCst);
            eprintln!("[ignored: known false positive of this layer version] {message}");
            return;
        }
        if is_validation_message(record, &message) {
            VALIDATION_ERRORS.fetch_add(1, Ordering::SeqCst);
            let mut first = FIRST_VALIDATION_ERROR
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            first.get_or_insert_with(|| message.clone());
        }
        eprintln!("[{} {}] {}", record.level(), record.target(), message);
    }

    fn flush(&self) {}
}

/// Context options for tests: the defaults with the environment's `COOPGEMM_*`/`WGPU_*`
/// variables ([`ContextOptions::from_env`]: CI forces tilings and backends through them; in
/// debug builds wgpu loads the validation layer where installed, and `InstanceFlags::DEBUG`
/// routes its messages to the logger above), and `COOPGEMM_COOPMAT_EMULATION=1` turns on the
/// emulated cooperative-matrix kernels (CI's lavapipe passes: the coopmat backend's host path
/// without cooperative-matrix hardware).
pub fn test_options() -> ContextOptions {
    ContextOptions::from_env()
        .expect("the COOPGEMM_* variables parse")
        .with_emulated_cooperative_matrix(emulate_coopmat())
}

/// Whether this run emulates cooperative matrices (`COOPGEMM_COOPMAT_EMULATION=1`).
pub fn emulate_coopmat() -> bool {
    std::env::var("COOPGEMM_COOPMAT_EMULATION").is_ok_and(|v| v == "1")
}

/// Validation-layer messages heard so far in this process.
pub fn validation_messages() -> usize {
    VALIDATION_ERRORS.load(Ordering::SeqCst)
}

/// The context every test in this binary shares (created once).
pub fn context() -> &'static Context {
    static CONTEXT: OnceLock<Context> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        let _ = log::set_boxed_logger(Box::new(TestLogger))
            .map(|()| log::set_max_level(log::LevelFilter::Warn));
        let context = pollster::block_on(Context::with_options(test_options()))
            .expect("a GPU or CPU Vulkan adapter (install mesa-vulkan-drivers)");
        let info = context.adapter_info();
        eprintln!("adapter: {:?} ({:?})", info.name, info.backend);
        check_expected_backend(info.backend);
        for status in context.backends() {
            eprintln!("backend {}: {:?}", status.kind, status.availability);
        }
        if expect_wgsl_coopmat() {
            let status = context.backend(BackendKind::WgslCoopmat);
            assert!(
                status.is_available(),
                "COOPGEMM_EXPECT_WGSL_COOPMAT=1 but the wgsl-coopmat backend is unavailable: {:?}",
                status.availability
            );
        }
        if expect_coopmat() {
            let status = context.backend(BackendKind::Coopmat);
            assert!(
                status.is_available(),
                "COOPGEMM_EXPECT_COOPMAT=1 but the coopmat backend is unavailable: {:?}",
                status.availability
            );
        }
        context
    })
}

/// Fails unless the context runs on the wgpu backend `WGPU_BACKEND` asks for, so that a
/// pass meant for one API cannot silently fall back to another.
pub fn check_expected_backend(backend: wgpu::Backend) {
    let Ok(wanted) = std::env::var("WGPU_BACKEND") else {
        return;
    };
    let matches = match wanted.to_lowercase().as_str() {
        "vulkan" | "vk" => backend == wgpu::Backend::Vulkan,
        "gl" | "gles" | "opengl" => backend == wgpu::Backend::Gl,
        "metal" | "mtl" => backend == wgpu::Backend::Metal,
        "dx12" | "d3d12" => backend == wgpu::Backend::Dx12,
        _ => true,
    };
    assert!(
        matches,
        "WGPU_BACKEND={wanted} but the context runs on {backend:?}"
    );
}

/// Fails if the validation layer reported anything so far.
pub fn assert_no_validation_errors() {
    let count = VALIDATION_ERRORS.load(Ordering::SeqCst);
    let first = FIRST_VALIDATION_ERROR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    assert_eq!(count, 0, "{count} validation errors; first: {first:?}");
}

/// Whether this run must exercise the coopmat backend (CI's Vulkan pass sets it, with the
/// emulated kernels).
pub fn expect_coopmat() -> bool {
    std::env::var("COOPGEMM_EXPECT_COOPMAT").is_ok_and(|v| v == "1")
}

/// Whether this run must exercise the WGSL cooperative-matrix backend (the H100 runs set
/// `COOPGEMM_EXPECT_WGSL_COOPMAT=1`; lavapipe lists no cooperative matrices).
pub fn expect_wgsl_coopmat() -> bool {
    std::env::var("COOPGEMM_EXPECT_WGSL_COOPMAT").is_ok_and(|v| v == "1")
}

/// A context handle forced onto each backend that can run `types` here, with its kind: every
/// backend of [`BackendKind::ALL`] this device has, so each test body that loops over these
/// covers a new backend without changes.
pub fn backends_for(types: GemmTypes) -> Vec<(BackendKind, Context)> {
    let probe = Gemm::new(64, 64, 64).types(types);
    BackendKind::ALL
        .into_iter()
        .map(|kind| (kind, context().with_backend(BackendChoice::Force(kind))))
        .filter(|(_, handle)| handle.select(&probe).is_ok())
        .collect()
}

/// The shared context's handle forced onto `kind`, if that backend can run `types` here
/// (`None`: the test has nothing to run on this device). Where this run expects the backend
/// for f16 (`COOPGEMM_EXPECT_COOPMAT=1` in CI's Vulkan pass, `COOPGEMM_EXPECT_WGSL_COOPMAT=1`
/// on the H100), f16 without it fails instead.
pub fn backend_for(kind: BackendKind, types: GemmTypes) -> Option<Context> {
    let handle = context().with_backend(BackendChoice::Force(kind));
    let runs = handle.select(&Gemm::new(64, 64, 64).types(types)).is_ok();
    let expected = match kind {
        BackendKind::Coopmat => expect_coopmat(),
        BackendKind::WgslCoopmat => expect_wgsl_coopmat(),
        BackendKind::Simt => true,
    };
    if expected && types == GemmTypes::F16_F32 {
        assert!(runs, "{kind} must run {types} here");
    }
    runs.then_some(handle)
}

/// Stamps each test body once per backend, like candle's `test_device!`: `fn name(kind)
/// { .. }` becomes a module `name` with the tests `name::simt`, `name::coopmat` and
/// `name::wgsl_coopmat`, each calling the body with its [`BackendKind`]. So `cargo test simt`
/// and `cargo test wgsl_coopmat` run one backend's tests, `cargo test ::coopmat` the Vulkan
/// cooperative-matrix backend's (plain `coopmat` also matches `wgsl_coopmat`), and a failure
/// names its backend.
#[allow(unused_macros)]
macro_rules! backend_tests {
    ($($(#[$meta:meta])* fn $name:ident($kind:ident) $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                fn body($kind: coopgemm::BackendKind) $body

                #[test]
                fn simt() {
                    body(coopgemm::BackendKind::Simt)
                }

                #[test]
                fn coopmat() {
                    body(coopgemm::BackendKind::Coopmat)
                }

                #[test]
                fn wgsl_coopmat() {
                    body(coopgemm::BackendKind::WgslCoopmat)
                }
            }
        )*
    };
}
#[allow(unused_imports)]
pub(crate) use backend_tests;

/// Reproducible pseudo-random numbers (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [low, high].
    pub fn range(&mut self, low: u32, high: u32) -> u32 {
        low + (self.next_u64() % (high - low + 1) as u64) as u32
    }

    /// Values for an operand of type T: full-precision uniform [-1, 1) for f32; for narrow
    /// types, values whose products are exact in the type (multiples of 1/16 in [-1, 1) for
    /// f16/bf16, integers in [-8, 8) for i8), so only the summation can round.
    pub fn values<T: Element>(&mut self, count: usize) -> Vec<T> {
        (0..count)
            .map(|_| {
                let unit = self.unit();
                let value = match T::DTYPE {
                    DType::F32 => unit * 2.0 - 1.0,
                    DType::I8 | DType::I32 => (unit * 16.0).floor() - 8.0,
                    DType::F16 | DType::BF16 => ((unit * 32.0).floor() - 16.0) / 16.0,
                };
                T::from_f64_lossy(value)
            })
            .collect()
    }
}

/// Runs `gemm` on `context` with seeded data (C pre-filled with NaN when beta is 0, to prove
/// it is not read) and checks the whole C array against the reference. Returns a message
/// naming the case on failure.
pub fn check<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<(), String> {
    check_with::<I, O>(context, gemm, seed, None)
}

/// Elements after the end of each operand in [`check_guarded`].
pub const GUARD_ELEMENTS: usize = 97;

/// [`check`] with every element of A and B that is not part of the operand matrices
/// poisoned -- the gaps between rows (leading dimension > row length), between batches, in
/// front of the offset and a tail of [`GUARD_ELEMENTS`] after the end -- with NaN (floats)
/// or 127 (integers), and a tail after C. A kernel that reads anything outside its operands
/// and uses it gets a wrong result; one that writes outside C's matrices changes elements
/// the comparison requires unchanged. With robust buffer access turned off (the coopmat
/// backend's default) this is what proves the kernels' own bounds checks.
pub fn check_guarded<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<(), String> {
    check_with::<I, O>(context, gemm, seed, Some(GUARD_ELEMENTS))
}

/// `values` with every element that `layout` does not cover poisoned.
fn poison_outside<T: Element>(
    values: &mut [T],
    layout: &coopgemm::testing::ResolvedMatrix,
    batch: u32,
    rows: u32,
    cols: u32,
) {
    let poison = T::from_f64_lossy(if T::DTYPE.is_integer() {
        127.0
    } else {
        f64::NAN
    });
    let mut inside = vec![false; values.len()];
    for b in 0..batch {
        for row in 0..rows {
            for col in 0..cols {
                inside[layout.index(b, row, col) as usize] = true;
            }
        }
    }
    for (value, inside) in values.iter_mut().zip(inside) {
        if !inside {
            *value = poison;
        }
    }
}

fn check_with<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
    guard: Option<usize>,
) -> Result<(), String> {
    let data = data_for(gemm.types, seed);
    let describe = || {
        format!(
            "seed {seed}, {} data{}, {gemm:?}",
            data.name(),
            if guard.is_some() { ", guarded" } else { "" }
        )
    };
    let resolved = gemm
        .resolve()
        .map_err(|e| format!("{}: resolve: {e}", describe()))?;
    let mut rng = Rng::new(seed);
    count_data(data);
    let tail = guard.unwrap_or(0);
    let mut a: Vec<I> = sample_data(
        data,
        resolved.a.required_elements().max(1) as usize + tail,
        seed,
    );
    let mut b: Vec<I> = sample_data(
        data,
        resolved.b.required_elements().max(1) as usize + tail,
        seed ^ 0x5555,
    );
    if guard.is_some() {
        poison_outside(&mut a, &resolved.a, gemm.batch, gemm.m, gemm.k);
        poison_outside(&mut b, &resolved.b, gemm.batch, gemm.k, gemm.n);
    }
    let mut c: Vec<O> = rng.values(resolved.c.required_elements().max(1) as usize + tail);
    if gemm.beta == 0.0 && !O::DTYPE.is_integer() {
        // Elements of the GEMM must not be read; the rest must survive untouched.
        for batch in 0..gemm.batch {
            for row in 0..gemm.m {
                for col in 0..gemm.n {
                    c[resolved.c.index(batch, row, col) as usize] = O::from_f64_lossy(f64::NAN);
                }
            }
        }
    }
    // Bias values in [-1, 1), one past the end of what the epilogue reads.
    let bias: Option<Vec<f32>> = resolved
        .bias
        .map(|bias| rng.values(bias.end_index().max(1) as usize));
    let result = context
        .multiply_with_bias(gemm, &a, &b, &c, bias.as_deref())
        .map_err(|e| format!("{}: {e}", describe()))?;
    let reference = Reference::compute_with_bias(&resolved, &a, &b, &c, bias.as_deref())
        .map_err(|e| format!("{}: reference: {e}", describe()))?;
    let comparison = reference.compare(&result);
    if comparison.passed() {
        Ok(())
    } else {
        Err(format!(
            "{}: {} of {} elements wrong; first (index, got, expected, tolerance) = {:?}",
            describe(),
            comparison.mismatches,
            comparison.checked,
            comparison.first_mismatch
        ))
    }
}

/// The data a case checks with, by seed: half the cases exact-product data (sharp on
/// summation and layouts), half full-mantissa data (sharp on products or sums rounded too
/// early), and of those every fourth large-magnitude data where C is f32 and the inputs
/// are floats (f16 products that overflow f16 but not f32).
pub fn data_for(types: GemmTypes, seed: u64) -> SampleData {
    if seed.is_multiple_of(2) {
        SampleData::ExactProducts
    } else if seed % 8 == 7 && types.output == DType::F32 && !types.input.is_integer() {
        SampleData::LargeMagnitude
    } else {
        SampleData::FullMantissa
    }
}

static DATA_COUNTS: Mutex<[usize; 3]> = Mutex::new([0; 3]);

fn count_data(data: SampleData) {
    let index = SampleData::ALL.iter().position(|d| *d == data).unwrap_or(0);
    DATA_COUNTS.lock().unwrap_or_else(|e| e.into_inner())[index] += 1;
}

/// Prints how many checked cases used each kind of data (CI shows these lines).
pub fn report_data_counts() {
    let counts = *DATA_COUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let parts: Vec<String> = SampleData::ALL
        .iter()
        .zip(counts)
        .map(|(data, count)| format!("{count} {}", data.name()))
        .collect();
    eprintln!("data of the cases checked so far: {}", parts.join(", "));
}

/// [`check`] with the host types that match `gemm.types`.
pub fn check_any(context: &Context, gemm: &Gemm, seed: u64) -> Result<(), String> {
    check_any_with(context, gemm, seed, None)
}

/// [`check_guarded`] with the host types that match `gemm.types`.
pub fn check_any_guarded(context: &Context, gemm: &Gemm, seed: u64) -> Result<(), String> {
    check_any_with(context, gemm, seed, Some(GUARD_ELEMENTS))
}

fn check_any_with(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
    guard: Option<usize>,
) -> Result<(), String> {
    let (c, g, s) = (context, gemm, seed);
    match gemm.types {
        GemmTypes::F32 => check_with::<f32, f32>(c, g, s, guard),
        GemmTypes::F16_F32 => check_with::<half::f16, f32>(c, g, s, guard),
        GemmTypes::F16_ACC_F16 => check_with::<half::f16, half::f16>(c, g, s, guard),
        GemmTypes::BF16_F32 => check_with::<half::bf16, f32>(c, g, s, guard),
        GemmTypes::I8_I32 => check_with::<i8, i32>(c, g, s, guard),
        GemmTypes::F16_F32_F16 => check_with::<half::f16, half::f16>(c, g, s, guard),
        GemmTypes::BF16_F32_BF16 => check_with::<half::bf16, half::bf16>(c, g, s, guard),
        GemmTypes::F32_F32_F16 => check_with::<f32, half::f16>(c, g, s, guard),
        GemmTypes::F32_F32_BF16 => check_with::<f32, half::bf16>(c, g, s, guard),
        other => Err(format!("no host types for {other}")),
    }
}

/// Installs the logger that counts validation errors, for binaries that build contexts of
/// their own instead of [`context`] (harmless if a logger is already installed).
pub fn install_logger() {
    let _ = log::set_boxed_logger(Box::new(TestLogger))
        .map(|()| log::set_max_level(log::LevelFilter::Warn));
}

/// Ends a test that ran `ran` cases and collected `failures`: at least one case must have
/// run, and [`assert_none_failed`].
pub fn assert_all_passed(ran: usize, failures: &[String]) {
    assert!(ran > 0, "no case ran");
    assert_none_failed(failures);
}

/// Fails with every collected failure listed, or if the validation layer reported anything.
/// For tests whose types may have no backend on this machine (zero cases is then right).
pub fn assert_none_failed(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_no_validation_errors();
}
