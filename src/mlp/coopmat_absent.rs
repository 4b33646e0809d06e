//! Stands in for `coopmat.rs` where the raw-Vulkan interop is not built (see build.rs): the
//! cooperative-matrix network kernels exist, never available, saying why.

use crate::bindings::BoundRange;
use crate::context::Context;
use crate::error::Result;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::{MlpBuffers, MlpIo};
use crate::mlp::sets::SetGrouper;

/// Never built here.
#[derive(Debug)]
pub(crate) enum CoopmatMlp {}

impl CoopmatMlp {
    /// Always unavailable on this platform.
    pub(crate) fn new(
        _context: &Context,
        _desc: &MlpDesc,
        _sets: &[&[LayerWeights]],
    ) -> Result<std::result::Result<CoopmatMlp, String>> {
        Ok(Err(crate::backend::coopmat::NOT_BUILT.into()))
    }

    pub(crate) fn supports(
        &self,
        _backend: &crate::backend::coopmat::CoopmatBackend,
        _io: MlpIo,
    ) -> std::result::Result<(), String> {
        match *self {}
    }

    pub(crate) fn supports_rows(
        &self,
        _backend: &crate::backend::coopmat::CoopmatBackend,
        _io: MlpIo,
        _indexed: bool,
    ) -> std::result::Result<(), String> {
        match *self {}
    }

    pub(crate) fn record_rows(
        &self,
        _context: &Context,
        _desc: &MlpDesc,
        _buffers: &MlpBuffers<'_>,
        _input: BoundRange,
        _output: BoundRange,
    ) -> Result<Vec<wgpu::CommandBuffer>> {
        match *self {}
    }

    pub(crate) fn record(
        &self,
        _context: &Context,
        _desc: &MlpDesc,
        _buffers: &MlpBuffers<'_>,
        _input: BoundRange,
        _output: BoundRange,
        _sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
    ) -> Result<Vec<wgpu::CommandBuffer>> {
        match *self {}
    }
}
