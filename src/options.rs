//! [`ContextOptions`]: every choice a [`Context`](crate::Context) makes that a caller can
//! steer. `ContextOptions::default()` is the built-in defaults and reads no environment
//! variable; `ContextOptions::from_env()` (in `env.rs`, the one place that reads coopgemm's
//! variables) applies them on top.

mod env;

use std::time::Duration;

use crate::backend::{setters, BackendKind, KernelOverrides};
use crate::disk_cache::DiskCache;

/// How [`Context::with_options`](crate::Context::with_options) finds its adapter, which
/// backends it may use and how they choose their kernels.
///
/// [`ContextOptions::default`] is the built-in defaults and reads no environment variable,
/// so an application that embeds coopgemm is not steered by its user's shell.
/// [`ContextOptions::from_env`] is the defaults with the `COOPGEMM_*` and `WGPU_*` variables
/// named on each field applied on top (what the examples, the benchmarks and the tests use),
/// and [`ContextOptions::with_env`] applies them on top of options of the caller's; a value
/// that does not parse is an [`Error::InvalidOption`](crate::Error::InvalidOption).
///
/// The struct is `#[non_exhaustive]`: start from `default()` or `from_env()` and set fields,
/// or chain the `with_*` setters.
///
/// ```
/// use coopgemm::{BackendChoice, BackendKind, ContextOptions};
/// let options = ContextOptions::default().with_backend(BackendChoice::Force(BackendKind::Simt));
/// assert!(options.enable_coopmat);
/// let mut options = ContextOptions::default();
/// options.enable_wgsl_coopmat = false;
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ContextOptions {
    /// Which wgpu backends to look at (default: all; `WGPU_BACKEND`, a comma list such as
    /// `vulkan,gl`).
    pub wgpu_backends: wgpu::Backends,
    /// Preference between integrated and discrete GPUs.
    pub power_preference: wgpu::PowerPreference,
    /// Only adapters whose name contains this text (case-insensitive), if set
    /// (`WGPU_ADAPTER_NAME`).
    pub adapter_name: Option<String>,
    /// Which backend runs GEMMs (default `Auto`; `COOPGEMM_BACKEND=simt|coopmat|wgsl-coopmat`
    /// forces one, `=auto` is the default).
    pub backend: BackendChoice,
    /// Whether to set up the Vulkan cooperative-matrix backend where the device has it.
    pub enable_coopmat: bool,
    /// Whether to set up the WGSL cooperative-matrix backend where the adapter offers wgpu's
    /// `EXPERIMENTAL_COOPERATIVE_MATRIX` (the device is then created with that feature).
    pub enable_wgsl_coopmat: bool,
    /// Whether GEMMs with few output tiles and a long K are split along K (default `Auto`;
    /// `COOPGEMM_SPLIT_K=0` or `=1` `Off`, `=N` `Slices(N)`).
    pub split_k: SplitKChoice,
    /// Whether B is first copied K-contiguous into a scratch buffer where the kernel reads
    /// it much faster that way (default `Auto`; `COOPGEMM_STAGE_B=0` `Never`, `=1`
    /// `Always`; see [`StageBChoice`]).
    pub stage_b: StageBChoice,
    /// When candidate configurations are timed (default `OnRequest`: only by
    /// [`Context::tune`](crate::Context::tune), so that no GEMM waits for it;
    /// `COOPGEMM_AUTOTUNE=0` `Off`, `=1` `OnFirstUse`; see [`AutotuneChoice`]).
    pub autotune: AutotuneChoice,
    /// How long tuning one shape class may take; candidates not reached by then are skipped
    /// (the heuristic's choice is always timed first). Default 2 s.
    pub tuning_time_limit: Duration,
    /// wgpu instance flags (debug labels, validation). The default is wgpu's build-dependent
    /// default (`InstanceFlags::from_build_config`); `from_env` adjusts it by `WGPU_DEBUG` /
    /// `WGPU_VALIDATION` (wgpu's `InstanceFlags::with_env`).
    pub instance_flags: wgpu::InstanceFlags,
    /// Where compiled pipelines and tuning winners are kept between processes (default
    /// `Default`, whose directory the context looks up in `COOPGEMM_CACHE_DIR`,
    /// `XDG_CACHE_HOME` or `HOME` when it opens the cache; `COOPGEMM_CACHE=0` `Off`).
    pub disk_cache: DiskCache,
    /// Log the driver's statistics (registers, spills, shared memory) of every pipeline
    /// where the Vulkan device has `VK_KHR_pipeline_executable_properties` (default off;
    /// `COOPGEMM_PIPELINE_STATS=1`).
    pub pipeline_statistics: bool,
    /// For testing only: run the cooperative-matrix backend's kernels with their matrix
    /// operations emulated in software on ordinary subgroups, on any Vulkan device that
    /// coopgemm opens (including one without cooperative matrices, such as Mesa lavapipe),
    /// through the same host path as on a GPU: device creation, pipelines, descriptors,
    /// barriers. Far slower than either real backend; the default selection never turns it
    /// on, and `from_env` does not read it (the test suite maps
    /// `COOPGEMM_COOPMAT_EMULATION=1` onto it).
    pub emulate_cooperative_matrix: bool,
    /// Keep the driver's robust buffer access on coopgemm's own Vulkan pipelines (the
    /// cooperative-matrix kernels). By default, on devices coopgemm opens that have
    /// `VK_EXT_pipeline_robustness`, those pipelines are built without it: wgpu enables
    /// `robustBufferAccess` for the whole device, but the kernels bound every access
    /// themselves (proven by `tests/guard.rs`, which poisons everything around each
    /// operand), so the driver's checks only cost time. Default off;
    /// `COOPGEMM_ROBUST_KERNELS=1`.
    pub robust_kernels: bool,
    /// Configurations forced per backend, for experiments and benchmarks (default none; the
    /// `COOPGEMM_*_CONFIG`/`_TILING`/`_TILE`/`_SHAPE` variables, see [`KernelOverrides`]).
    pub kernel_overrides: KernelOverrides,
}

impl Default for ContextOptions {
    /// The built-in defaults. Reads no environment variable (see
    /// [`ContextOptions::from_env`]).
    fn default() -> Self {
        ContextOptions {
            wgpu_backends: wgpu::Backends::all(),
            power_preference: wgpu::PowerPreference::HighPerformance,
            adapter_name: None,
            backend: BackendChoice::Auto,
            enable_coopmat: true,
            enable_wgsl_coopmat: true,
            split_k: SplitKChoice::Auto,
            stage_b: StageBChoice::Auto,
            autotune: AutotuneChoice::OnRequest,
            tuning_time_limit: Duration::from_secs(2),
            instance_flags: wgpu::InstanceFlags::from_build_config(),
            disk_cache: DiskCache::Default,
            pipeline_statistics: false,
            emulate_cooperative_matrix: false,
            robust_kernels: false,
            kernel_overrides: KernelOverrides::default(),
        }
    }
}

setters! { ContextOptions {
    /// Sets [`Self::wgpu_backends`].
    with_wgpu_backends: wgpu_backends: wgpu::Backends,
    /// Sets [`Self::power_preference`].
    with_power_preference: power_preference: wgpu::PowerPreference,
    /// Sets [`Self::adapter_name`].
    with_adapter_name: adapter_name: String,
    /// Sets [`Self::backend`].
    with_backend: backend: BackendChoice,
    /// Sets [`Self::enable_coopmat`].
    with_coopmat: enable_coopmat: bool,
    /// Sets [`Self::enable_wgsl_coopmat`].
    with_wgsl_coopmat: enable_wgsl_coopmat: bool,
    /// Sets [`Self::split_k`].
    with_split_k: split_k: SplitKChoice,
    /// Sets [`Self::stage_b`].
    with_stage_b: stage_b: StageBChoice,
    /// Sets [`Self::autotune`].
    with_autotune: autotune: AutotuneChoice,
    /// Sets [`Self::tuning_time_limit`].
    with_tuning_time_limit: tuning_time_limit: Duration,
    /// Sets [`Self::instance_flags`].
    with_instance_flags: instance_flags: wgpu::InstanceFlags,
    /// Sets [`Self::disk_cache`].
    with_disk_cache: disk_cache: DiskCache,
    /// Sets [`Self::pipeline_statistics`].
    with_pipeline_statistics: pipeline_statistics: bool,
    /// Sets [`Self::emulate_cooperative_matrix`].
    with_emulated_cooperative_matrix: emulate_cooperative_matrix: bool,
    /// Sets [`Self::robust_kernels`].
    with_robust_kernels: robust_kernels: bool,
    /// Sets [`Self::kernel_overrides`].
    with_kernel_overrides: kernel_overrides: KernelOverrides,
} }

/// When GEMMs are autotuned.
///
/// ```
/// use coopgemm::AutotuneChoice;
/// assert_eq!(AutotuneChoice::default(), AutotuneChoice::OnRequest);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AutotuneChoice {
    /// Tuning runs only when asked for, by [`Context::tune`](crate::Context::tune): no GEMM
    /// waits for it. Each GEMM runs with its class's winner where one is known (found by
    /// `Context::tune` in this process, or read from the disk cache), else with the
    /// backend's heuristic choice. (Called `Auto` before 0.2.)
    #[default]
    OnRequest,
    /// The first GEMM of each new shape class tunes it before running (blocking for up to
    /// the context's tuning time limit): for benchmarks and batch jobs.
    OnFirstUse,
    /// Never tune and ignore remembered winners: the backends' heuristics choose.
    Off,
}

/// Whether and how far GEMMs are split along K.
///
/// With [`ContextOptions::from_env`], `COOPGEMM_SPLIT_K=0` turns it off and
/// `COOPGEMM_SPLIT_K=N` forces `N` slices.
///
/// ```
/// use coopgemm::SplitKChoice;
/// assert_eq!(SplitKChoice::default(), SplitKChoice::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SplitKChoice {
    /// Split GEMMs whose output has too few tiles for the GPU and whose K is long (not on CPU
    /// drivers, which have few cores to fill): on the SIMT backend those of at most 128 tiles
    /// and K of 2048 or more; on the cooperative-matrix backend only those of at most 64
    /// tiles and K of 8192 or more (64 x 4096 x 14336 f16 on the H100: 308 us unsplit, 140 us
    /// in 4 slices), since elsewhere their f32 partials cost more than the idle tensor cores
    /// (measurements in `docs/benchmarks.md`); the coopmat2 kernel's few-row tiles split
    /// to fill the GPU. 8-bit GEMMs (i32 partials) split on the coopmat2 kernel only, and
    /// outside its few-row tiles only with B column-major. The WGSL cooperative-matrix
    /// backend is not split automatically.
    #[default]
    Auto,
    /// Never split.
    Off,
    /// Split every GEMM that can be split into this many slices (at least 2): unbatched
    /// GEMMs summed in f32 or i32 (their partials' types); f16 sums are never split.
    Slices(u32),
}

/// Whether a GEMM's B is staged: copied first, in the same submission, into a scratch buffer
/// in column-major order (K contiguous, each column padded to 16 bytes), the layout
/// [`Context::pack_b`](crate::Context::pack_b) gives kernels that want it.
///
/// The coopmat2 kernel reads 8-bit B several times faster K-contiguous, since NVIDIA's
/// 8-bit tensor-core loads have no transposing form (the H100 measurements, the copy
/// included, are in `docs/benchmarks.md`).
///
/// ```
/// use coopgemm::StageBChoice;
/// assert_eq!(StageBChoice::default(), StageBChoice::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StageBChoice {
    /// Stage row-major B where the chosen kernel wants B K-contiguous (coopmat2 with 8-bit
    /// inputs) and A has enough rows for the faster kernel to repay the copy (2048 rows
    /// at present, measured on the H100: `docs/benchmarks.md`). Costs a scratch buffer as
    /// large as B.
    #[default]
    Auto,
    /// Stage every row-major B (for tests: any backend runs the staged layout).
    Always,
    /// Never stage.
    Never,
}

/// How a context picks the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BackendChoice {
    /// The first backend in a fixed order that can run each GEMM: the Vulkan
    /// cooperative-matrix backend, then the WGSL one, then SIMT ([`BackendKind::ALL`]);
    /// f32 GEMMs below 64³ multiply-adds stay on SIMT. The order is not measured per device;
    /// where a context autotunes, the first GEMM of a shape class that both tensor-core
    /// backends can run times them and keeps the faster (see
    /// [`Context::select`](crate::Context::select) for the choice and why).
    #[default]
    Auto,
    /// Always this backend; a GEMM it cannot run is an error, not a fallback.
    Force(BackendKind),
}
