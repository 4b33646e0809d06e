//! Stand-ins for the raw-Vulkan modules where wgpu has no Vulkan backend (see `build.rs`):
//! the same names, with nothing to open and nothing to inspect.

/// Device creation: there is no Vulkan device to open with extensions here.
pub mod device {
    pub(crate) use crate::vulkan::EnabledFeatures;
    pub(crate) use crate::vulkan::OpenOptions;

    /// Never opens anything: the caller opens a plain wgpu device.
    pub(crate) fn open_with_coopmat(
        _adapter: &wgpu::Adapter,
        _descriptor: &wgpu::DeviceDescriptor<'_>,
        _options: OpenOptions,
    ) -> Result<Option<(wgpu::Device, wgpu::Queue, EnabledFeatures)>, String> {
        Ok(None)
    }
}

/// Driver pipeline statistics come from a Vulkan extension; none here.
pub(crate) mod statistics {
    /// No value of this type is ever made.
    #[derive(Debug)]
    pub(crate) enum PipelineStatistics {}

    impl PipelineStatistics {
        pub(crate) fn new(_device: &wgpu::Device) -> Option<PipelineStatistics> {
            None
        }

        pub(crate) fn log_wgsl(&self, _label: &str, _wgsl: &str, _constants: &[(&str, f64)]) {
            match *self {}
        }
    }
}
