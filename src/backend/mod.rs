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
mod kernel;
mod overrides;
pub mod simt;
pub(crate) mod snippets;
mod wgpu_dispatch;
pub mod wgsl_coopmat;

use std::fmt;
use std::sync::Arc;

pub(crate) use kernel::PackedForm;
pub use kernel::{KernelConfig, KernelInfo};
pub(crate) use wgpu_dispatch::kernel_pipeline;
// `crate::backend::kind::BackendKind` keeps working; the kind lives outside the backends
// so that `error` can name it without depending on them.
pub(crate) use crate::kind;
pub use crate::kind::BackendKind;
pub(crate) use overrides::setters;
pub use overrides::KernelOverrides;

use crate::bindings::GemmBuffers;
use crate::disk_cache::CacheStore;
use crate::error::{Error, Result};
use crate::problem::ResolvedGemm;
use crate::timing::GpuTimer;
use crate::vulkan::pipeline_cache::WgpuPipelineCache;

/// What the backends of one device are built with, besides their own options: the device,
/// the disk cache their pipeline caches live in, the timer of
/// [`Context::time_on_gpu`](crate::Context::time_on_gpu), and the per-backend knobs.
pub(crate) struct BackendSetup<'a> {
    /// The device.
    pub device: &'a wgpu::Device,
    /// Where pipeline caches are kept between processes, if anywhere.
    pub store: Option<&'a CacheStore>,
    /// Timestamps around dispatches during timing, where the device has them.
    pub timer: Option<Arc<GpuTimer>>,
    /// Per-backend knobs (tiles, checks, loads).
    pub overrides: &'a KernelOverrides,
    /// Whether to log each new pipeline's driver statistics.
    pub pipeline_statistics: bool,
}

impl BackendSetup<'_> {
    /// A wgpu pipeline cache named `name` in the disk cache, where the device supports them.
    pub(crate) fn wgpu_pipeline_cache(&self, name: &'static str) -> Option<WgpuPipelineCache> {
        WgpuPipelineCache::open(self.device, self.store, name)
    }
}

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

/// A GEMM implementation.
///
/// A backend says what it can run ([`Backend::supports`]), which configurations could run a
/// description ([`Backend::choose`] is its heuristic's pick, [`Backend::candidates`] every
/// one for the autotuner), builds and caches the pipeline of a configuration
/// ([`Backend::prepare`]) and records it ([`Backend::record`]). Which backend and which
/// configuration run a GEMM is decided outside, by the [planner](crate::Plan); descriptions
/// and buffers reach backends already validated. Backends are `Send + Sync` wherever wgpu's
/// objects are (everywhere but wasm32, wgpu's `WasmNotSendSync`).
pub trait Backend: wgpu::WasmNotSendSync + fmt::Debug {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;

    /// `Ok` if this backend can run the description, otherwise why not.
    fn supports(&self, gemm: &ResolvedGemm) -> std::result::Result<(), String>;

    /// Whether [`Target::Encoder`] is accepted (plain wgpu commands only).
    fn records_into_shared_encoder(&self) -> bool;

    /// The heuristic's configuration for this description, or why there is none.
    fn choose(&self, gemm: &ResolvedGemm) -> Result<KernelConfig>;

    /// Every configuration that can run this description (the autotuner times them).
    fn candidates(&self, gemm: &ResolvedGemm) -> Vec<KernelConfig>;

    /// Builds (or finds in the cache) the pipeline of `config` for this description.
    /// A configuration of another backend, or one that cannot run the description, is an
    /// [`Error::Unsupported`].
    fn prepare(&self, gemm: &ResolvedGemm, config: &KernelConfig) -> Result<()>;

    /// Records the GEMM with `config` into `target`.
    fn record(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
        config: &KernelConfig,
    ) -> Result<()>;
}

/// The error for a configuration `backend` cannot run `gemm` with.
pub(crate) fn unusable_config(backend: BackendKind, config: &KernelConfig) -> Error {
    Error::Unsupported {
        backend,
        reason: format!(
            "configuration {config} ({}) cannot run this GEMM",
            config.backend()
        ),
    }
}

/// The grid for `groups` workgroups of a kernel that flattens x and y into one index
/// (`x + y * groups_x * workgroup size`): as few rows along y as the per-dimension limit
/// allows, x balanced over them so that at most `y - 1` workgroups lie past the end (the
/// kernels run those for nothing: x at the limit and the rest along y would make 65536
/// groups 131070, and on the H100 a network of 2^22 rows on 64-row workgroups took 1.49 ms
/// against 0.81 on 128-row ones), `depth` along z. Checked against the limits.
pub(crate) fn flat_grid(groups: u64, depth: u32, limits: &wgpu::Limits) -> Result<[u32; 3]> {
    let limit = limits.max_compute_workgroups_per_dimension;
    let rows = groups.div_ceil(u64::from(limit.max(1))).max(1);
    let x = groups.div_ceil(rows).max(1);
    let y = groups.div_ceil(x).min(u32::MAX as u64) as u32;
    let grid = [x as u32, y, depth];
    check_grid(grid, [limit; 3])?;
    Ok(grid)
}

/// Records with `encode` into `target`: the caller's encoder, or an encoder of its own
/// (labelled `label`) whose command buffer is appended to the list. For backends that record
/// with wgpu commands.
pub(crate) fn record_wgpu<T>(
    device: &wgpu::Device,
    label: &str,
    target: Target<'_>,
    encode: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<T>,
) -> Result<T> {
    match target {
        Target::Encoder(encoder) => encode(encoder),
        Target::CommandBuffers(list) => {
            let mut encoder = device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
            let output = encode(&mut encoder)?;
            list.push(encoder.finish());
            Ok(output)
        }
    }
}

/// The grid of a kernel with one workgroup per `tile` (rows, columns) of C: tiles along n
/// (x), tiles along m (y), batches (z), checked against per-dimension `limits`.
pub(crate) fn tile_grid(
    gemm: &ResolvedGemm,
    tile: (u32, u32),
    limits: [u32; 3],
) -> Result<[u32; 3]> {
    let grid = [
        gemm.gemm.n.div_ceil(tile.1),
        gemm.gemm.m.div_ceil(tile.0),
        gemm.gemm.batch,
    ];
    check_grid(grid, limits)?;
    Ok(grid)
}

/// The dispatch grid of a kernel whose workgroups own `tile` (rows, columns) of C, with the
/// row blocks along x (so that the workgroups reading the same columns of B run together)
/// and the column blocks along y: the coopmat backend's skinny kernel's (Vulkan only).
#[cfg(vulkan_interop)]
pub(crate) fn row_block_grid(
    gemm: &ResolvedGemm,
    tile: (u32, u32),
    limits: [u32; 3],
) -> Result<[u32; 3]> {
    let grid = [
        gemm.gemm.m.div_ceil(tile.0),
        gemm.gemm.n.div_ceil(tile.1),
        gemm.gemm.batch,
    ];
    check_grid(grid, limits)?;
    Ok(grid)
}

/// Checks a dispatch grid (workgroups along x, y, z) against per-dimension limits.
fn check_grid(grid: [u32; 3], limits: [u32; 3]) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::flat_grid;

    #[test]
    fn flat_grids_cover_every_group_with_fewer_than_y_spare() {
        let limits = wgpu::Limits::default();
        let limit = u64::from(limits.max_compute_workgroups_per_dimension);
        for groups in [
            1,
            7,
            limit - 1,
            limit,
            limit + 1,
            65536,
            131072,
            3 * limit + 5,
        ] {
            let [x, y, z] = flat_grid(groups, 2, &limits).expect("grid");
            let covered = u64::from(x) * u64::from(y);
            assert!(covered >= groups, "{groups}: {x} x {y}");
            assert!(covered - groups < u64::from(y), "{groups}: {x} x {y}");
            assert!(u64::from(x) <= limit && z == 2, "{groups}: {x} x {y} x {z}");
        }
        assert_eq!(flat_grid(65536, 1, &limits).unwrap(), [32768, 2, 1]);
    }
}
