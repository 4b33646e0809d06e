//! A device buffer that internal passes reuse from one GEMM to the next (split-K's partial
//! sums, B staged for the kernel): the GEMMs run in queue order, and wgpu's tracking (or the
//! cooperative-matrix dispatch's barriers) orders each GEMM's writes after the previous one's
//! reads. Allocating one per GEMM cost more than the GEMM itself on a GPU
//! (`docs/benchmarks.md`, SIMT).

use std::sync::Mutex;

use crate::error::{Error, Result};

/// One reusable storage buffer, grown to a power of two when a GEMM needs more.
#[derive(Debug)]
pub(crate) struct ScratchBuffer {
    label: &'static str,
    device: wgpu::Device,
    max_bytes: u64,
    usage: wgpu::BufferUsages,
    buffer: Mutex<Option<wgpu::Buffer>>,
}

impl ScratchBuffer {
    pub(crate) fn new(device: &wgpu::Device, label: &'static str) -> ScratchBuffer {
        ScratchBuffer::with_usage(device, label, wgpu::BufferUsages::STORAGE)
    }

    /// A scratch buffer of `usage` (which includes `STORAGE`).
    pub(crate) fn with_usage(
        device: &wgpu::Device,
        label: &'static str,
        usage: wgpu::BufferUsages,
    ) -> ScratchBuffer {
        ScratchBuffer {
            label,
            device: device.clone(),
            max_bytes: device.limits().max_storage_buffer_binding_size,
            usage: usage | wgpu::BufferUsages::STORAGE,
            buffer: Mutex::new(None),
        }
    }

    /// The buffer, at least `bytes` long. A GEMM recorded earlier keeps the buffer it was
    /// given alive (wgpu holds it for its submission) when a later one grows it.
    pub(crate) fn get(&self, bytes: u64) -> Result<wgpu::Buffer> {
        let mut buffer = self
            .buffer
            .lock()
            .map_err(|_| Error::Device(format!("{} poisoned", self.label)))?;
        if let Some(buffer) = buffer.as_ref().filter(|b| b.size() >= bytes) {
            return Ok(buffer.clone());
        }
        let size = bytes.next_power_of_two().min(self.max_bytes.max(bytes));
        let grown = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(self.label),
            size,
            usage: self.usage,
            mapped_at_creation: false,
        });
        *buffer = Some(grown.clone());
        Ok(grown)
    }
}
