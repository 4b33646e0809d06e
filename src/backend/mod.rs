//! The [`Backend`] trait and the three implementations behind it.
//!
//! - [`simt`]: a WGSL tiled GEMM that runs on every wgpu backend.
//! - [`coopmat`]: a GLSL cooperative-matrix GEMM driven with ash through wgpu's Vulkan HAL.
//! - [`wgsl_coopmat`]: a WGSL GEMM on wgpu's own cooperative matrices (Vulkan and Metal,
//!   wherever wgpu offers `EXPERIMENTAL_COOPERATIVE_MATRIX`), recorded with plain wgpu.
//!
//! A [`Context`](crate::Context) owns one of each that the device can run and picks
//! between them per GEMM (see [`Selection`](crate::Selection)).

// Where the raw-Vulkan interop is not built (see build.rs), `coopmat_absent.rs` stands in:
// the same kind, never available, saying why.
#[cfg_attr(not(vulkan_interop), path = "coopmat_absent.rs")]
pub mod coopmat;
pub mod kind;
pub mod simt;
pub mod wgsl_coopmat;

use std::fmt;

pub use kind::BackendKind;

use crate::bindings::GemmBuffers;
use crate::epilogue::Epilogue;
use crate::error::{Error, Result};
use crate::problem::ResolvedGemm;

/// Where a backend records its commands.
pub enum Target<'a> {
    /// Into a `wgpu::CommandEncoder` the caller owns, among the caller's own wgpu commands.
    /// Only backends that record plain wgpu commands accept this (see
    /// [`Backend::records_into_shared_encoder`]).
    Encoder(&'a mut wgpu::CommandEncoder),
    /// Into command buffers of the backend's own, appended here in submission order.
    CommandBuffers(&'a mut Vec<wgpu::CommandBuffer>),
}

impl Target<'_> {
    /// The same target for one more recording, leaving this one usable afterwards.
    pub(crate) fn reborrow(&mut self) -> Target<'_> {
        match self {
            Target::Encoder(encoder) => Target::Encoder(encoder),
            Target::CommandBuffers(list) => Target::CommandBuffers(list),
        }
    }
}

/// What a backend chose for one GEMM: its kernel configuration, in words and numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// The backend.
    pub backend: BackendKind,
    /// The configuration's name (e.g. `simt-128x128x8-t8x8`).
    pub config: String,
}

impl KernelInfo {
    /// The info for a configuration named `config` running `epilogue` (its name is appended
    /// after a `+` when it does anything).
    pub(crate) fn new(backend: BackendKind, config: String, epilogue: &Epilogue) -> KernelInfo {
        let config = if epilogue.is_identity() {
            config
        } else {
            format!("{config}+{}", epilogue.name())
        };
        KernelInfo { backend, config }
    }
}

/// A GEMM implementation.
///
/// Backends check what they can run ([`Backend::supports`]), build and cache the
/// pipeline for a description ([`Backend::prepare`]) and record it ([`Backend::record`]).
/// Descriptions and buffers reach them already validated by the context. Backends are
/// `Send + Sync` wherever wgpu's objects are (everywhere but wasm32, wgpu's
/// `WasmNotSendSync`).
pub trait Backend: wgpu::WasmNotSendSync + fmt::Debug {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;

    /// `Ok` if this backend can run the description, otherwise why not.
    fn supports(&self, gemm: &ResolvedGemm) -> std::result::Result<(), String>;

    /// Whether [`Target::Encoder`] is accepted (plain wgpu commands only).
    fn records_into_shared_encoder(&self) -> bool;

    /// The workgroup tile (rows, columns of C) of the kernel chosen for this description:
    /// its width is the panel width B should be packed in
    /// ([`Context::pack_b`](crate::Context::pack_b)), and the count of tiles decides
    /// split-K. `None` if it cannot run the description.
    fn tile(&self, gemm: &ResolvedGemm) -> Option<(u32, u32)>;

    /// Builds (or finds in the cache) the kernel for this description and says which it is.
    /// `config_name` picks one of [`Backend::tuning_candidates`] instead of the heuristic.
    fn prepare(&self, gemm: &ResolvedGemm, config_name: Option<&str>) -> Result<KernelInfo>;

    /// Records the GEMM with the backend's own choice of configuration.
    fn record(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
    ) -> Result<KernelInfo> {
        self.record_config(gemm, buffers, target, None)
    }

    /// Names of the configurations that can run this description, for the autotuner to time
    /// ([`KernelInfo::config`] without the epilogue suffix).
    fn tuning_candidates(&self, gemm: &ResolvedGemm) -> Vec<String>;

    /// Records the GEMM with the named configuration (one of
    /// [`Backend::tuning_candidates`]), or the backend's own choice for `None`.
    fn record_config(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
        config_name: Option<&str>,
    ) -> Result<KernelInfo>;
}

/// The grid for `groups` workgroups of a kernel that flattens x and y into one index
/// (`x + y * groups_x * workgroup size`): x up to the per-dimension limit, the rest along y,
/// `depth` along z. Checked against the limits.
pub(crate) fn flat_grid(groups: u64, depth: u32, limits: &wgpu::Limits) -> Result<[u32; 3]> {
    let limit = limits.max_compute_workgroups_per_dimension;
    let x = groups.min(limit as u64).max(1);
    let y = groups.div_ceil(x).min(u32::MAX as u64) as u32;
    let grid = [x as u32, y, depth];
    check_grid(grid, [limit; 3])?;
    Ok(grid)
}

/// Records with `encode` into `target`: the caller's encoder, or an encoder of its own
/// (labelled `label`) whose command buffer is appended to the list. For backends that record
/// with wgpu commands.
pub(crate) fn record_wgpu(
    device: &wgpu::Device,
    label: &str,
    target: Target<'_>,
    encode: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<KernelInfo>,
) -> Result<KernelInfo> {
    match target {
        Target::Encoder(encoder) => encode(encoder),
        Target::CommandBuffers(list) => {
            let mut encoder = device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
            let info = encode(&mut encoder)?;
            list.push(encoder.finish());
            Ok(info)
        }
    }
}

/// Checks a dispatch grid (workgroups along x, y, z) against per-dimension limits.
pub(crate) fn check_grid(grid: [u32; 3], limits: [u32; 3]) -> Result<()> {
    for (dimension, (count, limit)) in grid.into_iter().zip(limits).enumerate() {
        if count > limit {
            return Err(Error::TooManyWorkgroups {
                dimension: dimension as u32,
                count: count as u64,
                limit,
            });
        }
    }
    Ok(())
}
