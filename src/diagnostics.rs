//! [`Context`]'s answers about its backends and device, as plain data: which backends run
//! which types ([`Context::backend`]), what the device offers the cooperative-matrix
//! backends ([`Context::cooperative_matrices`]) and the raw Vulkan objects held
//! ([`Context::vulkan_objects`]). For `examples/info.rs`, tests and callers that report what
//! coopgemm found.

use crate::backends::BackendStatus;
use crate::context::Context;
use crate::device_info::{CooperativeMatrices, VulkanObjects};
use crate::kind::BackendKind;

impl Context {
    /// Whether this device has the backend of `kind`, why not, and which type combinations
    /// it runs (one entry of [`Context::backends`]).
    ///
    /// ```no_run
    /// use coopgemm::{BackendKind, Context, GemmTypes};
    /// let context = Context::new_blocking()?;
    /// let coopmat = context.backend(BackendKind::Coopmat);
    /// if coopmat.types.contains(&GemmTypes::F16_F32) {
    ///     println!("tensor cores for f16: {:?}", coopmat.availability);
    /// }
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn backend(&self, kind: BackendKind) -> BackendStatus {
        self.backends_of_device().status(kind)
    }

    /// What the device offers the cooperative-matrix backends: the Vulkan backend's device
    /// facts and enabled features, the WGSL backend's coop shapes and subgroup size (each
    /// `None` or empty where that backend is unavailable).
    pub fn cooperative_matrices(&self) -> CooperativeMatrices {
        let backends = self.backends_of_device();
        let coopmat = backends.coopmat.as_ref().ok();
        let wgsl = backends.wgsl_coopmat.as_ref().ok();
        CooperativeMatrices {
            vulkan: coopmat.map(|backend| backend.device_info().clone()),
            vulkan_features: coopmat.map(|backend| backend.enabled_features()),
            wgsl_shapes: wgsl.map_or_else(Vec::new, |backend| backend.shapes().to_vec()),
            wgsl_subgroup_size: wgsl.map(|backend| backend.subgroup_size()),
        }
    }

    /// The raw Vulkan objects the cooperative-matrix backend holds, where it is available
    /// (first reclaiming the resources of GEMMs that have completed): flat over a long run.
    pub fn vulkan_objects(&self) -> Option<VulkanObjects> {
        let coopmat = self.backends_of_device().coopmat.as_ref().ok()?;
        let in_flight = coopmat.in_flight();
        let (pipelines, descriptor_pools, events) = coopmat.object_counts();
        Some(VulkanObjects {
            pipelines,
            descriptor_pools,
            events,
            in_flight,
        })
    }
}
