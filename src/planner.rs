//! The planner: the one place that decides how a GEMM runs.
//!
//! [`Planner::plan`] turns a validated description into a [`Plan`], in four steps:
//! 1. **Backend** — [`SelectionPolicy`] (a forced backend, or the first of coopmat,
//!    wgsl-coopmat, SIMT that can run it), then, where both tensor-core backends could, the
//!    one the tuner measured faster for the shape class.
//! 2. **B staging** — [`StagedB::choose`]: where the backend's kernel wants B K-contiguous
//!    and B is row-major, B is copied first and the rest of the plan is for the copy.
//! 3. **Split-K** — [`SplitK::choose`] on the backend's heuristic tile (automatic splits only
//!    where measured to pay: SIMT on a GPU, the cooperative-matrix kernels' GEMMs of at
//!    most 64 tiles and K of 8192 or more, and the coopmat2 kernel's few-row tiles into about
//!    512, 256 or 128 workgroups), kept only if every partial GEMM runs on the same backend.
//! 4. **Configuration** — per kernel launch (the GEMM, or a split's batch of equal slices and its remainder): the tuner's
//!    winner for its shape class, else the backend's heuristic ([`Backend::choose`]).
//!
//! The plan is then recorded by [`Context`](crate::Context) (`execute`), and shown to callers
//! by [`Context::plan`](crate::Context::plan).

use std::fmt;

use crate::autotune::Tuner;
use crate::backend::{Backend, BackendKind, KernelConfig, KernelInfo};
use crate::backends::Backends;
use crate::error::Result;
use crate::options::{BackendChoice, SplitKChoice, StageBChoice};
use crate::problem::ResolvedGemm;
use crate::selection::{Selection, SelectionPolicy};
use crate::split_k::{AutoSplit, SplitK};
use crate::staging::StagedB;

/// How one GEMM runs, and why: the backend, whether it is split along K, and the kernel
/// configuration of each kernel launch.
///
/// ```no_run
/// use coopgemm::{Context, Gemm, GemmTypes};
/// let context = Context::new_blocking()?;
/// let plan = context.plan(&Gemm::new(4096, 4096, 4096).types(GemmTypes::F16_F32))?;
/// println!("{plan}");
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// The backend, why it was chosen, and the backends passed over.
    pub selection: Selection,
    /// Where B is staged K-contiguous before the kernels run ([`StageBChoice`]; public
    /// as `kernel.staged_b`).
    pub(crate) staged_b: Option<StagedB>,
    /// How the GEMM is split along K, if it is.
    pub split_k: Option<SplitK>,
    /// One configuration per kernel launch: the GEMM's, or for a split the batch of equal
    /// slices' and then the remainder slice's (if K does not divide evenly).
    pub configs: Vec<KernelConfig>,
    /// Whether the configurations are the tuner's winners (else the backend's heuristic
    /// picked at least one).
    pub tuned: bool,
    /// What the kernel is called in logs and records.
    pub kernel: KernelInfo,
}

impl Plan {
    /// The GEMM the kernels run: `gemm` itself, or `gemm` reading the staged B.
    pub(crate) fn kernel_gemm(&self, gemm: &ResolvedGemm) -> Result<ResolvedGemm> {
        match &self.staged_b {
            Some(staged) => staged.gemm(gemm),
            None => Ok(*gemm),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} ({}; {})",
            self.selection.backend,
            self.kernel,
            if self.tuned { "tuned" } else { "heuristic" },
            self.selection.reason
        )
    }
}

/// What one planning is for, besides the GEMM.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request {
    /// The handle's backend choice.
    pub policy: SelectionPolicy,
    /// The handle's split-K choice.
    pub split_k: SplitKChoice,
    /// The context's B-staging choice.
    pub stage_b: StageBChoice,
    /// Only backends that record plain wgpu commands (the caller's encoder).
    pub shared_encoder: bool,
    /// Tune classes without a winner now ([`Context::tune`](crate::Context::tune)).
    pub tune: bool,
}

/// Decides plans on one device: its backends, the tuner, and what split-K needs to know.
#[derive(Debug)]
pub(crate) struct Planner {
    pub(crate) backends: Backends,
    tuner: Tuner,
    device: wgpu::Device,
    queue: wgpu::Queue,
    is_cpu: bool,
}

impl Planner {
    pub(crate) fn new(
        backends: Backends,
        tuner: Tuner,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        is_cpu: bool,
    ) -> Planner {
        Planner {
            backends,
            tuner,
            device: device.clone(),
            queue: queue.clone(),
            is_cpu,
        }
    }

    /// The plan for `gemm`.
    pub(crate) fn plan(&self, gemm: &ResolvedGemm, request: Request) -> Result<Plan> {
        let selection = self.select(gemm, request)?;
        let backend = self.backends.require(selection.backend)?;
        let (staged_b, staged_gemm) =
            StagedB::choose(backend, gemm, request.stage_b, &self.device.limits()).unzip();
        let gemm = staged_gemm.as_ref().unwrap_or(gemm);
        let split_k = self.split_for(backend, gemm, request.split_k);
        let mut configs = Vec::new();
        let mut tuned = true;
        let mut plan_one = |part: &ResolvedGemm| -> Result<()> {
            let (config, from_tuner) = self.config_for(backend, part, request.tune)?;
            configs.push(config);
            tuned &= from_tuner;
            Ok(())
        };
        match split_k {
            Some(split) => {
                for part in split.partial_gemms(gemm) {
                    plan_one(&part.resolve()?)?;
                }
            }
            None => plan_one(gemm)?,
        }
        let kernel = KernelInfo::new(
            configs[0],
            staged_b.is_some(),
            split_k.map(|split| split.partials()),
            &gemm.gemm.epilogue,
        );
        log::debug!(
            "{}x{}x{} {}: {} {kernel} ({})",
            gemm.gemm.m,
            gemm.gemm.n,
            gemm.gemm.k,
            gemm.gemm.types,
            selection.backend,
            selection.reason
        );
        Ok(Plan {
            selection,
            staged_b,
            split_k,
            configs,
            tuned,
            kernel,
        })
    }

    /// The policy's selection; where the choice is automatic and both tensor-core backends
    /// can run `gemm` (and share an encoder, if asked), the one measured faster for its class.
    fn select(&self, gemm: &ResolvedGemm, request: Request) -> Result<Selection> {
        let mut selection = request
            .policy
            .select(gemm, request.shared_encoder, |kind| self.backends.get(kind))?;
        let tensor_cores = [BackendKind::Coopmat, BackendKind::WgslCoopmat];
        if request.policy.choice() != BackendChoice::Auto
            || !tensor_cores.contains(&selection.backend)
        {
            return Ok(selection);
        }
        let usable: Vec<&dyn Backend> = tensor_cores
            .iter()
            .filter_map(|kind| self.backends.get(*kind).ok())
            .filter(|backend| {
                (!request.shared_encoder || backend.records_into_shared_encoder())
                    && backend.supports(gemm).is_ok()
            })
            .collect();
        if usable.len() < 2 {
            return Ok(selection);
        }
        let config_of = |backend: &dyn Backend| Ok(self.config_for(backend, gemm, request.tune)?.0);
        let measured = self.tuner.backend_for(
            &self.device,
            &self.queue,
            &usable,
            &config_of,
            gemm,
            request.tune,
        )?;
        if let Some(kind) = measured {
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

    /// How `backend` splits `gemm` along K, if it does.
    fn split_for(
        &self,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        choice: SplitKChoice,
    ) -> Option<SplitK> {
        let limit = self.device.limits().max_storage_buffer_binding_size;
        // Automatic splits only where measured to pay (see SplitKChoice::Auto and
        // AutoSplit::for_kernel): SIMT on a GPU, the cooperative-matrix kernels' few-tile,
        // long-K GEMMs and the coopmat2 kernel's few-row tile.
        let kernel = || {
            backend.choose(gemm).ok().map(|config| {
                let auto = AutoSplit::for_kernel(&config, gemm, self.is_cpu);
                (config.tile(), auto)
            })
        };
        let split = SplitK::choose(gemm, kernel, choice, limit)?;
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

    /// The configuration `backend` runs `gemm` with, and whether it is the tuner's (tuning
    /// the class now where it has no winner and `tune` is asked for or tuning happens on
    /// first use).
    fn config_for(
        &self,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        tune: bool,
    ) -> Result<(KernelConfig, bool)> {
        let tuned = self
            .tuner
            .config_for(&self.device, &self.queue, backend, gemm, tune)?;
        match tuned {
            Some(config) => Ok((config, true)),
            None => Ok((backend.choose(gemm)?, false)),
        }
    }
}
