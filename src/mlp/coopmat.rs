//! The fused network kernel on cooperative matrices (`glsl/mlp_coopmat.comp`): its weight
//! layout and layer table, its specialization, and its raw-Vulkan dispatch through the
//! cooperative-matrix backend's kernels (same device, same pipeline layout).

use crate::backend::coopmat::CoopmatBackend;
use crate::backend::flat_grid;
use crate::bindings::BoundRange;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::{MlpBuffers, MlpIo, RowParams};
use crate::mlp::sets::{record_raw_network, RawNetworkDispatch, SetGrouper, SlotParams};
use crate::vulkan::dispatch::{PipelineKey, PushConstants};

/// One compiled variant of `glsl/mlp_coopmat.comp`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MlpVariant {
    /// The SPIR-V module's name (`glsl/spirv/<name>.spv`).
    pub name: &'static str,
    /// The row types it reads and writes.
    pub io: MlpIo,
    /// Whether its matrix operations are emulated (`COOPMAT_EMULATED`).
    pub emulated: bool,
    /// The module.
    pub spirv: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/mlp_variants.rs"));

/// The widest layer the kernel takes (its activations, 16 × ROW_TILES rows of it, stay in
/// shared memory, and one subgroup per 16 columns).
pub(crate) const MAX_COOPMAT_WIDTH: u32 = 128;
/// Layer-table words per layer.
const TABLE_STRIDE: usize = 8;
/// Rows per workgroup are 16 × ROW_TILES at most (fewer for wide layers).
const ROW_TILES: u32 = 8;
/// The shared memory a workgroup takes at most. On the H100 (mlp64 and mlp128, 2^20 rows),
/// 8 row tiles were faster than 4 where they took 23.5 KB (0.684 against 0.711 ms), but at
/// 40 KB (mlp128) the wall clock of back-to-back runs came out 4.7x the dispatches' GPU time
/// (8.3 against 1.79 ms), while 4 row tiles (22.5 KB) ran at 2.49 ms wall, 2.39 ms GPU.
const SHARED_MEMORY_BUDGET: u32 = 32 * 1024;

/// The kernel's push constants; mirrors `Params` in `mlp_coopmat.comp`, and has the size of
/// the GEMM kernels' block, whose pipeline layout it shares.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: RowParams,
    layers: u32,
    input_width: u32,
    output_width: u32,
    groups_x: u32,
    slots: SlotParams,
    /// Weights (f16) from one set to the next.
    weight_set_stride: u32,
    /// Table words from one set's bias tiles to the next's.
    bias_set_stride: u32,
    unused: [u32; 3],
}

const _: () = assert!(std::mem::size_of::<Params>() == std::mem::size_of::<PushConstants>());

/// The kernel's copy of one network.
#[derive(Debug)]
pub(crate) struct CoopmatMlp {
    weights: wgpu::Buffer,
    table: wgpu::Buffer,
    /// Weights (f16) from one set to the next.
    weight_set_stride: u32,
    /// Table words from one set's bias tiles to the next's.
    bias_set_stride: u32,
    /// The widest layer, padded to 16.
    max_width: u32,
    /// Bit `c` set: a layer applies the activation of code `c` (the kernel's ACTIVATIONS:
    /// the pipeline leaves the others' code out).
    activations: u32,
}

/// `width` rounded up to whole 16-column tiles.
fn padded(width: u32) -> u32 {
    width.next_multiple_of(16)
}

impl CoopmatMlp {
    /// Uploads every weight set in the kernel's layout (set after set; the layer table,
    /// then every set's bias tiles); `Ok(Err(why))` where the kernel cannot run `desc` on
    /// this device.
    pub(crate) fn new(
        context: &Context,
        desc: &MlpDesc,
        sets: &[&[LayerWeights]],
    ) -> Result<std::result::Result<CoopmatMlp, String>> {
        let available = context
            .backends_of_device()
            .coopmat
            .as_ref()
            .map_err(Clone::clone)
            .and_then(CoopmatBackend::f16_tiles_16);
        if let Err(why) = available {
            return Ok(Err(why));
        }
        if desc.max_width() > MAX_COOPMAT_WIDTH {
            return Ok(Err(format!(
                "a layer is {} wide, the kernel takes at most {MAX_COOPMAT_WIDTH}",
                desc.max_width()
            )));
        }
        let mut half_weights: Vec<half::f16> = Vec::new();
        // The layer table (set 0's offsets), then the bias tiles 64-byte aligned.
        let mut table = vec![0u32; (TABLE_STRIDE * desc.layers()).next_multiple_of(16)];
        for (set, weights) in sets.iter().enumerate() {
            for (layer, parameters) in weights.iter().enumerate() {
                let (inputs, outputs) = desc.layer_shape(layer);
                let (k_padded, n_padded) = (padded(inputs), padded(outputs));
                // The bias tile the accumulators start from: 16 identical rows (n_padded
                // words each, so every tile stays 64-byte aligned).
                let bias_tile_first = table.len() as u32;
                for _ in 0..16 {
                    table.extend(parameters.bias.iter().map(|b| b.to_f32().to_bits()));
                    table.resize(table.len() + (n_padded - outputs) as usize, 0);
                }
                if set == 0 {
                    let activation = desc.activations()[layer];
                    table[TABLE_STRIDE * layer..][..TABLE_STRIDE].copy_from_slice(&[
                        k_padded,
                        n_padded,
                        outputs,
                        half_weights.len() as u32,
                        0,
                        activation.code(),
                        activation.slope().to_bits(),
                        bias_tile_first,
                    ]);
                }
                for row in parameters.weights.chunks(inputs as usize) {
                    half_weights.extend_from_slice(row);
                    half_weights.resize(
                        half_weights.len() + (k_padded - inputs) as usize,
                        half::f16::ZERO,
                    );
                }
                half_weights.resize(
                    half_weights.len() + ((n_padded - outputs) * k_padded) as usize,
                    half::f16::ZERO,
                );
            }
        }
        let header = (TABLE_STRIDE * desc.layers()).next_multiple_of(16);
        let sets_count = sets.len().max(1);
        let strides = (
            u32::try_from(half_weights.len() / sets_count),
            u32::try_from((table.len() - header) / sets_count),
        );
        let (Ok(weight_set_stride), Ok(bias_set_stride)) = strides else {
            return Ok(Err("the weight sets take more than 4 Gi elements".into()));
        };
        let max_width = padded(desc.max_width());
        Ok(Ok(CoopmatMlp {
            weights: context.upload("coopgemm network weights (coopmat)", &half_weights)?,
            weight_set_stride,
            bias_set_stride,
            table: context.upload(
                "coopgemm network table (coopmat)",
                bytemuck::cast_slice::<u32, i32>(&table),
            )?,
            max_width,
            activations: desc
                .activations()
                .iter()
                .fold(0, |mask, activation| mask | 1 << activation.code()),
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
        MLP_VARIANTS
            .iter()
            .copied()
            .find(|v| v.io == io && v.emulated == backend.is_emulated())
            .ok_or_else(|| format!("no cooperative-matrix network kernel for {io} rows"))
    }

    /// Subgroups per workgroup (one per 16 columns of the widest layer, at least 4) and
    /// rows per workgroup / 16: the most, up to [`ROW_TILES`], whose activations and
    /// scratch tiles take at most [`SHARED_MEMORY_BUDGET`] bytes and fit the device's
    /// shared memory.
    fn shape(&self, backend: &CoopmatBackend) -> std::result::Result<(u32, u32), String> {
        let available = backend.device_info().shared_memory_bytes;
        let subgroups = (self.max_width / 16).max(4);
        (1..=ROW_TILES)
            .rev()
            .find(|tiles| {
                let activations = 16 * tiles * (self.max_width + 8) * 2;
                let scratch = subgroups * 16 * 20 * 4;
                // Each row's slot (row and set), and the next set, with set indices.
                let slots = 16 * tiles * 8 + 16;
                let bytes = activations + scratch + slots;
                bytes <= available && (bytes <= SHARED_MEMORY_BUDGET || *tiles == 1)
            })
            .map(|tiles| (subgroups, tiles))
            .ok_or_else(|| format!("{available} bytes of shared memory hold no row block"))
    }

    /// Records the network over every row, after the sets' pre-pass where the run has set
    /// indices (`sets`, checked), and returns the command buffers to submit.
    pub(crate) fn record(
        &self,
        context: &Context,
        desc: &MlpDesc,
        buffers: &MlpBuffers<'_>,
        input: BoundRange,
        output: BoundRange,
        sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
    ) -> Result<Vec<wgpu::CommandBuffer>> {
        let rows = buffers.layout.rows;
        if rows == 0 {
            return Ok(Vec::new());
        }
        let backend = context
            .backends_of_device()
            .coopmat
            .as_ref()
            .map_err(|why| Error::Device(why.clone()))?;
        let unsupported = |reason: String| Error::MlpNoKernel {
            reasons: vec![(crate::kind::MlpKernel::Coopmat, reason)],
        };
        let variant = self.variant(backend, buffers.io).map_err(unsupported)?;
        let (subgroups, row_tiles) = self.shape(backend).map_err(unsupported)?;
        let subgroup_size = backend.device_info().subgroup_size;
        let key = PipelineKey {
            module: variant.name,
            constants: vec![
                subgroup_size,
                subgroups,
                row_tiles,
                self.max_width,
                subgroup_size * subgroups,
                self.activations,
                // INDEXED: without set indices every row's set is 0 as a constant.
                u32::from(sets.is_some()),
            ],
            required_subgroup_size: subgroup_size,
        };
        let kernels = backend.raw_kernels();
        let pipeline = kernels.pipeline(&key, variant.spirv)?;
        let groups = u64::from(rows).div_ceil(16 * u64::from(row_tiles));
        let grid = flat_grid(groups, 1, &context.device().limits())?;
        let params = Params {
            rows: RowParams::new(&buffers.layout, input, output),
            layers: desc.layers() as u32,
            input_width: desc.input_width(),
            output_width: desc.output_width(),
            groups_x: grid[0],
            slots: SetGrouper::unindexed(),
            weight_set_stride: self.weight_set_stride,
            bias_set_stride: self.bias_set_stride,
            unused: [0; 3],
        };
        let dispatch = RawNetworkDispatch {
            kernels,
            pipeline,
            grid,
            buffers,
            input,
            output,
            parameters: &self.weights,
            table: &self.table,
            sets,
        };
        record_raw_network(context, dispatch, params, |params| &mut params.slots)
    }
}
