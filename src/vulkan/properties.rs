//! What the physical device says about cooperative matrices, subgroups and shared memory.

use ash::vk;
use wgpu::hal::api::Vulkan;

use super::device::COMPONENT_TYPE_BFLOAT16;
use crate::device_info::{
    CooperativeVectorCombination, CooperativeVectorInfo, CoopmatDeviceInfo, FlexibleShape,
};
use crate::types::{CoopmatShape, DType};

fn dtype(component: vk::ComponentTypeKHR) -> Option<DType> {
    match component {
        vk::ComponentTypeKHR::FLOAT32 => Some(DType::F32),
        vk::ComponentTypeKHR::FLOAT16 => Some(DType::F16),
        vk::ComponentTypeKHR::SINT8 => Some(DType::I8),
        vk::ComponentTypeKHR::SINT32 => Some(DType::I32),
        other if other == COMPONENT_TYPE_BFLOAT16 => Some(DType::BF16),
        _ => None,
    }
}

#[repr(C)]
struct FlexibleDimensionsProperties {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    m_granularity: u32,
    n_granularity: u32,
    k_granularity: u32,
    a_type: vk::ComponentTypeKHR,
    b_type: vk::ComponentTypeKHR,
    c_type: vk::ComponentTypeKHR,
    result_type: vk::ComponentTypeKHR,
    saturating_accumulation: vk::Bool32,
    scope: vk::ScopeKHR,
    workgroup_invocations: u32,
}

#[repr(C)]
struct CooperativeMatrix2Properties {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    workgroup_scope_max_workgroup_size: u32,
    flexible_dimensions_max_dimension: u32,
    workgroup_scope_reserved_shared_memory: u32,
}

// SAFETY: layout of VkPhysicalDeviceCooperativeMatrix2PropertiesNV, an extension of
// VkPhysicalDeviceProperties2.
unsafe impl vk::ExtendsPhysicalDeviceProperties2 for CooperativeMatrix2Properties {}

/// `VkPhysicalDeviceCooperativeVectorPropertiesNV` (sType 1000491001).
#[repr(C)]
struct CooperativeVectorProperties {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    supported_stages: vk::ShaderStageFlags,
    training_float16_accumulation: vk::Bool32,
    training_float32_accumulation: vk::Bool32,
    max_components: u32,
}

// SAFETY: layout of VkPhysicalDeviceCooperativeVectorPropertiesNV, an extension of
// VkPhysicalDeviceProperties2.
unsafe impl vk::ExtendsPhysicalDeviceProperties2 for CooperativeVectorProperties {}

/// `VkCooperativeVectorPropertiesNV` (sType 1000491002).
#[repr(C)]
struct CooperativeVectorCombinationProperties {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    input_type: vk::ComponentTypeKHR,
    input_interpretation: vk::ComponentTypeKHR,
    matrix_interpretation: vk::ComponentTypeKHR,
    bias_interpretation: vk::ComponentTypeKHR,
    result_type: vk::ComponentTypeKHR,
    transpose: vk::Bool32,
}

type CooperativeVectorPropertiesFn = unsafe extern "system" fn(
    vk::PhysicalDevice,
    *mut u32,
    *mut CooperativeVectorCombinationProperties,
) -> vk::Result;

/// Every combination `vkGetPhysicalDeviceCooperativeVectorPropertiesNV` lists (empty if the
/// command is missing or fails).
fn cooperative_vector_combinations(
    entry: &ash::Entry,
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
) -> Vec<CooperativeVectorCombination> {
    // SAFETY: the instance handle is live; the name is a valid C string.
    let Some(function) = (unsafe {
        entry.get_instance_proc_addr(
            instance.handle(),
            c"vkGetPhysicalDeviceCooperativeVectorPropertiesNV".as_ptr(),
        )
    }) else {
        return Vec::new();
    };
    // SAFETY: the loader returned this entry point for the name above, whose signature is
    // (VkPhysicalDevice, uint32_t*, VkCooperativeVectorPropertiesNV*).
    let function: CooperativeVectorPropertiesFn = unsafe { std::mem::transmute(function) };
    let mut count = 0u32;
    // SAFETY: first call with a null array asks for the count only.
    if unsafe { function(physical_device, &mut count, std::ptr::null_mut()) } != vk::Result::SUCCESS
    {
        return Vec::new();
    }
    let mut entries: Vec<CooperativeVectorCombinationProperties> = (0..count)
        .map(|_| CooperativeVectorCombinationProperties {
            s_type: vk::StructureType::from_raw(1_000_491_002),
            p_next: std::ptr::null_mut(),
            input_type: vk::ComponentTypeKHR::FLOAT16,
            input_interpretation: vk::ComponentTypeKHR::FLOAT16,
            matrix_interpretation: vk::ComponentTypeKHR::FLOAT16,
            bias_interpretation: vk::ComponentTypeKHR::FLOAT16,
            result_type: vk::ComponentTypeKHR::FLOAT16,
            transpose: vk::FALSE,
        })
        .collect();
    // SAFETY: `entries` holds `count` initialised structs with sType set; the driver writes
    // at most `count` of them and updates `count`.
    let result = unsafe { function(physical_device, &mut count, entries.as_mut_ptr()) };
    if result != vk::Result::SUCCESS && result != vk::Result::INCOMPLETE {
        return Vec::new();
    }
    entries.truncate(count as usize);
    entries
        .iter()
        .map(|e| CooperativeVectorCombination {
            types: [
                e.input_type,
                e.input_interpretation,
                e.matrix_interpretation,
                e.bias_interpretation,
                e.result_type,
            ]
            .map(dtype),
            transpose: e.transpose == vk::TRUE,
        })
        .collect()
}

type FlexibleDimensionsFn = unsafe extern "system" fn(
    vk::PhysicalDevice,
    *mut u32,
    *mut FlexibleDimensionsProperties,
) -> vk::Result;

fn flexible_shapes(
    entry: &ash::Entry,
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
) -> Vec<FlexibleShape> {
    // SAFETY: the instance handle is live; the name is a valid C string.
    let Some(function) = (unsafe {
        entry.get_instance_proc_addr(
            instance.handle(),
            c"vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV".as_ptr(),
        )
    }) else {
        return Vec::new();
    };
    // SAFETY: the loader returned this entry point for the name above, whose signature is
    // (VkPhysicalDevice, uint32_t*, VkCooperativeMatrixFlexibleDimensionsPropertiesNV*).
    let function: FlexibleDimensionsFn = unsafe { std::mem::transmute(function) };
    let mut count = 0u32;
    // SAFETY: first call with a null array asks for the count only.
    if unsafe { function(physical_device, &mut count, std::ptr::null_mut()) } != vk::Result::SUCCESS
    {
        return Vec::new();
    }
    let mut entries: Vec<FlexibleDimensionsProperties> = (0..count)
        .map(|_| FlexibleDimensionsProperties {
            s_type: vk::StructureType::from_raw(1_000_593_001),
            p_next: std::ptr::null_mut(),
            m_granularity: 0,
            n_granularity: 0,
            k_granularity: 0,
            a_type: vk::ComponentTypeKHR::FLOAT16,
            b_type: vk::ComponentTypeKHR::FLOAT16,
            c_type: vk::ComponentTypeKHR::FLOAT16,
            result_type: vk::ComponentTypeKHR::FLOAT16,
            saturating_accumulation: vk::FALSE,
            scope: vk::ScopeKHR::SUBGROUP,
            workgroup_invocations: 0,
        })
        .collect();
    // SAFETY: `entries` holds `count` initialised structs with sType set; the driver writes
    // at most `count` of them and updates `count`.
    let result = unsafe { function(physical_device, &mut count, entries.as_mut_ptr()) };
    if result != vk::Result::SUCCESS && result != vk::Result::INCOMPLETE {
        return Vec::new();
    }
    entries.truncate(count as usize);
    entries
        .iter()
        .filter(|e| e.saturating_accumulation == vk::FALSE)
        .map(|e| FlexibleShape {
            m_granularity: e.m_granularity,
            n_granularity: e.n_granularity,
            k_granularity: e.k_granularity,
            types: [
                dtype(e.a_type),
                dtype(e.b_type),
                dtype(e.c_type),
                dtype(e.result_type),
            ],
            workgroup_scope: e.scope == vk::ScopeKHR::WORKGROUP,
            workgroup_invocations: e.workgroup_invocations,
        })
        .collect()
}

impl CoopmatDeviceInfo {
    /// The facts as the emulated kernels see them: the device's own limits and subgroups,
    /// with the cooperative-matrix shapes the emulation implements (`glsl/matrix_ops.glsl`)
    /// in place of the device's list, and no `VK_NV_cooperative_matrix2`.
    pub(crate) fn emulated(self) -> CoopmatDeviceInfo {
        let shape =
            |m, n, k, input: vk::ComponentTypeKHR, accumulate: vk::ComponentTypeKHR| CoopmatShape {
                m,
                n,
                k,
                a_type: dtype(input),
                b_type: dtype(input),
                c_type: dtype(accumulate),
                result_type: dtype(accumulate),
                raw_types: [input, input, accumulate, accumulate].map(|t| t.as_raw()),
                saturating: false,
                subgroup_scope: true,
            };
        use vk::ComponentTypeKHR as T;
        CoopmatDeviceInfo {
            shapes: vec![
                shape(16, 16, 16, T::FLOAT16, T::FLOAT32),
                shape(16, 16, 16, T::FLOAT16, T::FLOAT16),
                shape(16, 16, 8, T::FLOAT32, T::FLOAT32),
                shape(16, 16, 32, T::SINT8, T::SINT32),
            ],
            has_nv_cooperative_matrix2: false,
            flexible_shapes: Vec::new(),
            workgroup_scope_max_invocations: 0,
            flexible_max_dimension: 0,
            ..self
        }
    }
}

/// Reads the facts for the physical device behind `device` (`None` if it is not Vulkan).
pub(crate) fn query(device: &wgpu::Device) -> Option<CoopmatDeviceInfo> {
    // SAFETY: as_hal borrows the hal device through an Arc guard; nothing is destroyed.
    let hal_device = unsafe { device.as_hal::<Vulkan>() }?;
    let shared = hal_device.shared_instance();
    let instance = shared.raw_instance();
    let physical_device = hal_device.raw_physical_device();
    let loader = ash::khr::cooperative_matrix::Instance::new(shared.entry(), instance);
    // SAFETY: the physical device belongs to this instance. The command is only called when
    // the device lists VK_KHR_cooperative_matrix (checked through its extension list below).
    let extensions = unsafe { instance.enumerate_device_extension_properties(physical_device) }
        .unwrap_or_default();
    let lists = |name: &std::ffi::CStr| {
        extensions
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(name))
    };
    let shapes = if lists(ash::khr::cooperative_matrix::NAME) {
        // SAFETY: as above; the extension is listed, so the instance-level command exists.
        unsafe { loader.get_physical_device_cooperative_matrix_properties(physical_device) }
            .unwrap_or_default()
            .iter()
            .map(|p| CoopmatShape {
                m: p.m_size,
                n: p.n_size,
                k: p.k_size,
                a_type: dtype(p.a_type),
                b_type: dtype(p.b_type),
                c_type: dtype(p.c_type),
                result_type: dtype(p.result_type),
                raw_types: [
                    p.a_type.as_raw(),
                    p.b_type.as_raw(),
                    p.c_type.as_raw(),
                    p.result_type.as_raw(),
                ],
                saturating: p.saturating_accumulation == vk::TRUE,
                subgroup_scope: p.scope == vk::ScopeKHR::SUBGROUP,
            })
            .collect()
    } else {
        Vec::new()
    };
    let has_coopmat2 = lists(c"VK_NV_cooperative_matrix2");
    let has_coopvec = lists(super::device::COOPERATIVE_VECTOR_EXTENSION);
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut size_control = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut coopmat2 = CooperativeMatrix2Properties {
        s_type: vk::StructureType::from_raw(1_000_593_002),
        p_next: std::ptr::null_mut(),
        workgroup_scope_max_workgroup_size: 0,
        flexible_dimensions_max_dimension: 0,
        workgroup_scope_reserved_shared_memory: 0,
    };
    let mut coopvec = CooperativeVectorProperties {
        s_type: vk::StructureType::from_raw(1_000_491_001),
        p_next: std::ptr::null_mut(),
        supported_stages: vk::ShaderStageFlags::empty(),
        training_float16_accumulation: vk::FALSE,
        training_float32_accumulation: vk::FALSE,
        max_components: 0,
    };
    let mut properties2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut subgroup)
        .push_next(&mut size_control);
    if has_coopmat2 {
        properties2 = properties2.push_next(&mut coopmat2);
    }
    if has_coopvec {
        properties2 = properties2.push_next(&mut coopvec);
    }
    // SAFETY: the chained structs are valid output structs that outlive the call; the
    // coopmat2 and cooperative-vector ones are chained only when the device lists their
    // extension.
    unsafe { instance.get_physical_device_properties2(physical_device, &mut properties2) };
    let limits = properties2.properties.limits;
    let device_name = properties2
        .properties
        .device_name_as_c_str()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let min_subgroup_size = if size_control.min_subgroup_size == 0 {
        subgroup.subgroup_size
    } else {
        size_control.min_subgroup_size
    };
    let max_subgroup_size = if size_control.max_subgroup_size == 0 {
        subgroup.subgroup_size
    } else {
        size_control.max_subgroup_size
    };
    Some(CoopmatDeviceInfo {
        shapes,
        subgroup_size: subgroup.subgroup_size,
        min_subgroup_size,
        max_subgroup_size,
        shared_memory_bytes: limits.max_compute_shared_memory_size,
        max_workgroup_invocations: limits.max_compute_work_group_invocations,
        max_workgroup_subgroups: match size_control.max_compute_workgroup_subgroups {
            0 => u32::MAX,
            subgroups => subgroups,
        },
        max_push_constant_bytes: limits.max_push_constants_size,
        max_workgroup_count: limits.max_compute_work_group_count,
        device_name,
        has_nv_cooperative_matrix2: has_coopmat2,
        flexible_shapes: if has_coopmat2 {
            flexible_shapes(shared.entry(), instance, physical_device)
        } else {
            Vec::new()
        },
        workgroup_scope_max_invocations: coopmat2.workgroup_scope_max_workgroup_size,
        flexible_max_dimension: coopmat2.flexible_dimensions_max_dimension,
        cooperative_vector: has_coopvec.then(|| CooperativeVectorInfo {
            max_components: coopvec.max_components,
            compute: coopvec
                .supported_stages
                .contains(vk::ShaderStageFlags::COMPUTE),
            combinations: cooperative_vector_combinations(
                shared.entry(),
                instance,
                physical_device,
            ),
        }),
    })
}
