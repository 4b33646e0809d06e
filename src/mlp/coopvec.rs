//! The fused network kernel on cooperative vectors (`glsl/mlp_coopvec.comp`,
//! `VK_NV_cooperative_vector`): its parameter layout, its specialization (the network's
//! widths, activations and where each layer's matrix and bias lie), and its raw-Vulkan
//! dispatch through the cooperative-matrix backend's kernels (same device, same pipeline
//! layout).
//!
//! The weights are converted once, when the network is built: by the driver into its
//! inferencing-optimal layout (`vkConvertCooperativeVectorMatrixNV` on the host), or, where
//! the backend is emulated, by [`standin_matrix`] into the row-major layout the kernel's
//! software stand-in (`COOPVEC_EMULATED`) reads.

use half::f16;

use crate::backend::coopmat::CoopmatBackend;
use crate::backend::flat_grid;
use crate::bindings::BoundRange;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kind::MlpKernel;
use crate::mlp::coopmat::MlpVariant;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::{BoundRows, MlpIo, RowParams};
use crate::mlp::sets::{
    record_raw_network, RawNetworkDispatch, RunOutput, RunTarget, SetGrouper, SlotParams,
};
use crate::vulkan::dispatch::{PipelineKey, PushConstants};

include!(concat!(env!("OUT_DIR"), "/mlp_coopvec_variants.rs"));

/// The most layers the kernel is stamped out for (`LAYER(0..8)` in `mlp_coopvec.comp`).
pub(crate) const MAX_COOPVEC_LAYERS: usize = 8;
/// Invocations (rows) per workgroup.
const WORKGROUP_SIZE: u32 = 128;
/// Byte alignment of every matrix and bias in the parameter buffer (the matrix needs 64,
/// the bias 16; 64 for both, as NVIDIA's RTX neural shaders do).
const ALIGNMENT: usize = 64;
/// Hidden widths are padded to a multiple of this.
const HIDDEN_PADDING: u32 = 16;

/// The kernel's push constants; mirrors `Params` in `mlp_coopvec.comp`, and has the size of
/// the GEMM kernels' block, whose pipeline layout it shares.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: RowParams,
    groups_x: u32,
    unused_before: [u32; 2],
    slots: SlotParams,
    /// Parameter bytes from one weight set to the next.
    set_stride: u32,
    unused: [u32; 5],
}

const _: () = assert!(std::mem::size_of::<Params>() == std::mem::size_of::<PushConstants>());

/// The kernel's copy of one network.
#[derive(Debug)]
pub(crate) struct CoopvecMlp {
    parameters: wgpu::Buffer,
    /// Bytes of `parameters` from one weight set to the next.
    set_stride: u32,
    /// Specialization constants 1 to 18: LAYERS, W0..=W8, ACT0..=ACT7.
    shape: Vec<u32>,
    /// Specialization constants 20 to 43: set 0's byte offsets of every layer's matrix
    /// (MATRIX0..=MATRIX7) and bias (BIAS0..=BIAS7), then the leaky-ReLU slopes' bits
    /// (SLOPE0..=SLOPE7); 0 past the last layer.
    placement: Vec<u32>,
    /// Whether the parameters are in the stand-in layout (the backend is emulated).
    emulated: bool,
}

/// The lengths of the kernel's vectors: the input and output widths as they are (the
/// vectors are loaded from and stored to the rows), hidden widths padded to 16 (zero
/// weights and biases; the padding holds act(0), which meets zero weights in the next
/// layer).
fn vector_widths(desc: &MlpDesc) -> Vec<u32> {
    let last = desc.widths().len() - 1;
    desc.widths()
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if i == 0 || i == last {
                w
            } else {
                w.next_multiple_of(HIDDEN_PADDING)
            }
        })
        .collect()
}

/// Elements from one row of a stand-in matrix with `columns` columns to the next: whole 16
/// bytes, as the row-major layout of `VK_NV_cooperative_vector` requires.
pub(crate) fn standin_stride(columns: u32) -> u32 {
    columns.next_multiple_of(8)
}

/// A layer's `outputs × inputs` weights (row-major, as [`LayerWeights`] holds them) as the
/// `rows × columns` matrix the kernel multiplies by (`rows ≥ outputs`, `columns ≥ inputs`,
/// the rest zero), row-major with rows [`standin_stride`]`(columns)` elements apart: the
/// layout the kernel's stand-in reads, in place of the driver's inferencing-optimal one,
/// and the source `vkConvertCooperativeVectorMatrixNV` converts from.
pub(crate) fn standin_matrix(
    weights: &[f16],
    inputs: u32,
    outputs: u32,
    rows: u32,
    columns: u32,
) -> Vec<f16> {
    let stride = standin_stride(columns) as usize;
    let mut matrix = vec![f16::ZERO; rows as usize * stride];
    for (o, row) in weights
        .chunks_exact(inputs as usize)
        .take(outputs.min(rows) as usize)
        .enumerate()
    {
        let width = row.len().min(columns as usize);
        matrix[o * stride..][..width].copy_from_slice(&row[..width]);
    }
    matrix
}

/// Appends zeros to `parameters` up to the next [`ALIGNMENT`] bytes and returns that byte
/// offset.
fn align(parameters: &mut Vec<f16>) -> Result<u32> {
    parameters.resize(parameters.len().next_multiple_of(ALIGNMENT / 2), f16::ZERO);
    u32::try_from(2 * parameters.len())
        .map_err(|_| Error::Device("network parameters above 4 GiB".into()))
}

impl CoopvecMlp {
    /// Converts and uploads every weight set for the kernel, one after the other;
    /// `Ok(Err(why))` where it cannot run `desc` on this device.
    pub(crate) fn new(
        context: &Context,
        desc: &MlpDesc,
        sets: &[&[LayerWeights]],
    ) -> Result<std::result::Result<CoopvecMlp, String>> {
        let backend = match context.backends_of_device().coopmat.as_ref() {
            Ok(backend) => backend,
            Err(why) => return Ok(Err(why.clone())),
        };
        if let Err(why) = backend.cooperative_vectors() {
            return Ok(Err(why));
        }
        if desc.layers() > MAX_COOPVEC_LAYERS {
            return Ok(Err(format!(
                "{} layers, the kernel takes at most {MAX_COOPVEC_LAYERS}",
                desc.layers()
            )));
        }
        let emulated = backend.is_emulated();
        let widths = vector_widths(desc);
        let longest = widths.iter().copied().max().unwrap_or(0);
        if let Some(info) = backend
            .device_info()
            .cooperative_vector
            .as_ref()
            .filter(|_| !emulated)
        {
            if longest > info.max_components {
                return Ok(Err(format!(
                    "a vector of {longest} components, the device takes at most {}",
                    info.max_components
                )));
            }
        }
        let mut parameters: Vec<f16> = Vec::new();
        let mut matrices = [0u32; MAX_COOPVEC_LAYERS];
        let mut biases = [0u32; MAX_COOPVEC_LAYERS];
        for (set, weights) in sets.iter().enumerate() {
            for (layer, layer_weights) in weights.iter().enumerate() {
                let (inputs, outputs) = desc.layer_shape(layer);
                let (columns, rows) = (widths[layer], widths[layer + 1]);
                let matrix = standin_matrix(&layer_weights.weights, inputs, outputs, rows, columns);
                let matrix_offset = align(&mut parameters)?;
                if emulated {
                    parameters.extend_from_slice(&matrix);
                } else {
                    let stride = 2 * standin_stride(columns) as usize;
                    let converted = match crate::vulkan::coopvec::inferencing_optimal_f16(
                        context.device(),
                        rows,
                        columns,
                        &matrix,
                        stride,
                    ) {
                        Ok(converted) => converted,
                        Err(why) => {
                            return Ok(Err(format!("set {set}, layer {layer}'s weights: {why}")))
                        }
                    };
                    parameters.extend(converted.chunks(2).map(|pair| {
                        f16::from_bits(u16::from_le_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
                    }));
                }
                let bias_offset = align(&mut parameters)?;
                parameters.extend_from_slice(&layer_weights.bias);
                parameters.resize(parameters.len() + (rows - outputs) as usize, f16::ZERO);
                if set == 0 {
                    matrices[layer] = matrix_offset;
                    biases[layer] = bias_offset;
                }
            }
            align(&mut parameters)?;
        }
        // Every set takes the same bytes (the same shapes, converted the same way).
        let set_stride = align(&mut parameters)? / sets.len().max(1) as u32;
        // LAYERS, W0..=W8 (16 past the last layer), ACT0..=ACT7.
        let mut shape = vec![desc.layers() as u32];
        shape.extend((0..=MAX_COOPVEC_LAYERS).map(|i| widths.get(i).copied().unwrap_or(16)));
        shape.extend((0..MAX_COOPVEC_LAYERS).map(|i| {
            desc.activations()
                .get(i)
                .map_or(0, |activation| activation.code())
        }));
        let mut placement = Vec::with_capacity(3 * MAX_COOPVEC_LAYERS);
        placement.extend(matrices);
        placement.extend(biases);
        placement.extend((0..MAX_COOPVEC_LAYERS).map(|i| {
            desc.activations()
                .get(i)
                .map_or(0, |activation| activation.slope().to_bits())
        }));
        Ok(Ok(CoopvecMlp {
            parameters: context.upload("coopgemm network parameters (coopvec)", &parameters)?,
            set_stride,
            shape,
            placement,
            emulated,
        }))
    }

    /// Whether the kernel runs rows of `io` on `backend` (a variant for them exists).
    pub(crate) fn supports(
        &self,
        backend: &CoopmatBackend,
        io: MlpIo,
    ) -> std::result::Result<(), String> {
        self.variant(backend, io).map(|_| ())
    }

    fn variant(
        &self,
        backend: &CoopmatBackend,
        io: MlpIo,
    ) -> std::result::Result<MlpVariant, String> {
        if backend.is_emulated() != self.emulated {
            return Err("the network was built for another device".into());
        }
        MLP_COOPVEC_VARIANTS
            .iter()
            .copied()
            .find(|v| v.io == io && v.emulated == self.emulated)
            .ok_or_else(|| format!("no cooperative-vector network kernel for {io} rows"))
    }

    /// Records the network over every row, after the sets' pre-pass where the run has set
    /// indices (`sets`, checked), and returns the command buffers to submit.
    pub(crate) fn record(
        &self,
        context: &Context,
        chunk: &BoundRows<'_>,
        sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
        target: RunTarget,
    ) -> Result<RunOutput> {
        let &BoundRows {
            ref buffers,
            input,
            output,
        } = chunk;
        let rows = buffers.layout.rows;
        let backend = context.coopmat_backend()?;
        let variant = self
            .variant(backend, buffers.io)
            .map_err(|reason| Error::MlpNoKernel {
                reasons: vec![(MlpKernel::Coopvec, reason)],
            })?;
        let mut constants = vec![WORKGROUP_SIZE];
        constants.extend_from_slice(&self.shape);
        // INDEXED (constant 19): without set indices every row's set is 0 as a constant.
        constants.push(u32::from(sets.is_some()));
        constants.extend_from_slice(&self.placement);
        // VECTOR_INPUT and VECTOR_OUTPUT (constants 44 and 45): whether whole rows move as
        // cooperative vectors. Constants, so that no element loop is left in the pipeline
        // where they do.
        constants.push(
            vector_rows(
                input,
                buffers.layout.input_stride,
                buffers.io.input.size_bytes(),
            )
            .into(),
        );
        constants.push(
            vector_rows(
                output,
                buffers.layout.output_stride,
                buffers.io.output.size_bytes(),
            )
            .into(),
        );
        let key = PipelineKey {
            module: variant.name,
            constants,
            required_subgroup_size: backend.device_info().subgroup_size,
        };
        let kernels = backend.raw_kernels();
        let pipeline = kernels.pipeline(&key, variant.spirv)?;
        let groups = u64::from(rows).div_ceil(u64::from(WORKGROUP_SIZE));
        let grid = flat_grid(groups, 1, &context.device().limits())?;
        let params = Params {
            rows: RowParams::new(&buffers.layout, input, output),
            groups_x: grid[0],
            unused_before: [0; 2],
            slots: SetGrouper::unindexed(),
            set_stride: self.set_stride,
            unused: [0; 5],
        };
        let dispatch = RawNetworkDispatch {
            kernels,
            pipeline,
            grid,
            buffers,
            input,
            output,
            parameters: &self.parameters,
            table: None,
            sets,
        };
        record_raw_network(
            context,
            dispatch,
            params,
            |params| &mut params.slots,
            target,
        )
    }
}

/// Whether every row of a bound range starts 16-byte aligned, with byte offsets that fit
/// 32 bits: then the kernel loads or stores whole rows as cooperative vectors.
fn vector_rows(range: BoundRange, stride: u32, element_bytes: u64) -> bool {
    range.offset_bytes.is_multiple_of(16)
        && (u64::from(range.first_element) * element_bytes).is_multiple_of(16)
        && (u64::from(stride) * element_bytes).is_multiple_of(16)
        && range.size_bytes <= u64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlp::desc::MlpActivation;

    fn h(v: f32) -> f16 {
        f16::from_f32(v)
    }

    #[test]
    fn standin_matrix_is_row_major_with_16_byte_rows_and_zero_padding() {
        // 2 outputs x 3 inputs, padded to 4 x 5: rows 8 elements apart.
        let weights: Vec<f16> = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0].map(h).to_vec();
        let matrix = standin_matrix(&weights, 3, 2, 4, 5);
        assert_eq!(standin_stride(5), 8);
        assert_eq!(matrix.len(), 4 * 8);
        let mut expected = vec![h(0.0); 32];
        expected[..3].copy_from_slice(&weights[..3]);
        expected[8..11].copy_from_slice(&weights[3..]);
        assert_eq!(matrix, expected);
        // Exact shapes keep every element, rows whole multiples of 8 stay tight.
        let weights: Vec<f16> = (0..16 * 8).map(|i| h(i as f32)).collect();
        assert_eq!(standin_matrix(&weights, 8, 16, 16, 8), weights);
        assert_eq!(standin_stride(1), 8);
        assert_eq!(standin_stride(16), 16);
    }

    #[test]
    fn vectors_keep_the_row_widths_and_pad_hidden_ones() {
        let desc = MlpDesc::uniform(&[3, 17, 100, 5], MlpActivation::Relu, MlpActivation::None);
        assert_eq!(vector_widths(&desc), [3, 32, 112, 5]);
        let desc = MlpDesc::new(1).layer(1, MlpActivation::None);
        assert_eq!(vector_widths(&desc), [1, 1]);
    }

    #[test]
    fn rows_are_vectors_only_where_every_row_is_16_byte_aligned() {
        let range = |offset_bytes, first_element| BoundRange {
            offset_bytes,
            size_bytes: 4096,
            first_element,
        };
        assert!(vector_rows(range(0, 0), 64, 2));
        assert!(vector_rows(range(256, 8), 8, 2));
        assert!(!vector_rows(range(0, 1), 64, 2));
        assert!(!vector_rows(range(0, 0), 3, 2));
        assert!(vector_rows(range(0, 4), 4, 4));
        assert!(!vector_rows(range(0, 0), 6, 4));
    }
}
