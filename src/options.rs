//! [`ContextOptions`]: every choice a [`Context`](crate::Context) makes that a caller can
//! steer, and the one place that reads coopgemm's environment variables.
//!
//! Precedence: a field set explicitly > the environment variable named in its docs > the
//! built-in default. The environment is read when `ContextOptions::default()` runs (so
//! `Context::new` honours it, and tests set fields per context instead);
//! `ContextOptions::without_environment()` ignores it.

use std::time::Duration;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::backend::kind::BackendKind;

/// How [`Context::with_options`](crate::Context::with_options) finds its adapter, which
/// backends it may use and how they choose their kernels.
///
/// Every knob that exists as an environment variable is a field here, and
/// [`ContextOptions::default`] is the only place that reads those variables (once, when it
/// is called): a field set explicitly wins over the environment, which wins over the
/// built-in default. [`ContextOptions::without_environment`] gives the built-in defaults
/// alone, for tests and tools that must not be steered by the caller's shell.
///
/// ```
/// use coopgemm::{BackendChoice, BackendKind, ContextOptions};
/// let options = ContextOptions { backend: BackendChoice::Force(BackendKind::Simt), ..Default::default() };
/// assert!(options.enable_coopmat);
/// ```
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// Which wgpu backends to look at (default: `WGPU_BACKEND`, else all).
    pub wgpu_backends: wgpu::Backends,
    /// Preference between integrated and discrete GPUs.
    pub power_preference: wgpu::PowerPreference,
    /// Only adapters whose name contains this text (case-insensitive), if set (default:
    /// `WGPU_ADAPTER_NAME`).
    pub adapter_name: Option<String>,
    /// Which backend runs GEMMs (default: `COOPGEMM_BACKEND=simt|coopmat|wgsl-coopmat`
    /// forces one, else `Auto`).
    pub backend: BackendChoice,
    /// Whether to set up the Vulkan cooperative-matrix backend where the device has it.
    pub enable_coopmat: bool,
    /// Whether to set up the WGSL cooperative-matrix backend where the adapter offers wgpu's
    /// `EXPERIMENTAL_COOPERATIVE_MATRIX` (the device is then created with that feature).
    pub enable_wgsl_coopmat: bool,
    /// Whether GEMMs with few output tiles and a long K are split along K (default:
    /// `COOPGEMM_SPLIT_K=0` `Off`, `=N` `Slices(N)`, else `Auto`).
    pub split_k: SplitKChoice,
    /// Whether B is first copied K-contiguous into a scratch buffer where the kernel reads
    /// it much faster that way (default: `COOPGEMM_STAGE_B=0` `Never`, `=1` `Always`, else
    /// `Auto`; see [`StageBChoice`]).
    pub stage_b: StageBChoice,
    /// When candidate configurations are timed: `Auto`, only on request
    /// ([`Context::tune`](crate::Context::tune)), so that no GEMM waits for it (default:
    /// `COOPGEMM_AUTOTUNE=0` `Off`, `=1` `OnFirstUse`, else `Auto`; see [`AutotuneChoice`]).
    pub autotune: AutotuneChoice,
    /// How long tuning one shape class may take; candidates not reached by then are skipped
    /// (the heuristic's choice is always timed first). Default 2 s.
    pub tuning_time_limit: Duration,
    /// wgpu instance flags (debug labels, validation). The default is wgpu's build-dependent
    /// default adjusted by `WGPU_DEBUG` / `WGPU_VALIDATION`.
    pub instance_flags: wgpu::InstanceFlags,
    /// Where compiled pipelines and tuning winners are kept between processes (default:
    /// `COOPGEMM_CACHE=0` `Off`, else `Default`, which resolves `COOPGEMM_CACHE_DIR`,
    /// `XDG_CACHE_HOME` or `HOME`).
    pub disk_cache: DiskCache,
    /// Log the driver's statistics (registers, spills, shared memory) of every pipeline
    /// where the Vulkan device has `VK_KHR_pipeline_executable_properties`
    /// (default: `COOPGEMM_PIPELINE_STATS=1`).
    pub pipeline_statistics: bool,
    /// For testing only: run the cooperative-matrix backend's kernels with their matrix
    /// operations emulated in software on ordinary subgroups, on any Vulkan device that
    /// coopgemm opens (including one without cooperative matrices, such as Mesa lavapipe),
    /// through the same host path as on a GPU: device creation, pipelines, descriptors,
    /// barriers. Far slower than either real backend; the default selection never turns it
    /// on, and nothing reads it from the environment (the test suite maps
    /// `COOPGEMM_COOPMAT_EMULATION=1` onto it).
    pub emulate_cooperative_matrix: bool,
    /// Keep the driver's robust buffer access on coopgemm's own Vulkan pipelines (the
    /// cooperative-matrix kernels). By default, on devices coopgemm opens that have
    /// `VK_EXT_pipeline_robustness`, those pipelines are built without it: wgpu enables
    /// `robustBufferAccess` for the whole device, but the kernels bound every access
    /// themselves (proven by `tests/guard.rs`, which poisons everything around each
    /// operand), so the driver's checks only cost time. Default:
    /// `COOPGEMM_ROBUST_KERNELS=1`.
    pub robust_kernels: bool,
    /// Configurations forced per backend, for experiments and benchmarks (default: the
    /// `COOPGEMM_*_CONFIG`/`_TILING`/`_TILE`/`_SHAPE` variables, see [`KernelOverrides`]).
    pub kernel_overrides: KernelOverrides,
}

impl Default for ContextOptions {
    /// The built-in defaults, with whatever the environment variables named on each field
    /// set.
    fn default() -> Self {
        ContextOptions::from_environment(&|name| std::env::var(name).ok())
    }
}

impl ContextOptions {
    /// The built-in defaults, ignoring every environment variable (wgpu's own
    /// `WGPU_DEBUG`/`WGPU_VALIDATION` in `instance_flags` aside).
    pub fn without_environment() -> ContextOptions {
        ContextOptions::from_environment(&|_| None)
    }

    /// The defaults with the variables that `var` reads.
    fn from_environment(var: &dyn Fn(&str) -> Option<String>) -> ContextOptions {
        let flag = |name: &str| var(name).as_deref() == Some("1");
        ContextOptions {
            wgpu_backends: var("WGPU_BACKEND").map_or(wgpu::Backends::all(), |list| {
                wgpu::Backends::from_comma_list(&list)
            }),
            power_preference: wgpu::PowerPreference::HighPerformance,
            adapter_name: var("WGPU_ADAPTER_NAME"),
            backend: match var("COOPGEMM_BACKEND").as_deref() {
                None | Some("auto") => BackendChoice::Auto,
                Some(name) => match BackendKind::parse(name) {
                    Some(kind) => BackendChoice::Force(kind),
                    None => {
                        log::warn!("COOPGEMM_BACKEND={name} is not simt, coopmat, wgsl-coopmat or auto; ignoring it");
                        BackendChoice::Auto
                    }
                },
            },
            enable_coopmat: true,
            enable_wgsl_coopmat: true,
            split_k: match var("COOPGEMM_SPLIT_K").map(|v| v.parse::<u32>()) {
                None => SplitKChoice::Auto,
                Some(Ok(0 | 1)) => SplitKChoice::Off,
                Some(Ok(slices)) => SplitKChoice::Slices(slices),
                Some(Err(_)) => {
                    log::warn!("COOPGEMM_SPLIT_K must be a number of slices; ignoring it");
                    SplitKChoice::Auto
                }
            },
            stage_b: match var("COOPGEMM_STAGE_B").as_deref() {
                Some("0") => StageBChoice::Never,
                Some("1") => StageBChoice::Always,
                _ => StageBChoice::Auto,
            },
            autotune: match var("COOPGEMM_AUTOTUNE").as_deref() {
                Some("0") => AutotuneChoice::Off,
                Some("1") => AutotuneChoice::OnFirstUse,
                _ => AutotuneChoice::Auto,
            },
            tuning_time_limit: Duration::from_secs(2),
            instance_flags: wgpu::InstanceFlags::from_build_config().with_env(),
            disk_cache: if var("COOPGEMM_CACHE").as_deref() == Some("0") {
                DiskCache::Off
            } else {
                DiskCache::Default
            },
            pipeline_statistics: flag("COOPGEMM_PIPELINE_STATS"),
            emulate_cooperative_matrix: false,
            robust_kernels: flag("COOPGEMM_ROBUST_KERNELS"),
            kernel_overrides: KernelOverrides {
                simt_config: var("COOPGEMM_SIMT_CONFIG"),
                simt_vector_loads: match var("COOPGEMM_SIMT_VECTOR_LOADS").as_deref() {
                    None => None,
                    Some("0") => Some(false),
                    Some("1") => Some(true),
                    Some(other) => {
                        log::warn!(
                            "COOPGEMM_SIMT_VECTOR_LOADS={other} is neither 0 nor 1; ignoring it"
                        );
                        None
                    }
                },
                coopmat2: var("COOPGEMM_COOPMAT2").as_deref() != Some("0"),
                coopmat_shape: var("COOPGEMM_COOPMAT_SHAPE"),
                coopmat_tiling: var("COOPGEMM_COOPMAT_TILING"),
                coopmat2_tile: var("COOPGEMM_COOPMAT2_TILE"),
                wgsl_coopmat_config: var("COOPGEMM_WGSL_COOPMAT_CONFIG"),
                wgsl_coopmat_checked: flag("COOPGEMM_WGSL_COOPMAT_CHECKS"),
            },
        }
    }
}

/// Configurations forced per backend (names as in logs and benchmark records). A name that
/// does not parse, or fits no GEMM, is reported in the log and ignored; a forced
/// configuration is tried first and the backend falls back to its own choice where it cannot
/// run a GEMM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelOverrides {
    /// A SIMT configuration, e.g. `128x128x8-t8x8` (`COOPGEMM_SIMT_CONFIG`).
    pub simt_config: Option<String>,
    /// Whether the SIMT kernel loads aligned A and B as vectors (`COOPGEMM_SIMT_VECTOR_LOADS`;
    /// `None`: on GPUs yes, on CPU drivers no).
    pub simt_vector_loads: Option<bool>,
    /// Whether the `VK_NV_cooperative_matrix2` kernel may run (`COOPGEMM_COOPMAT2=0` keeps
    /// f16/bf16 on the `VK_KHR_cooperative_matrix` kernel).
    pub coopmat2: bool,
    /// Only this cooperative-matrix shape `MxNxK` from the device's list
    /// (`COOPGEMM_COOPMAT_SHAPE`).
    pub coopmat_shape: Option<String>,
    /// The KHR kernel's tiling `SG_ROWSxSG_COLSxTILES_MxTILES_NxK_STEPS[xPREFETCH_STAGES]`,
    /// e.g. `2x4x4x2x1` or `2x4x4x2x1x2` (`COOPGEMM_COOPMAT_TILING`).
    pub coopmat_tiling: Option<String>,
    /// The coopmat2 kernel's workgroup tile `BMxBNxBK` or `BMxBNxBKxUNROLL`
    /// (`COOPGEMM_COOPMAT2_TILE`).
    pub coopmat2_tile: Option<String>,
    /// A wgsl-coopmat configuration, e.g. `c16-128x128x32-w4x2`
    /// (`COOPGEMM_WGSL_COOPMAT_CONFIG`).
    pub wgsl_coopmat_config: Option<String>,
    /// Build the wgsl-coopmat kernel with wgpu's runtime checks (`COOPGEMM_WGSL_COOPMAT_CHECKS=1`).
    /// By default it is built without them, like the SIMT kernel: its indices are in bounds
    /// by construction (`tests/guard.rs` checks it), and the checks halve its speed on a GPU
    /// (`docs/benchmarks.md`).
    pub wgsl_coopmat_checked: bool,
}

impl Default for KernelOverrides {
    fn default() -> Self {
        KernelOverrides {
            simt_config: None,
            simt_vector_loads: None,
            coopmat2: true,
            coopmat_shape: None,
            coopmat_tiling: None,
            coopmat2_tile: None,
            wgsl_coopmat_config: None,
            wgsl_coopmat_checked: false,
        }
    }
}

/// An environment variable that is not an option but a location: where
/// [`DiskCache::Default`] puts its files (`COOPGEMM_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME`).
pub(crate) fn location_variable(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> ContextOptions {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ContextOptions::from_environment(&move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn directory_follows_the_documented_order() {
        fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        }
        let all = [
            ("COOPGEMM_CACHE_DIR", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        let default = DiskCache::Default;
        assert_eq!(resolve_directory(&default, env(&all)), Some("/c".into()));
        assert_eq!(
            resolve_directory(&default, env(&all[1..])),
            Some("/x/coopgemm".into())
        );
        assert_eq!(
            resolve_directory(&default, env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])),
            Some("/h/.cache/coopgemm".into())
        );
        assert_eq!(resolve_directory(&default, env(&[])), None);
        let dir = DiskCache::Dir("/mine".into());
        assert_eq!(resolve_directory(&dir, env(&all)), Some("/mine".into()));
        assert_eq!(resolve_directory(&DiskCache::Off, env(&all)), None);
    }

    /// Each variable sets the default of its field; without any, the built-in defaults.
    #[test]
    fn variables_set_the_defaults_of_their_fields() {
        let builtin = with(&[]);
        assert_eq!(builtin.backend, BackendChoice::Auto);
        assert_eq!(builtin.split_k, SplitKChoice::Auto);
        assert_eq!(builtin.stage_b, StageBChoice::Auto);
        assert_eq!(builtin.autotune, AutotuneChoice::Auto);
        assert_eq!(builtin.disk_cache, DiskCache::Default);
        assert_eq!(builtin.kernel_overrides, KernelOverrides::default());
        assert!(!builtin.pipeline_statistics && !builtin.robust_kernels);
        assert_eq!(builtin.wgpu_backends, wgpu::Backends::all());

        let set = with(&[
            ("COOPGEMM_BACKEND", "simt"),
            ("COOPGEMM_SPLIT_K", "4"),
            ("COOPGEMM_AUTOTUNE", "1"),
            ("COOPGEMM_CACHE", "0"),
            ("COOPGEMM_PIPELINE_STATS", "1"),
            ("COOPGEMM_ROBUST_KERNELS", "1"),
            ("COOPGEMM_COOPMAT2", "0"),
            ("COOPGEMM_COOPMAT2_TILE", "128x256x32x8"),
            ("COOPGEMM_SIMT_VECTOR_LOADS", "0"),
            ("COOPGEMM_STAGE_B", "1"),
            ("WGPU_BACKEND", "gl"),
            ("WGPU_ADAPTER_NAME", "llvmpipe"),
        ]);
        assert_eq!(set.backend, BackendChoice::Force(BackendKind::Simt));
        assert_eq!(set.split_k, SplitKChoice::Slices(4));
        assert_eq!(set.stage_b, StageBChoice::Always);
        assert_eq!(set.autotune, AutotuneChoice::OnFirstUse);
        assert_eq!(set.disk_cache, DiskCache::Off);
        assert!(set.pipeline_statistics && set.robust_kernels);
        assert!(!set.kernel_overrides.coopmat2);
        assert_eq!(
            set.kernel_overrides.coopmat2_tile.as_deref(),
            Some("128x256x32x8")
        );
        assert_eq!(set.kernel_overrides.simt_vector_loads, Some(false));
        assert_eq!(set.wgpu_backends, wgpu::Backends::GL);
        assert_eq!(set.adapter_name.as_deref(), Some("llvmpipe"));

        // Values that mean nothing fall back to the built-in default.
        let bad = with(&[
            ("COOPGEMM_BACKEND", "cuda"),
            ("COOPGEMM_SPLIT_K", "many"),
            ("COOPGEMM_SIMT_VECTOR_LOADS", "yes"),
        ]);
        assert_eq!(bad.backend, BackendChoice::Auto);
        assert_eq!(bad.split_k, SplitKChoice::Auto);
        assert_eq!(bad.kernel_overrides.simt_vector_loads, None);
        assert_eq!(
            with(&[("COOPGEMM_SPLIT_K", "1")]).split_k,
            SplitKChoice::Off
        );
        assert_eq!(
            with(&[("COOPGEMM_AUTOTUNE", "0")]).autotune,
            AutotuneChoice::Off
        );
        assert_eq!(
            with(&[("COOPGEMM_STAGE_B", "0")]).stage_b,
            StageBChoice::Never
        );
    }
}

/// When GEMMs are autotuned.
///
/// ```
/// use coopgemm::AutotuneChoice;
/// assert_eq!(AutotuneChoice::default(), AutotuneChoice::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutotuneChoice {
    /// No GEMM waits for tuning: each runs with its class's winner where one is known (found
    /// by [`Context::tune`](crate::Context::tune) in this process, or read from the disk
    /// cache), else with the backend's heuristic choice. `COOPGEMM_AUTOTUNE=0|1` overrides
    /// it (as `Off` / `OnFirstUse`).
    #[default]
    Auto,
    /// The first GEMM of each new shape class tunes it before running (blocking for up to
    /// the context's tuning time limit): for benchmarks and batch jobs.
    OnFirstUse,
    /// Never tune and ignore remembered winners: the backends' heuristics choose.
    Off,
}

/// Whether and how far GEMMs are split along K.
///
/// `COOPGEMM_SPLIT_K=0` in the environment turns it off, `COOPGEMM_SPLIT_K=N` forces `N`
/// slices; both override [`SplitKChoice::Auto`] only.
///
/// ```
/// use coopgemm::SplitKChoice;
/// assert_eq!(SplitKChoice::default(), SplitKChoice::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitKChoice {
    /// Split GEMMs whose output has too few tiles for the GPU and whose K is long, on the
    /// SIMT backend (not on CPU drivers, which have few cores to fill). The cooperative-matrix
    /// kernels are not split automatically: their f32 partials cost more than the idle
    /// tensor cores (`docs/benchmarks.md`).
    #[default]
    Auto,
    /// Never split.
    Off,
    /// Split every GEMM that can be split into this many slices (at least 2).
    Slices(u32),
}

/// Whether a GEMM's B is staged: copied first, in the same submission, into a scratch buffer
/// in column-major order (K contiguous, each column padded to 16 bytes), the layout
/// [`Context::pack_b`](crate::Context::pack_b) gives kernels that want it.
///
/// The coopmat2 kernel reads 8-bit B faster K-contiguous, since NVIDIA's
/// 8-bit tensor-core loads have no transposing form; under `Auto` staging repays its copy
/// from 2048 rows of A (`docs/benchmarks.md` has the measurements).
///
/// ```
/// use coopgemm::StageBChoice;
/// assert_eq!(StageBChoice::default(), StageBChoice::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StageBChoice {
    /// Stage row-major B where the chosen kernel wants B K-contiguous (coopmat2 with 8-bit
    /// inputs) and A has enough rows for the faster kernel to repay the copy
    /// ([`STAGE_B_MIN_ROWS`](crate::STAGE_B_MIN_ROWS)). Costs a scratch buffer as large as
    /// B.
    #[default]
    Auto,
    /// Stage every row-major B (for tests: any backend runs the staged layout).
    Always,
    /// Never stage.
    Never,
}

/// How a context picks the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The fastest backend that can run each GEMM.
    #[default]
    Auto,
    /// Always this backend; a GEMM it cannot run is an error, not a fallback.
    Force(BackendKind),
}

/// Where [`Context`](crate::Context) keeps compiled pipelines between processes
/// ([`ContextOptions::disk_cache`](crate::ContextOptions::disk_cache)).
///
/// `COOPGEMM_CACHE=0` in the environment makes `Off` the default of
/// [`ContextOptions::disk_cache`](crate::ContextOptions::disk_cache).
///
/// ```
/// use coopgemm::{ContextOptions, DiskCache};
/// // Tests and tools that want a cache of their own:
/// let dir = std::env::temp_dir().join("my-coopgemm-cache");
/// let options = ContextOptions { disk_cache: DiskCache::Dir(dir.clone()), ..Default::default() };
/// assert_eq!(options.disk_cache.directory(), Some(dir));
/// assert_eq!(DiskCache::Off.directory(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DiskCache {
    /// `$COOPGEMM_CACHE_DIR`, else `$XDG_CACHE_HOME/coopgemm`, else `$HOME/.cache/coopgemm`.
    #[default]
    Default,
    /// This directory (created when the first cache is written).
    Dir(PathBuf),
    /// No persisted cache: every process builds its pipelines from scratch.
    Off,
}

impl DiskCache {
    /// The directory cache files go to, or `None` when the cache is off (this variant, or
    /// no variable names a default location).
    pub fn directory(&self) -> Option<PathBuf> {
        resolve_directory(self, location_variable)
    }
}

/// [`DiskCache::directory`] with the environment read through `var`.
fn resolve_directory(
    setting: &DiskCache,
    var: impl Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let non_empty = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    match setting {
        DiskCache::Off => None,
        DiskCache::Dir(dir) => Some(dir.clone()),
        DiskCache::Default => non_empty("COOPGEMM_CACHE_DIR")
            .or_else(|| non_empty("XDG_CACHE_HOME").map(|dir| dir.join("coopgemm")))
            .or_else(|| non_empty("HOME").map(|dir| dir.join(".cache").join("coopgemm"))),
    }
}
