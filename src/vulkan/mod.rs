//! Everything that touches raw Vulkan, and the one wgpu call that skips shader checks:
//! the one place in the crate with `unsafe` code.
//!
//! - [`device`]: opening a wgpu device whose `VkDevice` has the cooperative-matrix
//!   extensions and features enabled, and finding out what a caller's device has.
//! - [`properties`]: the device's cooperative-matrix shapes, subgroup sizes and limits.
//! - `dispatch`: pipelines built from the GLSL kernels' SPIR-V with ash, and recording
//!   them on wgpu's own command buffers and buffers.
//! - `pipeline_cache`: driver pipeline caches loaded from and saved to disk.
//! - `statistics`: the driver's pipeline statistics (`COOPGEMM_PIPELINE_STATS=1`).
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
//! event from free lists and holds clones of its three `wgpu::Buffer`s; when a later call
//! finds the event set (`vkGetEventStatus`), the GPU is done with them, so the set and event
//! return to the free lists and the clones are dropped. Counts of raw objects therefore stay
//! flat over any number of GEMMs. When the backend is dropped it waits for wgpu's queue;
//! if some recorded GEMM was never submitted its objects are leaked with a warning rather
//! than freed while a command buffer might still use them. The backend holds a clone of the
//! `wgpu::Device`, so the `VkDevice` outlives every raw object.
//!
//! Submission stays with wgpu (`Queue::submit`), so wgpu's queue locking, submission
//! indices and `device.poll` keep working as usual.

pub mod device;
pub(crate) mod dispatch;
pub(crate) mod pipeline_cache;
pub mod properties;
pub(crate) mod statistics;

/// Creates the SIMT kernel's shader module without wgpu's runtime bounds checks.
///
/// Only for `wgsl/gemm_simt.wgsl`, whose every index is in bounds by construction: its
/// workgroup-memory indices are below the arrays' sizes for every configuration that passes
/// `SimtConfig::check`, and every storage-buffer access is guarded by the kernel's own
/// `row < m`, `col < n`, `k < K` tests, for which [`crate::BindingPlan`] has checked that the
/// element lies inside the bound range.
pub(crate) fn trusted_shader_module(
    device: &wgpu::Device,
    descriptor: wgpu::ShaderModuleDescriptor<'_>,
) -> wgpu::ShaderModule {
    // SAFETY: see above; the module is the SIMT kernel only (the sole caller), whose loops
    // are bounded by uniform values (k / TILE_K slices, constant tile loops).
    unsafe {
        device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
    }
}
