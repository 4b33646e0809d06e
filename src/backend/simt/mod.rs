//! The portable backend: a WGSL tiled GEMM (`wgsl/gemm_simt.wgsl`) on plain wgpu.
//!
//! The kernel's tile sizes are WGSL `override` constants; [`SimtConfig::ALL`] names the
//! combinations the host picks from. The element types choose the storage snippets
//! (`wgsl/storage/`) prepended to the kernel body ([`simt_source`]): f32, f16 or bf16
//! A and B, and f32, f16 or bf16 C, summed in f32; a GEMM that asks for f16 sums
//! ([`GemmTypes::F16_ACC_F16`]) multiplies and sums in f16 where the device has
//! `wgpu::Features::SHADER_F16` (packed f16 arithmetic: about twice the f32 rate), and in
//! f32 elsewhere. A and B are bound as arrays of four-element vectors where every quad of
//! elements the kernel loads at once is aligned (`loads_whole_quads`: one 16-byte load
//! instead of four), as scalars otherwise. Pipelines are built once per (configuration,
//! types, operand layout, vector or scalar loads) and cached.
//!
//! Integer GEMMs (i8 × i8 → i32) have no SIMT kernel: they run on the cooperative-matrix
//! backend, and where that is missing the GEMM fails with [`Error::NoBackend`].

use std::sync::Arc;

mod config;

pub use config::SimtConfig;

use super::snippets::{self, native_inputs, native_output, output_side, packed_16bit_inputs};
use super::wgpu_dispatch::{
    gemm_bind_group_layout, k_contiguous, kernel_pipeline, loads_whole_quads, GemmParams,
    WgslDispatch,
};
use super::{tile_grid, unusable_config, Backend, BackendKind, BackendSetup, KernelConfig, Target};
use crate::bindings::{BindingPlan, GemmBuffers};
use crate::error::{Error, Result};
use crate::memo::Memo;
use crate::problem::ResolvedGemm;
use crate::types::{DType, GemmTypes};

/// The WGSL body of the SIMT kernel (without the storage snippets and [`TILE_LOADS_WGSL`]; see
/// [`simt_source`]).
pub const SIMT_WGSL: &str = include_str!("../../../wgsl/gemm_simt.wgsl");

/// What the WGSL GEMM kernels share (`wgsl/tile_loads.wgsl`): the uniform block and the load
/// side of loading A and B through registers into workgroup memory. Placed after the
/// storage snippets.
pub const TILE_LOADS_WGSL: &str = include_str!("../../../wgsl/tile_loads.wgsl");

/// Whether the SIMT kernel can store `types`, and if not, why.
fn check_types(types: GemmTypes) -> std::result::Result<(), String> {
    let float = |t: DType| matches!(t, DType::F32 | DType::F16 | DType::BF16);
    if !float(types.input) || !float(types.output) {
        return Err(format!(
            "the SIMT kernel stores f32, f16 or bf16 only, not {types} (integer GEMMs need the cooperative-matrix backend)"
        ));
    }
    if types.accumulate == DType::BF16 || types.accumulate.is_integer() {
        return Err(format!(
            "the SIMT kernel sums in f32, which cannot stand in for {types}"
        ));
    }
    let sixteen_bit: Vec<DType> = [types.input, types.output]
        .into_iter()
        .filter(|t| *t != DType::F32)
        .collect();
    if sixteen_bit.windows(2).any(|pair| pair[0] != pair[1]) {
        return Err(format!(
            "the SIMT kernel mixes no two 16-bit formats in one GEMM ({types})"
        ));
    }
    Ok(())
}

/// The type the SIMT kernel multiplies and sums `types` in: f16 where the GEMM asks for
/// f16 sums of f16 inputs and the device has `SHADER_F16` (`shader_f16`), f32 otherwise (a
/// requested f16 accumulation carried out in f32 is more accurate than asked).
pub(crate) fn compute_type(types: GemmTypes, shader_f16: bool) -> DType {
    let f16_sums = types.input == DType::F16 && types.accumulate == DType::F16;
    if f16_sums && shader_f16 {
        DType::F16
    } else {
        DType::F32
    }
}

/// The complete WGSL of the SIMT kernel for `types` on a device with (`shader_f16`) or
/// without wgpu's `SHADER_F16`: the storage snippets for the element types and the
/// arithmetic ([`compute_type`]), then the body. With `vector_loads`, A and B are bound as
/// arrays of four-element vectors (one load per quad; only for GEMMs whose operands
/// `loads_whole_quads`). `None` when the SIMT kernel cannot store these types.
pub(crate) fn simt_source(
    types: GemmTypes,
    shader_f16: bool,
    vector_loads: bool,
) -> Option<String> {
    check_types(types).ok()?;
    let scalar = compute_type(types, shader_f16);
    let (inputs, output_side) = if scalar == DType::F16 {
        // f16 arithmetic: f16 inputs in native storage, C f16 or f32.
        let output = native_output(types.output);
        (
            native_inputs(DType::F16, vector_loads),
            [output.as_str(), snippets::EPILOGUE].join("\n"),
        )
    } else {
        let inputs = match types.input {
            DType::F32 => native_inputs(DType::F32, vector_loads),
            _ => packed_16bit_inputs(vector_loads).to_string(),
        };
        (inputs, output_side(types.input, types.output))
    };
    Some(
        [
            snippets::compute(scalar),
            &inputs,
            &output_side,
            TILE_LOADS_WGSL,
            SIMT_WGSL,
        ]
        .join("\n"),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PipelineKey {
    config: SimtConfig,
    types: GemmTypes,
    /// (A k-contiguous, B k-contiguous) compiled in; `None` on CPU drivers, where one
    /// pipeline reads the layout at run time (compiling one costs seconds there).
    layout: Option<(bool, bool)>,
    /// A and B bound as vectors, a quad per load (`loads_whole_quads`).
    vector_loads: bool,
}

/// The SIMT backend of one device.
#[derive(Debug)]
pub struct SimtBackend {
    device: wgpu::Device,
    limits: wgpu::Limits,
    is_cpu: bool,
    /// Whether WGSL's `pack2x16float` / `unpack2x16float` are available (f16 storage).
    f16_conversions: bool,
    /// Whether the device has wgpu's `SHADER_F16` (f16 arithmetic and 16-bit storage).
    shader_f16: bool,
    /// One module per (input, arithmetic, output, vector loads) combination, built on first
    /// use.
    modules: Memo<(DType, DType, DType, bool), wgpu::ShaderModule>,
    bind_group_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Memo<PipelineKey, Arc<wgpu::ComputePipeline>>,
    forced_config: Option<SimtConfig>,
    /// Whether aligned GEMMs load A and B as vectors: on GPUs, not on CPU drivers, where
    /// lavapipe ran 1024³ f32 7% slower with them (`COOPGEMM_SIMT_VECTOR_LOADS=0|1`
    /// overrides).
    vector_loads: bool,
    /// Persisted driver cache the pipelines are built with (set by the context).
    pipeline_cache: Option<crate::vulkan::pipeline_cache::WgpuPipelineCache>,
    /// Logs each new pipeline's driver statistics (`COOPGEMM_PIPELINE_STATS=1`; set by
    /// the context).
    statistics: Option<crate::vulkan::statistics::PipelineStatistics>,
    /// Stamps each pass while a GPU timing is under way (set by the context).
    timer: Option<Arc<crate::timing::GpuTimer>>,
}

impl SimtBackend {
    /// Builds the backend for a device. `is_cpu` selects configurations suited to CPU drivers.
    ///
    /// f16 storage uses WGSL's `pack2x16float` / `unpack2x16float` (wgpu's
    /// `DownlevelFlags::SHADER_F16_IN_F32`), which every wgpu backend has, GL included (GLSL's
    /// `packHalf2x16`, core wherever compute shaders are; the CI's GL pass runs the f16 suites
    /// on llvmpipe), except Vulkan on llvmpipe (lavapipe) without `SHADER_F16`. That
    /// rule is wgpu's own (its adapter query, which a device does not expose), mirrored here.
    pub(crate) fn new(setup: &BackendSetup<'_>, is_cpu: bool) -> SimtBackend {
        let (device, overrides) = (setup.device, setup.overrides);
        let info = device.adapter_info();
        let f16_conversions = !(info.backend == wgpu::Backend::Vulkan
            && info.driver.to_lowercase().contains("llvmpipe")
            && !device.features().contains(wgpu::Features::SHADER_F16));
        let bind_group_layout = gemm_bind_group_layout(device, "coopgemm simt");
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("coopgemm simt"),
            bind_group_layouts: &[Some(&bind_group_layout)],
            immediate_size: 0,
        });
        let forced_config = overrides.simt_config;
        let vector_loads = overrides.simt_vector_loads.unwrap_or(!is_cpu);
        SimtBackend {
            device: device.clone(),
            limits: device.limits(),
            is_cpu,
            f16_conversions,
            shader_f16: device.features().contains(wgpu::Features::SHADER_F16),
            modules: Memo::new("module"),
            bind_group_layout,
            pipeline_layout,
            pipelines: Memo::new("pipeline"),
            forced_config,
            vector_loads,
            pipeline_cache: setup.wgpu_pipeline_cache("simt.wgpu"),
            statistics: setup
                .pipeline_statistics
                .then(|| crate::vulkan::statistics::PipelineStatistics::new(device))
                .flatten(),
            timer: setup.timer.clone(),
        }
    }

    /// Whether the kernel's main loop runs block by block (`BLOCK_BY_BLOCK`) for `types`:
    /// with f32 arithmetic on GPUs, where it is faster; with f16 arithmetic, and on CPU
    /// drivers, it is slower (the measurements: `docs/benchmarks.md`, SIMT).
    fn block_by_block(&self, types: GemmTypes) -> bool {
        !self.is_cpu && compute_type(types, self.shader_f16) == DType::F32
    }

    /// The configuration this backend uses for a description.
    /// `None` when B is stored in column panels that no configuration's tile width matches.
    pub fn choose_config(&self, gemm: &ResolvedGemm) -> Option<SimtConfig> {
        let usable = self.usable_configs(gemm);
        if let Some(config) = self.forced_config.filter(|c| usable.contains(c)) {
            return Some(config);
        }
        let (m, n) = (gemm.gemm.m as u64, gemm.gemm.n as u64);
        let f16_arithmetic = compute_type(gemm.gemm.types, self.shader_f16) == DType::F16;
        let large = m * n >= 512 * 512;
        // The heuristic's tables, by name; each is a constant, so a name that no
        // configuration has fails the build rather than being skipped.
        const fn named<const N: usize>(names: [&str; N]) -> [SimtConfig; N] {
            let mut configs = [SimtConfig::ALL[0]; N];
            let mut index = 0;
            while index < N {
                configs[index] = SimtConfig::named(names[index]);
                index += 1;
            }
            configs
        }
        // f16 sums on the H100 (4096³): small invocation tiles, deep stages (64x128x16-t4x4
        // 43.7 TFLOP/s, 64x64x16-t4x4 41.7, 128x128x8-t8x8 27.8).
        const F16_LARGE: [SimtConfig; 3] =
            named(["64x128x16-t4x4", "64x64x16-t4x4", "64x64x8-t4x4"]);
        // Thin outputs: a 128-row tile would compute half padding. On the H100, 64x4096²
        // in 4 K slices: 64x64x16-t4x4 22.5 TFLOP/s, 64x128x16-t8x8 13.1.
        const THIN: [SimtConfig; 3] = named(["64x64x16-t4x4", "64x128x16-t4x4", "64x128x16-t8x8"]);
        const CPU_LARGE: [SimtConfig; 2] = named(["128x128x8-t8x8", "64x64x16-t8x8"]);
        // f32 sums on the H100 (4096³ / 8192³): 128x128x8-t8x8 37.7 / 37.9 TFLOP/s,
        // 128x64x8-t8x4 36.0 / 37.5 (59 registers per invocation against 128: twice the
        // resident workgroups, but half the reuse of each loaded value).
        const LARGE: [SimtConfig; 5] = named([
            "128x128x8-t8x8",
            "128x64x8-t8x4",
            "64x64x16-t8x8",
            "64x64x8-t4x4",
            "32x32x16-t4x4",
        ]);
        const MEDIUM: [SimtConfig; 3] = named(["64x64x16-t8x8", "64x64x8-t4x4", "32x32x16-t4x4"]);
        const SMALL: [SimtConfig; 2] = named(["32x32x16-t4x4", "64x64x8-t4x4"]);
        let preferred: &[SimtConfig] = if f16_arithmetic && !self.is_cpu && large {
            &F16_LARGE
        } else if large && (m <= 64 || n <= 64) {
            &THIN
        } else if large && self.is_cpu {
            &CPU_LARGE
        } else if large {
            &LARGE
        } else if m * n >= 128 * 128 || self.is_cpu {
            &MEDIUM
        } else {
            &SMALL
        };
        preferred
            .iter()
            .copied()
            .chain(SimtConfig::ALL)
            .find(|config| usable.contains(config))
    }

    fn pipeline(&self, key: PipelineKey) -> Result<Arc<wgpu::ComputePipeline>> {
        self.pipelines
            .get_or_build(key, |key| self.build_pipeline(key))
    }

    fn build_pipeline(&self, key: &PipelineKey) -> Result<Arc<wgpu::ComputePipeline>> {
        key.config.check(&self.limits).map_err(Error::Pipeline)?;
        let module = self.module(key.types, key.vector_loads)?;
        let constants = key
            .config
            .constants(key.layout, self.block_by_block(key.types));
        log::debug!(
            "simt: building pipeline {} for {} in {} (A, B k-contiguous: {:?}; vector loads: {})",
            key.config.name,
            key.types,
            compute_type(key.types, self.shader_f16),
            key.layout,
            key.vector_loads
        );
        let pipeline = kernel_pipeline(
            &self.device,
            key.config.name,
            &self.pipeline_layout,
            &module,
            "main",
            &constants,
            self.pipeline_cache.as_ref(),
        );
        if let (Some(statistics), Some(source)) = (
            &self.statistics,
            simt_source(key.types, self.shader_f16, key.vector_loads),
        ) {
            statistics.log_wgsl(key.config.name, &source, &constants);
        }
        Ok(pipeline)
    }

    /// The shader module for the storage of `types`, built on first use.
    fn module(&self, types: GemmTypes, vector_loads: bool) -> Result<wgpu::ShaderModule> {
        let compute = compute_type(types, self.shader_f16);
        let storage = (types.input, compute, types.output, vector_loads);
        self.modules
            .get_or_build(storage, |_| self.build_module(types, vector_loads))
    }

    fn build_module(&self, types: GemmTypes, vector_loads: bool) -> Result<wgpu::ShaderModule> {
        let source = simt_source(types, self.shader_f16, vector_loads).ok_or_else(|| {
            Error::Unsupported {
                backend: BackendKind::Simt,
                reason: format!("no SIMT storage for {types}"),
            }
        })?;
        // Without runtime checks: naga's bounds clamps on every workgroup-memory access cost
        // more than half of the kernel's speed on NVIDIA (12.8 vs 29.8 TFLOP/s at 4096³),
        // and the kernel's own range checks already keep every index in bounds.
        Ok(crate::shader::wgsl_module(
            &self.device,
            "coopgemm simt",
            &source,
            crate::shader::Checks::Trusted,
        ))
    }

    /// Configurations that can run `gemm` here: within the device limits and, for B in
    /// column panels, as wide as a panel (one workgroup reads one panel).
    fn usable_configs(&self, gemm: &ResolvedGemm) -> Vec<SimtConfig> {
        let panel_width = gemm.b.order.panel_width();
        SimtConfig::ALL
            .into_iter()
            .filter(|config| {
                config.check(&self.limits).is_ok() && panel_width.is_none_or(|w| config.tile_n == w)
            })
            .collect()
    }

    fn key(&self, gemm: &ResolvedGemm, config: &KernelConfig) -> Result<PipelineKey> {
        let config = match config {
            KernelConfig::Simt(config) if self.usable_configs(gemm).contains(config) => *config,
            other => return Err(unusable_config(BackendKind::Simt, other)),
        };
        let b_tile_stride = GemmParams::b_tile_stride(gemm, config.tile_n);
        Ok(PipelineKey {
            config,
            types: gemm.gemm.types,
            layout: (!self.is_cpu)
                .then(|| (k_contiguous(&gemm.a, true), k_contiguous(&gemm.b, false))),
            vector_loads: self.vector_loads
                && loads_whole_quads(&gemm.a, true, 0)
                && loads_whole_quads(&gemm.b, false, b_tile_stride),
        })
    }

    fn no_config_reason(&self, gemm: &ResolvedGemm) -> String {
        match gemm.b.order.panel_width() {
            Some(width) => {
                format!("no SIMT tile configuration is {width} columns wide (B's panels)")
            }
            None => "no SIMT tile configuration fits this device's limits".into(),
        }
    }

    fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        config: &KernelConfig,
    ) -> Result<()> {
        let plan = BindingPlan::new(gemm, buffers, &self.limits)?;
        let key = self.key(gemm, config)?;
        let config = key.config;
        let limits = [self.limits.max_compute_workgroups_per_dimension; 3];
        let grid = tile_grid(gemm, (config.tile_m, config.tile_n), limits)?;
        if gemm.is_empty() {
            return Ok(());
        }
        let pipeline = self.pipeline(key)?;
        WgslDispatch {
            device: &self.device,
            layout: &self.bind_group_layout,
            pipeline: &pipeline,
            params: GemmParams::new(gemm, &plan, config.tile_n),
            plan: &plan,
            buffers,
            grid,
            timer: self.timer.as_deref(),
            label: "coopgemm simt",
        }
        .record(encoder);
        Ok(())
    }
}

impl Backend for SimtBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Simt
    }

    fn supports(&self, gemm: &ResolvedGemm) -> std::result::Result<(), String> {
        let types = gemm.gemm.types;
        check_types(types)?;
        if self.choose_config(gemm).is_none() {
            return Err(self.no_config_reason(gemm));
        }
        let uses_f16 = types.input == DType::F16 || types.output == DType::F16;
        if uses_f16 && !self.f16_conversions {
            return Err(
                "f16 storage needs WGSL's f16 pack/unpack, which this device lacks (wgpu's DownlevelFlags::SHADER_F16_IN_F32: lavapipe without SHADER_F16)"
                    .into(),
            );
        }
        Ok(())
    }

    fn records_into_shared_encoder(&self) -> bool {
        true
    }

    fn choose(&self, gemm: &ResolvedGemm) -> Result<KernelConfig> {
        self.choose_config(gemm)
            .map(KernelConfig::Simt)
            .ok_or_else(|| Error::Unsupported {
                backend: BackendKind::Simt,
                reason: self.no_config_reason(gemm),
            })
    }

    fn candidates(&self, gemm: &ResolvedGemm) -> Vec<KernelConfig> {
        self.usable_configs(gemm)
            .into_iter()
            .map(KernelConfig::Simt)
            .collect()
    }

    fn prepare(&self, gemm: &ResolvedGemm, config: &KernelConfig) -> Result<()> {
        self.pipeline(self.key(gemm, config)?).map(drop)
    }

    fn record(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
        config: &KernelConfig,
    ) -> Result<()> {
        super::record_wgpu(&self.device, "coopgemm simt", target, |encoder| {
            self.encode(encoder, gemm, buffers, config)
        })
    }
}

#[cfg(test)]
mod tests;
