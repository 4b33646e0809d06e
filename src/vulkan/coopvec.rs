//! `vkConvertCooperativeVectorMatrixNV` on the host: a network's f16 weight matrices in the
//! driver's inferencing-optimal layout, once, when the network is built.

use ash::vk;
use wgpu::hal::api::Vulkan;

/// `VkCooperativeVectorMatrixLayoutNV`: row-major.
const LAYOUT_ROW_MAJOR: i32 = 0;
/// `VkCooperativeVectorMatrixLayoutNV`: inferencing-optimal.
const LAYOUT_INFERENCING_OPTIMAL: i32 = 2;

/// `VkConvertCooperativeVectorMatrixInfoNV` (sType 1000491004).
#[repr(C)]
struct ConvertMatrixInfo {
    s_type: vk::StructureType,
    p_next: *const std::ffi::c_void,
    src_size: usize,
    src_data: vk::DeviceOrHostAddressConstKHR,
    dst_size: *mut usize,
    dst_data: vk::DeviceOrHostAddressKHR,
    src_component_type: vk::ComponentTypeKHR,
    dst_component_type: vk::ComponentTypeKHR,
    rows: u32,
    columns: u32,
    src_layout: i32,
    src_stride: usize,
    dst_layout: i32,
    dst_stride: usize,
}

type ConvertMatrixFn =
    unsafe extern "system" fn(vk::Device, *const ConvertMatrixInfo) -> vk::Result;

/// `rows × columns` f16 values, row-major with rows `stride_bytes` apart (a multiple of 16,
/// at least `2 · columns`), converted to the inferencing-optimal layout of `device`, which
/// must have `VK_NV_cooperative_vector` enabled. The size comes from the driver (the first
/// call, with no destination).
pub(crate) fn inferencing_optimal_f16(
    device: &wgpu::Device,
    rows: u32,
    columns: u32,
    row_major: &[half::f16],
    stride_bytes: usize,
) -> Result<Vec<u8>, String> {
    let needed = (rows as usize).saturating_sub(1) * stride_bytes + 2 * columns as usize;
    let source_bytes = std::mem::size_of_val(row_major);
    if rows == 0 || columns == 0 || source_bytes < needed || stride_bytes < 2 * columns as usize {
        return Err(format!(
            "a {rows} x {columns} matrix with rows {stride_bytes} bytes apart does not fit {source_bytes} bytes"
        ));
    }
    // SAFETY: as_hal borrows the hal device through an Arc guard; nothing is destroyed, and
    // the raw handles are used only inside this function, while `device` lives.
    let hal_device = unsafe { device.as_hal::<Vulkan>() }.ok_or("not a Vulkan device")?;
    let raw_device = hal_device.raw_device().handle();
    let instance = hal_device.shared_instance().raw_instance();
    // SAFETY: the device handle belongs to this instance; the name is a valid C string.
    let function = unsafe {
        instance.get_device_proc_addr(raw_device, c"vkConvertCooperativeVectorMatrixNV".as_ptr())
    }
    .ok_or("the driver has no vkConvertCooperativeVectorMatrixNV")?;
    // SAFETY: the driver returned this entry point for the name above, whose signature is
    // (VkDevice, const VkConvertCooperativeVectorMatrixInfoNV*) -> VkResult.
    let function: ConvertMatrixFn = unsafe { std::mem::transmute(function) };
    let mut size = 0usize;
    let mut info = ConvertMatrixInfo {
        s_type: vk::StructureType::from_raw(1_000_491_004),
        p_next: std::ptr::null(),
        src_size: source_bytes,
        src_data: vk::DeviceOrHostAddressConstKHR {
            host_address: row_major.as_ptr().cast(),
        },
        dst_size: &mut size,
        dst_data: vk::DeviceOrHostAddressKHR {
            host_address: std::ptr::null_mut(),
        },
        src_component_type: vk::ComponentTypeKHR::FLOAT16,
        dst_component_type: vk::ComponentTypeKHR::FLOAT16,
        rows,
        columns,
        src_layout: LAYOUT_ROW_MAJOR,
        src_stride: stride_bytes,
        dst_layout: LAYOUT_INFERENCING_OPTIMAL,
        dst_stride: 0,
    };
    // SAFETY: `info` is a valid VkConvertCooperativeVectorMatrixInfoNV: the source points to
    // `source_bytes` live bytes holding the row-major matrix (checked above against rows,
    // columns and the stride, a multiple of the element size), a null destination asks for
    // the size only, written to `size`, which outlives the call; the device has the
    // extension enabled (the caller's contract).
    let result = unsafe { function(raw_device, &info) };
    if result != vk::Result::SUCCESS || size == 0 {
        return Err(format!(
            "vkConvertCooperativeVectorMatrixNV (size of {rows} x {columns}): {result} ({size} bytes)"
        ));
    }
    let mut converted = vec![0u8; size];
    info.dst_data = vk::DeviceOrHostAddressKHR {
        host_address: converted.as_mut_ptr().cast(),
    };
    info.dst_size = &mut size;
    // SAFETY: as above, with a destination of `size` writable bytes that does not overlap
    // the source; the driver writes at most `size` bytes and updates `size`.
    let result = unsafe { function(raw_device, &info) };
    if result != vk::Result::SUCCESS {
        return Err(format!(
            "vkConvertCooperativeVectorMatrixNV ({rows} x {columns}): {result}"
        ));
    }
    converted.truncate(size);
    Ok(converted)
}
