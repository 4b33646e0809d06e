//! B staged K-contiguous at run time ([`StageBChoice`]): where the kernel chosen for a GEMM
//! reads B much faster with K contiguous and B is row-major, the GEMM's submission first
//! copies B into a scratch buffer in the layout [`Context::pack_b`](crate::Context::pack_b)
//! would give it (the same packing kernel, `k_contiguous` entry point) and the kernel then
//! reads the copy. The planner decides ([`StagedB::choose`]); the context records the copy
//! before the GEMM ([`Stager::record`]).

use crate::backend::PackedForm;
use crate::backend::{Backend, Target};
use crate::bindings::GemmBuffers;
use crate::error::Result;
use crate::options::StageBChoice;
use crate::packing::{PackKernel, PackedShape};
use crate::problem::{Order, ResolvedGemm};
use crate::scratch::ScratchBuffer;
use crate::timing::GpuTimer;

/// Rows of A from which [`StageBChoice::Auto`] stages B: the copy reads and writes B once,
/// which the faster kernel repays only when it reads B often enough (the measurements:
/// `docs/benchmarks.md`, B staging).
pub const STAGE_B_MIN_ROWS: u32 = 2048;

/// A plan's decision to stage B: where B goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StagedB {
    shape: PackedShape,
}

impl StagedB {
    /// Whether `gemm` runs with B staged on `backend` under `choice`, and if so, the GEMM
    /// that reads the staged copy: only row-major B that fits a binding; under `Auto`, only
    /// where A has at least [`STAGE_B_MIN_ROWS`] rows and the kernel the backend would choose
    /// for the staged GEMM wants B K-contiguous.
    pub(crate) fn choose(
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        choice: StageBChoice,
        limits: &wgpu::Limits,
    ) -> Option<(StagedB, ResolvedGemm)> {
        let eligible = match choice {
            StageBChoice::Never => false,
            StageBChoice::Always => true,
            StageBChoice::Auto => gemm.gemm.m >= STAGE_B_MIN_ROWS,
        };
        if !eligible || gemm.b.order != Order::RowMajor || gemm.b.is_empty() {
            return None;
        }
        let shape = PackedShape::new(gemm, PackedForm::KContiguous, limits).ok()?;
        let staged = StagedB { shape };
        let staged_gemm = staged.gemm(gemm).ok()?;
        let wanted = choice == StageBChoice::Always
            || backend
                .choose(&staged_gemm)
                .is_ok_and(|config| config.packed_form() == PackedForm::KContiguous);
        wanted.then_some((staged, staged_gemm))
    }

    /// `gemm` reading B from the scratch buffer.
    pub(crate) fn gemm(&self, gemm: &ResolvedGemm) -> Result<ResolvedGemm> {
        gemm.gemm.b(self.shape.layout).resolve()
    }
}

/// The scratch buffer staged Bs are copied into, reused by every GEMM (see `scratch`).
#[derive(Debug)]
pub(crate) struct Stager {
    scratch: ScratchBuffer,
}

impl Stager {
    pub(crate) fn new(device: &wgpu::Device) -> Stager {
        Stager {
            scratch: ScratchBuffer::new(device, "coopgemm staged B"),
        }
    }

    /// Records the copy of the B of `gemm` (in `buffers.b`) into the scratch buffer and
    /// returns that buffer, for the GEMM recorded next into the same `target`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        staged: &StagedB,
        pack_kernel: &PackKernel,
        device: &wgpu::Device,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        timer: Option<&GpuTimer>,
        target: Target<'_>,
    ) -> Result<wgpu::Buffer> {
        let scratch = self.scratch.get(staged.shape.total_bytes)?;
        pack_kernel.record(
            device,
            gemm,
            buffers.b,
            &staged.shape,
            &scratch,
            timer,
            target,
        )?;
        Ok(scratch)
    }
}
