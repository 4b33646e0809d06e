//! Finding an adapter and opening a device on it: with the Vulkan extensions the
//! cooperative-matrix kernels need where that is possible (through wgpu's HAL,
//! `vulkan::device`), with wgpu's own cooperative matrices where offered, else a plain wgpu
//! device with the adapter's limits.

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::options::ContextOptions;
use crate::vulkan;
use crate::vulkan::device::EnabledFeatures;

/// A device coopgemm opened, with what it was opened with.
pub(crate) struct OpenedDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// What was enabled through Vulkan HAL, when the device was opened that way.
    pub enabled: Option<EnabledFeatures>,
    /// Why the device was lost, once it is (set by the device-lost callback).
    pub lost: Arc<Mutex<Option<String>>>,
    /// wgpu's cooperative-matrix shapes of the adapter.
    pub coop_properties: Vec<wgpu::CooperativeMatrixProperties>,
}

/// The adapter `options` ask for: the best-ranked one whose name matches, if any is named.
pub(crate) async fn find_adapter(options: &ContextOptions) -> Result<wgpu::Adapter> {
    let mut instance_descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    instance_descriptor.backends = options.wgpu_backends;
    instance_descriptor.flags = options.instance_flags;
    let instance = wgpu::Instance::new(instance_descriptor);
    let wanted_name = options.adapter_name.clone();
    let mut adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
    if let Some(name) = &wanted_name {
        let name = name.to_lowercase();
        adapters.retain(|adapter| adapter.get_info().name.to_lowercase().contains(&name));
    }
    adapters.sort_by_key(|adapter| adapter_rank(&adapter.get_info(), options.power_preference));
    let adapter = adapters.into_iter().next().ok_or_else(|| {
        Error::NoAdapter(match wanted_name {
            Some(name) => format!("no adapter's name contains {name:?}"),
            None => {
                "wgpu found no adapter (is a Vulkan driver such as Mesa lavapipe installed?)".into()
            }
        })
    })?;
    Ok(adapter)
}

/// Lower ranks first: discrete GPUs (integrated first for `LowPower`), then Vulkan, then
/// Metal or DX12, then GL.
fn adapter_rank(info: &wgpu::AdapterInfo, preference: wgpu::PowerPreference) -> (u8, u8) {
    let api = match info.backend {
        wgpu::Backend::Vulkan => 0,
        wgpu::Backend::Metal | wgpu::Backend::Dx12 => 1,
        wgpu::Backend::Gl => 2,
        _ => 3,
    };
    let device = match (info.device_type, preference) {
        (wgpu::DeviceType::DiscreteGpu, wgpu::PowerPreference::LowPower) => 1,
        (wgpu::DeviceType::DiscreteGpu, _) => 0,
        (wgpu::DeviceType::IntegratedGpu, wgpu::PowerPreference::LowPower) => 0,
        (wgpu::DeviceType::IntegratedGpu, _) => 1,
        (wgpu::DeviceType::VirtualGpu, _) => 2,
        (wgpu::DeviceType::Other, _) => 3,
        (wgpu::DeviceType::Cpu, _) => 4,
    };
    (device, api)
}

/// Opens the device coopgemm runs on, on `adapter`.
pub(crate) async fn open_device(
    adapter: &wgpu::Adapter,
    options: &ContextOptions,
) -> Result<OpenedDevice> {
    let info = adapter.get_info();
    log::info!(
        "adapter: {} ({:?}, {:?}, driver {})",
        info.name,
        info.backend,
        info.device_type,
        info.driver_info
    );
    let (mut features, limits) = wanted_features_and_limits(adapter);
    let coop_properties = adapter.cooperative_matrix_properties();
    if options.enable_wgsl_coopmat {
        features |= adapter.features() & wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
    }
    // With wgpu's cooperative matrices where wanted and offered; should a driver refuse
    // the device with them, once more without (the other backends do not need them).
    let mut attempts = vec![features];
    if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        attempts.push(features - wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
    }
    let mut opened = Err(Error::RequestDevice("no attempt".into()));
    for (attempt, required_features) in attempts.iter().copied().enumerate() {
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("coopgemm"),
            required_features,
            required_limits: limits.clone(),
            experimental_features: vulkan::experimental_features_for(required_features),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        opened = open(adapter, &descriptor, options).await;
        match &opened {
                Err(error) if attempt + 1 < attempts.len() => log::warn!(
                    "opening the device with EXPERIMENTAL_COOPERATIVE_MATRIX failed ({error}); trying without (no WGSL cooperative matrices)"
                ),
                _ => break,
            }
    }
    let (device, queue, enabled) = opened?;
    let lost = Arc::new(Mutex::new(None));
    let lost_in_callback = lost.clone();
    device.set_device_lost_callback(move |reason, message| {
        log::error!("device lost ({reason:?}): {message}");
        if let Ok(mut lost) = lost_in_callback.lock() {
            *lost = Some(format!("{reason:?}: {message}"));
        }
    });
    Ok(OpenedDevice {
        device,
        queue,
        enabled,
        lost,
        coop_properties,
    })
}

/// Opens the device `descriptor` describes: through wgpu's HAL with the cooperative-matrix
/// extensions where the Vulkan backend is wanted and possible, as a plain wgpu device
/// otherwise.
async fn open(
    adapter: &wgpu::Adapter,
    descriptor: &wgpu::DeviceDescriptor<'_>,
    options: &ContextOptions,
) -> Result<(wgpu::Device, wgpu::Queue, Option<EnabledFeatures>)> {
    if options.enable_coopmat && adapter.get_info().backend == wgpu::Backend::Vulkan {
        let open = vulkan::OpenOptions {
            emulate_cooperative_matrix: options.emulate_cooperative_matrix,
            pipeline_statistics: options.pipeline_statistics,
            unchecked_pipelines: !options.robust_kernels,
        };
        let opened = {
            let _turn = crate::lifecycle::turn();
            vulkan::device::open_with_coopmat(adapter, descriptor, open)
        };
        match opened {
            Ok(Some((device, queue, enabled))) => return Ok((device, queue, Some(enabled))),
            Ok(None) => {}
            Err(why) => log::warn!("opening the device with cooperative-matrix extensions failed ({why}); using a plain device"),
        }
    }
    let (device, queue) = adapter
        .request_device(descriptor)
        .await
        .map_err(|e| Error::RequestDevice(e.to_string()))?;
    Ok((device, queue, None))
}

/// The features coopgemm asks for (when the adapter has them) and the adapter's own limits,
/// so that large matrices can be bound and large tiles fit.
pub(crate) fn wanted_features_and_limits(
    adapter: &wgpu::Adapter,
) -> (wgpu::Features, wgpu::Limits) {
    let wanted = wgpu::Features::SHADER_F16
        | wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
        | wgpu::Features::PIPELINE_CACHE;
    (wanted & adapter.features(), adapter.limits())
}
