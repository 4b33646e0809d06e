//! What a context's device offers the cooperative-matrix backends, as plain data, for
//! diagnostics (`examples/info.rs`) and tests: [`Context::cooperative_matrices`] and
//! [`Context::vulkan_objects`]. The types are the same on every platform; where coopgemm
//! has no Vulkan interop (macOS, iOS, the web) the Vulkan parts are simply `None`.
//!
//! [`Context::cooperative_matrices`]: crate::Context::cooperative_matrices
//! [`Context::vulkan_objects`]: crate::Context::vulkan_objects

use crate::types::{CoopShape, CoopmatShape, DType};

/// The cooperative matrices a context's backends found on its device.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CooperativeMatrices {
    /// What the Vulkan cooperative-matrix backend plans with, where it is available.
    pub vulkan: Option<CoopmatDeviceInfo>,
    /// What the Vulkan device was opened with, where that backend is available.
    pub vulkan_features: Option<EnabledFeatures>,
    /// The square coop shapes the WGSL cooperative-matrix backend uses (empty where it is
    /// unavailable).
    pub wgsl_shapes: Vec<CoopShape>,
    /// The subgroup size the WGSL cooperative-matrix kernels are built for, where that
    /// backend is available.
    pub wgsl_subgroup_size: Option<u32>,
}

/// The raw Vulkan objects the cooperative-matrix backend holds ([`Context::vulkan_objects`]):
/// their counts stay flat over a long run, which the leak tests check.
///
/// [`Context::vulkan_objects`]: crate::Context::vulkan_objects
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct VulkanObjects {
    /// Compute pipelines built.
    pub pipelines: usize,
    /// Descriptor pools allocated.
    pub descriptor_pools: usize,
    /// Events (one per recorded GEMM, reused once it completed).
    pub events: usize,
    /// GEMMs recorded whose completion has not been observed yet.
    pub in_flight: usize,
}

/// The device facts the cooperative-matrix backend plans with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoopmatDeviceInfo {
    /// Every cooperative-matrix configuration the device lists.
    pub shapes: Vec<CoopmatShape>,
    /// The default subgroup size.
    pub subgroup_size: u32,
    /// Smallest subgroup size a pipeline may require.
    pub min_subgroup_size: u32,
    /// Largest subgroup size a pipeline may require.
    pub max_subgroup_size: u32,
    /// `maxComputeSharedMemorySize` in bytes.
    pub shared_memory_bytes: u32,
    /// `maxComputeWorkGroupInvocations`.
    pub max_workgroup_invocations: u32,
    /// `maxComputeWorkgroupSubgroups`: the most subgroups of a required size one workgroup
    /// may have (`u32::MAX` where the device does not say).
    pub max_workgroup_subgroups: u32,
    /// `maxPushConstantsSize` in bytes.
    pub max_push_constant_bytes: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_workgroup_count: [u32; 3],
    /// The device name.
    pub device_name: String,
    /// Whether the device lists `VK_NV_cooperative_matrix2`.
    pub has_nv_cooperative_matrix2: bool,
    /// Workgroup-scope shapes of `VK_NV_cooperative_matrix2` (empty without it).
    pub flexible_shapes: Vec<FlexibleShape>,
    /// Largest workgroup a workgroup-scope matrix may use (0 without coopmat2).
    pub workgroup_scope_max_invocations: u32,
    /// Largest dimension of a flexible-dimension matrix (0 without coopmat2).
    pub flexible_max_dimension: u32,
    /// What `VK_NV_cooperative_vector` offers (`None` where the device does not list it),
    /// for the cooperative-vector network kernel.
    pub cooperative_vector: Option<CooperativeVectorInfo>,
}

/// The device's `VK_NV_cooperative_vector` properties.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CooperativeVectorInfo {
    /// `maxCooperativeVectorComponents`: the longest vector.
    pub max_components: u32,
    /// Whether `cooperativeVectorSupportedStages` includes compute.
    pub compute: bool,
    /// Every combination `vkGetPhysicalDeviceCooperativeVectorPropertiesNV` lists.
    pub combinations: Vec<CooperativeVectorCombination>,
}

/// One entry of `vkGetPhysicalDeviceCooperativeVectorPropertiesNV`: the types a
/// matrix-vector multiply-add may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CooperativeVectorCombination {
    /// Input vector type, input, matrix and bias interpretations, result type (`None`:
    /// a type coopgemm has no [`DType`] for, such as the 8-bit floats or packed bytes).
    pub types: [Option<DType>; 5],
    /// Whether optimal-layout matrices of this combination may be transposed.
    pub transpose: bool,
}

impl CooperativeVectorInfo {
    /// Whether the device multiplies f16 vectors by f16 matrices with an f16 bias into f16
    /// results in compute shaders: what the network kernel needs.
    pub fn has_f16(&self) -> bool {
        self.compute
            && self
                .combinations
                .iter()
                .any(|c| c.types == [Some(DType::F16); 5])
    }
}

/// One entry of `vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV`:
/// workgroup-scope matrices of any size that is a multiple of the granularities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FlexibleShape {
    /// M must be a multiple of this.
    pub m_granularity: u32,
    /// N must be a multiple of this.
    pub n_granularity: u32,
    /// K must be a multiple of this.
    pub k_granularity: u32,
    /// Element types of A, B, C and the result (`None`: unknown to coopgemm).
    pub types: [Option<DType>; 4],
    /// Whether the scope is a workgroup (the only scope the coopmat2 kernel uses).
    pub workgroup_scope: bool,
    /// Invocations a workgroup must have to use it.
    pub workgroup_invocations: u32,
}

/// What a device has enabled that the cooperative-matrix kernels care about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct EnabledFeatures {
    /// `VK_KHR_cooperative_matrix` with `cooperativeMatrix`.
    pub cooperative_matrix: bool,
    /// `vulkanMemoryModel` and `vulkanMemoryModelDeviceScope` (GLSL coopmat needs them).
    pub vulkan_memory_model: bool,
    /// `shaderFloat16` and 16-bit storage-buffer access.
    pub float16: bool,
    /// `shaderInt8` and 8-bit storage-buffer access.
    pub int8: bool,
    /// `VK_KHR_shader_bfloat16` with bf16 types and bf16 cooperative matrices.
    pub bfloat16: bool,
    /// `subgroupSizeControl` (pipelines may require a subgroup size).
    pub subgroup_size_control: bool,
    /// `computeFullSubgroups` (pipelines may require full subgroups).
    pub full_subgroups: bool,
    /// `VK_NV_cooperative_matrix2` with workgroup scope, flexible dimensions, tensor addressing
    /// and per-element operations (the coopmat2 kernel's fused bias and activation).
    pub cooperative_matrix2: bool,
    /// `VK_NV_cooperative_vector` with `cooperativeVector`, and
    /// `VK_EXT_shader_replicated_composites` with `shaderReplicatedComposites` (glslang writes
    /// cooperative vectors made from one scalar as replicated composites), with f16: the
    /// cooperative-vector network kernel.
    pub cooperative_vector: bool,
    /// The kernels' matrix operations run in software on ordinary subgroups (the emulated
    /// SPIR-V variants), not on the device's cooperative matrices: set only when asked for
    /// with [`ContextOptions::emulate_cooperative_matrix`](crate::ContextOptions), to test
    /// the backend's whole host path on devices without cooperative matrices.
    pub emulated_cooperative_matrix: bool,
    /// `VK_KHR_pipeline_executable_properties`, asked for with `COOPGEMM_PIPELINE_STATS=1`:
    /// the driver's statistics of each cooperative-matrix pipeline (registers, spills,
    /// shared memory on NVIDIA) are logged when it is built.
    pub pipeline_statistics: bool,
    /// `VK_EXT_pipeline_robustness` is enabled and coopgemm's own pipelines are built with
    /// robust buffer access turned off (`storageBuffers`/`uniformBuffers` = DISABLED): wgpu
    /// turns `robustBufferAccess` on for the whole device, and the driver's bounds checks
    /// cost the kernels time although every access they make is already bounded by the
    /// kernel itself (`tests/guard.rs` proves it with poisoned guard regions around every
    /// operand). Off when [`ContextOptions::robust_kernels`](crate::ContextOptions) is set.
    pub unchecked_pipelines: bool,
}
