//! The host convenience path: upload slices, run, read C back.

use futures::channel::oneshot;

use crate::bindings::GemmBuffers;
use crate::context::Context;
use crate::error::{Error, Operand, Result};
use crate::problem::Gemm;
use crate::types::Element;

/// Usages of the buffers [`Context::upload`] creates: bindable, and copyable both ways.
pub const HOST_BUFFER_USAGES: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

impl Context {
    /// Creates a storage buffer holding `data` (padded to a whole number of 4-byte words).
    ///
    /// ```no_run
    /// let context = coopgemm::Context::new_blocking()?;
    /// let buffer = context.upload("weights", &[1.0f32, 2.0, 3.0])?;
    /// assert_eq!(buffer.size(), 12);
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn upload<T: Element>(&self, label: &str, data: &[T]) -> Result<wgpu::Buffer> {
        let data_bytes = bytemuck::cast_slice::<T, u8>(data);
        let size = (data_bytes.len() as u64).div_ceil(4).max(1) * 4;
        let buffer = self.create_buffer(label, size, HOST_BUFFER_USAGES)?;
        let mut padded = data_bytes.to_vec();
        padded.resize(size as usize, 0);
        self.queue().write_buffer(&buffer, 0, &padded);
        Ok(buffer)
    }

    /// Reads `count` elements of type `T` from the start of `buffer` (which needs `COPY_SRC`),
    /// after all work submitted so far.
    pub async fn download<T: Element>(
        &self,
        buffer: &wgpu::Buffer,
        count: usize,
    ) -> Result<Vec<T>> {
        let missing = wgpu::BufferUsages::COPY_SRC - buffer.usage();
        if !missing.is_empty() {
            return Err(Error::MissingBufferUsage {
                operand: Operand::C,
                missing,
            });
        }
        let bytes = (count * std::mem::size_of::<T>()) as u64;
        let padded = bytes.div_ceil(4).max(1) * 4;
        if padded > buffer.size() {
            return Err(Error::BufferTooSmall {
                operand: Operand::C,
                required_bytes: padded,
                buffer_bytes: buffer.size(),
            });
        }
        let staging = self.create_buffer(
            "coopgemm readback",
            padded,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        )?;
        let mut encoder = self
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("coopgemm readback"),
            });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, padded);
        self.queue().submit([encoder.finish()]);
        let (sender, receiver) = oneshot::channel();
        staging
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| {
                let _ = sender.send(result);
            });
        // Native wgpu only runs map callbacks while the device is polled.
        self.device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Device(e.to_string()))?;
        receiver
            .await
            .map_err(|_| Error::Readback("the map callback was dropped".into()))?
            .map_err(|e| Error::Readback(e.to_string()))?;
        let data = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| Error::Readback(e.to_string()))?;
        let values = bytemuck::cast_slice::<u8, T>(&data[..bytes as usize]).to_vec();
        drop(data);
        staging.unmap();
        Ok(values)
    }

    /// Uploads A, B and C, runs `gemm` and returns the whole C array.
    ///
    /// The slices are laid out as `gemm` says (offsets, leading dimensions and batch
    /// strides included); C is returned with the same length as `c`. A GEMM whose epilogue
    /// adds a bias needs [`Context::multiply_with_bias_async`].
    pub async fn multiply_async<I: Element, O: Element>(
        &self,
        gemm: &Gemm,
        a: &[I],
        b: &[I],
        c: &[O],
    ) -> Result<Vec<O>> {
        self.multiply_with_bias_async(gemm, a, b, c, None).await
    }

    /// [`Context::multiply_async`] with the epilogue's f32 bias vector (`None` without bias).
    pub async fn multiply_with_bias_async<I: Element, O: Element>(
        &self,
        gemm: &Gemm,
        a: &[I],
        b: &[I],
        c: &[O],
        bias: Option<&[f32]>,
    ) -> Result<Vec<O>> {
        let resolved = gemm.resolve()?;
        resolved.check_host_data(a, b, c)?;
        resolved.check_host_bias(bias)?;
        let a_buffer = self.upload("coopgemm A", a)?;
        let b_buffer = self.upload("coopgemm B", b)?;
        let c_buffer = self.upload("coopgemm C", c)?;
        let bias_buffer = match bias {
            Some(values) => Some(self.upload("coopgemm bias", values)?),
            None => None,
        };
        let mut buffers = GemmBuffers::new(&a_buffer, &b_buffer, &c_buffer);
        buffers.bias = bias_buffer.as_ref();
        self.run(gemm, &buffers)?;
        self.download(&c_buffer, c.len()).await
    }

    /// [`Context::multiply_async`], blocking the current thread.
    ///
    /// ```no_run
    /// # fn main() -> coopgemm::Result<()> {
    /// let context = coopgemm::Context::new_blocking()?;
    /// let gemm = coopgemm::Gemm::new(2, 2, 2);
    /// let c = context.multiply(&gemm, &[1.0f32, 2.0, 3.0, 4.0], &[1.0, 0.0, 0.0, 1.0], &[0.0f32; 4])?;
    /// assert_eq!(c, [1.0, 2.0, 3.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// Not on wasm32 (nothing may block the browser's thread): await
    /// [`Context::multiply_async`] there.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn multiply<I: Element, O: Element>(
        &self,
        gemm: &Gemm,
        a: &[I],
        b: &[I],
        c: &[O],
    ) -> Result<Vec<O>> {
        pollster::block_on(self.multiply_async(gemm, a, b, c))
    }

    /// [`Context::multiply_with_bias_async`], blocking the current thread.
    ///
    /// ```no_run
    /// # fn main() -> coopgemm::Result<()> {
    /// use coopgemm::{Activation, BiasAxis, Gemm};
    /// let context = coopgemm::Context::new_blocking()?;
    /// let layer = Gemm::new(1, 2, 2).bias(BiasAxis::PerColumn).activation(Activation::Relu);
    /// let y = context.multiply_with_bias(&layer, &[1.0f32, 1.0], &[1.0, 0.0, 0.0, 1.0], &[0.0f32; 2], Some(&[0.5, -3.0]))?;
    /// assert_eq!(y, [1.5, 0.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// Not on wasm32: await [`Context::multiply_with_bias_async`] there.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn multiply_with_bias<I: Element, O: Element>(
        &self,
        gemm: &Gemm,
        a: &[I],
        b: &[I],
        c: &[O],
        bias: Option<&[f32]>,
    ) -> Result<Vec<O>> {
        pollster::block_on(self.multiply_with_bias_async(gemm, a, b, c, bias))
    }
}
