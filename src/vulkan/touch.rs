//! The wgpu pass recorded before each raw dispatch: it binds the GEMM's buffer ranges
//! read-write and runs an empty shader, so that wgpu zero-fills what it never wrote, marks it
//! initialised, tracks the buffers' state and keeps them alive for the submission (see the
//! `vulkan` module docs).

use crate::bindings::{storage_entry, BoundRange};

/// The empty pipeline and its four-buffer layout.
#[derive(Debug)]
pub(crate) struct TouchPass {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl TouchPass {
    pub(crate) fn new(device: &wgpu::Device) -> TouchPass {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("coopgemm coopmat init"),
            entries: &[0, 1, 2, 3].map(|binding| storage_entry(binding, false)),
        });
        // As naga IR, like every module of the crate (`crate::shader`, which builds on this
        // module and so is not used here): WGSL text would make wgpu's SPIR-V name WGSL as
        // its source language, which the Vulkan validation layer rejects.
        const EMPTY: &str = "@compute @workgroup_size(1) fn main() {}";
        let source = match naga::front::wgsl::parse_str(EMPTY) {
            Ok(module) => wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module)),
            Err(_) => wgpu::ShaderSource::Wgsl(EMPTY.into()),
        };
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("coopgemm coopmat init"),
            source,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("coopgemm coopmat init"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("coopgemm coopmat init"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        TouchPass { pipeline, layout }
    }

    /// The pass over the four ranges a raw dispatch binds, in a command buffer of its own.
    pub(crate) fn record(
        &self,
        device: &wgpu::Device,
        bindings: &[(&wgpu::Buffer, BoundRange); 4],
    ) -> wgpu::CommandBuffer {
        self.record_groups(device, &[&self.bind_group(device, bindings)])
    }

    /// The bind group of the four ranges a raw dispatch binds (made once for a prepared
    /// GEMM).
    pub(crate) fn bind_group(
        &self,
        device: &wgpu::Device,
        bindings: &[(&wgpu::Buffer, BoundRange); 4],
    ) -> wgpu::BindGroup {
        let entries = [0, 1, 2, 3].map(|i| bindings[i].1.bind_group_entry(i as u32, bindings[i].0));
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coopgemm coopmat init"),
            layout: &self.layout,
            entries: &entries,
        })
    }

    /// One pass over the ranges of each of `groups`, in a command buffer of its own.
    pub(crate) fn record_groups(
        &self,
        device: &wgpu::Device,
        groups: &[&wgpu::BindGroup],
    ) -> wgpu::CommandBuffer {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("coopgemm coopmat init"),
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("coopgemm coopmat init"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            for group in groups {
                pass.set_bind_group(0, *group, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        encoder.finish()
    }
}
