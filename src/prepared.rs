//! [`PreparedGemm`]: a GEMM planned, bound and built once, then launched many times with
//! little host work ([`Context::prepare_gemm`], [`Context::run_prepared`]).
//!
//! A plain [`Context::run`] resolves and plans the GEMM, checks its buffers, and on the
//! cooperative-matrix backend takes a descriptor set and an event from the recycler, writes
//! the set, and records a wgpu pass (with a new bind group) and the raw commands in two
//! command buffers of their own. A prepared GEMM did the planning, the checks and the
//! descriptor write once: a launch records only the commands, and the GEMMs of one
//! [`Context::run_prepared`] share one pair of command buffers and one submission. A GEMM
//! split along K on that backend is prepared the same way: its partial GEMMs' dispatches
//! and its reduction (a wgpu pass whose bind group is made once) are bound once, to
//! partial sums of its own; the reduction ends the pair of command buffers it follows.

use crate::backend::KernelInfo;
use crate::bindings::{BindingPlan, GemmBuffers};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::planner::Plan;
use crate::problem::{Gemm, ResolvedGemm};
#[cfg(vulkan_interop)]
use crate::vulkan::prepared::PreparedDispatch;

/// A GEMM on fixed buffers, planned, checked and built once by [`Context::prepare_gemm`];
/// [`Context::run_prepared`] launches it (with others in one submission).
///
/// It keeps its buffers alive. Launch it only on the context that prepared it (or a clone).
#[derive(Debug)]
pub struct PreparedGemm {
    /// [`Context::shared_id`] of the context that prepared it.
    context: usize,
    kernel: KernelInfo,
    launch: Launch,
}

#[derive(Debug)]
enum Launch {
    /// Nothing to compute (an empty GEMM).
    Nothing,
    /// One raw dispatch of the cooperative-matrix backend, bound once.
    #[cfg(vulkan_interop)]
    Raw(Box<PreparedDispatch>),
    /// A split GEMM on the cooperative-matrix backend: its partial GEMMs' raw dispatches
    /// and the reduction, bound once to partials of its own.
    #[cfg(vulkan_interop)]
    Split(Box<PreparedSplit>),
    /// Every other plan (wgpu passes, a staged B): recorded per launch from the plan made
    /// once.
    Recorded(Box<Recorded>),
}

#[cfg(vulkan_interop)]
#[derive(Debug)]
struct PreparedSplit {
    parts: Vec<PreparedDispatch>,
    reduction: crate::split_k::BoundReduction,
    /// The partial sums (the parts' C, the reduction's input), this GEMM's alone.
    _partials: wgpu::Buffer,
}

#[derive(Debug)]
struct Recorded {
    gemm: ResolvedGemm,
    plan: Plan,
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    c: wgpu::Buffer,
    bias: Option<wgpu::Buffer>,
}

impl PreparedGemm {
    /// The backend and kernel configuration it launches.
    pub fn kernel(&self) -> &KernelInfo {
        &self.kernel
    }
}

impl Context {
    /// Plans `gemm` on `buffers`, checks the buffers, builds its kernels and, on the
    /// cooperative-matrix backend, binds its dispatch once, for launches with
    /// [`Context::run_prepared`] that cost the calling thread little more than recording
    /// and submitting commands. Bad buffers are reported here, as [`Context::run`] would.
    ///
    /// ```no_run
    /// use coopgemm::{Context, Gemm, GemmBuffers, GemmTypes, MatrixLayout};
    /// let context = Context::new_blocking()?;
    /// // A decode product: one row of activations times 4096 x 4096 f16 weights.
    /// let gemm = Gemm::new(1, 4096, 4096).types(GemmTypes::F16_F32).b(MatrixLayout::column_major());
    /// let a = context.upload("x", &vec![half::f16::ONE; 4096])?;
    /// let w = context.upload("W", &vec![half::f16::ONE; 4096 * 4096])?;
    /// let y = context.upload("y", &vec![0f32; 4096])?;
    /// let prepared = context.prepare_gemm(&gemm, &GemmBuffers::new(&a, &w, &y))?;
    /// for _ in 0..100 {
    ///     context.run_prepared(&[&prepared])?;
    /// }
    /// context.wait()?;
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn prepare_gemm(&self, gemm: &Gemm, buffers: &GemmBuffers<'_>) -> Result<PreparedGemm> {
        let resolved = gemm.resolve()?;
        let plan = self.plan_resolved(&resolved, false, false)?;
        self.prepare_plan(&resolved, &plan)?;
        BindingPlan::new(&resolved, buffers, &self.device().limits())?;
        let launch = self.scoped(|| self.launch_of(&resolved, &plan, buffers))??;
        Ok(PreparedGemm {
            context: self.shared_id(),
            kernel: plan.kernel.clone(),
            launch,
        })
    }

    /// Records `gemms` in order (each after the previous one's writes) and submits them in
    /// one submission.
    pub fn run_prepared(&self, gemms: &[&PreparedGemm]) -> Result<wgpu::SubmissionIndex> {
        if gemms.iter().any(|gemm| gemm.context != self.shared_id()) {
            return Err(Error::PreparedElsewhere);
        }
        let command_buffers = self.scoped(|| self.record_prepared(gemms))??;
        Ok(self.queue().submit(command_buffers))
    }

    fn launch_of(
        &self,
        gemm: &ResolvedGemm,
        plan: &Plan,
        buffers: &GemmBuffers<'_>,
    ) -> Result<Launch> {
        if gemm.is_empty() {
            return Ok(Launch::Nothing);
        }
        #[cfg(vulkan_interop)]
        if plan.selection.backend == crate::BackendKind::Coopmat && plan.staged_b.is_none() {
            let backend = self.coopmat_backend()?;
            let Some(split) = plan.split_k else {
                return Ok(
                    match backend.prepare_dispatch(gemm, buffers, &plan.configs[0])? {
                        Some(dispatch) => Launch::Raw(Box::new(dispatch)),
                        None => Launch::Nothing,
                    },
                );
            };
            let partials = self.create_buffer(
                "coopgemm prepared split-K partials",
                split.scratch_bytes(gemm),
                wgpu::BufferUsages::STORAGE,
            )?;
            let reduction = self
                .split_kernels()
                .bind_reduction(gemm, buffers, split, &partials)?;
            let part_buffers = GemmBuffers::new(buffers.a, buffers.b, &partials);
            let mut parts = Vec::new();
            for (part, config) in split.parts_with_configs(gemm, &plan.configs)? {
                parts.extend(backend.prepare_dispatch(&part, &part_buffers, config)?);
            }
            return Ok(Launch::Split(Box::new(PreparedSplit {
                parts,
                reduction,
                _partials: partials,
            })));
        }
        Ok(Launch::Recorded(Box::new(Recorded {
            gemm: *gemm,
            plan: plan.clone(),
            a: buffers.a.clone(),
            b: buffers.b.clone(),
            c: buffers.c.clone(),
            bias: buffers.bias.cloned(),
        })))
    }

    /// The command buffers of `gemms`, in order: consecutive raw dispatches share one pair.
    fn record_prepared(&self, gemms: &[&PreparedGemm]) -> Result<Vec<wgpu::CommandBuffer>> {
        let mut command_buffers = Vec::new();
        #[cfg(vulkan_interop)]
        let mut raw: Vec<&PreparedDispatch> = Vec::new();
        #[cfg(vulkan_interop)]
        let flush = |raw: &mut Vec<&PreparedDispatch>, list: &mut Vec<wgpu::CommandBuffer>| {
            if raw.is_empty() {
                return Ok(());
            }
            let backend = self.coopmat_backend()?;
            list.extend(backend.raw_kernels().record_prepared(raw)?);
            raw.clear();
            Ok::<(), Error>(())
        };
        for gemm in gemms {
            match &gemm.launch {
                Launch::Nothing => {}
                #[cfg(vulkan_interop)]
                Launch::Raw(dispatch) => raw.push(dispatch),
                #[cfg(vulkan_interop)]
                Launch::Split(split) => {
                    raw.extend(split.parts.iter());
                    flush(&mut raw, &mut command_buffers)?;
                    self.split_kernels().record_reduction(
                        &split.reduction,
                        crate::backend::Target::CommandBuffers(&mut command_buffers),
                    )?;
                }
                Launch::Recorded(recorded) => {
                    #[cfg(vulkan_interop)]
                    flush(&mut raw, &mut command_buffers)?;
                    let mut buffers = GemmBuffers::new(&recorded.a, &recorded.b, &recorded.c);
                    buffers.bias = recorded.bias.as_ref();
                    self.execute(
                        &recorded.gemm,
                        &recorded.plan,
                        &buffers,
                        crate::backend::Target::CommandBuffers(&mut command_buffers),
                    )?;
                }
            }
        }
        #[cfg(vulkan_interop)]
        flush(&mut raw, &mut command_buffers)?;
        Ok(command_buffers)
    }
}
