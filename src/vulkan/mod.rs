//! Everything that touches raw Vulkan, and the crate's other `unsafe` wgpu calls: the one
//! place in the crate with `unsafe` code. Not everything here is Vulkan: the module is named
//! for its main content, and also holds the three `unsafe` wgpu calls that work on every
//! backend (shader modules without runtime checks, `trusted_shader_module`; the token of
//! wgpu's experimental features, `experimental_features_for`; wgpu pipeline caches,
//! `pipeline_cache`), so that `unsafe` stays in one module.
//!
//! - [`device`]: opening a wgpu device whose `VkDevice` has the cooperative-matrix
//!   extensions and features enabled, and finding out what a caller's device has.
//! - [`properties`]: the device's cooperative-matrix shapes, cooperative-vector
//!   combinations, subgroup sizes and limits; `coopvec`: network weights converted to the
//!   driver's cooperative-vector matrix layout.
//! - `dispatch`: pipelines built from the GLSL kernels' SPIR-V with ash, and recording
//!   them on wgpu's own command buffers and buffers; `recycler`: the descriptor sets and
//!   events each recorded GEMM holds until the GPU is done with it; `touch`: the wgpu pass
//!   that initialises and tracks the buffers before each raw dispatch.
//! - `pipeline_cache` (the SIMT backend's `wgpu::PipelineCache`, on every platform) and
//!   `raw_pipeline_cache` (the coopmat backend's `VkPipelineCache`): driver pipeline caches
//!   loaded from and saved to disk.
//! - `statistics`: the driver's pipeline statistics (`COOPGEMM_PIPELINE_STATS=1`).
//!
//! These modules exist only where wgpu has a Vulkan backend (`cfg(vulkan_interop)`, set by
//! `build.rs`: Windows, Linux, Android, FreeBSD); elsewhere `absent.rs` stands in with the
//! same names and the cooperative-matrix backend reports that it is not built for the
//! platform.
//!
//! # How raw commands share wgpu's device and buffers
//!
//! A GEMM is recorded as two command buffers, submitted together and in order:
//!
//! 1. a wgpu compute pass that binds the three buffer ranges read-write and runs an empty
//!    shader. wgpu then zero-fills any part of them it has never written (so the kernel never
//!    reads memory wgpu considers uninitialised), marks them initialised (so wgpu will not
//!    zero-fill the kernel's output later), tracks their state (so its next use of them gets
//!    a barrier) and keeps them alive until the submission completes;
//! 2. a fresh wgpu encoder recorded through `CommandEncoder::as_hal_mut` with raw commands
//!    only (wgpu forbids mixing): a global memory barrier from all earlier writes to the
//!    shader, the dispatch, a barrier from the shader's writes to every later access, and
//!    `vkCmdSetEvent` on an event of ours.
//!
//! Raw objects live as follows: pipelines, layouts and shader modules are built once and
//! cached for the life of the backend. Each recorded GEMM takes a descriptor set and an
//! event from free lists and holds clones of its `wgpu::Buffer`s. A set may be rewritten only
//! when no pending command buffer uses it, so a GEMM gives them back in two steps
//! (`dispatch::VulkanKernels::reclaim`): a later call that finds its event set
//! (`vkGetEventStatus`) knows the dispatch ran, hence that its command buffers were
//! submitted, and registers `Queue::on_submitted_work_done`; wgpu runs that callback once
//! every submission made so far has completed, and only then do the set and event return to
//! the free lists and the clones drop. (Push descriptors would need no sets at all, but
//! `VK_KHR_push_descriptor` is not enabled on devices the caller opens with wgpu, so one
//! mechanism serves both kinds of device.) Counts of raw objects therefore stay flat over any
//! number of GEMMs. When the backend is dropped it waits for wgpu's queue; if some recorded
//! GEMM was never submitted its objects are leaked with a warning rather than freed while a
//! command buffer might still use them. The backend holds a clone of the `wgpu::Device`, so
//! the `VkDevice` outlives every raw object.
//!
//! Submission stays with wgpu (`Queue::submit`), so wgpu's queue locking, submission
//! indices and `device.poll` keep working as usual.

// The module boundary of the raw-Vulkan interop: compiled only where wgpu has a Vulkan
// backend (`cfg(vulkan_interop)`, see build.rs); elsewhere `absent` stands in with the same
// names, and the cooperative-matrix backend reports that it is not built for the platform.
#[cfg(vulkan_interop)]
pub(crate) mod coopvec;
#[cfg(vulkan_interop)]
pub mod device;
#[cfg(vulkan_interop)]
pub(crate) mod dispatch;
#[cfg(vulkan_interop)]
pub(crate) mod prepared;
#[cfg(vulkan_interop)]
pub mod properties;
#[cfg(vulkan_interop)]
mod raw_pipeline_cache;
#[cfg(vulkan_interop)]
mod recycler;
#[cfg(vulkan_interop)]
pub(crate) mod statistics;
#[cfg(vulkan_interop)]
mod touch;

#[cfg(not(vulkan_interop))]
mod absent;
#[cfg(not(vulkan_interop))]
pub use absent::device;
#[cfg(not(vulkan_interop))]
pub(crate) use absent::statistics;

pub(crate) mod pipeline_cache;

pub(crate) use crate::device_info::EnabledFeatures;

/// Creates a WGSL GEMM kernel's shader module without wgpu's runtime bounds checks.
///
/// Only for `wgsl/gemm_simt.wgsl` and `wgsl/gemm_coopmat.wgsl` (which shares its tile loads and
/// epilogue), whose every index is in bounds by construction: their workgroup-memory indices
/// (cooperative-matrix loads and stores included) are below the arrays' sizes for every
/// configuration that passes `SimtConfig::check` / `WgslCoopConfig::check`, and every
/// storage-buffer access is guarded by the kernel's own
/// `row < m`, `col < n`, `k < K` tests, for which [`crate::BindingPlan`] has checked that the
/// element lies inside the bound range.
pub(crate) fn trusted_shader_module(
    device: &wgpu::Device,
    descriptor: wgpu::ShaderModuleDescriptor<'_>,
) -> wgpu::ShaderModule {
    // SAFETY: see above; the module is one of those two kernels (the only callers, both
    // checked by tests/guard.rs), whose loops are bounded by uniform values (k / TILE_K
    // slices, constant tile loops).
    unsafe {
        device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
    }
}

/// The experimental-features token for a device that asks for `features`: enabled exactly
/// when they include one of wgpu's `EXPERIMENTAL_*` features. coopgemm asks for one only,
/// `EXPERIMENTAL_COOPERATIVE_MATRIX`, and only where the adapter lists it, for the WGSL
/// cooperative-matrix backend (`backend::wgsl_coopmat`).
pub(crate) fn experimental_features_for(features: wgpu::Features) -> wgpu::ExperimentalFeatures {
    if !features.intersects(wgpu::Features::all_experimental_mask()) {
        return wgpu::ExperimentalFeatures::disabled();
    }
    // SAFETY: the token acknowledges that wgpu's experimental features may hide bugs with
    // undefined behaviour. The only one requested is the cooperative matrix, used only by the
    // WGSL cooperative-matrix kernel, which wgpu and naga validate like any module; its
    // matrix loads and stores address workgroup memory only, at offsets below the arrays'
    // sizes for every configuration that passes `WgslCoopConfig::check` (unit-tested).
    unsafe { wgpu::ExperimentalFeatures::enabled() }
}

/// What `device::open_with_coopmat` is asked to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenOptions {
    /// Open the device for the emulated kernels (no cooperative-matrix extension needed).
    pub emulate_cooperative_matrix: bool,
    /// Enable `VK_KHR_pipeline_executable_properties` where listed (pipeline statistics).
    pub pipeline_statistics: bool,
    /// Enable `VK_EXT_pipeline_robustness` where listed, to build the kernels' pipelines
    /// without the driver's bounds checks ([`EnabledFeatures::unchecked_pipelines`]).
    pub unchecked_pipelines: bool,
}

/// Maps a failed Vulkan call named `what` to [`Error::Device`](crate::Error::Device).
#[cfg(vulkan_interop)]
pub(crate) fn vk_error(what: &str) -> impl FnOnce(ash::vk::Result) -> crate::Error + '_ {
    move |e| crate::Error::Device(format!("{what}: {e}"))
}
