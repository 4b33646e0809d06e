//! Driver pipeline caches fed from and saved to [`crate::disk_cache`]: a `wgpu::PipelineCache`
//! for the SIMT backend and a `VkPipelineCache` for the cooperative-matrix backend.

use ash::vk;

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

/// Creates the cooperative-matrix backend's `VkPipelineCache`, seeded with `file`'s data when
/// there is any; if the driver refuses that data, an empty cache.
pub(crate) fn create_vk_pipeline_cache(
    device: &ash::Device,
    file: Option<&CacheFile>,
) -> Result<vk::PipelineCache, vk::Result> {
    if let Some(data) = file.and_then(CacheFile::load) {
        // SAFETY: `data` is a byte slice that outlives the call; Vulkan lets initial data be
        // anything: the driver checks the header it wrote (vendor, device, pipelineCacheUUID)
        // and starts empty when it does not match. The data is what `save_vk_pipeline_cache`
        // wrote for this adapter and driver, checksummed by `CacheFile`. The cache is
        // destroyed by the caller before the device.
        let created = unsafe {
            device.create_pipeline_cache(
                &vk::PipelineCacheCreateInfo::default().initial_data(&data),
                None,
            )
        };
        match created {
            Ok(cache) => return Ok(cache),
            Err(error) => {
                log::warn!("vkCreatePipelineCache with saved data: {error}; starting empty")
            }
        }
    }
    // SAFETY: valid create info without data; destroyed by the caller before the device.
    unsafe { device.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) }
}

/// Writes `cache`'s data to `file` if it changed (call after building pipelines).
pub(crate) fn save_vk_pipeline_cache(
    device: &ash::Device,
    cache: vk::PipelineCache,
    file: &CacheFile,
) {
    // SAFETY: `cache` is a live pipeline cache of `device`; the caller holds the lock under
    // which pipelines are built, so no other thread writes the cache meanwhile (reading it
    // concurrently would be allowed by the spec anyway: it is externally synchronized only
    // for merges and destruction).
    match unsafe { device.get_pipeline_cache_data(cache) } {
        Ok(data) => file.save(&data),
        Err(error) => log::warn!("vkGetPipelineCacheData: {error}"),
    }
}
