//! [`Backends`]: the backends of one device, each built complete when the context is made,
//! or the reason it cannot be.

use std::sync::Arc;

use crate::backend::coopmat::CoopmatBackend;
use crate::backend::simt::SimtBackend;
use crate::backend::wgsl_coopmat::WgslCoopBackend;
use crate::backend::{Backend, BackendKind, BackendSetup};
use crate::disk_cache::CacheStore;
use crate::error::{Error, Result};
use crate::options::ContextOptions;
use crate::problem::Gemm;
use crate::timing::GpuTimer;
use crate::types::GemmTypes;
use crate::vulkan::device::EnabledFeatures;

/// Whether a backend can be used on a context's device, and if not, why
/// ([`Context::backends`](crate::Context::backends), [`Context::backend`](crate::Context::backend)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackendStatus {
    /// The backend.
    pub kind: BackendKind,
    /// `Ok(description)` when available, `Err(reason)` when not.
    pub availability: std::result::Result<String, String>,
    /// The type combinations it can run here (empty when unavailable).
    pub types: Vec<GemmTypes>,
}

impl BackendStatus {
    /// Whether the device has this backend.
    pub fn is_available(&self) -> bool {
        self.availability.is_ok()
    }
}

/// One of each backend, or why the device cannot have it.
#[derive(Debug)]
pub(crate) struct Backends {
    pub(crate) simt: SimtBackend,
    pub(crate) coopmat: std::result::Result<CoopmatBackend, String>,
    pub(crate) wgsl_coopmat: std::result::Result<WgslCoopBackend, String>,
}

/// What the device offers the backends beyond wgpu's own features.
pub(crate) struct DeviceExtras {
    /// What coopgemm opened the device with through Vulkan HAL, if it did.
    pub enabled: Option<EnabledFeatures>,
    /// wgpu's cooperative-matrix shapes of the adapter (for the WGSL cooperative-matrix
    /// backend).
    pub coop_properties: Vec<wgpu::CooperativeMatrixProperties>,
    /// Whether the adapter is a CPU driver.
    pub is_cpu: bool,
}

impl Backends {
    /// Builds every backend `options` enables on `device`.
    pub(crate) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        extras: DeviceExtras,
        options: &ContextOptions,
        store: Option<&CacheStore>,
        timer: Option<Arc<GpuTimer>>,
    ) -> Backends {
        let setup = BackendSetup {
            device,
            store,
            timer,
            overrides: &options.kernel_overrides,
            pipeline_statistics: extras
                .enabled
                .is_some_and(|enabled| enabled.pipeline_statistics),
        };
        let simt = SimtBackend::new(&setup, extras.is_cpu);
        let coopmat = if options.enable_coopmat {
            CoopmatBackend::new(&setup, queue, extras.enabled)
        } else {
            Err("disabled by ContextOptions::enable_coopmat".to_string())
        };
        let wgsl_coopmat = if options.enable_wgsl_coopmat {
            WgslCoopBackend::new(&setup, &extras.coop_properties)
        } else {
            Err("disabled by ContextOptions::enable_wgsl_coopmat".to_string())
        };
        let backends = Backends {
            simt,
            coopmat,
            wgsl_coopmat,
        };
        for status in backends.statuses() {
            match status.availability {
                Ok(description) => log::info!("{} backend available: {description}", status.kind),
                Err(why) => log::info!("{} backend unavailable: {why}", status.kind),
            }
        }
        backends
    }

    /// The backend of this kind, or why it is unavailable.
    pub(crate) fn get(&self, kind: BackendKind) -> std::result::Result<&dyn Backend, String> {
        match kind {
            BackendKind::Simt => Ok(&self.simt),
            BackendKind::Coopmat => match &self.coopmat {
                Ok(backend) => Ok(backend),
                Err(why) => Err(why.clone()),
            },
            BackendKind::WgslCoopmat => match &self.wgsl_coopmat {
                Ok(backend) => Ok(backend),
                Err(why) => Err(why.clone()),
            },
        }
    }

    /// The backend of this kind, or [`Error::Unsupported`] saying why it is unavailable.
    pub(crate) fn require(&self, kind: BackendKind) -> Result<&dyn Backend> {
        self.get(kind).map_err(|reason| Error::Unsupported {
            backend: kind,
            reason,
        })
    }

    /// Every backend, in the default order of preference, and whether this device has it.
    pub(crate) fn statuses(&self) -> Vec<BackendStatus> {
        BackendKind::ALL
            .into_iter()
            .map(|kind| self.status(kind))
            .collect()
    }

    /// Whether this device has the backend of `kind`, and what it runs.
    pub(crate) fn status(&self, kind: BackendKind) -> BackendStatus {
        let types = match kind {
            // What `supports` accepts for a small GEMM of each type combination.
            BackendKind::Simt => GemmTypes::ALL
                .into_iter()
                .filter(|&types| {
                    Gemm::new(64, 64, 64)
                        .types(types)
                        .resolve()
                        .is_ok_and(|gemm| self.simt.supports(&gemm).is_ok())
                })
                .collect(),
            BackendKind::Coopmat => self
                .coopmat
                .as_ref()
                .map_or_else(|_| Vec::new(), CoopmatBackend::supported_types),
            BackendKind::WgslCoopmat => self
                .wgsl_coopmat
                .as_ref()
                .map_or_else(|_| Vec::new(), WgslCoopBackend::supported_types),
        };
        BackendStatus {
            kind,
            types,
            availability: match kind {
                BackendKind::Simt => Ok("WGSL tiled GEMM on wgpu".into()),
                BackendKind::Coopmat => self
                    .coopmat
                    .as_ref()
                    .map(CoopmatBackend::describe)
                    .map_err(Clone::clone),
                BackendKind::WgslCoopmat => self
                    .wgsl_coopmat
                    .as_ref()
                    .map(WgslCoopBackend::describe)
                    .map_err(Clone::clone),
            },
        }
    }
}
