//! The cooperative-matrix backend where coopgemm is built without the raw-Vulkan interop
//! (macOS, iOS, the web: wgpu has no Vulkan backend there). The kind still exists, so callers
//! write the same code everywhere, and so do its configuration types (`coopmat/config.rs`,
//! shared with the real backend); it is never available and says why, through
//! [`Context::backends`](crate::Context::backends), selection and `info`.

// The configuration types are the same on every platform (a caller's code that names them
// compiles everywhere); only the backend that runs them is missing. Their helpers for the
// backend (tuning overrides, candidate lists) are unused here.
#[allow(dead_code)]
#[path = "coopmat/config.rs"]
mod config;
#[allow(dead_code)]
#[path = "coopmat/decode.rs"]
mod decode;
#[allow(dead_code)]
#[path = "coopmat/forced.rs"]
mod forced;
pub use config::*;
pub use decode::{DecodeConfig, DecodeTile};
pub use forced::{SkinnyTile, WorkgroupScopeTile};

use crate::backend::{Backend, BackendKind, BackendSetup, KernelConfig, Target};
use crate::bindings::GemmBuffers;
use crate::error::Result;
use crate::problem::ResolvedGemm;
use crate::vulkan::device::EnabledFeatures;

/// Why the backend is missing on this platform.
pub(crate) const NOT_BUILT: &str =
    "not built for this platform: wgpu has no Vulkan backend here, and the cooperative-matrix kernels run only through Vulkan";

/// The cooperative-matrix backend, which cannot exist on this platform: no value of this
/// type is ever made.
#[derive(Debug)]
pub enum CoopmatBackend {}

impl CoopmatBackend {
    pub(crate) fn new(
        _setup: &BackendSetup<'_>,
        _queue: &wgpu::Queue,
        _enabled: Option<EnabledFeatures>,
    ) -> std::result::Result<CoopmatBackend, String> {
        Err(NOT_BUILT.to_string())
    }

    pub(crate) fn read_timestamps(&self, _pairs: u32) -> Result<Vec<[u64; 2]>> {
        match *self {}
    }

    /// What the backend runs on (never called: no value exists).
    pub fn describe(&self) -> String {
        match *self {}
    }

    /// Never called: no value exists.
    pub(crate) fn supported_types(&self) -> Vec<crate::types::GemmTypes> {
        match *self {}
    }

    /// Never called: no value exists.
    pub(crate) fn device_info(&self) -> &crate::device_info::CoopmatDeviceInfo {
        match *self {}
    }

    /// Never called: no value exists.
    pub(crate) fn enabled_features(&self) -> EnabledFeatures {
        match *self {}
    }

    /// Never called: no value exists.
    pub(crate) fn in_flight(&self) -> usize {
        match *self {}
    }

    /// Never called: no value exists.
    pub(crate) fn object_counts(&self) -> (usize, usize, usize) {
        match *self {}
    }
}

impl Backend for CoopmatBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Coopmat
    }

    fn supports(&self, _gemm: &ResolvedGemm) -> std::result::Result<(), String> {
        match *self {}
    }

    fn records_into_shared_encoder(&self) -> bool {
        match *self {}
    }

    fn choose(&self, _gemm: &ResolvedGemm) -> Result<KernelConfig> {
        match *self {}
    }

    fn candidates(&self, _gemm: &ResolvedGemm) -> Vec<KernelConfig> {
        match *self {}
    }

    fn prepare(&self, _gemm: &ResolvedGemm, _config: &KernelConfig) -> Result<()> {
        match *self {}
    }

    fn record(
        &self,
        _gemm: &ResolvedGemm,
        _buffers: &GemmBuffers<'_>,
        _target: Target<'_>,
        _config: &KernelConfig,
    ) -> Result<()> {
        match *self {}
    }
}
