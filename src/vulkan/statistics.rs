//! The driver's statistics of a pipeline (`VK_KHR_pipeline_executable_properties`), for
//! `COOPGEMM_PIPELINE_STATS=1`: registers, local memory and shared memory per invocation on
//! NVIDIA, which tell why a kernel runs as fast as it does.
//!
//! The cooperative-matrix pipelines are built with `CAPTURE_STATISTICS` directly
//! (`dispatch`). wgpu builds the SIMT pipelines without that flag, so for them
//! [`PipelineStatistics::log_wgsl`] compiles the same WGSL and constants with naga to
//! SPIR-V (no runtime checks, as the backend builds it), builds a throw-away pipeline from
//! it and logs its statistics.

use ash::vk;
use wgpu::hal::api::Vulkan;

/// The extension's loader on one device.
pub(crate) struct PipelineStatistics {
    /// Keeps the VkDevice alive.
    _wgpu_device: wgpu::Device,
    device: ash::Device,
    loader: ash::khr::pipeline_executable_properties::Device,
}

impl std::fmt::Debug for PipelineStatistics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PipelineStatistics")
    }
}

impl PipelineStatistics {
    /// The loader for `device`, where it was opened with pipeline statistics.
    pub(crate) fn new(device: &wgpu::Device) -> Option<PipelineStatistics> {
        // SAFETY: as_hal borrows the hal device through an Arc guard; the ash::Device clone
        // and the loader are a handle + function tables, valid while the wgpu::Device kept
        // here lives.
        let hal_device = unsafe { device.as_hal::<Vulkan>() }?;
        let extension = ash::khr::pipeline_executable_properties::NAME;
        if !hal_device.enabled_device_extensions().contains(&extension) {
            return None;
        }
        let raw = hal_device.raw_device().clone();
        let loader = ash::khr::pipeline_executable_properties::Device::new(
            hal_device.shared_instance().raw_instance(),
            &raw,
        );
        Some(PipelineStatistics {
            _wgpu_device: device.clone(),
            device: raw,
            loader,
        })
    }

    /// `name = value` for every statistic of every executable of `pipeline`, built with
    /// CAPTURE_STATISTICS on this device.
    pub(crate) fn describe(&self, pipeline: vk::Pipeline) -> String {
        let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
        // SAFETY: the pipeline is a live object of this device, built with
        // CAPTURE_STATISTICS, and pipelineExecutableInfo is enabled (the extension is).
        let executables = match unsafe { self.loader.get_pipeline_executable_properties(&info) } {
            Ok(executables) => executables.len() as u32,
            Err(e) => return format!("no statistics ({e})"),
        };
        let mut text = Vec::new();
        for index in 0..executables {
            let executable = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(index);
            // SAFETY: as above; the index is below the count the driver reported.
            let Ok(values) =
                (unsafe { self.loader.get_pipeline_executable_statistics(&executable) })
            else {
                continue;
            };
            for value in values {
                let name = value
                    .name_as_c_str()
                    .map(|n| n.to_string_lossy().into_owned());
                // SAFETY: the union member read is the one `format` names.
                let number = unsafe {
                    match value.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                            value.value.b32.to_string()
                        }
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                            value.value.i64.to_string()
                        }
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                            value.value.u64.to_string()
                        }
                        vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => {
                            value.value.f64.to_string()
                        }
                        _ => "?".into(),
                    }
                };
                text.push(format!("{} = {number}", name.unwrap_or_default()));
            }
        }
        text.join(", ")
    }

    /// Compiles `wgsl` with `constants` as the SIMT backend does, builds a pipeline from it
    /// with statistics and logs them under `label`. Failures are logged, not returned.
    pub(crate) fn log_wgsl(&self, label: &str, wgsl: &str, constants: &[(&str, f64)]) {
        match self.wgsl_statistics(wgsl, constants) {
            Ok(text) => log::info!("simt: pipeline {label}: {text}"),
            Err(why) => log::warn!("simt: no statistics for {label}: {why}"),
        }
    }

    fn wgsl_statistics(&self, wgsl: &str, constants: &[(&str, f64)]) -> Result<String, String> {
        let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .map_err(|e| e.emit_to_string(wgsl))?;
        let overrides: naga::back::PipelineConstants = constants
            .iter()
            .map(|(name, value)| (name.to_string(), *value))
            .collect();
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            &module,
            &info,
            Some((naga::ShaderStage::Compute, "main")),
            &overrides,
        )
        .map_err(|e| format!("{e:?}"))?;
        let unchecked = naga::proc::BoundsCheckPolicy::Unchecked;
        let options = naga::back::spv::Options {
            lang_version: (1, 3),
            bounds_check_policies: naga::proc::BoundsCheckPolicies {
                index: unchecked,
                buffer: unchecked,
                image_load: unchecked,
                binding_array: unchecked,
            },
            // As the SIMT backend asks wgpu: workgroup memory is written before it is read.
            zero_initialize_workgroup_memory:
                naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
            ..Default::default()
        };
        let pipeline_options = naga::back::spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: "main".into(),
        };
        let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline_options))
            .map_err(|e| e.to_string())?;

        let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..5)
            .map(|binding| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(if binding == 0 {
                        vk::DescriptorType::UNIFORM_BUFFER
                    } else {
                        vk::DescriptorType::STORAGE_BUFFER
                    })
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let device = &self.device;
        // SAFETY: valid create infos on a live device; every object made here is destroyed
        // before returning, and the pipeline is never bound or dispatched. The SPIR-V is
        // naga's output for a module that validated.
        unsafe {
            let set_layout = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(|e| e.to_string())?;
            let set_layouts = [set_layout];
            let layout = device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                None,
            );
            let shader = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None);
            let result = match (layout, shader) {
                (Ok(layout), Ok(shader)) => {
                    let stage = vk::PipelineShaderStageCreateInfo::default()
                        .stage(vk::ShaderStageFlags::COMPUTE)
                        .module(shader)
                        .name(c"main");
                    let info = [vk::ComputePipelineCreateInfo::default()
                        .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)
                        .stage(stage)
                        .layout(layout)];
                    let text = match device.create_compute_pipelines(
                        vk::PipelineCache::null(),
                        &info,
                        None,
                    ) {
                        Ok(pipelines) => {
                            let text = self.describe(pipelines[0]);
                            device.destroy_pipeline(pipelines[0], None);
                            Ok(text)
                        }
                        Err((_, e)) => Err(e.to_string()),
                    };
                    device.destroy_shader_module(shader, None);
                    device.destroy_pipeline_layout(layout, None);
                    text
                }
                (layout, shader) => {
                    if let Ok(layout) = layout {
                        device.destroy_pipeline_layout(layout, None);
                    }
                    if let Ok(shader) = shader {
                        device.destroy_shader_module(shader, None);
                    }
                    Err("could not create the layout or shader module".into())
                }
            };
            device.destroy_descriptor_set_layout(set_layout, None);
            result
        }
    }
}
