//! Work planned, bound and built once, then launched many times with little host work:
//! [`PreparedGemm`] ([`Context::prepare_gemm`]) and [`PreparedMlp`] ([`Context::prepare_mlp`]),
//! launched by [`Context::run_prepared`], several in one submission.
//!
//! A plain [`Context::run`] resolves and plans the GEMM, checks its buffers, and on the
//! cooperative-matrix backend takes a descriptor set and an event from the recycler, writes
//! the set, and records a wgpu pass (with a new bind group) and the raw commands in two
//! command buffers of their own. A prepared GEMM did the planning, the checks and the
//! descriptor write once: a launch records only the commands, and the GEMMs of one
//! [`Context::run_prepared`] share one pair of command buffers and one submission. A GEMM
//! split along K on that backend is prepared the same way: its partial GEMMs' dispatches
//! and its reduction (a wgpu pass whose bind group is made once) are bound once, to
//! partial sums of its own; the reduction follows its parts in a wgpu command buffer.
//! Consecutive split GEMMs of one launch that do not read one another's results (nor share
//! partial sums: the same prepared GEMM twice) run all their partial GEMMs in one pair of
//! command buffers and all their reductions in one more, not three command buffers each.
//!
//! A network run on a raw-Vulkan kernel (cooperative vectors or matrices) is prepared the
//! same way, one dispatch per chunk of rows, and shares that pair of command buffers with
//! the GEMMs and networks around it: back to back, each launch then costs the GPU its
//! dispatch and a barrier, instead of a wgpu pass and two command buffers of its own. Runs
//! whose slots a pre-pass must fill first (weight sets grouped by the library) and the SIMT
//! kernel record their commands at each launch, from the plan and checks made once.

use crate::backend::KernelInfo;
use crate::bindings::{BindingPlan, BoundRange, GemmBuffers};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kind::MlpKernel;
use crate::mlp::{
    BoundRows, Mlp, MlpBuffers, MlpGrouping, MlpIo, MlpLayout, MlpPlan, RunOutput, RunTarget,
};
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

/// A network run on fixed buffers, planned, checked and built once by
/// [`Context::prepare_mlp`]; [`Context::run_prepared`] launches it (with other runs and
/// GEMMs in one submission).
///
/// It keeps its buffers alive. Launch it only on the context that prepared it (or a clone).
#[derive(Debug)]
pub struct PreparedMlp {
    /// [`Context::shared_id`] of the context that prepared it.
    context: usize,
    plan: MlpPlan,
    /// One per chunk of rows ([`MlpLayout::chunks`]).
    launches: Vec<Launch>,
}

impl PreparedMlp {
    /// Which kernel it launches and why.
    pub fn plan(&self) -> &MlpPlan {
        &self.plan
    }

    /// Whether its launches are bound once (a raw-Vulkan kernel whose slots need no
    /// pre-pass), rather than recorded at each launch.
    pub fn is_bound(&self) -> bool {
        self.launches
            .iter()
            .all(|launch| !matches!(launch, Launch::Network(_)))
    }
}

/// What [`Context::run_prepared`] launches: a [`PreparedGemm`] or a [`PreparedMlp`]. Mix
/// them in one submission as `&dyn PreparedWork`:
///
/// ```no_run
/// # use coopgemm::{Context, PreparedGemm, PreparedMlp, PreparedWork};
/// # fn launch(context: &Context, gemm: &PreparedGemm, net: &PreparedMlp) -> coopgemm::Result<()> {
/// context.run_prepared::<dyn PreparedWork>(&[gemm, net, gemm])?;
/// # Ok(()) }
/// ```
pub trait PreparedWork: std::fmt::Debug {
    /// The context it was prepared on and its launches, in order (not for use outside the
    /// crate: only coopgemm can make a [`Launches`]).
    #[doc(hidden)]
    fn launches(&self) -> Launches<'_>;
}

/// A prepared item's launches (see [`PreparedWork`]); nothing outside coopgemm can read or
/// make one.
#[doc(hidden)]
#[derive(Debug)]
pub struct Launches<'a> {
    context: usize,
    launches: &'a [Launch],
}

impl PreparedWork for PreparedGemm {
    fn launches(&self) -> Launches<'_> {
        Launches {
            context: self.context,
            launches: std::slice::from_ref(&self.launch),
        }
    }
}

impl PreparedWork for PreparedMlp {
    fn launches(&self) -> Launches<'_> {
        Launches {
            context: self.context,
            launches: &self.launches,
        }
    }
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
    /// A network run recorded at each launch (the SIMT kernel, or slots filled by a
    /// pre-pass) on the kernel its plan chose.
    Network(Box<NetworkRun>),
}

/// A chunk of a network run recorded at each launch: the buffers are kept here, checked
/// once.
#[derive(Debug)]
struct NetworkRun {
    mlp: Mlp,
    kernel: MlpKernel,
    input: wgpu::Buffer,
    output: wgpu::Buffer,
    set_indices: Option<wgpu::Buffer>,
    io: MlpIo,
    layout: MlpLayout,
    grouping: MlpGrouping,
    bound: (BoundRange, BoundRange),
}

impl NetworkRun {
    /// The chunk, bound as checked when it was prepared.
    fn chunk(&self) -> BoundRows<'_> {
        BoundRows {
            buffers: MlpBuffers {
                input: &self.input,
                output: &self.output,
                io: self.io,
                layout: self.layout,
                set_indices: self.set_indices.as_ref(),
                grouping: self.grouping,
            },
            input: self.bound.0,
            output: self.bound.1,
        }
    }
}

#[cfg(vulkan_interop)]
#[derive(Debug)]
struct PreparedSplit {
    parts: Vec<PreparedDispatch>,
    reduction: crate::split_k::BoundReduction,
    /// The partial sums (the parts' C, the reduction's input), this GEMM's alone.
    partials: wgpu::Buffer,
    /// The GEMM's A, B and C, to tell whether a later split's parts may run before this
    /// one's reduction ([`PreparedSplit::may_overtake`]).
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    c: wgpu::Buffer,
}

#[cfg(vulkan_interop)]
impl PreparedSplit {
    /// Whether this split's partial GEMMs may run before the reduction of `earlier`, a
    /// split launched before it: they must not read what that reduction writes (its C).
    /// The reductions keep their order and every part writes only its own GEMM's partial
    /// sums, so nothing else can conflict, except that a second launch of the same
    /// prepared GEMM shares the first one's partial sums: it would write the same values
    /// there, but it is kept after the first one's reduction rather than rely on that.
    fn may_overtake(&self, earlier: &PreparedSplit) -> bool {
        self.partials != earlier.partials && self.a != earlier.c && self.b != earlier.c
    }
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

    /// Plans `mlp` on `buffers`, checks them and builds its pipeline once, and, on the
    /// raw-Vulkan kernels (cooperative vectors or matrices), binds its dispatch once, for
    /// launches with [`Context::run_prepared`] (back to back, several in one submission,
    /// GEMMs between them). Bad buffers are reported here, as [`Context::run_mlp`] would.
    /// A run with set indices grouped by the library is planned and checked once, and its
    /// pre-pass and dispatch recorded at each launch (the indices may change between
    /// launches; so may every buffer's contents).
    ///
    /// ```no_run
    /// use coopgemm::{Context, LayerWeights, MlpActivation, MlpBuffers, MlpDesc, MlpIo};
    /// let context = Context::new_blocking()?;
    /// let desc = MlpDesc::uniform(&[64, 64, 64, 16], MlpActivation::Relu, MlpActivation::None);
    /// let mlp = context.build_mlp(&desc, &LayerWeights::seeded(&desc, 1))?;
    /// let rows = 1 << 20;
    /// let x = context.upload("x", &vec![half::f16::ONE; rows * 64])?;
    /// let y = context.upload("y", &vec![half::f16::ZERO; rows * 16])?;
    /// let prepared = context.prepare_mlp(&mlp, &MlpBuffers::new(&mlp, &x, &y, MlpIo::F16, rows as u32))?;
    /// println!("{}", prepared.plan());
    /// for _ in 0..100 {
    ///     context.run_prepared(&[&prepared])?;
    /// }
    /// context.wait()?;
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn prepare_mlp(&self, mlp: &Mlp, buffers: &MlpBuffers<'_>) -> Result<PreparedMlp> {
        let plan = self.plan_mlp_for(mlp, buffers.io, false, buffers.set_indices.is_some())?;
        let chunks = buffers.bind_chunks(mlp.desc(), &self.device().limits())?;
        let launches = self.scoped(|| {
            let mut launches = Vec::with_capacity(chunks.len());
            for chunk in &chunks {
                let run = self.run_mlp_rows(mlp, plan.kernel, chunk, RunTarget::Prepare)?;
                launches.push(match run {
                    RunOutput::Nothing => Launch::Nothing,
                    #[cfg(vulkan_interop)]
                    RunOutput::Prepared(dispatch) => Launch::Raw(dispatch),
                    RunOutput::Recorded(_) => {
                        return Err(Error::Device(
                            "a network run was recorded, not prepared".into(),
                        ))
                    }
                    RunOutput::PerLaunch => Launch::Network(Box::new(NetworkRun {
                        mlp: mlp.clone(),
                        kernel: plan.kernel,
                        input: chunk.buffers.input.clone(),
                        output: chunk.buffers.output.clone(),
                        set_indices: chunk.buffers.set_indices.cloned(),
                        io: chunk.buffers.io,
                        layout: chunk.buffers.layout,
                        grouping: chunk.buffers.grouping,
                        bound: (chunk.input, chunk.output),
                    })),
                });
            }
            Ok::<_, Error>(launches)
        })??;
        Ok(PreparedMlp {
            context: self.shared_id(),
            plan,
            launches,
        })
    }

    /// Records `work` in order (each after the previous one's writes) and submits it in
    /// one submission: prepared GEMMs ([`Context::prepare_gemm`]), prepared network runs
    /// ([`Context::prepare_mlp`]), or both (`&[&dyn PreparedWork]`). Consecutive raw
    /// dispatches share one pair of command buffers.
    pub fn run_prepared<W: PreparedWork + ?Sized>(
        &self,
        work: &[&W],
    ) -> Result<wgpu::SubmissionIndex> {
        let launches: Vec<Launches<'_>> = work.iter().map(|item| item.launches()).collect();
        if launches.iter().any(|item| item.context != self.shared_id()) {
            return Err(Error::PreparedElsewhere);
        }
        let command_buffers = self.scoped(|| self.record_prepared(&launches))??;
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
                partials,
                a: buffers.a.clone(),
                b: buffers.b.clone(),
                c: buffers.c.clone(),
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

    /// The command buffers of `work`, in order: consecutive raw dispatches share one pair,
    /// and consecutive split GEMMs that may overtake one another's reductions
    /// ([`PreparedSplit::may_overtake`]) share it too, their reductions following in one
    /// command buffer.
    fn record_prepared(&self, work: &[Launches<'_>]) -> Result<Vec<wgpu::CommandBuffer>> {
        let mut command_buffers = Vec::new();
        // The raw dispatches not yet recorded, and the splits among them whose reductions
        // must follow them.
        #[cfg(vulkan_interop)]
        let mut raw: Vec<&PreparedDispatch> = Vec::new();
        #[cfg(vulkan_interop)]
        let mut splits: Vec<&PreparedSplit> = Vec::new();
        #[cfg(vulkan_interop)]
        let flush = |raw: &mut Vec<&PreparedDispatch>,
                     splits: &mut Vec<&PreparedSplit>,
                     list: &mut Vec<wgpu::CommandBuffer>| {
            if !raw.is_empty() {
                let backend = self.coopmat_backend()?;
                list.extend(backend.raw_kernels().record_prepared(raw)?);
                raw.clear();
            }
            if !splits.is_empty() {
                let reductions: Vec<_> = splits.iter().map(|split| &split.reduction).collect();
                self.split_kernels()
                    .record_reductions(&reductions, crate::backend::Target::CommandBuffers(list))?;
                splits.clear();
            }
            Ok::<(), Error>(())
        };
        for launch in work.iter().flat_map(|item| item.launches) {
            match launch {
                Launch::Nothing => {}
                #[cfg(vulkan_interop)]
                Launch::Raw(dispatch) => {
                    // After the reductions of the splits before it.
                    if !splits.is_empty() {
                        flush(&mut raw, &mut splits, &mut command_buffers)?;
                    }
                    raw.push(dispatch);
                }
                #[cfg(vulkan_interop)]
                Launch::Split(split) => {
                    if !splits.iter().all(|earlier| split.may_overtake(earlier)) {
                        flush(&mut raw, &mut splits, &mut command_buffers)?;
                    }
                    raw.extend(split.parts.iter());
                    splits.push(split);
                }
                Launch::Recorded(recorded) => {
                    #[cfg(vulkan_interop)]
                    flush(&mut raw, &mut splits, &mut command_buffers)?;
                    let mut buffers = GemmBuffers::new(&recorded.a, &recorded.b, &recorded.c);
                    buffers.bias = recorded.bias.as_ref();
                    self.execute(
                        &recorded.gemm,
                        &recorded.plan,
                        &buffers,
                        crate::backend::Target::CommandBuffers(&mut command_buffers),
                    )?;
                }
                Launch::Network(run) => {
                    #[cfg(vulkan_interop)]
                    flush(&mut raw, &mut splits, &mut command_buffers)?;
                    command_buffers.extend(
                        self.run_mlp_rows(&run.mlp, run.kernel, &run.chunk(), RunTarget::Record)?
                            .recorded()?,
                    );
                }
            }
        }
        #[cfg(vulkan_interop)]
        flush(&mut raw, &mut splits, &mut command_buffers)?;
        Ok(command_buffers)
    }
}
