//! Shared test support: one context per test binary, seeded data, the GPU-vs-reference
//! check, and a logger that turns every Vulkan validation message into a test failure.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use coopgemm::{BackendChoice, BackendKind, Context, ContextOptions, Element, Gemm, GemmTypes};

pub mod cases;

use cases::CaseData;

/// Messages the Vulkan validation layer reported through wgpu (warnings and errors).
static VALIDATION_ERRORS: AtomicUsize = AtomicUsize::new(0);
static FIRST_VALIDATION_ERROR: Mutex<Option<String>> = Mutex::new(None);

struct TestLogger;

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
        if is_validation_message(record, &message) {
            VALIDATION_ERRORS.fetch_add(1, Ordering::SeqCst);
            let mut first = FIRST_VALIDATION_ERROR
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            first.get_or_insert_with(|| message.clone());
            // Where the message comes from: the layer reports inside the Vulkan call that
            // causes it, on the calling thread, so this stack names the caller.
            if std::env::var("COOPGEMM_VALIDATION_BACKTRACE").is_ok_and(|v| v == "1") {
                eprintln!(
                    "validation message raised here:\n{}",
                    std::backtrace::Backtrace::force_capture()
                );
            }
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

/// Whether GEMMs of up to 32 rows plan the coopmat backend's skinny kernel in this run
/// (those the coopmat2 kernel's few-row tile takes aside, see tests/skinny.rs): unless the
/// environment forces a tile or tiling of the other kernels (which then run wherever they
/// fit) or fewer rows (`COOPGEMM_SKINNY_ROWS`).
pub fn skinny_expected() -> bool {
    let overrides = test_options().kernel_overrides;
    overrides.skinny_rows.is_none_or(|rows| rows >= 32)
        && overrides.coopmat_tiling.is_none()
        && overrides.coopmat2_tile.is_none()
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

/// Runs `gemm` on `context` with seeded data (C pre-filled with NaN when beta is 0, to prove
/// it is not read) and checks the whole C array against the reference. Returns a message
/// naming the case on failure.
pub fn check<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<(), String> {
    run_and_verify(context, &CaseData::<I, O>::new(gemm, seed)?, gemm)
}

/// [`check`] with the operands' surroundings poisoned ([`CaseData::guarded`]). With robust
/// buffer access turned off (the coopmat backend's default) this is what proves the
/// kernels' own bounds checks.
pub fn check_guarded<I: Element, O: Element>(
    context: &Context,
    gemm: &Gemm,
    seed: u64,
) -> Result<(), String> {
    run_and_verify(context, &CaseData::<I, O>::guarded(gemm, seed)?, gemm)
}

fn run_and_verify<I: Element, O: Element>(
    context: &Context,
    data: &CaseData<I, O>,
    gemm: &Gemm,
) -> Result<(), String> {
    data.verify(context.multiply_with_bias(gemm, &data.a, &data.b, &data.c, data.bias.as_deref()))
}

/// Prints how many checked cases used each kind of data (CI shows these lines).
pub fn report_data_counts() {
    eprintln!("{}", cases::data_counts());
}

/// [`check`] with the host types that match `gemm.types`.
pub fn check_any(context: &Context, gemm: &Gemm, seed: u64) -> Result<(), String> {
    cases::with_host_types!(gemm.types, |I, O| check::<I, O>(context, gemm, seed))
}

/// [`check_guarded`] with the host types that match `gemm.types`.
pub fn check_any_guarded(context: &Context, gemm: &Gemm, seed: u64) -> Result<(), String> {
    cases::with_host_types!(gemm.types, |I, O| check_guarded::<I, O>(
        context, gemm, seed
    ))
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
