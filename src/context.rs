//! [`Context`]: the public face of coopgemm: a device and its queue, with the planner that
//! decides how each GEMM runs ([`Context::plan`]) and the backends that record it.
//!
//! Flow: `run` → `record` → `plan` ([`crate::planner`]) → `execute` → the backend's
//! `record` (see `ARCHITECTURE.md`).

use std::sync::{Arc, Mutex};

use crate::autotune::{Tuner, TuningPolicy};
use crate::backend::wgsl_coopmat;
use crate::backend::{KernelInfo, Target};
use crate::backends::{BackendStatus, Backends, DeviceExtras};
use crate::bindings::GemmBuffers;
use crate::error::{Error, Result};
use crate::lifecycle::TornDownInTurn;
use crate::open::{self, OpenedDevice};
pub use crate::options::ContextOptions;
use crate::options::{BackendChoice, SplitKChoice, StageBChoice};
use crate::packing::{PackKernel, PackedB};
use crate::planner::{Plan, Planner, Request};
use crate::problem::{Gemm, ResolvedGemm};
use crate::selection::{Selection, SelectionPolicy};
use crate::split_k::SplitKernels;
use crate::staging::Stager;
use crate::timing::GpuTimer;

/// A GEMM recorded into command buffers of its own, ready for `Queue::submit`.
#[derive(Debug)]
#[non_exhaustive]
pub struct RecordedGemm {
    /// Submit these, in order, on the context's queue.
    pub command_buffers: Vec<wgpu::CommandBuffer>,
    /// The backend and kernel configuration that were used.
    pub kernel: KernelInfo,
}

/// A submitted GEMM.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
    shared: Arc<TornDownInTurn<Shared>>,
    policy: SelectionPolicy,
    split_k: SplitKChoice,
}

/// What every clone of a context shares: the device, the planner with the backends, and
/// the kernels beside them.
#[derive(Debug)]
struct Shared {
    adapter_info: wgpu::AdapterInfo,
    device: wgpu::Device,
    queue: wgpu::Queue,
    planner: Planner,
    split_kernels: SplitKernels,
    pack_kernel: PackKernel,
    /// Copies B K-contiguous before GEMMs whose plan stages it, as `stage_b` says.
    stager: Stager,
    stage_b: StageBChoice,
    /// Timestamps around every dispatch during [`Context::time_on_gpu`]; `None` without
    /// timestamp queries. The mutex keeps timings one at a time.
    timer: Option<Arc<GpuTimer>>,
    timing: Mutex<()>,
    /// Why the device was lost, once it is (only tracked on devices the context created:
    /// wgpu keeps one lost-callback per device, and a caller's device keeps the caller's).
    lost: Arc<Mutex<Option<String>>>,
}

impl Context {
    /// Creates a context on the best adapter, with the built-in default options
    /// ([`ContextOptions::default`], which reads no environment variable; use
    /// [`ContextOptions::from_env`] with [`Context::with_options`] for the `COOPGEMM_*`
    /// variables).
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
        let adapter = open::find_adapter(&options).await?;
        Context::from_adapter(&adapter, options).await
    }

    /// Creates a context on an adapter the caller chose.
    ///
    /// On a Vulkan adapter with `VK_KHR_cooperative_matrix` the device is opened through
    /// wgpu's HAL with the extensions the cooperative-matrix kernels need (listed in
    /// `docs/usage.md`); otherwise it is a plain wgpu device with the adapter's limits.
    pub async fn from_adapter(adapter: &wgpu::Adapter, options: ContextOptions) -> Result<Context> {
        let opened = open::open_device(adapter, &options).await?;
        Ok(Context::assemble(opened, options))
    }

    /// Wraps a device and queue the caller already has, with the built-in default options
    /// (no environment variable is read).
    ///
    /// The cooperative-matrix backend is available only if the device is a Vulkan device
    /// created with what its kernels need (for example by [`Context::from_adapter`], or by
    /// the caller as `docs/usage.md` describes); the WGSL cooperative-matrix backend only if
    /// the device was created with `wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX` (on
    /// Vulkan or Metal); otherwise GEMMs run on the SIMT backend.
    pub fn from_wgpu(device: wgpu::Device, queue: wgpu::Queue) -> Context {
        Context::from_wgpu_with_options(device, queue, ContextOptions::default())
    }

    /// [`Context::from_wgpu`] with options. What picks an adapter and opens a device does not
    /// apply (the device exists already): `wgpu_backends`, `power_preference`,
    /// `adapter_name`, `instance_flags`, `emulate_cooperative_matrix`, `pipeline_statistics`
    /// and `robust_kernels`. The rest do: `backend`, `enable_coopmat`, `enable_wgsl_coopmat`,
    /// `split_k`, `stage_b`, `autotune`, `tuning_time_limit`, `disk_cache` and
    /// `kernel_overrides`.
    pub fn from_wgpu_with_options(
        device: wgpu::Device,
        queue: wgpu::Queue,
        options: ContextOptions,
    ) -> Context {
        let coop_properties = wgsl_coopmat::device_properties(&device);
        Context::assemble(
            OpenedDevice {
                device,
                queue,
                enabled: None,
                lost: Default::default(),
                coop_properties,
            },
            options,
        )
    }

    // On wasm32 wgpu's objects are neither Send nor Sync; the Arc then only shares them
    // between clones of the context on the one thread there is.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    fn assemble(opened: OpenedDevice, options: ContextOptions) -> Context {
        let _turn = crate::lifecycle::turn();
        let OpenedDevice {
            device,
            queue,
            enabled,
            lost,
            coop_properties,
        } = opened;
        let adapter_info = device.adapter_info();
        let is_cpu = adapter_info.device_type == wgpu::DeviceType::Cpu;
        let store = crate::disk_cache::CacheStore::new(&options.disk_cache, &adapter_info);
        let timer = GpuTimer::new(&device).map(Arc::new);
        let extras = DeviceExtras {
            enabled,
            coop_properties,
            is_cpu,
        };
        let backends = Backends::new(
            &device,
            &queue,
            extras,
            &options,
            store.as_ref(),
            timer.clone(),
        );
        let tuner = Tuner::new(
            TuningPolicy::for_choice(options.autotune),
            options.tuning_time_limit,
            store.as_ref(),
        );
        Context {
            shared: Arc::new(TornDownInTurn::new(Shared {
                adapter_info,
                planner: Planner::new(backends, tuner, &device, &queue, is_cpu),
                split_kernels: SplitKernels::new(&device, timer.clone()),
                pack_kernel: PackKernel::default(),
                stager: Stager::new(&device),
                stage_b: options.stage_b,
                device,
                queue,
                timer,
                timing: Mutex::new(()),
                lost,
            })),
            policy: SelectionPolicy::new(options.backend),
            split_k: options.split_k,
        }
    }

    /// A handle to the same device, backends and caches that picks backends as `choice` says
    /// (in place of the context's [`ContextOptions::backend`]).
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
    /// says (in place of the context's [`ContextOptions::split_k`]).
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

    /// How `gemm` would run on this handle: the backend and why, the split along K, and the
    /// kernel configuration of each launch (see [`Plan`]). Nothing runs on the caller's
    /// buffers. Under [`AutotuneChoice::OnRequest`](crate::AutotuneChoice) and `Off` nothing
    /// is built or timed either; under [`AutotuneChoice::OnFirstUse`](crate::AutotuneChoice)
    /// a shape class without a winner is tuned first, as the GEMM itself would be (pipelines
    /// built and candidates timed on scratch buffers, up to the tuning time limit), so that
    /// the plan is the one the GEMM will run.
    pub fn plan(&self, gemm: &Gemm) -> Result<Plan> {
        self.plan_resolved(&gemm.resolve()?, false, false)
    }

    pub(crate) fn plan_resolved(
        &self,
        gemm: &ResolvedGemm,
        shared_encoder: bool,
        tune: bool,
    ) -> Result<Plan> {
        let request = Request {
            policy: self.policy,
            split_k: self.split_k,
            stage_b: self.shared.stage_b,
            shared_encoder,
            tune,
        };
        self.shared.planner.plan(gemm, request)
    }

    /// Which backend would run `gemm`, and why ([`Context::plan`]'s selection). Where both
    /// tensor-core backends can run it and [`Context::tune`] has compared them for its shape
    /// class (or the first GEMM of the class did, with
    /// [`AutotuneChoice::OnFirstUse`](crate::AutotuneChoice::OnFirstUse)), the faster one.
    pub fn select(&self, gemm: &Gemm) -> Result<Selection> {
        Ok(self.plan(gemm)?.selection)
    }

    /// Builds (or finds cached) the kernels that would run `gemm`, so that the first real
    /// call does not pay for pipeline creation.
    pub fn prepare(&self, gemm: &Gemm) -> Result<KernelInfo> {
        let resolved = gemm.resolve()?;
        let plan = self.plan_resolved(&resolved, false, false)?;
        self.prepare_plan(&resolved, &plan)?;
        Ok(plan.kernel)
    }

    pub(crate) fn prepare_plan(&self, gemm: &ResolvedGemm, plan: &Plan) -> Result<()> {
        let backend = self
            .shared
            .planner
            .backends
            .require(plan.selection.backend)?;
        let gemm = &plan.kernel_gemm(gemm)?;
        match plan.split_k {
            Some(split) => self
                .shared
                .split_kernels
                .prepare(backend, gemm, split, &plan.configs),
            None => backend.prepare(gemm, &plan.configs[0]),
        }
    }

    /// Records `plan`'s GEMMs into `target`: the backend's kernel, or the partial GEMMs and
    /// split-K's reduction.
    pub(crate) fn execute(
        &self,
        gemm: &ResolvedGemm,
        plan: &Plan,
        buffers: &GemmBuffers<'_>,
        mut target: Target<'_>,
    ) -> Result<KernelInfo> {
        let backend = self
            .shared
            .planner
            .backends
            .require(plan.selection.backend)?;
        let staged_b;
        let staged_buffers;
        let (gemm, buffers) = match &plan.staged_b {
            Some(staged) => {
                staged_b = self.shared.stager.record(
                    staged,
                    &self.shared.pack_kernel,
                    &self.shared.device,
                    gemm,
                    buffers,
                    self.shared.timer.as_deref(),
                    target.reborrow(),
                )?;
                staged_buffers = GemmBuffers {
                    b: &staged_b,
                    ..*buffers
                };
                (&plan.kernel_gemm(gemm)?, &staged_buffers)
            }
            None => (gemm, buffers),
        };
        match plan.split_k {
            Some(split) => self.shared.split_kernels.record(
                backend,
                gemm,
                buffers,
                split,
                &plan.configs,
                target,
            )?,
            None => backend.record(gemm, buffers, target, &plan.configs[0])?,
        }
        Ok(plan.kernel.clone())
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
                // Where both tensor-core backends can run it, this tunes both and keeps the
                // faster for the class; then the configuration of each launch.
                let plan = self.plan_resolved(&resolved, false, true)?;
                self.prepare_plan(&resolved, &plan)?;
                Ok(plan.kernel)
            })
            .collect()
    }

    /// Packs the B of `gemm` (its k, n, batch, types and B layout; `b` holds it as that layout
    /// says) into the layout the kernel [`Context::plan`] picks for `gemm` reads fastest:
    /// column panels as wide as its tile or, for the coopmat2 kernel with 8-bit inputs,
    /// column-major with K padded to 16 bytes (its tensor-core loads want K contiguous).
    ///
    /// A broadcast B (batch stride 0) is packed once and stays broadcast. GEMMs with other
    /// `m` may pick a different configuration of the same width (the backends restrict
    /// themselves to it; any configuration reads the column-major form).
    pub fn pack_b(&self, gemm: &Gemm, b: &wgpu::Buffer) -> Result<PackedB> {
        let resolved = gemm.resolve()?;
        let plan = self.plan_resolved(&resolved, false, false)?;
        if resolved.b.order.panel_width().is_some() {
            return Err(Error::Unsupported {
                backend: plan.selection.backend,
                reason: "B is already packed".into(),
            });
        }
        let form = plan.configs[0].packed_form();
        let shared = &self.shared;
        let (packed, command_buffer) =
            self.scoped(|| shared.pack_kernel.pack(&shared.device, &resolved, b, form))??;
        shared.queue.submit(command_buffer);
        log::debug!(
            "packed B ({}x{} {}, {:?}) as {form:?} for {}",
            gemm.k,
            gemm.n,
            gemm.types.input,
            resolved.b.order,
            plan.selection.backend
        );
        Ok(packed)
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
        self.shared.planner.backends.statuses()
    }

    /// The backends of the device (for `diagnostics`).
    pub(crate) fn backends_of_device(&self) -> &crate::backends::Backends {
        &self.shared.planner.backends
    }

    /// The split-K reductions of the device.
    #[cfg(vulkan_interop)]
    pub(crate) fn split_kernels(&self) -> &SplitKernels {
        &self.shared.split_kernels
    }

    /// The device's cooperative-matrix backend, through which every raw-Vulkan kernel is
    /// recorded; `Error::Device` with why the device has none.
    #[cfg(vulkan_interop)]
    pub(crate) fn coopmat_backend(&self) -> Result<&crate::backend::coopmat::CoopmatBackend> {
        self.backends_of_device()
            .coopmat
            .as_ref()
            .map_err(|why| Error::Device(why.clone()))
    }

    /// Identifies the device state this handle shares with its clones (and with no other
    /// context).
    pub(crate) fn shared_id(&self) -> usize {
        Arc::as_ptr(&self.shared) as *const () as usize
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
        let plan = self.plan_resolved(&resolved, true, false)?;
        self.execute(&resolved, &plan, buffers, Target::Encoder(encoder))
    }

    /// Records `gemm` into command buffers of its own; submit them on [`Context::queue`].
    ///
    /// A GEMM recorded as raw Vulkan commands (the cooperative-matrix backend) that is never
    /// submitted holds its descriptor set, its event and clones of its buffers for the life
    /// of the context, and every later GEMM's recording looks at it again: submit what you
    /// record.
    pub fn record(&self, gemm: &Gemm, buffers: &GemmBuffers<'_>) -> Result<RecordedGemm> {
        let resolved = gemm.resolve()?;
        let plan = self.plan_resolved(&resolved, false, false)?;
        let mut command_buffers = Vec::new();
        let kernel = self.execute(
            &resolved,
            &plan,
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

    /// The timer of [`Context::time_on_gpu`] and the lock that keeps timings one at a time.
    pub(crate) fn timer(&self) -> Option<(&GpuTimer, &Mutex<()>)> {
        self.shared
            .timer
            .as_deref()
            .map(|timer| (timer, &self.shared.timing))
    }

    /// The raw timestamps of the cooperative-matrix backend's first `pairs` dispatches
    /// stamped during a timing.
    pub(crate) fn raw_timestamps(&self, pairs: u32) -> Result<Vec<[u64; 2]>> {
        let raw = self.backends_of_device().coopmat.as_ref().map_err(|why| {
            Error::Device(format!("raw timestamps without a coopmat backend: {why}"))
        })?;
        raw.read_timestamps(pairs)
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
