//! The descriptor sets and events of the cooperative-matrix backend's GEMMs: handed out per
//! recorded GEMM and recycled once the GPU is done with it (see the module docs of
//! `vulkan` for why in two steps).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;

use super::vk_error;
use crate::error::{Error, Result};

/// Sets handed out for one recorded GEMM, kept until the GPU has run it.
pub(crate) struct InFlight {
    /// Set by the GPU right after the GEMM's dispatch.
    pub finished: vk::Event,
    pub descriptor_set: vk::DescriptorSet,
    /// Clones keep the user's buffers alive while raw commands use them.
    pub _buffers: [wgpu::Buffer; 4],
}

/// GEMMs whose dispatch the GPU has executed (their events were seen set), so their command
/// buffers have been submitted, but which may still be pending: wgpu reports the completion
/// of everything submitted before `completed` was registered by setting it.
struct Retiring {
    completed: Arc<AtomicBool>,
    gemms: Vec<InFlight>,
}

/// Every set and event of one device's GEMMs: free, in flight, or retiring.
#[derive(Default)]
pub(crate) struct Recycler {
    pub pools: Vec<vk::DescriptorPool>,
    pub free_sets: Vec<vk::DescriptorSet>,
    pub free_events: Vec<vk::Event>,
    /// Recorded; their events not yet seen set.
    pub in_flight: Vec<InFlight>,
    /// Executed; waiting for their command buffers to complete.
    retiring: Vec<Retiring>,
}

impl Recycler {
    /// GEMMs whose objects are not free yet.
    pub(crate) fn held(&self) -> usize {
        self.in_flight.len() + self.retiring.iter().map(|r| r.gemms.len()).sum::<usize>()
    }

    /// Frees the sets and events of GEMMs whose command buffers have completed, and drops
    /// their buffer clones.
    ///
    /// A descriptor set may be rewritten only once no pending command buffer uses it
    /// (`VUID-vkUpdateDescriptorSets-None-03047`), and an executed dispatch is not enough:
    /// its command buffer stays pending until the whole submission completes. So a GEMM
    /// retires in two steps. Its event, set right after the dispatch, proves that the GPU ran
    /// it, hence that its command buffers were submitted; at that point a
    /// `Queue::on_submitted_work_done` callback is registered, which wgpu runs once everything
    /// submitted so far has completed, that submission included. Only then are the set and
    /// event reused. With `queue_idle` (the caller waited for wgpu's queue to drain) executed
    /// GEMMs are complete at once.
    pub(crate) fn reclaim(
        &mut self,
        device: &ash::Device,
        queue: &wgpu::Queue,
        queue_idle: bool,
    ) -> Result<()> {
        let mut executed = Vec::new();
        let mut index = 0;
        while index < self.in_flight.len() {
            let event = self.in_flight[index].finished;
            // SAFETY: the event is a live object of this device.
            let done =
                unsafe { device.get_event_status(event) }.map_err(vk_error("vkGetEventStatus"))?;
            if done {
                executed.push(self.in_flight.swap_remove(index));
            } else {
                index += 1;
            }
        }
        if !executed.is_empty() {
            let completed = Arc::new(AtomicBool::new(queue_idle));
            if !queue_idle {
                let flag = completed.clone();
                queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
            }
            self.retiring.push(Retiring {
                completed,
                gemms: executed,
            });
        }
        let (done, waiting): (Vec<Retiring>, Vec<Retiring>) = std::mem::take(&mut self.retiring)
            .into_iter()
            .partition(|batch| batch.completed.load(Ordering::Acquire));
        self.retiring = waiting;
        for finished in done.into_iter().flat_map(|batch| batch.gemms) {
            // SAFETY: the command buffer that set the event has completed and nothing waits
            // on the event; no pending command buffer uses the descriptor set any more.
            unsafe { device.reset_event(finished.finished) }.map_err(vk_error("vkResetEvent"))?;
            self.free_events.push(finished.finished);
            self.free_sets.push(finished.descriptor_set);
        }
        Ok(())
    }

    /// A descriptor set of `set_layout` and an unset event for one GEMM: recycled ones,
    /// else new (sets come from pools of [`SETS_PER_POOL`]).
    pub(crate) fn acquire(
        &mut self,
        device: &ash::Device,
        set_layout: vk::DescriptorSetLayout,
    ) -> Result<(vk::DescriptorSet, vk::Event)> {
        if self.free_sets.is_empty() {
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(4 * SETS_PER_POOL)];
            // SAFETY: valid create info; pools are destroyed in `VulkanKernels`' Drop.
            let pool = unsafe {
                device.create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(SETS_PER_POOL)
                        .pool_sizes(&sizes),
                    None,
                )
            }
            .map_err(vk_error("vkCreateDescriptorPool"))?;
            self.pools.push(pool);
            let layouts = vec![set_layout; SETS_PER_POOL as usize];
            // SAFETY: the pool was sized for exactly these sets.
            let sets = unsafe {
                device.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
            }
            .map_err(vk_error("vkAllocateDescriptorSets"))?;
            self.free_sets.extend(sets);
        }
        let event = match self.free_events.pop() {
            Some(event) => event,
            // SAFETY: valid create info; events are destroyed in `VulkanKernels`' Drop.
            None => unsafe { device.create_event(&vk::EventCreateInfo::default(), None) }
                .map_err(vk_error("vkCreateEvent"))?,
        };
        let set = self
            .free_sets
            .pop()
            .ok_or_else(|| Error::Device("no descriptor set".into()))?;
        Ok((set, event))
    }
}

/// Descriptor sets per pool.
const SETS_PER_POOL: u32 = 64;
