//! WGSL shader modules, handed to wgpu as naga modules.
//!
//! coopgemm parses its WGSL with naga itself and passes the module as
//! [`wgpu::ShaderSource::Naga`]. wgpu then has no source text to attach as debug info, so
//! with `InstanceFlags::DEBUG` (on in debug builds, and needed for the Vulkan validation
//! layer's messages to reach the `log` crate) its SPIR-V carries no `OpSource WGSL`, which
//! validation layers older than WGSL's SPIR-V source-language enumerant reject as invalid.
//! Otherwise the module is the same as wgpu would build from the text. On wasm32 the text
//! goes to the browser as it is (see [`wgsl_module`]).

use std::borrow::Cow;

/// Whether wgpu's runtime bounds checks go into the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    /// wgpu's default checks.
    Default,
    /// No runtime checks: only for kernels whose every index is in bounds by construction
    /// (see [`crate::vulkan::trusted_shader_module`]).
    Trusted,
}

/// A shader module from the WGSL `source`.
///
/// The sources are the crate's own; if naga ever rejected one, the text goes to wgpu as it
/// is, so the failure surfaces as wgpu's own validation error (an [`crate::Error::Device`]
/// inside the context's error scopes) rather than a panic.
pub(crate) fn wgsl_module(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    checks: Checks,
) -> wgpu::ShaderModule {
    // On the web the browser compiles WGSL text itself: a naga module would have to be
    // written back as WGSL by wgpu, and naga 30's WGSL writer panics (`unreachable!`) on
    // global expressions of these kernels, as the browser suite (tests/web.rs) found.
    #[cfg(target_arch = "wasm32")]
    let source = wgpu::ShaderSource::Wgsl(Cow::Owned(source.to_string()));
    #[cfg(not(target_arch = "wasm32"))]
    let source = match naga::front::wgsl::parse_str(source) {
        Ok(module) => wgpu::ShaderSource::Naga(Cow::Owned(module)),
        Err(error) => {
            log::error!(
                "{label}: naga rejected the WGSL: {}",
                error.emit_to_string(source)
            );
            wgpu::ShaderSource::Wgsl(Cow::Owned(source.to_string()))
        }
    };
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source,
    };
    match checks {
        Checks::Default => device.create_shader_module(descriptor),
        Checks::Trusted => crate::vulkan::trusted_shader_module(device, descriptor),
    }
}
