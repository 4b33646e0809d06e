//! The SIMT backend's driver pipeline cache: a `wgpu::PipelineCache` fed from and saved to
//! [`crate::disk_cache`] (the cooperative-matrix backend's `VkPipelineCache` is in
//! `raw_pipeline_cache`).

use crate::disk_cache::{CacheFile, CacheStore};

/// A `wgpu::PipelineCache` loaded from, and saved back to, a cache file.
#[derive(Debug)]
pub(crate) struct WgpuPipelineCache {
    cache: wgpu::PipelineCache,
    file: CacheFile,
}

impl WgpuPipelineCache {
    /// A cache for `device` seeded with the file `kind` of `store`, or `None` when there is no
    /// store or the device lacks `wgpu::Features::PIPELINE_CACHE` (only Vulkan has it).
    pub(crate) fn open(
        device: &wgpu::Device,
        store: Option<&CacheStore>,
        kind: &'static str,
    ) -> Option<WgpuPipelineCache> {
        let store = store?;
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            log::debug!("pipeline disk cache: the device has no PIPELINE_CACHE feature");
            return None;
        }
        let file = store.file(kind);
        let data = file.load();
        let create = |data: Option<&[u8]>| {
            let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
            // SAFETY: wgpu asks that `data` come from `PipelineCache::get_data`. It is what
            // `save` below wrote for an adapter with the same vendor, device, driver and
            // version (the file name and header carry that key), read back only if its
            // length and checksum match what was written (`CacheFile::load`). wgpu-core then
            // checks its own header (wgpu's format, backend, adapter key and the driver's
            // pipelineCacheUUID) and the Vulkan driver checks its header again; with
            // `fallback: true` unusable data gives an empty cache rather than an error.
            let cache = unsafe {
                device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                    label: Some("coopgemm"),
                    data,
                    fallback: true,
                })
            };
            match pollster::block_on(scope.pop()) {
                None => Some(cache),
                Some(error) => {
                    log::warn!("pipeline cache {}: {error}", file.path().display());
                    None
                }
            }
        };
        let cache = match data.as_deref() {
            Some(data) => create(Some(data)).or_else(|| create(None)),
            None => create(None),
        }?;
        Some(WgpuPipelineCache { cache, file })
    }

    /// The cache to name in pipeline descriptors.
    pub(crate) fn cache(&self) -> &wgpu::PipelineCache {
        &self.cache
    }

    /// Writes the cache's data to its file if it changed (call after building pipelines).
    pub(crate) fn save(&self) {
        match self.cache.get_data() {
            Some(data) => self.file.save(&data),
            None => log::debug!("pipeline cache {}: no data", self.file.path().display()),
        }
    }
}
