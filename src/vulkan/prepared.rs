//! GEMMs prepared once and launched many times ([`crate::PreparedGemm`]) on the raw path:
//! a descriptor set of their own, written once, and the touch pass's bind group made once,
//! so that a launch records only its commands (no descriptor write, no set or event from
//! the recycler, no planning) and several launches share one pair of command buffers.

use ash::vk;
use wgpu::hal::api::Vulkan;

use super::dispatch::{raw_buffers, PushConstants, VulkanKernels};
use super::vk_error;
use crate::bindings::BoundRange;
use crate::error::{Error, Result};

/// One GEMM's dispatch, bound once.
pub(crate) struct PreparedDispatch {
    /// Keeps the VkDevice alive until the set's pool is destroyed (see Drop).
    wgpu_device: wgpu::Device,
    queue: wgpu::Queue,
    device: ash::Device,
    /// The pool of `set` alone: destroyed once no submission uses it.
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    pipeline: vk::Pipeline,
    pipeline_layout: vk::PipelineLayout,
    push: PushConstants,
    grid: [u32; 3],
    /// The touch pass's bind group over the same ranges (it also keeps the buffers alive
    /// while the set refers to them).
    touch_group: wgpu::BindGroup,
    /// Clones that keep the buffers alive while the set refers to them.
    _buffers: [wgpu::Buffer; 4],
}

impl std::fmt::Debug for PreparedDispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedDispatch")
            .field("grid", &self.grid)
            .finish_non_exhaustive()
    }
}

impl VulkanKernels {
    /// Binds one dispatch of `pipeline` over `grid` with the four ranges of the shared set
    /// layout and the push constants `push` (a GEMM's [`PushConstants`], or a network
    /// kernel's block of the same size), for [`VulkanKernels::record_prepared`].
    pub(crate) fn prepare_dispatch(
        &self,
        pipeline: vk::Pipeline,
        bindings: &[(&wgpu::Buffer, BoundRange); 4],
        push: &[u8],
        grid: [u32; 3],
    ) -> Result<PreparedDispatch> {
        if push.len() != std::mem::size_of::<PushConstants>() {
            return Err(Error::Pipeline(format!(
                "{} bytes of push constants for a {}-byte range",
                push.len(),
                std::mem::size_of::<PushConstants>()
            )));
        }
        let push: PushConstants = bytemuck::pod_read_unaligned(push);
        let raw = raw_buffers(bindings)?;
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(4)];
        // SAFETY: valid create info; the pool is destroyed in Drop (deferred until no
        // submission uses its set) or below on failure.
        let pool = unsafe {
            self.device.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .map_err(vk_error("vkCreateDescriptorPool"))?;
        let layouts = [self.set_layout];
        // SAFETY: the pool was sized for exactly this set.
        let sets = unsafe {
            self.device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
        };
        let set = match sets {
            Ok(sets) => sets[0],
            Err(error) => {
                // SAFETY: the pool is ours and nothing uses it.
                unsafe { self.device.destroy_descriptor_pool(pool, None) };
                return Err(vk_error("vkAllocateDescriptorSets")(error));
            }
        };
        // SAFETY: the set is new and used by no command buffer; the buffers are live (the
        // clones kept below) and the ranges were checked against their sizes and the device's
        // alignment (BindingPlan).
        unsafe { self.write_set(set, raw, bindings) };
        Ok(PreparedDispatch {
            wgpu_device: self.wgpu_device.clone(),
            queue: self.queue.clone(),
            device: self.device.clone(),
            pool,
            set,
            pipeline,
            pipeline_layout: self.pipeline_layout,
            push,
            grid,
            touch_group: self.touch.bind_group(&self.wgpu_device, bindings),
            _buffers: bindings.map(|(buffer, _)| buffer.clone()),
        })
    }

    /// Records `dispatches` in order (each after the previous one's writes) and returns the
    /// command buffers to submit, in order: one wgpu pass that initialises and tracks every
    /// buffer, then the raw commands of all of them.
    pub(crate) fn record_prepared(
        &self,
        dispatches: &[&PreparedDispatch],
    ) -> Result<Vec<wgpu::CommandBuffer>> {
        if dispatches.is_empty() {
            return Ok(Vec::new());
        }
        let groups: Vec<&wgpu::BindGroup> = dispatches.iter().map(|d| &d.touch_group).collect();
        let touch = self.touch.record_groups(&self.wgpu_device, &groups);
        let mut encoder =
            self.wgpu_device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("coopgemm coopmat (prepared)"),
                });
        let device = &self.device;
        // SAFETY: the encoder is fresh, so no wgpu commands are mixed in; the command buffer
        // is in the recording state wgpu began; every pipeline, layout and set is a live
        // object of this device (the sets stay alive until no submission uses them, see
        // Drop), their buffers are kept alive by the dispatches' clones, and the push
        // constants are the layout's single range. The first barrier orders all earlier
        // writes (wgpu's uploads and clears, the touch pass) before the shaders' reads and
        // writes; each later one orders a dispatch's writes before the next one's reads and
        // writes; the last makes them visible to whatever wgpu records next.
        let recorded = unsafe {
            encoder.as_hal_mut::<Vulkan, _, _>(|hal_encoder| {
                let Some(hal_encoder) = hal_encoder else {
                    return false;
                };
                let command_buffer = hal_encoder.raw_handle();
                let barrier = |source, destination, src_access, dst_access| {
                    device.cmd_pipeline_barrier(
                        command_buffer,
                        source,
                        destination,
                        vk::DependencyFlags::empty(),
                        &[vk::MemoryBarrier::default()
                            .src_access_mask(src_access)
                            .dst_access_mask(dst_access)],
                        &[],
                        &[],
                    );
                };
                let shader = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
                barrier(
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::AccessFlags::MEMORY_WRITE,
                    shader,
                );
                for (index, dispatch) in dispatches.iter().enumerate() {
                    if index > 0 {
                        barrier(
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_WRITE,
                            shader,
                        );
                    }
                    device.cmd_bind_pipeline(
                        command_buffer,
                        vk::PipelineBindPoint::COMPUTE,
                        dispatch.pipeline,
                    );
                    device.cmd_bind_descriptor_sets(
                        command_buffer,
                        vk::PipelineBindPoint::COMPUTE,
                        dispatch.pipeline_layout,
                        0,
                        &[dispatch.set],
                        &[],
                    );
                    device.cmd_push_constants(
                        command_buffer,
                        dispatch.pipeline_layout,
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        bytemuck::bytes_of(&dispatch.push),
                    );
                    let [x, y, z] = dispatch.grid;
                    device.cmd_dispatch(command_buffer, x, y, z);
                }
                barrier(
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::AccessFlags::SHADER_WRITE,
                    vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
                );
                true
            })
        };
        if !recorded {
            return Err(Error::Device("wgpu gave no Vulkan command encoder".into()));
        }
        Ok(vec![touch, encoder.finish()])
    }
}

impl Drop for PreparedDispatch {
    /// The set may still be in use by a pending submission: its pool is destroyed once
    /// wgpu reports that everything submitted so far has completed (when the device is next
    /// polled; a device never polled again keeps the pool, as it keeps its own objects).
    fn drop(&mut self) {
        let device = self.device.clone();
        let wgpu_device = self.wgpu_device.clone();
        let pool = self.pool;
        self.queue.on_submitted_work_done(move || {
            // SAFETY: every submission that could use the set has completed; the pool is
            // destroyed once (this closure runs once) and the VkDevice is alive
            // (`wgpu_device`, moved here, keeps it).
            unsafe { device.destroy_descriptor_pool(pool, None) };
            drop(wgpu_device);
        });
    }
}
