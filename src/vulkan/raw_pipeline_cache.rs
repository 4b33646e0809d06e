//! The cooperative-matrix backend's `VkPipelineCache`, fed from and saved to
//! [`crate::disk_cache`].

use ash::vk;

use crate::disk_cache::CacheFile;

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
    // SAFETY: `cache` is a live pipeline cache of `device`. Other threads may build pipelines
    // into it meanwhile (each key is built under its own lock only): the spec allows that,
    // since a pipeline cache is externally synchronized only for merges and destruction, and
    // the cache is created without EXTERNALLY_SYNCHRONIZED. `CacheFile::save` serialises the
    // writes of the file.
    match unsafe { device.get_pipeline_cache_data(cache) } {
        Ok(data) => file.save(&data),
        Err(error) => log::warn!("vkGetPipelineCacheData: {error}"),
    }
}
