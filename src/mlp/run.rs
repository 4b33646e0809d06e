//! [`Mlp`], a network on the device, and the [`Context`] methods that build and run it.

use std::sync::Arc;

use crate::bindings::BoundRange;
use crate::context::Context;
use crate::error::{Error, Operand, Result};
use crate::kind::MlpKernel;
use crate::mlp::coopmat::CoopmatMlp;
use crate::mlp::coopvec::CoopvecMlp;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::kernel::MlpPlan;
use crate::mlp::rows::{BoundRows, MlpBuffers, MlpIo, MlpLayout};
use crate::mlp::sets::{bind_indices, MlpGrouping, RunOutput, RunTarget, SetGrouper};
use crate::mlp::simt::SimtMlp;
use crate::types::Element;

/// A network run recorded into command buffers of its own ([`Context::record_mlp`]),
/// ready for `Queue::submit`.
#[derive(Debug)]
#[non_exhaustive]
pub struct RecordedMlp {
    /// Submit these, in order, on the context's queue.
    pub command_buffers: Vec<wgpu::CommandBuffer>,
    /// Which kernel runs and why.
    pub plan: MlpPlan,
}

/// A network on a context's device: its shape, and its weights uploaded once in the layout
/// of each kernel the device can run. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Mlp {
    inner: Arc<MlpInner>,
    kernel: Option<MlpKernel>,
}

#[derive(Debug)]
struct MlpInner {
    desc: MlpDesc,
    /// Every weight set, set 0 first.
    sets: Vec<Vec<LayerWeights>>,
    /// The pre-pass of runs with set indices.
    grouper: SetGrouper,
    simt: SimtMlp,
    /// The cooperative-matrix kernel's copy, or why it cannot run the network here.
    coopmat: std::result::Result<CoopmatMlp, String>,
    /// The cooperative-vector kernel's copy, or why it cannot run the network here.
    coopvec: std::result::Result<CoopvecMlp, String>,
}

impl Mlp {
    /// The network's shape.
    pub fn desc(&self) -> &MlpDesc {
        &self.inner.desc
    }

    /// The weights it was built from (set 0 of a network with several weight sets).
    pub fn weights(&self) -> &[LayerWeights] {
        &self.inner.sets[0]
    }

    /// How many weight sets it has (1 unless built with
    /// [`Context::build_mlp_sets`]).
    pub fn sets(&self) -> usize {
        self.inner.sets.len()
    }

    /// Every weight set it was built from, set 0 first.
    pub fn weight_sets(&self) -> &[Vec<LayerWeights>] {
        &self.inner.sets
    }

    /// The same network, always run on `kernel` (a run fails with the reason where that
    /// kernel cannot run it); `None` lets [`Context::plan_mlp`] choose.
    pub fn with_kernel(&self, kernel: Option<MlpKernel>) -> Mlp {
        Mlp {
            inner: self.inner.clone(),
            kernel,
        }
    }

    /// The kernel forced with [`Mlp::with_kernel`], if any.
    pub fn forced_kernel(&self) -> Option<MlpKernel> {
        self.kernel
    }

    /// Checks the run's set-index buffer, if any, and its bound range.
    fn bind_set_indices<'b>(
        &self,
        context: &Context,
        buffers: &MlpBuffers<'b>,
    ) -> Result<Option<(&'b wgpu::Buffer, BoundRange)>> {
        buffers
            .set_indices
            .map(|indices| {
                let range = bind_indices(indices, buffers.layout.rows, &context.device().limits())?;
                Ok((indices, range))
            })
            .transpose()
    }
}

/// A network's copy for `kernel`, or why it has none.
fn kernel_copy<T>(copy: &std::result::Result<T, String>, kernel: MlpKernel) -> Result<&T> {
    copy.as_ref().map_err(|why| Error::MlpNoKernel {
        reasons: vec![(kernel, why.clone())],
    })
}

impl<'a> MlpBuffers<'a> {
    /// These buffers per chunk of rows that fits the bindings ([`MlpLayout::chunks`]; just
    /// these with set indices, whose rows the sets' pre-pass reads from the start), each
    /// with its bound input and output ranges. Every chunk is checked before any is
    /// recorded, so that a bad buffer records nothing.
    pub(crate) fn bind_chunks(
        &self,
        desc: &MlpDesc,
        limits: &wgpu::Limits,
    ) -> Result<Vec<BoundRows<'a>>> {
        let layouts = match self.set_indices {
            Some(_) => vec![self.layout],
            None => self.layout.chunks(desc, self.io, limits),
        };
        layouts
            .into_iter()
            .map(|layout| {
                let buffers = self.with_layout(layout);
                let (input, output) = buffers.bind(desc, limits)?;
                Ok(BoundRows {
                    buffers,
                    input,
                    output,
                })
            })
            .collect()
    }

    /// `rows` tightly packed rows of `io.input` in, of `io.output` out.
    pub fn new(
        mlp: &Mlp,
        input: &'a wgpu::Buffer,
        output: &'a wgpu::Buffer,
        io: MlpIo,
        rows: u32,
    ) -> MlpBuffers<'a> {
        MlpBuffers {
            input,
            output,
            io,
            layout: MlpLayout::new(mlp.desc(), rows),
            set_indices: None,
            grouping: MlpGrouping::Library,
        }
    }
}

impl Context {
    /// Checks `desc` and `weights` and uploads the weights for every network kernel this
    /// device has.
    ///
    /// ```no_run
    /// use coopgemm::{Context, LayerWeights, MlpActivation, MlpDesc, MlpIo};
    /// let context = Context::new_blocking()?;
    /// let desc = MlpDesc::uniform(&[64, 64, 64, 16], MlpActivation::Relu, MlpActivation::None);
    /// let mlp = context.build_mlp(&desc, &LayerWeights::seeded(&desc, 1))?;
    /// let x = vec![half::f16::from_f32(0.5); 1000 * 64];
    /// let y: Vec<f32> = context.evaluate_mlp(&mlp, &x)?;
    /// assert_eq!(y.len(), 1000 * 16);
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn build_mlp(&self, desc: &MlpDesc, weights: &[LayerWeights]) -> Result<Mlp> {
        desc.validate()?;
        desc.check_weights(0, weights)?;
        self.build_mlp_checked(desc, vec![weights.to_vec()])
    }

    /// [`Context::build_mlp`] with several weight sets (one network per material): every
    /// set has the shape `desc`; a run evaluates each row with the set its index names
    /// ([`MlpBuffers::with_set_indices`]). 1 to [`MAX_MLP_SETS`](crate::MAX_MLP_SETS) sets.
    ///
    /// ```no_run
    /// use coopgemm::{Context, LayerWeights, MlpActivation, MlpDesc};
    /// let context = Context::new_blocking()?;
    /// let desc = MlpDesc::uniform(&[64, 64, 16], MlpActivation::Relu, MlpActivation::None);
    /// let sets: Vec<_> = (0..4).map(|seed| LayerWeights::seeded(&desc, seed)).collect();
    /// let mlp = context.build_mlp_sets(&desc, &sets)?;
    /// let x = vec![half::f16::from_f32(0.5); 3 * 64];
    /// // Row 0 with set 3, row 1 with set 0, row 2 with set 2.
    /// let y: Vec<f32> = context.evaluate_mlp_sets(&mlp, &x, &[3, 0, 2])?;
    /// assert_eq!(y.len(), 3 * 16);
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn build_mlp_sets(&self, desc: &MlpDesc, sets: &[Vec<LayerWeights>]) -> Result<Mlp> {
        desc.validate()?;
        if sets.is_empty() || sets.len() > crate::mlp::MAX_MLP_SETS {
            return Err(Error::MlpSets {
                sets: sets.len(),
                limit: crate::mlp::MAX_MLP_SETS,
            });
        }
        for (set, weights) in sets.iter().enumerate() {
            desc.check_weights(set, weights)?;
        }
        self.build_mlp_checked(desc, sets.to_vec())
    }

    // On wasm32 wgpu's objects are neither Send nor Sync; the Arc then only shares the
    // network between clones on the one thread there is (as `Context::assemble`).
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    fn build_mlp_checked(&self, desc: &MlpDesc, sets: Vec<Vec<LayerWeights>>) -> Result<Mlp> {
        let views: Vec<&[LayerWeights]> = sets.iter().map(Vec::as_slice).collect();
        let (simt, coopmat, coopvec) = self.scoped(|| -> Result<_> {
            Ok((
                SimtMlp::new(self, desc, &views)?,
                CoopmatMlp::new(self, desc, &views)?,
                CoopvecMlp::new(self, desc, &views)?,
            ))
        })??;
        if let Err(why) = &coopmat {
            log::debug!("network {desc}: no cooperative-matrix kernel: {why}");
        }
        if let Err(why) = &coopvec {
            log::debug!("network {desc}: no cooperative-vector kernel: {why}");
        }
        let grouper = SetGrouper::new(self, desc, sets.len() as u32);
        Ok(Mlp {
            inner: Arc::new(MlpInner {
                desc: desc.clone(),
                sets,
                grouper,
                simt,
                coopmat,
                coopvec,
            }),
            kernel: None,
        })
    }

    /// Which kernel runs `mlp` on rows of `io` without set indices, and why (every kernel
    /// that cannot, with its reason). Every kernel but
    /// [`MlpKernel::CoopmatRows`] also runs rows with set indices (without, every row uses
    /// set 0); the plan a run returns is that run's.
    pub fn plan_mlp(&self, mlp: &Mlp, io: MlpIo) -> Result<MlpPlan> {
        self.plan_mlp_for(mlp, io, false, false)
    }

    /// [`Context::plan_mlp`] among the kernels that can record into a shared encoder only,
    /// if `shared_encoder`, for a run with set indices if `indexed`.
    pub(crate) fn plan_mlp_for(
        &self,
        mlp: &Mlp,
        io: MlpIo,
        shared_encoder: bool,
        indexed: bool,
    ) -> Result<MlpPlan> {
        io.check()?;
        let candidates = MlpKernel::ALL.map(|kernel| {
            let support = if shared_encoder && !kernel.records_into_shared_encoder() {
                Err(
                    "records raw Vulkan commands, which cannot share a wgpu encoder (use run_mlp or record_mlp)"
                        .into(),
                )
            } else {
                match kernel {
                    MlpKernel::CoopmatRows => mlp
                        .inner
                        .coopmat
                        .as_ref()
                        .map_err(Clone::clone)
                        .and_then(|coopmat| {
                            coopmat.supports_rows(
                                self.backends_of_device()
                                    .coopmat
                                    .as_ref()
                                    .map_err(Clone::clone)?,
                                io,
                                indexed,
                            )
                        }),
                    MlpKernel::Coopmat => mlp
                        .inner
                        .coopmat
                        .as_ref()
                        .map_err(Clone::clone)
                        .and_then(|coopmat| {
                            coopmat.supports(
                                self.backends_of_device()
                                    .coopmat
                                    .as_ref()
                                    .map_err(Clone::clone)?,
                                io,
                            )
                        }),
                    MlpKernel::Coopvec => mlp
                        .inner
                        .coopvec
                        .as_ref()
                        .map_err(Clone::clone)
                        .and_then(|coopvec| {
                            coopvec.supports(
                                self.backends_of_device()
                                    .coopmat
                                    .as_ref()
                                    .map_err(Clone::clone)?,
                                io,
                            )
                        }),
                    MlpKernel::Simt => mlp.inner.simt.supports(mlp.desc(), io),
                }
            };
            (kernel, support)
        });
        MlpPlan::choose(&candidates, mlp.kernel)
    }

    /// Records `mlp` on `buffers` into `encoder` (the caller submits it), after the sets'
    /// pre-pass where `buffers` has set indices. Only kernels that record plain wgpu
    /// commands can share an encoder; [`Context::record_mlp`] records any kernel into
    /// command buffers of its own. Rows that do not fit one binding run in chunks
    /// (without set indices), one dispatch each.
    pub fn encode_mlp(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        mlp: &Mlp,
        buffers: &MlpBuffers<'_>,
    ) -> Result<MlpPlan> {
        let plan = self.plan_mlp_for(mlp, buffers.io, true, buffers.set_indices.is_some())?;
        for chunk in buffers.bind_chunks(mlp.desc(), &self.device().limits())? {
            self.encode_simt_rows(mlp, &chunk, encoder)?;
        }
        Ok(plan)
    }

    /// Records `mlp` on `buffers` into command buffers of its own, ready for
    /// `Queue::submit` on [`Context::queue`], for kernels that cannot share the caller's
    /// encoder too (cooperative vectors and matrices record raw Vulkan commands).
    ///
    /// Several recorded runs (and [`Context::record`]ed GEMMs) can go into one submission:
    /// each run's commands order its reads and writes after everything before it. Submit
    /// each run's command buffers in order and as one piece (runs of one network with set
    /// indices share its run buffer, which each run's first command buffer rewrites), runs
    /// in the order recorded, before destroying any of their buffers. A raw-Vulkan run that
    /// is never submitted holds its descriptor set, its event and clones of its buffers for
    /// the life of the context.
    pub fn record_mlp(&self, mlp: &Mlp, buffers: &MlpBuffers<'_>) -> Result<RecordedMlp> {
        let (plan, command_buffers) = self.scoped(|| self.record_mlp_chunks(mlp, buffers))??;
        Ok(RecordedMlp {
            command_buffers,
            plan,
        })
    }

    /// Records `mlp` on `buffers` into command buffers of its own, in submission order: one
    /// run per chunk of rows that fits the bindings.
    fn record_mlp_chunks(
        &self,
        mlp: &Mlp,
        buffers: &MlpBuffers<'_>,
    ) -> Result<(MlpPlan, Vec<wgpu::CommandBuffer>)> {
        let plan = self.plan_mlp_for(mlp, buffers.io, false, buffers.set_indices.is_some())?;
        let mut command_buffers = Vec::new();
        for chunk in buffers.bind_chunks(mlp.desc(), &self.device().limits())? {
            command_buffers.extend(
                self.run_mlp_rows(mlp, plan.kernel, &chunk, RunTarget::Record)?
                    .recorded()?,
            );
        }
        Ok((plan, command_buffers))
    }

    /// Records `mlp` on `kernel` over the rows of `chunk`, or, for [`RunTarget::Prepare`],
    /// binds its raw dispatch once where it can ([`RunOutput::PerLaunch`] where each launch
    /// must record: the SIMT kernel, and runs whose slots a pre-pass fills).
    pub(crate) fn run_mlp_rows(
        &self,
        mlp: &Mlp,
        kernel: MlpKernel,
        chunk: &BoundRows<'_>,
        target: RunTarget,
    ) -> Result<RunOutput> {
        if chunk.buffers.layout.rows == 0 {
            return Ok(RunOutput::Nothing);
        }
        let sets = || {
            let indices = mlp.bind_set_indices(self, &chunk.buffers)?;
            Ok::<_, Error>(indices.map(|indices| (&mlp.inner.grouper, indices)))
        };
        Ok(match kernel {
            // The plan chose the kernel, so the network has its copy.
            MlpKernel::CoopmatRows => kernel_copy(&mlp.inner.coopmat, kernel)?.record_rows(
                self,
                mlp.desc(),
                chunk,
                target,
            )?,
            MlpKernel::Coopmat => kernel_copy(&mlp.inner.coopmat, kernel)?.record(
                self,
                mlp.desc(),
                chunk,
                sets()?,
                target,
            )?,
            MlpKernel::Coopvec => {
                kernel_copy(&mlp.inner.coopvec, kernel)?.record(self, chunk, sets()?, target)?
            }
            MlpKernel::Simt if target == RunTarget::Prepare => RunOutput::PerLaunch,
            MlpKernel::Simt => {
                let mut encoder =
                    self.device()
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("coopgemm network"),
                        });
                self.encode_simt_rows(mlp, chunk, &mut encoder)?;
                RunOutput::Recorded(vec![encoder.finish()])
            }
        })
    }

    /// Records the SIMT network over the rows of `chunk` into `encoder`: the caller's
    /// ([`Context::encode_mlp`]) or one of the context's own.
    fn encode_simt_rows(
        &self,
        mlp: &Mlp,
        chunk: &BoundRows<'_>,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<()> {
        let indices = mlp.bind_set_indices(self, &chunk.buffers)?;
        mlp.inner.simt.record(
            self,
            mlp.desc(),
            chunk,
            indices.map(|indices| (&mlp.inner.grouper, indices)),
            encoder,
        )
    }

    /// Records and submits `mlp` on `buffers`; returns the plan it ran with and the
    /// submission.
    pub fn run_mlp(
        &self,
        mlp: &Mlp,
        buffers: &MlpBuffers<'_>,
    ) -> Result<(MlpPlan, wgpu::SubmissionIndex)> {
        let recorded = self.record_mlp(mlp, buffers)?;
        Ok((recorded.plan, self.queue().submit(recorded.command_buffers)))
    }

    /// Uploads `input` (rows of `mlp.desc().input_width()` values, tightly packed), runs the
    /// network and returns its output rows.
    pub async fn evaluate_mlp_async<I: Element, O: Element>(
        &self,
        mlp: &Mlp,
        input: &[I],
    ) -> Result<Vec<O>> {
        self.evaluate_mlp_rows(mlp, input, None).await
    }

    /// Uploads `input` (and `indices`, checked), runs and downloads.
    async fn evaluate_mlp_rows<I: Element, O: Element>(
        &self,
        mlp: &Mlp,
        input: &[I],
        indices: Option<&[u32]>,
    ) -> Result<Vec<O>> {
        let width = mlp.desc().input_width() as usize;
        if !input.len().is_multiple_of(width) {
            return Err(Error::HostDataLength {
                operand: Operand::Input,
                expected: (input.len() / width * width) as u64,
                actual: input.len() as u64,
            });
        }
        let rows = u32::try_from(input.len() / width).map_err(|_| Error::IndexOverflow {
            operand: Operand::Input,
            last_index: input.len() as u64,
            limit: u64::from(u32::MAX),
        })?;
        let io = MlpIo {
            input: I::DTYPE,
            output: O::DTYPE,
        };
        io.check()?;
        let outputs = rows as usize * mlp.desc().output_width() as usize;
        let input_buffer = self.upload("coopgemm network input", input)?;
        let output_buffer = self.upload(
            "coopgemm network output",
            &vec![O::from_f64_lossy(0.0); outputs],
        )?;
        let mut buffers = MlpBuffers::new(mlp, &input_buffer, &output_buffer, io, rows);
        let index_buffer = match indices {
            Some(indices) if !indices.is_empty() => Some(self.upload(
                "coopgemm network set indices",
                bytemuck::cast_slice::<u32, i32>(indices),
            )?),
            _ => None,
        };
        if let Some(index_buffer) = &index_buffer {
            buffers = buffers.with_set_indices(index_buffer);
        }
        self.run_mlp(mlp, &buffers)?;
        self.download(&output_buffer, outputs).await
    }

    /// [`Context::evaluate_mlp_async`] with row `r` evaluated with weight set `indices[r]`:
    /// every index is checked on the host first ([`Error::MlpSetIndex`]), one per row.
    pub async fn evaluate_mlp_sets_async<I: Element, O: Element>(
        &self,
        mlp: &Mlp,
        input: &[I],
        indices: &[u32],
    ) -> Result<Vec<O>> {
        let width = mlp.desc().input_width() as usize;
        let rows = input.len() / width;
        if indices.len() != rows {
            return Err(Error::HostDataLength {
                operand: Operand::SetIndices,
                expected: rows as u64,
                actual: indices.len() as u64,
            });
        }
        if let Some((row, &set)) = indices
            .iter()
            .enumerate()
            .find(|(_, &set)| set as usize >= mlp.sets())
        {
            return Err(Error::MlpSetIndex {
                row,
                set,
                sets: mlp.sets(),
            });
        }
        self.evaluate_mlp_rows(mlp, input, Some(indices)).await
    }

    /// [`Context::evaluate_mlp_sets_async`], blocking the current thread (not on wasm32).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn evaluate_mlp_sets<I: Element, O: Element>(
        &self,
        mlp: &Mlp,
        input: &[I],
        indices: &[u32],
    ) -> Result<Vec<O>> {
        pollster::block_on(self.evaluate_mlp_sets_async(mlp, input, indices))
    }

    /// [`Context::evaluate_mlp_async`], blocking the current thread (not on wasm32).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn evaluate_mlp<I: Element, O: Element>(&self, mlp: &Mlp, input: &[I]) -> Result<Vec<O>> {
        pollster::block_on(self.evaluate_mlp_async(mlp, input))
    }
}
