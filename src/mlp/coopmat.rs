//! The fused network kernels on cooperative matrices: `glsl/mlp_coopmat.comp` (the block
//! kernel, [`MlpKernel::Coopmat`]) and `glsl/mlp_coopmat_rows.comp` (the row kernel,
//! [`MlpKernel::CoopmatRows`]). Both read the same weights, layer table and push constants
//! (`glsl/mlp_common.glsl`); here are that layout, each kernel's specialization, and their
//! raw-Vulkan dispatch through the cooperative-matrix backend's kernels (same device, same
//! pipeline layout).

use crate::backend::coopmat::CoopmatBackend;
use crate::backend::flat_grid;
use crate::bindings::BoundRange;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kind::MlpKernel;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::{BoundRows, MlpIo, RowParams};
use crate::mlp::sets::{
    record_raw_network, RawNetworkDispatch, RunOutput, RunTarget, SetGrouper, SlotParams,
};
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
include!(concat!(env!("OUT_DIR"), "/mlp_rows_variants.rs"));

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

/// The row kernel's layers at most (stamped out in `mlp_coopmat_rows.comp`).
const ROWS_MAX_LAYERS: usize = 8;
/// The row kernel's subgroups per workgroup and 16-row tiles per subgroup. On the H100
/// (mlp64, 2^20 rows) two row tiles ran in 0.27 ms, one in 0.36 (every weight fragment
/// serves half the rows) and four in 0.29 (255 registers, spilled).
const ROWS_SUBGROUPS: u32 = 4;
const ROWS_ROW_TILES: u32 = 2;
/// The row kernel's workgroups at most: each copies the weights into shared memory once
/// and loops over blocks of rows. 528, 1056 and 4224 ran within 4 % of each other on the
/// H100.
const ROWS_MAX_GROUPS: u64 = 1024;

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

/// What a run records on: the context, its cooperative-matrix backend, the network and the
/// bound rows.
#[derive(Clone, Copy)]
struct KernelRun<'a, 'b> {
    context: &'a Context,
    backend: &'a CoopmatBackend,
    desc: &'a MlpDesc,
    chunk: &'a BoundRows<'b>,
    target: RunTarget,
}

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
    /// Every layer's padded input width, then the last layer's padded output width.
    padded_widths: Vec<u32>,
    /// Every layer's `MlpActivation::code`.
    activation_codes: Vec<u32>,
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
            padded_widths: std::iter::once(desc.input_width())
                .chain((0..desc.layers()).map(|layer| desc.layer_shape(layer).1))
                .map(padded)
                .collect(),
            activation_codes: desc.activations().iter().map(|a| a.code()).collect(),
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

    /// Whether the row kernel runs rows of `io` (with set indices if `indexed`) on
    /// `backend`: no set indices (every row uses set 0), up to [`ROWS_MAX_LAYERS`] layers
    /// whose weights and the subgroups' staging rows fit the device's shared memory, a
    /// variant for the rows.
    pub(crate) fn supports_rows(
        &self,
        backend: &CoopmatBackend,
        io: MlpIo,
        indexed: bool,
    ) -> std::result::Result<(), String> {
        if indexed {
            return Err(
                "holds one weight set in shared memory, and this run has set indices".into(),
            );
        }
        let layers = self.activation_codes.len();
        if layers > ROWS_MAX_LAYERS {
            return Err(format!(
                "{layers} layers, the kernel takes at most {ROWS_MAX_LAYERS}"
            ));
        }
        let needed = self.rows_shared_bytes();
        let available = backend.device_info().shared_memory_bytes;
        if needed > available {
            return Err(format!(
                "the weights and staging rows take {needed} bytes of shared memory, the device has {available}"
            ));
        }
        Self::find_variant(MLP_ROWS_VARIANTS, backend, io).map(|_| ())
    }

    /// The row kernel's shared memory: every layer's weights (rows of `k / 8 + 1` 16-byte
    /// vectors) and each subgroup's 16 staging rows.
    fn rows_shared_bytes(&self) -> u32 {
        let weights: u32 = self
            .padded_widths
            .windows(2)
            .map(|pair| pair[1] * (pair[0] / 8 + 1))
            .sum();
        let staging = ROWS_SUBGROUPS * 16 * (self.max_width / 8 + 1).max(5);
        16 * (weights + staging)
    }

    /// Records the row kernel over every row (a run without set indices) and returns the
    /// command buffers to submit.
    pub(crate) fn record_rows(
        &self,
        context: &Context,
        desc: &MlpDesc,
        chunk: &BoundRows<'_>,
        target: RunTarget,
    ) -> Result<RunOutput> {
        let buffers = &chunk.buffers;
        let rows = buffers.layout.rows;
        let backend = context.coopmat_backend()?;
        let unsupported = |reason: String| Error::MlpNoKernel {
            reasons: vec![(MlpKernel::CoopmatRows, reason)],
        };
        self.supports_rows(backend, buffers.io, buffers.set_indices.is_some())
            .map_err(unsupported)?;
        let variant =
            Self::find_variant(MLP_ROWS_VARIANTS, backend, buffers.io).map_err(unsupported)?;
        let subgroup_size = backend.device_info().subgroup_size;
        let mut constants = vec![
            subgroup_size,
            ROWS_SUBGROUPS,
            ROWS_ROW_TILES,
            self.max_width,
            subgroup_size * ROWS_SUBGROUPS,
            self.activations,
            self.activation_codes.len() as u32,
        ];
        // W_0 ..= W_8: 16 past the last layer.
        constants.extend((0..=ROWS_MAX_LAYERS).map(|l| *self.padded_widths.get(l).unwrap_or(&16)));
        // ACT_0 ..= ACT_7.
        constants.extend((0..ROWS_MAX_LAYERS).map(|l| *self.activation_codes.get(l).unwrap_or(&0)));
        let key = PipelineKey {
            module: variant.name,
            constants,
            required_subgroup_size: subgroup_size,
        };
        let blocks = u64::from(rows).div_ceil(u64::from(16 * ROWS_ROW_TILES * ROWS_SUBGROUPS));
        let run = KernelRun {
            context,
            backend,
            desc,
            chunk,
            target,
        };
        self.record_dispatch(run, &key, variant.spirv, blocks.min(ROWS_MAX_GROUPS), None)
    }

    /// The variant of `variants` for rows of `io` on `backend` (real or emulated).
    fn find_variant(
        variants: &[MlpVariant],
        backend: &CoopmatBackend,
        io: MlpIo,
    ) -> std::result::Result<MlpVariant, String> {
        variants
            .iter()
            .copied()
            .find(|v| v.io == io && v.emulated == backend.is_emulated())
            .ok_or_else(|| format!("no cooperative-matrix network kernel for {io} rows"))
    }

    fn variant(
        &self,
        backend: &CoopmatBackend,
        io: MlpIo,
    ) -> std::result::Result<MlpVariant, String> {
        Self::find_variant(MLP_VARIANTS, backend, io)
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
        chunk: &BoundRows<'_>,
        sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
        target: RunTarget,
    ) -> Result<RunOutput> {
        let buffers = &chunk.buffers;
        let rows = buffers.layout.rows;
        let backend = context.coopmat_backend()?;
        let unsupported = |reason: String| Error::MlpNoKernel {
            reasons: vec![(MlpKernel::Coopmat, reason)],
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
        let groups = u64::from(rows).div_ceil(16 * u64::from(row_tiles));
        let run = KernelRun {
            context,
            backend,
            desc,
            chunk,
            target,
        };
        self.record_dispatch(run, &key, variant.spirv, groups, sets)
    }

    /// Records one dispatch of either kernel (`key`'s pipeline of `spirv`) over `groups`
    /// workgroups, after the sets' pre-pass where the run has set indices.
    fn record_dispatch(
        &self,
        run: KernelRun<'_, '_>,
        key: &PipelineKey,
        spirv: &'static [u8],
        groups: u64,
        sets: Option<(&SetGrouper, (&wgpu::Buffer, BoundRange))>,
    ) -> Result<RunOutput> {
        let KernelRun {
            context,
            backend,
            desc,
            chunk,
            target,
        } = run;
        let &BoundRows {
            ref buffers,
            input,
            output,
        } = chunk;
        let kernels = backend.raw_kernels();
        let pipeline = kernels.pipeline(key, spirv)?;
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
            table: Some(&self.table),
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
