//! Opening a wgpu device whose `VkDevice` has what the cooperative-matrix kernels need,
//! and finding out what a device someone else opened has.
//!
//! Route: our own `vkCreateDevice` with wgpu-hal's extension list and feature chain, plus
//! ours, handed to wgpu with `Adapter::device_from_raw` and `create_device_from_hal`.
//! wgpu-hal already chains (and would duplicate) `VulkanMemoryModelFeatures`,
//! `SubgroupSizeControlFeatures` and `ShaderFloat16Int8Features`, with the bits we need
//! set to false, so those are patched in place in wgpu's chain rather than pushed again.

use std::ffi::CStr;

use ash::vk;
use wgpu::hal::api::Vulkan;

/// `VK_KHR_shader_bfloat16`, which ash 0.38 predates.
pub(crate) const BFLOAT16_EXTENSION: &CStr = c"VK_KHR_shader_bfloat16";
/// `VK_COMPONENT_TYPE_BFLOAT16_KHR`.
pub(crate) const COMPONENT_TYPE_BFLOAT16: vk::ComponentTypeKHR =
    vk::ComponentTypeKHR::from_raw(1_000_141_000);

/// `VkPhysicalDeviceShaderBfloat16FeaturesKHR`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShaderBfloat16Features {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    shader_bfloat16_type: vk::Bool32,
    shader_bfloat16_dot_product: vk::Bool32,
    shader_bfloat16_cooperative_matrix: vk::Bool32,
}

impl Default for ShaderBfloat16Features {
    fn default() -> Self {
        ShaderBfloat16Features {
            s_type: vk::StructureType::from_raw(1_000_141_000),
            p_next: std::ptr::null_mut(),
            shader_bfloat16_type: vk::FALSE,
            shader_bfloat16_dot_product: vk::FALSE,
            shader_bfloat16_cooperative_matrix: vk::FALSE,
        }
    }
}

// SAFETY: the struct has the layout of VkPhysicalDeviceShaderBfloat16FeaturesKHR (sType,
// pNext, three VkBool32), which the spec lets extend both of these structures.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for ShaderBfloat16Features {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for ShaderBfloat16Features {}
// SAFETY: ash's TaggedStructure only reads STRUCTURE_TYPE for push_next bookkeeping.
unsafe impl vk::TaggedStructure for ShaderBfloat16Features {
    const STRUCTURE_TYPE: vk::StructureType = vk::StructureType::from_raw(1_000_141_000);
}

/// `VK_NV_cooperative_matrix2`, which ash 0.38 predates.
pub(crate) const COOPERATIVE_MATRIX2_EXTENSION: &CStr = c"VK_NV_cooperative_matrix2";

/// `VkPhysicalDeviceCooperativeMatrix2FeaturesNV`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CooperativeMatrix2Features {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    workgroup_scope: vk::Bool32,
    flexible_dimensions: vk::Bool32,
    reductions: vk::Bool32,
    conversions: vk::Bool32,
    per_element_operations: vk::Bool32,
    tensor_addressing: vk::Bool32,
    block_loads: vk::Bool32,
}

impl Default for CooperativeMatrix2Features {
    fn default() -> Self {
        CooperativeMatrix2Features {
            s_type: vk::StructureType::from_raw(1_000_593_000),
            p_next: std::ptr::null_mut(),
            workgroup_scope: vk::FALSE,
            flexible_dimensions: vk::FALSE,
            reductions: vk::FALSE,
            conversions: vk::FALSE,
            per_element_operations: vk::FALSE,
            tensor_addressing: vk::FALSE,
            block_loads: vk::FALSE,
        }
    }
}

// SAFETY: the struct has the layout of VkPhysicalDeviceCooperativeMatrix2FeaturesNV (sType,
// pNext, seven VkBool32), which the spec lets extend both of these structures.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for CooperativeMatrix2Features {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for CooperativeMatrix2Features {}

/// `VK_NV_cooperative_vector`, which ash 0.38 predates.
pub(crate) const COOPERATIVE_VECTOR_EXTENSION: &CStr = c"VK_NV_cooperative_vector";
/// `VK_EXT_shader_replicated_composites`, which ash 0.38 predates. glslang writes every
/// cooperative vector made from one scalar (the network kernel's zero and one vectors) as a
/// replicated composite, so the cooperative-vector kernel needs it beside
/// `VK_NV_cooperative_vector`.
pub(crate) const REPLICATED_COMPOSITES_EXTENSION: &CStr = c"VK_EXT_shader_replicated_composites";

/// `VkPhysicalDeviceCooperativeVectorFeaturesNV` (sType 1000491000).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CooperativeVectorFeatures {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    cooperative_vector: vk::Bool32,
    cooperative_vector_training: vk::Bool32,
}

impl Default for CooperativeVectorFeatures {
    fn default() -> Self {
        CooperativeVectorFeatures {
            s_type: vk::StructureType::from_raw(1_000_491_000),
            p_next: std::ptr::null_mut(),
            cooperative_vector: vk::FALSE,
            cooperative_vector_training: vk::FALSE,
        }
    }
}

// SAFETY: the struct has the layout of VkPhysicalDeviceCooperativeVectorFeaturesNV (sType,
// pNext, two VkBool32), which the spec lets extend both of these structures.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for CooperativeVectorFeatures {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for CooperativeVectorFeatures {}

/// `VkPhysicalDeviceShaderReplicatedCompositesFeaturesEXT` (sType 1000564000).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReplicatedCompositesFeatures {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    shader_replicated_composites: vk::Bool32,
}

impl Default for ReplicatedCompositesFeatures {
    fn default() -> Self {
        ReplicatedCompositesFeatures {
            s_type: vk::StructureType::from_raw(1_000_564_000),
            p_next: std::ptr::null_mut(),
            shader_replicated_composites: vk::FALSE,
        }
    }
}

// SAFETY: the struct has the layout of VkPhysicalDeviceShaderReplicatedCompositesFeaturesEXT
// (sType, pNext, one VkBool32), which the spec lets extend both of these structures.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for ReplicatedCompositesFeatures {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for ReplicatedCompositesFeatures {}

pub(crate) use super::EnabledFeatures;
pub(crate) use super::OpenOptions;

fn has_extension(extensions: &[&CStr], name: &CStr) -> bool {
    extensions.contains(&name)
}

/// What a wgpu device that coopgemm did not open is known to have enabled: only what wgpu's
/// own features imply (`EXPERIMENTAL_COOPERATIVE_MATRIX` enables the extension, its feature
/// and the memory model; `SHADER_F16` enables f16 and 16-bit storage).
pub(crate) fn enabled_by_wgpu(device: &wgpu::Device) -> EnabledFeatures {
    // SAFETY: as_hal only borrows the hal device through an Arc guard; nothing is destroyed.
    let Some(hal_device) = (unsafe { device.as_hal::<Vulkan>() }) else {
        return EnabledFeatures::default();
    };
    let extensions = hal_device.enabled_device_extensions();
    let features = device.features();
    let coop = features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        && has_extension(extensions, ash::khr::cooperative_matrix::NAME);
    EnabledFeatures {
        cooperative_matrix: coop,
        vulkan_memory_model: coop,
        float16: features.contains(wgpu::Features::SHADER_F16),
        int8: false,
        bfloat16: false,
        // wgpu enables subgroupSizeControl on every Vulkan 1.3 device, never computeFullSubgroups.
        subgroup_size_control: false,
        full_subgroups: false,
        cooperative_matrix2: false,
        cooperative_vector: false,
        pipeline_statistics: false,
        emulated_cooperative_matrix: false,
        unchecked_pipelines: false,
    }
}

/// Supported bits of the physical device, queried with `vkGetPhysicalDeviceFeatures2`.
#[derive(Debug, Clone, Copy, Default)]
struct Supported {
    cooperative_matrix: bool,
    memory_model: bool,
    float16: bool,
    int8: bool,
    storage16: bool,
    storage8: bool,
    bfloat16: bool,
    subgroup_size_control: bool,
    full_subgroups: bool,
    cooperative_matrix2: bool,
    cooperative_vector: bool,
    pipeline_statistics: bool,
    pipeline_robustness: bool,
}

fn query_supported(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    has_bf16_extension: bool,
    has_coopmat2_extension: bool,
    has_coopvec_extensions: bool,
    has_statistics_extension: bool,
    has_robustness_extension: bool,
) -> Supported {
    let mut cooperative = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    let mut memory_model = vk::PhysicalDeviceVulkanMemoryModelFeatures::default();
    let mut float16_int8 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut storage16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut storage8 = vk::PhysicalDevice8BitStorageFeatures::default();
    let mut subgroup = vk::PhysicalDeviceSubgroupSizeControlFeatures::default();
    let mut bfloat16 = ShaderBfloat16Features::default();
    let mut coopmat2 = CooperativeMatrix2Features::default();
    let mut coopvec = CooperativeVectorFeatures::default();
    let mut replicated = ReplicatedCompositesFeatures::default();
    let mut statistics = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
    let mut robustness = vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default();
    let mut features2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut cooperative)
        .push_next(&mut memory_model)
        .push_next(&mut float16_int8)
        .push_next(&mut storage16)
        .push_next(&mut storage8)
        .push_next(&mut subgroup);
    if has_bf16_extension {
        features2 = features2.push_next(&mut bfloat16);
    }
    if has_coopmat2_extension {
        features2 = features2.push_next(&mut coopmat2);
    }
    if has_coopvec_extensions {
        features2 = features2.push_next(&mut coopvec).push_next(&mut replicated);
    }
    if has_statistics_extension {
        features2 = features2.push_next(&mut statistics);
    }
    if has_robustness_extension {
        features2 = features2.push_next(&mut robustness);
    }
    // SAFETY: every struct in the chain is a valid, writable feature struct that outlives the
    // call; extension structs (bf16, coopmat2, cooperative vectors and replicated composites,
    // pipeline statistics, pipeline robustness) are chained only when the device lists their
    // extension.
    unsafe { instance.get_physical_device_features2(physical_device, &mut features2) };
    Supported {
        cooperative_matrix: cooperative.cooperative_matrix == vk::TRUE,
        memory_model: memory_model.vulkan_memory_model == vk::TRUE
            && memory_model.vulkan_memory_model_device_scope == vk::TRUE,
        float16: float16_int8.shader_float16 == vk::TRUE,
        int8: float16_int8.shader_int8 == vk::TRUE,
        storage16: storage16.storage_buffer16_bit_access == vk::TRUE,
        storage8: storage8.storage_buffer8_bit_access == vk::TRUE,
        bfloat16: has_bf16_extension
            && bfloat16.shader_bfloat16_type == vk::TRUE
            && bfloat16.shader_bfloat16_cooperative_matrix == vk::TRUE,
        subgroup_size_control: subgroup.subgroup_size_control == vk::TRUE,
        full_subgroups: subgroup.compute_full_subgroups == vk::TRUE,
        cooperative_matrix2: has_coopmat2_extension
            && coopmat2.workgroup_scope == vk::TRUE
            && coopmat2.flexible_dimensions == vk::TRUE
            && coopmat2.tensor_addressing == vk::TRUE
            && coopmat2.per_element_operations == vk::TRUE,
        cooperative_vector: has_coopvec_extensions
            && coopvec.cooperative_vector == vk::TRUE
            && replicated.shader_replicated_composites == vk::TRUE,
        pipeline_statistics: has_statistics_extension
            && statistics.pipeline_executable_info == vk::TRUE,
        pipeline_robustness: has_robustness_extension && robustness.pipeline_robustness == vk::TRUE,
    }
}

/// Whether every structure type in a pNext chain appears once (`VUID-VkDeviceCreateInfo-sType-unique`).
fn no_structure_twice(mut next: *const std::ffi::c_void) -> bool {
    let mut seen = Vec::new();
    while !next.is_null() {
        // SAFETY: the caller passes the head of a live pNext chain of Vulkan structures, each
        // starting with sType/pNext.
        let structure = unsafe { &*(next as *const vk::BaseInStructure<'_>) };
        if seen.contains(&structure.s_type) {
            return false;
        }
        seen.push(structure.s_type);
        next = structure.p_next as *const std::ffi::c_void;
    }
    true
}

/// Opens `adapter` as a device with the cooperative-matrix extensions. `Ok(None)` when the
/// adapter has no `VK_KHR_cooperative_matrix` and emulation was not asked for (the caller
/// opens a plain device instead). With emulation the device is opened on the same route,
/// with everything but the cooperative-matrix extension, so that the backend's host path
/// (device creation included) is the one a GPU takes.
pub(crate) fn open_with_coopmat(
    adapter: &wgpu::Adapter,
    descriptor: &wgpu::DeviceDescriptor<'_>,
    options: OpenOptions,
) -> Result<Option<(wgpu::Device, wgpu::Queue, EnabledFeatures)>, String> {
    // SAFETY: as_hal borrows the hal adapter through an Arc guard; it is not destroyed.
    let Some(hal_adapter) = (unsafe { adapter.as_hal::<Vulkan>() }) else {
        return Ok(None);
    };
    let capabilities = hal_adapter.physical_device_capabilities();
    let emulate = options.emulate_cooperative_matrix;
    if !emulate && !capabilities.supports_extension(ash::khr::cooperative_matrix::NAME) {
        return Ok(None);
    }
    let instance = hal_adapter.shared_instance().raw_instance();
    let physical_device = hal_adapter.raw_physical_device();
    let api_version = capabilities.properties().api_version;
    // Both build on VK_KHR_cooperative_matrix, which the emulated kernels go without (the
    // layer reports VUID-vkCreateDevice-ppEnabledExtensionNames-01387 otherwise).
    let has_bf16_extension = !emulate && capabilities.supports_extension(BFLOAT16_EXTENSION);
    let has_coopmat2_extension =
        !emulate && capabilities.supports_extension(COOPERATIVE_MATRIX2_EXTENSION);
    // Cooperative vectors are enabled only for the real kernels: with emulation the network
    // kernel runs its stand-in (as the cooperative-matrix kernels do).
    let has_coopvec_extensions = !emulate
        && capabilities.supports_extension(COOPERATIVE_VECTOR_EXTENSION)
        && capabilities.supports_extension(REPLICATED_COMPOSITES_EXTENSION);
    let has_statistics_extension = options.pipeline_statistics
        && capabilities.supports_extension(ash::khr::pipeline_executable_properties::NAME);
    let has_robustness_extension = options.unchecked_pipelines
        && capabilities.supports_extension(ash::ext::pipeline_robustness::NAME);
    let supported = query_supported(
        instance,
        physical_device,
        has_bf16_extension,
        has_coopmat2_extension,
        has_coopvec_extensions,
        has_statistics_extension,
        has_robustness_extension,
    );
    if !emulate && (!supported.cooperative_matrix || !supported.memory_model) {
        return Err("the device lists VK_KHR_cooperative_matrix but lacks cooperativeMatrix or vulkanMemoryModel".into());
    }
    // The real kernels need the memory model; the emulated ones get it where it is offered.
    let wants_memory_model = !emulate || supported.memory_model;
    if api_version < vk::API_VERSION_1_2 {
        return Err("cooperative-matrix kernels need Vulkan 1.2 or newer".into());
    }

    let features = descriptor.required_features;
    let mut extensions = hal_adapter.required_device_extensions(features);
    for extension in (!emulate)
        .then_some(ash::khr::cooperative_matrix::NAME)
        .into_iter()
        .chain(has_bf16_extension.then_some(BFLOAT16_EXTENSION))
        .chain(
            supported
                .cooperative_matrix2
                .then_some(COOPERATIVE_MATRIX2_EXTENSION),
        )
        .chain(
            supported
                .cooperative_vector
                .then_some([
                    COOPERATIVE_VECTOR_EXTENSION,
                    REPLICATED_COMPOSITES_EXTENSION,
                ])
                .into_iter()
                .flatten(),
        )
        .chain(
            supported
                .pipeline_statistics
                .then_some(ash::khr::pipeline_executable_properties::NAME),
        )
        .chain(
            supported
                .pipeline_robustness
                .then_some(ash::ext::pipeline_robustness::NAME),
        )
    {
        if !extensions.contains(&extension) {
            extensions.push(extension);
        }
    }
    let mut wgpu_features = hal_adapter.physical_device_features(&extensions, features);
    let enabled = EnabledFeatures {
        cooperative_matrix: !emulate,
        vulkan_memory_model: wants_memory_model,
        float16: supported.float16 && supported.storage16,
        int8: supported.int8 && supported.storage8,
        bfloat16: supported.bfloat16,
        subgroup_size_control: supported.subgroup_size_control,
        full_subgroups: supported.full_subgroups,
        cooperative_matrix2: supported.cooperative_matrix2
            && supported.float16
            && supported.storage16,
        cooperative_vector: supported.cooperative_vector
            && supported.float16
            && supported.storage16,
        pipeline_statistics: supported.pipeline_statistics,
        emulated_cooperative_matrix: emulate,
        unchecked_pipelines: supported.pipeline_robustness,
    };

    let priorities = [1.0f32];
    // wgpu-hal opens queue family 0, index 0 on its own route too; keep it the same.
    let queue_info = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&priorities)];
    let extension_pointers: Vec<*const std::ffi::c_char> =
        extensions.iter().map(|name| name.as_ptr()).collect();
    let mut storage8 =
        vk::PhysicalDevice8BitStorageFeatures::default().storage_buffer8_bit_access(enabled.int8);
    let mut bfloat16 = ShaderBfloat16Features {
        shader_bfloat16_type: enabled.bfloat16.into(),
        shader_bfloat16_cooperative_matrix: enabled.bfloat16.into(),
        ..Default::default()
    };
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_info)
        .enabled_extension_names(&extension_pointers);
    info = wgpu_features.add_to_device_create(info);
    info = info.push_next(&mut storage8);
    if has_bf16_extension {
        info = info.push_next(&mut bfloat16);
    }
    let mut coopmat2 = CooperativeMatrix2Features {
        workgroup_scope: vk::TRUE,
        flexible_dimensions: vk::TRUE,
        tensor_addressing: vk::TRUE,
        per_element_operations: vk::TRUE,
        ..Default::default()
    };
    if supported.cooperative_matrix2 {
        info = info.push_next(&mut coopmat2);
    }
    let mut coopvec = CooperativeVectorFeatures {
        cooperative_vector: vk::TRUE,
        ..Default::default()
    };
    let mut replicated = ReplicatedCompositesFeatures {
        shader_replicated_composites: vk::TRUE,
        ..Default::default()
    };
    if supported.cooperative_vector {
        info = info.push_next(&mut coopvec).push_next(&mut replicated);
    }
    let mut statistics = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    if enabled.pipeline_statistics {
        info = info.push_next(&mut statistics);
    }
    let mut robustness =
        vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default().pipeline_robustness(true);
    if enabled.unchecked_pipelines {
        info = info.push_next(&mut robustness);
    }
    // Structures wgpu chains for every Vulkan >= 1.2 (memory model) or 1.3 (subgroup size
    // control) device, for any device with shaderInt8, and for the cooperative-matrix
    // extension once it is in the list: patched where they are, added only if absent, so that
    // no structure type appears twice.
    let mut memory_model = vk::PhysicalDeviceVulkanMemoryModelFeatures::default();
    let mut float16_int8 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut storage16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut subgroup = vk::PhysicalDeviceSubgroupSizeControlFeatures::default();
    let mut cooperative = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
    let mut found = [false; 5];
    let mut next = info.p_next as *mut vk::BaseOutStructure<'_>;
    while !next.is_null() {
        // SAFETY: `next` walks the pNext chain built just above; every element is a live
        // Vulkan structure starting with sType/pNext (wgpu's structs borrow `wgpu_features`,
        // ours borrow locals, all alive until vkCreateDevice returns). Casting to the
        // struct its sType names is how Vulkan chains are read.
        unsafe {
            match (*next).s_type {
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES => {
                    let s = &mut *(next as *mut vk::PhysicalDeviceVulkanMemoryModelFeatures<'_>);
                    s.vulkan_memory_model |= vk::Bool32::from(wants_memory_model);
                    s.vulkan_memory_model_device_scope |= vk::Bool32::from(wants_memory_model);
                    found[0] = true;
                }
                // Mandatory in Vulkan 1.3, for which wgpu chains it (off unless mesh shaders
                // are asked for): on, so that SPIR-V using `LocalSizeId` is valid too.
                vk::StructureType::PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES
                    if api_version >= vk::API_VERSION_1_3 =>
                {
                    let s = &mut *(next as *mut vk::PhysicalDeviceMaintenance4Features<'_>);
                    s.maintenance4 = vk::TRUE;
                }
                vk::StructureType::PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR => {
                    let s = &mut *(next as *mut vk::PhysicalDeviceCooperativeMatrixFeaturesKHR<'_>);
                    s.cooperative_matrix = vk::TRUE;
                    found[4] = true;
                }
                vk::StructureType::PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES => {
                    let s = &mut *(next as *mut vk::PhysicalDeviceShaderFloat16Int8Features<'_>);
                    s.shader_float16 |= vk::Bool32::from(enabled.float16);
                    s.shader_int8 |= vk::Bool32::from(enabled.int8);
                    found[1] = true;
                }
                vk::StructureType::PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES => {
                    let s = &mut *(next as *mut vk::PhysicalDevice16BitStorageFeatures<'_>);
                    s.storage_buffer16_bit_access |= vk::Bool32::from(enabled.float16);
                    found[2] = true;
                }
                vk::StructureType::PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES => {
                    let s = &mut *(next as *mut vk::PhysicalDeviceSubgroupSizeControlFeatures<'_>);
                    s.subgroup_size_control |= vk::Bool32::from(enabled.subgroup_size_control);
                    s.compute_full_subgroups |= vk::Bool32::from(enabled.full_subgroups);
                    found[3] = true;
                }
                _ => {}
            }
            next = (*next).p_next;
        }
    }
    if !found[0] && wants_memory_model {
        memory_model = memory_model
            .vulkan_memory_model(true)
            .vulkan_memory_model_device_scope(true);
        info = info.push_next(&mut memory_model);
    }
    if !found[4] && !emulate {
        cooperative = cooperative.cooperative_matrix(true);
        info = info.push_next(&mut cooperative);
    }
    if !found[1] {
        float16_int8 = float16_int8
            .shader_float16(enabled.float16)
            .shader_int8(enabled.int8);
        info = info.push_next(&mut float16_int8);
    }
    if !found[2] {
        storage16 = storage16.storage_buffer16_bit_access(enabled.float16);
        info = info.push_next(&mut storage16);
    }
    if !found[3] && api_version >= vk::API_VERSION_1_3 {
        subgroup = subgroup
            .subgroup_size_control(enabled.subgroup_size_control)
            .compute_full_subgroups(enabled.full_subgroups);
        info = info.push_next(&mut subgroup);
    }
    let enabled = EnabledFeatures {
        subgroup_size_control: enabled.subgroup_size_control && api_version >= vk::API_VERSION_1_3,
        full_subgroups: enabled.full_subgroups && api_version >= vk::API_VERSION_1_3,
        ..enabled
    };

    // SAFETY: `info` is a valid VkDeviceCreateInfo: the extensions are ones the physical
    // device lists (wgpu's list plus ours, each checked above), every feature bit set is one
    // `query_supported` reported as supported, and no structure type appears twice (wgpu's
    // structs were patched in place, ours are types wgpu never chains).
    debug_assert!(no_structure_twice(info.p_next));
    let raw_device = unsafe { instance.create_device(physical_device, &info, None) }
        .map_err(|e| format!("vkCreateDevice: {e}"))?;
    // SAFETY: raw_device was created from this adapter's physical device, with queue family
    // 0, `extensions` (a superset of required_device_extensions(features)) and wgpu's feature
    // chain for them (plus bits it does not know). `None` hands ownership to wgpu-hal.
    let open = unsafe {
        hal_adapter.device_from_raw(
            raw_device,
            None,
            &extensions,
            features,
            &descriptor.required_limits,
            &descriptor.memory_hints,
            0,
            0,
        )
    }
    .map_err(|e| format!("wgpu-hal rejected the device: {e}"))?;
    // SAFETY: `open` comes from this adapter, and `descriptor` asks for exactly the features
    // and limits the hal device was opened with.
    let (device, queue) = unsafe { adapter.create_device_from_hal(open, descriptor) }
        .map_err(|e| format!("wgpu rejected the device: {e}"))?;
    Ok(Some((device, queue, enabled)))
}
