//! Stands in for `coopvec.rs` where the raw-Vulkan interop is not built (see build.rs): the
//! cooperative-vector network kernel exists, never available, saying why.

use crate::bindings::BoundRange;
use crate::context::Context;
use crate::error::Result;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::{BoundRows, MlpIo};
use crate::mlp::sets::{RunOutput, RunTarget, SetGrouper};

/// Never built here.
#[derive(Debug)]
pub(crate) enum CoopvecMlp {}

impl CoopvecMlp {
    /// Always unavailable on this platform.
    pub(crate) fn new(
        _context: &Context,
        _desc: &MlpDesc,
        _sets: &[&[LayerWeights]],
    ) -> Result<std::result::Result<CoopvecMlp, String>> {
        Ok(Err(crate::backend::coopmat::NOT_BUILT.into()))
    }

    pub(crate) fn supports(
        &self,
        _backend: &crate::backend::coopmat::CoopmatBackend,
        _io: MlpIo,
    ) -> std::result::Result<(), String> {
        match *self {}
    }

    pub(crate) fn record(
        &self,
        _context: &Context,
        _chunk: &BoundRows<'_>,
        _sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
        _target: RunTarget,
    ) -> Result<RunOutput> {
        match *self {}
    }
}
