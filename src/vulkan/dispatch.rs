//! Recording the cooperative-matrix kernels with raw Vulkan on wgpu's device and buffers.
//!
//! See the [module docs](super) for the synchronisation and lifetime scheme.

use std::sync::Mutex;

use ash::vk;
use wgpu::hal::api::Vulkan;

use super::device::EnabledFeatures;
use super::recycler::{InFlight, Recycler};
use super::touch::TouchPass;
use super::vk_error;
use crate::bindings::{BindingPlan, BoundRange, GemmBuffers};
use crate::error::{Error, Result};
use crate::memo::Memo;

/// The kernels' push-constant block; mirrors `Params` in `glsl/gemm_coopmat.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct PushConstants {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    pub a_offset: u32,
    pub b_offset: u32,
    pub c_offset: u32,
    pub a_batch_stride: u32,
    pub b_batch_stride: u32,
    pub c_batch_stride: u32,
    pub alpha: f32,
    pub beta: f32,
    pub bias_offset: u32,
    pub b_panel_stride: u32,
    pub activation: u32,
    pub bias_axis: u32,
}

/// Everything that identifies one compiled pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    /// The SPIR-V module (one per type combination).
    pub module: &'static str,
    /// Specialization constants, indexed by `constant_id`.
    pub constants: Vec<u32>,
    /// Subgroup size the pipeline requires (0: leave it to the driver).
    pub required_subgroup_size: u32,
}

/// The four ranges a GEMM dispatch binds: A, B, C and the epilogue's bias vector (A again
/// where there is none: the shader never reads binding 3 then, but it must hold a valid
/// range).
pub(crate) fn gemm_bindings<'a>(
    buffers: &GemmBuffers<'a>,
    plan: &BindingPlan,
) -> [(&'a wgpu::Buffer, BoundRange); 4] {
    let (bias_buffer, bias_range) = match (buffers.bias, plan.bias) {
        (Some(buffer), Some(range)) => (buffer, range),
        _ => (buffers.a, plan.a),
    };
    [
        (buffers.a, plan.a),
        (buffers.b, plan.b),
        (buffers.c, plan.c),
        (bias_buffer, bias_range),
    ]
}

/// The Vulkan handles of the four buffers a dispatch binds. Callers keep a clone of each
/// buffer while its handle is in use.
pub(super) fn raw_buffers(bindings: &[(&wgpu::Buffer, BoundRange); 4]) -> Result<[vk::Buffer; 4]> {
    let raw = bindings.map(|(buffer, _)| {
        // SAFETY: the guard (which holds wgpu's snatch lock) is dropped at the end of the
        // statement; the handle stays valid while the caller's clone lives and the buffer is
        // not destroyed explicitly, which wgpu rejects at the submit of the touch pass that
        // every raw dispatch records with it.
        unsafe { buffer.as_hal::<Vulkan>().map(|b| b.raw_handle()) }
    });
    let [Some(a), Some(b), Some(c), Some(d)] = raw else {
        return Err(Error::Device(
            "a buffer is not a Vulkan buffer of this device".into(),
        ));
    };
    Ok([a, b, c, d])
}

/// Raw Vulkan objects of the cooperative-matrix backend on one device.
pub(crate) struct VulkanKernels {
    /// Keeps the VkDevice alive (wgpu destroys it with its last Device/Queue/resource).
    pub(super) wgpu_device: wgpu::Device,
    /// wgpu's queue: the GEMMs' command buffers are submitted there, and it reports their
    /// completion (`reclaim`).
    pub(super) queue: wgpu::Queue,
    pub(super) device: ash::Device,
    enabled: EnabledFeatures,
    pub(super) set_layout: vk::DescriptorSetLayout,
    pub(super) pipeline_layout: vk::PipelineLayout,
    pipeline_cache: vk::PipelineCache,
    /// Where `pipeline_cache` is loaded from and saved to, if anywhere.
    cache_file: Option<crate::disk_cache::CacheFile>,
    /// Built once per name; a build holds only its own key (see [`Memo`]).
    modules: Memo<&'static str, vk::ShaderModule>,
    /// Built once per key; a thread whose pipeline exists never waits for another's build.
    pipelines: Memo<PipelineKey, vk::Pipeline>,
    recycler: Mutex<Recycler>,
    /// A wgpu pass that binds the same ranges read-write, so that wgpu initialises them
    /// (zero-fills never-written memory) and tracks them, before the raw commands run.
    pub(super) touch: TouchPass,
    /// `2 * timing::PAIRS` timestamp queries for `Context::time_on_gpu`, where the device
    /// has wgpu's TIMESTAMP_QUERY (wgpu grants it when the queue's timestamps are valid).
    timestamps: Option<vk::QueryPool>,
    /// Where the device has pipeline statistics enabled (`COOPGEMM_PIPELINE_STATS=1`).
    statistics: Option<super::statistics::PipelineStatistics>,
}

impl std::fmt::Debug for VulkanKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VulkanKernels")
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

impl VulkanKernels {
    /// Creates the layouts for `device` (a Vulkan wgpu device).
    pub(crate) fn new(
        wgpu_device: &wgpu::Device,
        queue: &wgpu::Queue,
        enabled: EnabledFeatures,
        store: Option<&crate::disk_cache::CacheStore>,
    ) -> std::result::Result<VulkanKernels, String> {
        // SAFETY: as_hal borrows the hal device through an Arc guard; the ash::Device clone
        // is a handle + function table, valid while `wgpu_device` (kept below) lives.
        let device = unsafe { wgpu_device.as_hal::<Vulkan>() }
            .ok_or("not a Vulkan device")?
            .raw_device()
            .clone();
        let statistics = enabled
            .pipeline_statistics
            .then(|| super::statistics::PipelineStatistics::new(wgpu_device))
            .flatten();
        // A, B, C and the epilogue's bias vector (A again when there is none).
        let bindings: Vec<_> = (0..4)
            .map(|binding| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        // SAFETY: valid create info; the layout is destroyed in Drop, before `wgpu_device` drops.
        let set_layout = unsafe {
            device.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
        }
        .map_err(|e| format!("vkCreateDescriptorSetLayout: {e}"))?;
        let push_range = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(std::mem::size_of::<PushConstants>() as u32)];
        let set_layouts = [set_layout];
        // SAFETY: as above.
        let pipeline_layout = unsafe {
            device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&push_range),
                None,
            )
        }
        .map_err(|e| format!("vkCreatePipelineLayout: {e}"))?;
        let timestamps = if wgpu_device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            let info = vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(2 * crate::timing::PAIRS);
            // SAFETY: valid create info; the pool is destroyed in Drop.
            Some(
                unsafe { device.create_query_pool(&info, None) }
                    .map_err(|e| format!("vkCreateQueryPool: {e}"))?,
            )
        } else {
            None
        };
        let cache_file = store.map(|store| store.file("coopmat.vk"));
        let pipeline_cache =
            super::raw_pipeline_cache::create_vk_pipeline_cache(&device, cache_file.as_ref())
                .map_err(|e| format!("vkCreatePipelineCache: {e}"))?;

        Ok(VulkanKernels {
            wgpu_device: wgpu_device.clone(),
            queue: queue.clone(),
            device,
            enabled,
            set_layout,
            pipeline_layout,
            pipeline_cache,
            cache_file,
            modules: Memo::new("module"),
            pipelines: Memo::new("pipeline"),
            recycler: Mutex::new(Recycler::default()),
            touch: TouchPass::new(wgpu_device),
            timestamps,
            statistics,
        })
    }

    /// Points the four storage bindings of `set` at the ranges of `bindings` (whose Vulkan
    /// handles are `raw`).
    ///
    /// # Safety
    /// No pending command buffer uses `set`; the buffers are live; the ranges were checked
    /// against their sizes and the device's alignment (`BindingPlan`).
    pub(super) unsafe fn write_set(
        &self,
        set: vk::DescriptorSet,
        raw: [vk::Buffer; 4],
        bindings: &[(&wgpu::Buffer, BoundRange); 4],
    ) {
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = raw
            .into_iter()
            .zip(bindings.iter())
            .map(|(buffer, (_, range))| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(buffer)
                    .offset(range.offset_bytes)
                    .range(range.size_bytes)]
            })
            .collect();
        let writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .enumerate()
            .map(|(binding, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(binding as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        // SAFETY: the caller's contract.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
    }

    fn module(&self, name: &'static str, spirv_bytes: &[u8]) -> Result<vk::ShaderModule> {
        self.modules.get_or_build(name, |name| {
            let spirv = ash::util::read_spv(&mut std::io::Cursor::new(spirv_bytes))
                .map_err(|e| Error::Pipeline(format!("SPIR-V {name}: {e}")))?;
            // SAFETY: `spirv` is a complete module that passed spirv-val at build time (a
            // test checks it); the module is destroyed in Drop.
            unsafe {
                self.device
                    .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&spirv), None)
            }
            .map_err(vk_error("vkCreateShaderModule"))
        })
    }

    /// The pipeline for `key`, built on first use from the module `spirv_bytes` (decoded
    /// only then, so cached calls cost a lookup).
    /// Two threads never build (and leak) the same pipeline: the second waits for the
    /// first's; threads that want other pipelines do not wait.
    pub(crate) fn pipeline(&self, key: &PipelineKey, spirv_bytes: &[u8]) -> Result<vk::Pipeline> {
        self.pipelines
            .get_or_build(key.clone(), |key| self.build_pipeline(key, spirv_bytes))
    }

    /// Builds the pipeline for `key` (called once per key, by [`Self::pipeline`]).
    fn build_pipeline(&self, key: &PipelineKey, spirv_bytes: &[u8]) -> Result<vk::Pipeline> {
        let module = self.module(key.module, spirv_bytes)?;
        let entries: Vec<vk::SpecializationMapEntry> = (0..key.constants.len() as u32)
            .map(|id| {
                vk::SpecializationMapEntry::default()
                    .constant_id(id)
                    .offset(id * 4)
                    .size(4)
            })
            .collect();
        let data: &[u8] = bytemuck::cast_slice(&key.constants);
        let specialization = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(data);
        let mut required_size = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(key.required_subgroup_size);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&specialization);
        if key.required_subgroup_size != 0 && self.enabled.subgroup_size_control {
            stage = stage.push_next(&mut required_size);
        }
        if self.enabled.full_subgroups {
            stage = stage.flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS_EXT);
        }
        let flags = if self.statistics.is_some() {
            vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
        } else {
            vk::PipelineCreateFlags::empty()
        };
        // The kernels bound every buffer access themselves (tests/guard.rs); the driver's
        // robust buffer access, which wgpu enables for the whole device, only costs time.
        let mut unchecked = vk::PipelineRobustnessCreateInfoEXT::default()
            .storage_buffers(vk::PipelineRobustnessBufferBehaviorEXT::DISABLED)
            .uniform_buffers(vk::PipelineRobustnessBufferBehaviorEXT::DISABLED)
            .vertex_inputs(vk::PipelineRobustnessBufferBehaviorEXT::DEVICE_DEFAULT)
            .images(vk::PipelineRobustnessImageBehaviorEXT::DEVICE_DEFAULT);
        let mut info = vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(self.pipeline_layout);
        if self.enabled.unchecked_pipelines {
            info = info.push_next(&mut unchecked);
        }
        let info = [info];
        log::debug!(
            "coopmat: building pipeline {} {:?}",
            key.module,
            key.constants
        );
        let started = std::time::Instant::now();
        // SAFETY: the module, layout and cache are live objects of this device; the
        // specialization data holds one u32 per map entry; a required subgroup size is only
        // chained when subgroupSizeControl is enabled (the backend picks it in the device's
        // [min, max] range), REQUIRE_FULL_SUBGROUPS only with computeFullSubgroups, and the
        // robustness override only with pipelineRobustness enabled. With it, an access out
        // of a binding's range would be undefined: the kernels never make one (every index
        // is checked against m, n, k and the leading dimensions the host validated against
        // the bound ranges; tests/guard.rs poisons everything around the operands).
        let pipeline = unsafe {
            self.device
                .create_compute_pipelines(self.pipeline_cache, &info, None)
        }
        .map_err(|(_, e)| Error::Pipeline(format!("vkCreateComputePipelines: {e}")))?[0];
        log::debug!(
            "coopmat: pipeline built in {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        if let Some(file) = &self.cache_file {
            super::raw_pipeline_cache::save_vk_pipeline_cache(
                &self.device,
                self.pipeline_cache,
                file,
            );
        }
        if let Some(statistics) = &self.statistics {
            log::info!(
                "coopmat: pipeline {} {:?}: {}",
                key.module,
                key.constants,
                statistics.describe(pipeline)
            );
        }
        Ok(pipeline)
    }

    /// Number of GEMMs recorded whose completion has not been observed yet.
    pub(crate) fn in_flight(&self) -> usize {
        self.recycler
            .lock()
            .map(|mut r| {
                // Executed GEMMs start retiring here; a non-blocking poll then lets wgpu run
                // the completion callbacks of submissions that have finished.
                let _ = r.reclaim(&self.device, &self.queue, false);
                let _ = self.wgpu_device.poll(wgpu::PollType::Poll);
                let _ = r.reclaim(&self.device, &self.queue, false);
                r.held()
            })
            .unwrap_or(0)
    }

    /// Counts of the raw objects this backend owns: (pipelines, descriptor pools, events).
    pub(crate) fn object_counts(&self) -> (usize, usize, usize) {
        let pipelines = self.pipelines.len();
        let (pools, events) = self
            .recycler
            .lock()
            .map(|r| (r.pools.len(), r.free_events.len() + r.held()))
            .unwrap_or((0, 0));
        (pipelines, pools, events)
    }

    /// Whether raw dispatches can be timed ([`VulkanKernels::read_timestamps`]).
    pub(crate) fn has_timestamps(&self) -> bool {
        self.timestamps.is_some()
    }

    /// The two timestamps (ticks) of each of the first `pairs` pairs of the query pool.
    /// Only for pairs whose command buffers have completed (the caller waited for them).
    pub(crate) fn read_timestamps(&self, pairs: u32) -> Result<Vec<[u64; 2]>> {
        let Some(pool) = self.timestamps.filter(|_| pairs > 0) else {
            return Ok(Vec::new());
        };
        let mut ticks = vec![[0u64; 2]; pairs.min(crate::timing::PAIRS) as usize];
        // SAFETY: the pool is a live object of this device with 2 * PAIRS queries; `ticks`
        // holds one u64 per query read (TYPE_64, tightly packed pairs); every query read was
        // reset and written by a command buffer that has completed, so WAIT returns at once.
        unsafe {
            self.device.get_query_pool_results(
                pool,
                0,
                ticks.as_flattened_mut(),
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(vk_error("vkGetQueryPoolResults"))?;
        Ok(ticks)
    }

    /// Records one dispatch of `pipeline` over `grid` workgroups with the four storage
    /// ranges of the shared set layout bound in order and `push` as the push constants
    /// (exactly the layout's range, the size of [`PushConstants`]), and returns the command buffers to submit, in order: a
    /// wgpu pass that initialises and tracks the buffers, then the raw commands.
    /// `timestamp_pair` i (from `GpuTimer::claim_raw`) has queries 2i and 2i + 1 of the pool
    /// stamped right before and after the dispatch.
    pub(crate) fn record_raw(
        &self,
        pipeline: vk::Pipeline,
        bindings: &[(&wgpu::Buffer, BoundRange); 4],
        push: &[u8],
        grid: [u32; 3],
        timestamp_pair: Option<u32>,
    ) -> Result<Vec<wgpu::CommandBuffer>> {
        if push.len() != std::mem::size_of::<PushConstants>() {
            return Err(Error::Pipeline(format!(
                "{} bytes of push constants for a {}-byte range",
                push.len(),
                std::mem::size_of::<PushConstants>()
            )));
        }
        let stamps = self
            .timestamps
            .zip(timestamp_pair)
            .map(|(pool, pair)| (pool, 2 * pair));
        let touch = self.touch.record(&self.wgpu_device, bindings);

        let raw_buffers = raw_buffers(bindings)?;

        let mut recycler = self
            .recycler
            .lock()
            .map_err(|_| Error::Device("recycler poisoned".into()))?;
        recycler.reclaim(&self.device, &self.queue, false)?;
        let (set, event) = recycler.acquire(&self.device, self.set_layout)?;
        // SAFETY: the set is not in use by any pending command buffer (fresh, or reclaimed
        // after the command buffer that used it completed, see `reclaim`); the buffers are
        // live (the clones kept in `InFlight` below) and the ranges were checked against their
        // sizes and the device's alignment by BindingPlan.
        unsafe { self.write_set(set, raw_buffers, bindings) };

        let mut encoder =
            self.wgpu_device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("coopgemm coopmat"),
                });
        let device = &self.device;
        let pipeline_layout = self.pipeline_layout;
        // SAFETY: the encoder is fresh, so no wgpu commands are mixed in; the command buffer
        // is in the recording state wgpu began; everything bound is a live object of this
        // device; the push constants match the layout's single range (the struct's size). The first barrier
        // orders all earlier writes (wgpu's uploads and clears, the touch pass) before the
        // shader's reads and writes; the last makes the shader's writes visible to whatever
        // wgpu records next. The event tells `reclaim` when the dispatch has finished.
        // Timestamp queries (below PAIRS, so inside the pool) are reset before they are
        // written; BOTTOM_OF_PIPE stamps wait for everything before them, so they bracket
        // the dispatch.
        let recorded = unsafe {
            encoder.as_hal_mut::<Vulkan, _, _>(|hal_encoder| {
                let Some(hal_encoder) = hal_encoder else {
                    return false;
                };
                let command_buffer = hal_encoder.raw_handle();
                if let Some((pool, first)) = stamps {
                    device.cmd_reset_query_pool(command_buffer, pool, first, 2);
                }
                device.cmd_pipeline_barrier(
                    command_buffer,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::DependencyFlags::empty(),
                    &[vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
                        .dst_access_mask(
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        )],
                    &[],
                    &[],
                );
                device.cmd_bind_pipeline(command_buffer, vk::PipelineBindPoint::COMPUTE, pipeline);
                device.cmd_bind_descriptor_sets(
                    command_buffer,
                    vk::PipelineBindPoint::COMPUTE,
                    pipeline_layout,
                    0,
                    &[set],
                    &[],
                );
                device.cmd_push_constants(
                    command_buffer,
                    pipeline_layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    push,
                );
                let stamp = |query| {
                    if let Some((pool, first)) = stamps {
                        device.cmd_write_timestamp(
                            command_buffer,
                            vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                            pool,
                            first + query,
                        );
                    }
                };
                stamp(0);
                device.cmd_dispatch(command_buffer, grid[0], grid[1], grid[2]);
                stamp(1);
                device.cmd_pipeline_barrier(
                    command_buffer,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::DependencyFlags::empty(),
                    &[vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                        .dst_access_mask(
                            vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
                        )],
                    &[],
                    &[],
                );
                device.cmd_set_event(
                    command_buffer,
                    event,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                );
                true
            })
        };
        if !recorded {
            recycler.free_sets.push(set);
            recycler.free_events.push(event);
            return Err(Error::Device("wgpu gave no Vulkan command encoder".into()));
        }
        recycler.in_flight.push(InFlight {
            finished: event,
            descriptor_set: set,
            _buffers: bindings.map(|(buffer, _)| buffer.clone()),
        });
        drop(recycler);
        Ok(vec![touch, encoder.finish()])
    }
}

impl Drop for VulkanKernels {
    fn drop(&mut self) {
        // Everything recorded so far was submitted through wgpu or never will be; wait for
        // wgpu's queue, then see what finished.
        let _ = self.wgpu_device.poll(wgpu::PollType::wait_indefinitely());
        let Ok(mut recycler) = self.recycler.lock() else {
            return;
        };
        let _ = recycler.reclaim(&self.device, &self.queue, true);
        if recycler.held() > 0 {
            log::warn!(
                "coopmat: {} recorded GEMMs never ran (command buffers not submitted?); leaking their Vulkan objects rather than freeing them under the GPU",
                recycler.held()
            );
            return;
        }
        // SAFETY: no command buffer that uses these objects is pending (all events observed
        // set, wgpu's queue idle), and the VkDevice is alive (self.wgpu_device).
        unsafe {
            for event in recycler.free_events.drain(..) {
                self.device.destroy_event(event, None);
            }
            for pool in recycler.pools.drain(..) {
                self.device.destroy_descriptor_pool(pool, None);
            }
            for pipeline in self.pipelines.drain() {
                self.device.destroy_pipeline(pipeline, None);
            }
            for module in self.modules.drain() {
                self.device.destroy_shader_module(module, None);
            }
            if let Some(pool) = self.timestamps {
                self.device.destroy_query_pool(pool, None);
            }
            self.device
                .destroy_pipeline_cache(self.pipeline_cache, None);
            self.device
                .destroy_pipeline_layout(self.pipeline_layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
