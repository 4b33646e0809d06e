//! [`Context`]: a device, its queue and the backends that run GEMMs on it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::autotune::Tuner;
use crate::backend::coopmat::CoopmatBackend;
use crate::backend::simt::SimtBackend;
use crate::backend::wgsl_coopmat::{self, WgslCoopBackend};
use crate::backend::{Backend, BackendKind, KernelInfo, Target};
use crate::bindings::GemmBuffers;
use crate::error::{Error, Result};
pub use crate::options::ContextOptions;
use crate::options::{BackendChoice, SplitKChoice};
use crate::packing::PackKernel;
use crate::problem::{Gemm, ResolvedGemm};
use crate::selection::{Selection, SelectionPolicy};
use crate::split_k::{SplitK, SplitKernels};
use crate::timing::{self, GpuTimer};
use crate::vulkan;
use crate::vulkan::device::EnabledFeatures;

/// Whether a backend can be used on this context's device, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendStatus {
    /// The backend.
    pub kind: BackendKind,
    /// `Ok(description)` when available, `Err(reason)` when not.
    pub availability: std::result::Result<String, String>,
}

/// A GEMM recorded into command buffers of its own, ready for `Queue::submit`.
#[derive(Debug)]
pub struct RecordedGemm {
    /// Submit these, in order, on the context's queue.
    pub command_buffers: Vec<wgpu::CommandBuffer>,
    /// The backend and kernel configuration that were used.
    pub kernel: KernelInfo,
}

/// A submitted GEMM.
#[derive(Debug, Clone)]
pub struct SubmittedGemm {
    /// The submission; `device.poll(PollType::Wait { submission_index: Some(..), .. })` waits for it.
    pub submission: wgpu::SubmissionIndex,
    /// The backend and kernel configuration that were used.
    pub kernel: KernelInfo,
}

/// A wgpu device and queue with coopgemm's backends on top.
///
/// `Context` is `Send + Sync`; share it between threads by reference or in an `Arc`.
///
/// ```no_run
/// use coopgemm::{Context, Gemm};
/// let context = Context::new_blocking()?;
/// println!("{}", context.adapter_info().name);
/// let gemm = Gemm::new(64, 64, 64);
/// let a = vec![1.0f32; 64 * 64];
/// let b = vec![1.0f32; 64 * 64];
/// let c = vec![0.0f32; 64 * 64];
/// let result = context.multiply(&gemm, &a, &b, &c)?;
/// assert_eq!(result[0], 64.0);
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    shared: Arc<Shared>,
    policy: SelectionPolicy,
    split_k: SplitKChoice,
}

/// What every clone of a context shares: the device and the backends with their caches.
#[derive(Debug)]
struct Shared {
    adapter_info: wgpu::AdapterInfo,
    device: wgpu::Device,
    queue: wgpu::Queue,
    simt: SimtBackend,
    coopmat: std::result::Result<CoopmatBackend, String>,
    wgsl_coopmat: std::result::Result<WgslCoopBackend, String>,
    split_kernels: SplitKernels,
    pack_kernel: PackKernel,
    tuner: Tuner,
    /// Timestamps around every dispatch during [`Context::time_on_gpu`]; `None` without
    /// timestamp queries. The mutex keeps timings one at a time.
    timer: Option<Arc<GpuTimer>>,
    timing: Mutex<()>,
    is_cpu: bool,
    /// Why the device was lost, once it is (only tracked on devices the context created:
    /// wgpu keeps one lost-callback per device, and a caller's device keeps the caller's).
    lost: Arc<Mutex<Option<String>>>,
}

fn adapter_rank(info: &wgpu::AdapterInfo, preference: wgpu::PowerPreference) -> (u8, u8) {
    let api = match info.backend {
        wgpu::Backend::Vulkan => 0,
        wgpu::Backend::Metal | wgpu::Backend::Dx12 => 1,
        wgpu::Backend::Gl => 2,
        _ => 3,
    };
    let device = match (info.device_type, preference) {
        (wgpu::DeviceType::DiscreteGpu, wgpu::PowerPreference::LowPower) => 1,
        (wgpu::DeviceType::DiscreteGpu, _) => 0,
        (wgpu::DeviceType::IntegratedGpu, wgpu::PowerPreference::LowPower) => 0,
        (wgpu::DeviceType::IntegratedGpu, _) => 1,
        (wgpu::DeviceType::VirtualGpu, _) => 2,
        (wgpu::DeviceType::Other, _) => 3,
        (wgpu::DeviceType::Cpu, _) => 4,
    };
    (device, api)
}

impl Context {
    /// Creates a context on the best adapter, with default options.
    pub async fn new() -> Result<Context> {
        Context::with_options(ContextOptions::default()).await
    }

    /// [`Context::new`], blocking the current thread. Not on wasm32, where nothing may block
    /// the browser's thread: await [`Context::new`] there.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_blocking() -> Result<Context> {
        pollster::block_on(Context::new())
    }

    /// Creates a context as `options` say.
    pub async fn with_options(options: ContextOptions) -> Result<Context> {
        let mut instance_descriptor =
            wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        instance_descriptor.backends = options.wgpu_backends;
        instance_descriptor.flags = options.instance_flags;
        let instance = wgpu::Instance::new(instance_descriptor);
        let wanted_name = options.adapter_name.clone();
        let mut adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
        if let Some(name) = &wanted_name {
            let name = name.to_lowercase();
            adapters.retain(|adapter| adapter.get_info().name.to_lowercase().contains(&name));
        }
        adapters.sort_by_key(|adapter| adapter_rank(&adapter.get_info(), options.power_preference));
        let adapter = adapters.into_iter().next().ok_or_else(|| {
            Error::NoAdapter(match wanted_name {
                Some(name) => format!("no adapter's name contains {name:?}"),
                None => {
                    "wgpu found no adapter (is a Vulkan driver such as Mesa lavapipe installed?)"
                        .into()
                }
            })
        })?;
        Context::from_adapter(&adapter, options).await
    }

    /// Creates a context on an adapter the caller chose.
    ///
    /// On a Vulkan adapter with `VK_KHR_cooperative_matrix` the device is opened through
    /// wgpu's HAL with the extensions the cooperative-matrix kernels need (see the README);
    /// otherwise it is a plain wgpu device with the adapter's limits.
    pub async fn from_adapter(adapter: &wgpu::Adapter, options: ContextOptions) -> Result<Context> {
        let info = adapter.get_info();
        log::info!(
            "adapter: {} ({:?}, {:?}, driver {})",
            info.name,
            info.backend,
            info.device_type,
            info.driver_info
        );
        let (mut features, limits) = wanted_features_and_limits(adapter);
        let coop_properties = adapter.cooperative_matrix_properties();
        if options.enable_wgsl_coopmat {
            features |= adapter.features() & wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
        }
        // With wgpu's cooperative matrices where wanted and offered; should a driver refuse
        // the device with them, once more without (the other backends do not need them).
        let mut attempts = vec![features];
        if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            attempts.push(features - wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        }
        let mut opened = Err(Error::RequestDevice("no attempt".into()));
        for (attempt, required_features) in attempts.iter().copied().enumerate() {
            let descriptor = wgpu::DeviceDescriptor {
                label: Some("coopgemm"),
                required_features,
                required_limits: limits.clone(),
                experimental_features: vulkan::experimental_features_for(required_features),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            };
            opened = Context::open(adapter, &descriptor, &options).await;
            match &opened {
                Err(error) if attempt + 1 < attempts.len() => log::warn!(
                    "opening the device with EXPERIMENTAL_COOPERATIVE_MATRIX failed ({error}); trying without (no WGSL cooperative matrices)"
                ),
                _ => break,
            }
        }
        let (device, queue, enabled) = opened?;
        let lost = Arc::new(Mutex::new(None));
        let lost_in_callback = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            log::error!("device lost ({reason:?}): {message}");
            if let Ok(mut lost) = lost_in_callback.lock() {
                *lost = Some(format!("{reason:?}: {message}"));
            }
        });
        Ok(Context::assemble(
            info,
            device,
            queue,
            enabled,
            lost,
            options,
            coop_properties,
        ))
    }

    /// Opens the device `descriptor` describes: through wgpu's HAL with the cooperative-matrix
    /// extensions where the Vulkan backend is wanted and possible, as a plain wgpu device
    /// otherwise.
    async fn open(
        adapter: &wgpu::Adapter,
        descriptor: &wgpu::DeviceDescriptor<'_>,
        options: &ContextOptions,
    ) -> Result<(wgpu::Device, wgpu::Queue, Option<EnabledFeatures>)> {
        if options.enable_coopmat && adapter.get_info().backend == wgpu::Backend::Vulkan {
            let open = vulkan::OpenOptions {
                emulate_cooperative_matrix: options.emulate_cooperative_matrix,
                pipeline_statistics: options.pipeline_statistics,
                unchecked_pipelines: !options.robust_kernels,
            };
            match vulkan::device::open_with_coopmat(adapter, descriptor, open) {
                Ok(Some((device, queue, enabled))) => return Ok((device, queue, Some(enabled))),
                Ok(None) => {}
                Err(why) => log::warn!("opening the device with cooperative-matrix extensions failed ({why}); using a plain device"),
            }
        }
        let (device, queue) = adapter
            .request_device(descriptor)
            .await
            .map_err(|e| Error::RequestDevice(e.to_string()))?;
        Ok((device, queue, None))
    }

    /// Wraps a device and queue the caller already has.
    ///
    /// The cooperative-matrix backend is available only if the device is a Vulkan device
    /// created with what its kernels need (for example by [`Context::from_adapter`], or by
    /// the caller as the README describes); the WGSL cooperative-matrix backend only if the
    /// device was created with `wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX` (on Vulkan or
    /// Metal); otherwise GEMMs run on the SIMT backend.
    pub fn from_wgpu(device: wgpu::Device, queue: wgpu::Queue) -> Context {
        Context::from_wgpu_with_options(device, queue, ContextOptions::default())
    }

    /// [`Context::from_wgpu`] with options (only `backend`, `enable_coopmat`,
    /// `enable_wgsl_coopmat` and `disk_cache` apply).
    pub fn from_wgpu_with_options(
        device: wgpu::Device,
        queue: wgpu::Queue,
        options: ContextOptions,
    ) -> Context {
        let info = device.adapter_info();
        let coop_properties = wgsl_coopmat::device_properties(&device);
        Context::assemble(
            info,
            device,
            queue,
            None,
            Default::default(),
            options,
            coop_properties,
        )
    }

    // On wasm32 wgpu's objects are neither Send nor Sync; the Arc then only shares them
    // between clones of the context on the one thread there is.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    fn assemble(
        adapter_info: wgpu::AdapterInfo,
        device: wgpu::Device,
        queue: wgpu::Queue,
        enabled: Option<EnabledFeatures>,
        lost: Arc<Mutex<Option<String>>>,
        options: ContextOptions,
        coop_properties: Vec<wgpu::CooperativeMatrixProperties>,
    ) -> Context {
        let is_cpu = adapter_info.device_type == wgpu::DeviceType::Cpu;
        let store = crate::disk_cache::CacheStore::new(&options.disk_cache, &adapter_info);
        let timer = GpuTimer::new(&device).map(Arc::new);
        let mut simt = SimtBackend::new(&device, is_cpu, &options.kernel_overrides);
        simt.pipeline_cache =
            vulkan::pipeline_cache::WgpuPipelineCache::open(&device, store.as_ref(), "simt.wgpu");
        simt.timer = timer.clone();
        simt.statistics = enabled
            .is_some_and(|enabled| enabled.pipeline_statistics)
            .then(|| vulkan::statistics::PipelineStatistics::new(&device))
            .flatten();
        let coopmat = if options.enable_coopmat {
            CoopmatBackend::new(
                &device,
                &queue,
                enabled,
                store.as_ref(),
                timer.clone(),
                &options.kernel_overrides,
            )
        } else {
            Err("disabled by ContextOptions::enable_coopmat".to_string())
        };
        match &coopmat {
            Ok(backend) => log::info!("coopmat backend available: {}", backend.describe()),
            Err(why) => log::info!("coopmat backend unavailable: {why}"),
        }
        let wgsl_coopmat = if options.enable_wgsl_coopmat {
            WgslCoopBackend::new(&device, &coop_properties, &options.kernel_overrides).map(
                |mut backend| {
                    backend.pipeline_cache = vulkan::pipeline_cache::WgpuPipelineCache::open(
                        &device,
                        store.as_ref(),
                        "wgsl-coopmat.wgpu",
                    );
                    backend.timer = timer.clone();
                    backend
                },
            )
        } else {
            Err("disabled by ContextOptions::enable_wgsl_coopmat".to_string())
        };
        match &wgsl_coopmat {
            Ok(backend) => log::info!("wgsl-coopmat backend available: {}", backend.describe()),
            Err(why) => log::info!("wgsl-coopmat backend unavailable: {why}"),
        }
        let policy = SelectionPolicy::new(options.backend);
        let mut split_kernels = SplitKernels::new(&device);
        split_kernels.timer = timer.clone();
        let tuner = Tuner::new(
            crate::autotune::TuningPolicy::for_choice(options.autotune),
            options.tuning_time_limit,
            store.as_ref(),
        );
        Context {
            shared: Arc::new(Shared {
                adapter_info,
                device,
                queue,
                simt,
                coopmat,
                wgsl_coopmat,
                split_kernels,
                pack_kernel: PackKernel::default(),
                tuner,
                timer,
                timing: Mutex::new(()),
                is_cpu,
                lost,
            }),
            policy,
            split_k: options.split_k,
        }
    }

    /// A handle to the same device, backends and caches that picks backends as `choice` says
    /// (the `COOPGEMM_BACKEND` variable does not apply to it).
    ///
    /// ```no_run
    /// use coopgemm::{BackendChoice, BackendKind, Context};
    /// let context = Context::new_blocking()?;
    /// let simt_only = context.with_backend(BackendChoice::Force(BackendKind::Simt));
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn with_backend(&self, choice: BackendChoice) -> Context {
        Context {
            shared: self.shared.clone(),
            policy: SelectionPolicy::new(choice),
            split_k: self.split_k,
        }
    }

    /// Another handle on the same device and caches that splits GEMMs along K as `choice`
    /// says (the `COOPGEMM_SPLIT_K` variable does not apply to it).
    ///
    /// ```no_run
    /// use coopgemm::{Context, SplitKChoice};
    /// let context = Context::new_blocking()?;
    /// let four_slices = context.with_split_k(SplitKChoice::Slices(4));
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn with_split_k(&self, choice: SplitKChoice) -> Context {
        Context {
            shared: self.shared.clone(),
            policy: self.policy,
            split_k: choice,
        }
    }

    /// How this handle splits GEMMs along K.
    pub fn split_k_choice(&self) -> SplitKChoice {
        self.split_k
    }

    /// The split-K plan `backend` would use for `gemm` on this handle, if any.
    fn split_for(&self, backend: &dyn Backend, gemm: &ResolvedGemm) -> Option<SplitK> {
        let limit = self.shared.device.limits().max_storage_buffer_binding_size;
        // Automatic splits only where measured to pay: SIMT on a GPU (see SplitKChoice::Auto).
        let auto_allowed = !self.shared.is_cpu && backend.kind() == BackendKind::Simt;
        let tile = || backend.tile(gemm);
        let split = SplitK::choose(gemm, tile, self.split_k, auto_allowed, limit)?;
        // The partial GEMMs must run on the same backend.
        split
            .partial_gemms(gemm)
            .iter()
            .all(|part| {
                part.resolve()
                    .is_ok_and(|resolved| backend.supports(&resolved).is_ok())
            })
            .then_some(split)
    }

    /// Records `gemm` with `backend`, split along K where that pays.
    fn record_with(
        &self,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
    ) -> Result<KernelInfo> {
        if let Some(split) = self.split_for(backend, gemm) {
            return self.shared.split_kernels.record(
                backend,
                gemm,
                buffers,
                split,
                target,
                &|part| self.tuned_config(backend, part, false),
            );
        }
        let tuned = self.tuned_config(backend, gemm, false)?;
        backend.record_config(gemm, buffers, target, tuned.as_deref())
    }

    /// The autotuned configuration for `gemm` on `backend` (tuning it now if its class is
    /// new and tuning is `requested` or on first use), or `None` for the backend's heuristic.
    fn tuned_config(
        &self,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        requested: bool,
    ) -> Result<Option<String>> {
        let shared = &self.shared;
        shared
            .tuner
            .config_for(&shared.device, &shared.queue, backend, gemm, requested)
    }

    /// Tunes the shape class of each GEMM in `gemms` that has no winner yet: times the
    /// candidate configurations on scratch buffers (the heuristic's choice first, for at
    /// most [`ContextOptions::tuning_time_limit`] per class), keeps the fastest in memory
    /// and in the disk cache, and returns the kernel each GEMM runs with from now on.
    ///
    /// GEMMs themselves never wait for tuning (unless [`AutotuneChoice::OnFirstUse`](crate::AutotuneChoice::OnFirstUse)): call
    /// this at startup, from a thread of its own, or once in a setup step whose disk cache
    /// later processes read (`examples/tune.rs`). Classes already tuned cost a lookup; with
    /// [`AutotuneChoice::Off`](crate::AutotuneChoice::Off) (or on wasm32) nothing is timed and the heuristic's kernels
    /// are returned.
    ///
    /// ```no_run
    /// use coopgemm::{Context, Gemm, GemmTypes};
    /// let context = Context::new_blocking()?;
    /// let layers = [Gemm::new(4096, 512, 14336).types(GemmTypes::F16_F32)];
    /// for kernel in context.tune(&layers)? {
    ///     println!("{} {}", kernel.backend, kernel.config);
    /// }
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn tune(&self, gemms: &[Gemm]) -> Result<Vec<KernelInfo>> {
        gemms
            .iter()
            .map(|gemm| {
                let resolved = gemm.resolve()?;
                // Where both tensor-core backends can run it, this tunes both and keeps
                // the faster for the class.
                let selection = self.selection(&resolved, false, true)?;
                let backend = self.backend_by_kind(selection.backend)?;
                match self.split_for(backend, &resolved) {
                    Some(split) => {
                        for part in split.partial_gemms(&resolved) {
                            self.tuned_config(backend, &part.resolve()?, true)?;
                        }
                    }
                    None => {
                        self.tuned_config(backend, &resolved, true)?;
                    }
                }
                self.prepare(gemm)
            })
            .collect()
    }

    /// How this handle picks backends.
    pub fn backend_choice(&self) -> BackendChoice {
        self.policy.choice()
    }

    /// The adapter the device belongs to.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.shared.adapter_info
    }

    /// The wgpu device.
    pub fn device(&self) -> &wgpu::Device {
        &self.shared.device
    }

    /// The wgpu queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.shared.queue
    }

    /// Every backend and whether this device can use it.
    pub fn backends(&self) -> Vec<BackendStatus> {
        vec![
            BackendStatus {
                kind: BackendKind::Coopmat,
                availability: self
                    .shared
                    .coopmat
                    .as_ref()
                    .map(|b| b.describe())
                    .map_err(Clone::clone),
            },
            BackendStatus {
                kind: BackendKind::WgslCoopmat,
                availability: self
                    .shared
                    .wgsl_coopmat
                    .as_ref()
                    .map(|b| b.describe())
                    .map_err(Clone::clone),
            },
            BackendStatus {
                kind: BackendKind::Simt,
                availability: Ok("WGSL tiled GEMM on wgpu".into()),
            },
        ]
    }

    /// The WGSL cooperative-matrix backend, if this device has it.
    pub fn wgsl_coopmat(&self) -> std::result::Result<&WgslCoopBackend, &str> {
        self.shared.wgsl_coopmat.as_ref().map_err(String::as_str)
    }

    /// The cooperative-matrix backend, if this device has it.
    pub fn coopmat(&self) -> std::result::Result<&CoopmatBackend, &str> {
        self.shared.coopmat.as_ref().map_err(String::as_str)
    }

    fn backend(&self, kind: BackendKind) -> std::result::Result<&dyn Backend, String> {
        match kind {
            BackendKind::Simt => Ok(&self.shared.simt),
            BackendKind::Coopmat => self
                .shared
                .coopmat
                .as_ref()
                .map(|b| b as &dyn Backend)
                .map_err(Clone::clone),
            BackendKind::WgslCoopmat => self
                .shared
                .wgsl_coopmat
                .as_ref()
                .map(|b| b as &dyn Backend)
                .map_err(Clone::clone),
        }
    }

    /// The packing pipeline of this context's device ([`Context::pack_b`]).
    pub(crate) fn pack_kernel(&self) -> &PackKernel {
        &self.shared.pack_kernel
    }

    /// The backend of this kind, or [`Error::Unsupported`] saying why it is unavailable.
    pub(crate) fn backend_by_kind(&self, kind: BackendKind) -> Result<&dyn Backend> {
        self.backend(kind).map_err(|reason| Error::Unsupported {
            backend: kind,
            reason,
        })
    }

    /// Which backend would run `gemm`, and why. Where both tensor-core backends can run it
    /// and [`Context::tune`] has compared them for its shape class (or the first GEMM of the
    /// class did, with [`AutotuneChoice::OnFirstUse`](crate::AutotuneChoice::OnFirstUse)), the faster one.
    pub fn select(&self, gemm: &Gemm) -> Result<Selection> {
        let resolved = gemm.resolve()?;
        self.selection(&resolved, false, false)
    }

    /// The policy's selection, with the tensor-core backends compared by measurement where
    /// the choice is automatic, both can run `gemm` (and share an encoder, if asked) and the
    /// context autotunes.
    fn selection(
        &self,
        gemm: &ResolvedGemm,
        shared_encoder: bool,
        requested: bool,
    ) -> Result<Selection> {
        let mut selection = self
            .policy
            .select(gemm, shared_encoder, |kind| self.backend(kind))?;
        let tensor_cores = [BackendKind::Coopmat, BackendKind::WgslCoopmat];
        if self.policy.choice() != BackendChoice::Auto || !tensor_cores.contains(&selection.backend)
        {
            return Ok(selection);
        }
        let usable: Vec<&dyn Backend> = tensor_cores
            .iter()
            .filter_map(|kind| self.backend(*kind).ok())
            .filter(|backend| {
                (!shared_encoder || backend.records_into_shared_encoder())
                    && backend.supports(gemm).is_ok()
            })
            .collect();
        if usable.len() < 2 {
            return Ok(selection);
        }
        let mut configs = Vec::new();
        for backend in &usable {
            let config = match self.tuned_config(*backend, gemm, requested)? {
                Some(config) => config,
                None => backend.prepare(gemm, None)?.config,
            };
            // KernelInfo::config carries the epilogue after a `+`.
            configs.push(config.split('+').next().unwrap_or_default().to_string());
        }
        let shared = &self.shared;
        if let Some(kind) = shared.tuner.backend_for(
            &shared.device,
            &shared.queue,
            &usable,
            &configs,
            gemm,
            requested,
        )? {
            if kind != selection.backend {
                selection.rejected.push((
                    selection.backend,
                    format!("measured slower than {kind} for this shape class"),
                ));
                selection.reason = format!(
                    "measured faster for this shape class ({})",
                    selection.reason
                );
                selection.backend = kind;
            } else {
                selection.reason =
                    format!("{}; measured faster for this shape class", selection.reason);
            }
        }
        Ok(selection)
    }

    /// Builds (or finds cached) the kernel that would run `gemm`, so that the first real
    /// call does not pay for pipeline creation.
    pub fn prepare(&self, gemm: &Gemm) -> Result<KernelInfo> {
        let resolved = gemm.resolve()?;
        let selection = self.selection(&resolved, false, false)?;
        let backend = self.backend_by_kind(selection.backend)?;
        match self.split_for(backend, &resolved) {
            Some(split) => self.shared.split_kernels.prepare(backend, &resolved, split),
            None => {
                let tuned = self.tuned_config(backend, &resolved, false)?;
                backend.prepare(&resolved, tuned.as_deref())
            }
        }
    }

    fn chosen(&self, gemm: &ResolvedGemm, shared_encoder: bool) -> Result<&dyn Backend> {
        let selection = self.selection(gemm, shared_encoder, false)?;
        log::debug!(
            "{}x{}x{} {}: {} ({})",
            gemm.gemm.m,
            gemm.gemm.n,
            gemm.gemm.k,
            gemm.gemm.types,
            selection.backend,
            selection.reason
        );
        self.backend(selection.backend)
            .map_err(|reason| Error::Unsupported {
                backend: selection.backend,
                reason,
            })
    }

    /// Records `gemm` into the caller's encoder, among the caller's own commands.
    ///
    /// Only backends that record plain wgpu commands can share an encoder (wgpu forbids
    /// mixing raw Vulkan commands into one), so this picks among those: the WGSL
    /// cooperative-matrix backend where the device has it, else SIMT. Use
    /// [`Context::record`] or [`Context::run`] to reach the Vulkan cooperative-matrix backend.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        gemm: &Gemm,
        buffers: &GemmBuffers<'_>,
    ) -> Result<KernelInfo> {
        let resolved = gemm.resolve()?;
        let backend = self.chosen(&resolved, true)?;
        self.record_with(backend, &resolved, buffers, Target::Encoder(encoder))
    }

    /// Records `gemm` into command buffers of its own; submit them on [`Context::queue`].
    pub fn record(&self, gemm: &Gemm, buffers: &GemmBuffers<'_>) -> Result<RecordedGemm> {
        let resolved = gemm.resolve()?;
        let mut command_buffers = Vec::new();
        let backend = self.chosen(&resolved, false)?;
        let kernel = self.record_with(
            backend,
            &resolved,
            buffers,
            Target::CommandBuffers(&mut command_buffers),
        )?;
        Ok(RecordedGemm {
            command_buffers,
            kernel,
        })
    }

    /// Fails with [`Error::DeviceLost`] once the device is known to be lost.
    fn check_device(&self) -> Result<()> {
        match self.shared.lost.lock().map(|lost| lost.clone()) {
            Ok(Some(why)) => Err(Error::DeviceLost(why)),
            Ok(None) => Ok(()),
            Err(_) => Err(Error::DeviceLost("device-lost state poisoned".into())),
        }
    }

    /// Runs `work` inside wgpu error scopes, so that validation and out-of-memory errors
    /// come back as [`Error::Device`] instead of reaching wgpu's uncaptured-error handler.
    pub(crate) fn scoped<T>(&self, work: impl FnOnce() -> T) -> Result<T> {
        self.check_device()?;
        let memory = self
            .shared
            .device
            .push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self
            .shared
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let output = work();
        let validation_error = resolve_error_scope(validation.pop());
        let memory_error = resolve_error_scope(memory.pop());
        self.check_device()?;
        match validation_error.or(memory_error) {
            Some(error) => Err(Error::Device(error.to_string())),
            None => Ok(output),
        }
    }

    /// Creates a buffer, reporting a size over the device's limit, out-of-memory and
    /// validation errors as errors rather than panics.
    pub fn create_buffer(
        &self,
        label: &str,
        bytes: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer> {
        let limit = self.shared.device.limits().max_buffer_size;
        if bytes > limit {
            return Err(Error::BufferTooLarge { bytes, limit });
        }
        self.scoped(|| {
            self.shared.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// Records and submits `gemm`. Validation and out-of-memory errors the device reports
    /// while recording come back as [`Error::Device`], a lost device as [`Error::DeviceLost`].
    pub fn run(&self, gemm: &Gemm, buffers: &GemmBuffers<'_>) -> Result<SubmittedGemm> {
        let recorded = self.scoped(|| self.record(gemm, buffers))??;
        let submission = self.shared.queue.submit(recorded.command_buffers);
        Ok(SubmittedGemm {
            submission,
            kernel: recorded.kernel,
        })
    }

    /// Blocks until all submitted work is done.
    pub fn wait(&self) -> Result<()> {
        self.check_device()?;
        self.shared
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Device(e.to_string()))
    }
}

impl Context {
    /// Runs `gemm` `runs` times back to back and returns the GPU time of each run: the sum of
    /// the times its dispatches took (the kernel, and split-K's reduction where the GEMM is
    /// split), from timestamps written right before and after each dispatch, inside its own
    /// pass or command buffer. Unlike wall-clock time, this leaves out the host's submission
    /// work and the queue's gaps between command buffers. The kernel is prepared (built,
    /// and autotuned where that is on) before the first timed run.
    ///
    /// `Ok(None)` where the device has no timestamp queries (`wgpu::Features::TIMESTAMP_QUERY`,
    /// which coopgemm's own devices enable when the adapter has it; a caller's device needs
    /// it enabled too). Timings run one at a time on a context; GEMMs that other threads
    /// record on it meanwhile are counted in too.
    ///
    /// ```
    /// use coopgemm::{Context, Gemm, GemmBuffers};
    /// let context = Context::new_blocking()?;
    /// let gemm = Gemm::new(64, 64, 64);
    /// let a = context.upload("A", &vec![1.0f32; 64 * 64])?;
    /// let b = context.upload("B", &vec![1.0f32; 64 * 64])?;
    /// let c = context.upload("C", &vec![0.0f32; 64 * 64])?;
    /// if let Some(times) = context.time_on_gpu(&gemm, &GemmBuffers::new(&a, &b, &c), 3)? {
    ///     assert_eq!(times.len(), 3);
    /// }
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    ///
    /// On wasm32 always `Ok(None)`: timing waits for the GPU, which the browser's thread may
    /// not.
    pub fn time_on_gpu(
        &self,
        gemm: &Gemm,
        buffers: &GemmBuffers<'_>,
        runs: usize,
    ) -> Result<Option<Vec<Duration>>> {
        let Some(timer) = self
            .shared
            .timer
            .as_ref()
            .filter(|_| !cfg!(target_arch = "wasm32"))
        else {
            return Ok(None);
        };
        self.prepare(gemm)?;
        let _one_at_a_time = self.shared.timing.lock().unwrap_or_else(|e| e.into_inner());
        let period_ns = self.shared.queue.get_timestamp_period() as f64;
        // A run stamps one or two dispatches (two when split); rounds leave room for four.
        let runs_per_round = (timing::PAIRS as usize / 4).max(1);
        let mut times = Vec::with_capacity(runs);
        while times.len() < runs {
            let round = runs_per_round.min(runs - times.len());
            timer.start();
            let submitted = (0..round).try_for_each(|run| {
                timer.set_run(run);
                self.run(gemm, buffers).map(drop)
            });
            let claimed = timer.finish();
            submitted?;
            self.wait()?;
            if claimed.incomplete {
                return Ok(None);
            }
            let mut pairs = self.read_wgpu_timestamps(timer, &claimed.wgpu)?;
            if !claimed.raw.is_empty() {
                let raw = self.shared.coopmat.as_ref().map_err(|why| {
                    Error::Device(format!("raw timestamps without a coopmat backend: {why}"))
                })?;
                let ticks = raw.read_timestamps(claimed.raw.len() as u32)?;
                pairs.extend(claimed.raw.iter().copied().zip(ticks));
            }
            let round_times = timing::sum_per_run(round, &pairs, period_ns);
            log::debug!("GPU time of {round} runs: {round_times:?}");
            times.extend(round_times);
        }
        Ok(Some(times))
    }

    /// (run, [begin, end]) of the first `runs_of_pairs.len()` pairs of the wgpu query set.
    fn read_wgpu_timestamps(
        &self,
        timer: &GpuTimer,
        runs_of_pairs: &[usize],
    ) -> Result<Vec<(usize, [u64; 2])>> {
        if runs_of_pairs.is_empty() {
            return Ok(Vec::new());
        }
        let queries = 2 * runs_of_pairs.len() as u32;
        let resolved = self.create_buffer(
            "coopgemm timestamps",
            queries as u64 * 8,
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        )?;
        let mut encoder = self
            .shared
            .device
            .create_command_encoder(&Default::default());
        encoder.resolve_query_set(timer.query_set(), 0..queries, &resolved, 0);
        self.shared.queue.submit([encoder.finish()]);
        // Each u64 tick as two little-endian 32-bit words.
        let words: Vec<i32> = pollster::block_on(self.download(&resolved, 2 * queries as usize))?;
        let tick = |query: usize| {
            words[2 * query] as u32 as u64 | (words[2 * query + 1] as u32 as u64) << 32
        };
        Ok(runs_of_pairs
            .iter()
            .enumerate()
            .map(|(pair, &run)| (run, [tick(2 * pair), tick(2 * pair + 1)]))
            .collect())
    }
}

/// The error an error scope caught. Native wgpu resolves the scope at once. On the web the
/// answer arrives only after control returns to the browser, so a synchronous call cannot
/// wait for it there: it is taken if already known, and otherwise the error reaches the
/// device's uncaptured-error handler instead.
fn resolve_error_scope(
    pop: impl std::future::Future<Output = Option<wgpu::Error>>,
) -> Option<wgpu::Error> {
    #[cfg(not(target_arch = "wasm32"))]
    return pollster::block_on(pop);
    #[cfg(target_arch = "wasm32")]
    return futures::FutureExt::now_or_never(Box::pin(pop)).flatten();
}

/// The features coopgemm asks for (when the adapter has them) and the adapter's own limits,
/// so that large matrices can be bound and large tiles fit.
pub(crate) fn wanted_features_and_limits(
    adapter: &wgpu::Adapter,
) -> (wgpu::Features, wgpu::Limits) {
    let wanted = wgpu::Features::SHADER_F16
        | wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
        | wgpu::Features::PIPELINE_CACHE;
    (wanted & adapter.features(), adapter.limits())
}
