//! The test harness hears the Vulkan validation layer: a deliberate invalid Vulkan call
//! must reach the logger of `tests/common` and fail `assert_no_validation_errors`, the check
//! every other test ends with. Alone in its binary, because it leaves a message behind.
//!
//! Meaningful where the layer is loaded (debug builds with `VK_LAYER_KHRONOS_validation`
//! installed, as in CI, which sets `COOPGEMM_EXPECT_VALIDATION=1` to make its absence a
//! failure); elsewhere it says so and passes.

mod common;

#[cfg(any(
    windows,
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
))]
#[test]
fn a_validation_message_fails_the_test_that_caused_it() {
    use ash::vk;
    use wgpu::hal::api::Vulkan;

    let context = common::context();
    let expected = std::env::var("COOPGEMM_EXPECT_VALIDATION").is_ok_and(|v| v == "1");
    if context.adapter_info().backend != wgpu::Backend::Vulkan {
        assert!(!expected, "the validation pass must run on Vulkan");
        eprintln!("skipping: not a Vulkan device");
        return;
    }
    common::assert_no_validation_errors();
    let before = common::validation_messages();

    // SAFETY: the hal device is borrowed through wgpu's guard for this block only. The
    // call is invalid on purpose (a buffer of size 0: VUID-VkBufferCreateInfo-size-00912),
    // which the layer reports and drivers tolerate; a buffer that does get created is
    // destroyed right away.
    unsafe {
        let hal_device = context
            .device()
            .as_hal::<Vulkan>()
            .expect("a Vulkan device");
        let raw = hal_device.raw_device();
        let info = vk::BufferCreateInfo::default()
            .size(0)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        if let Ok(buffer) = raw.create_buffer(&info, None) {
            raw.destroy_buffer(buffer, None);
        }
    }

    let heard = common::validation_messages() - before;
    if heard == 0 {
        assert!(
            !expected,
            "COOPGEMM_EXPECT_VALIDATION=1 but no validation message reached the test logger"
        );
        eprintln!("skipping: the validation layer is not loaded here");
        return;
    }
    eprintln!("the deliberate invalid call produced {heard} validation message(s)");
    let outcome = std::panic::catch_unwind(common::assert_no_validation_errors);
    assert!(
        outcome.is_err(),
        "assert_no_validation_errors passed after a validation message"
    );
    eprintln!("deliberate validation error: the harness failed it, as it must");
}
