//! The WGSL cooperative-matrix backend: a tiled GEMM (`wgsl/gemm_coopmat.wgsl`) on wgpu's own
//! cooperative matrices (`wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX`, WGSL
//! `enable wgpu_cooperative_matrix;`), which naga compiles to `OpCooperativeMatrix*KHR` on
//! Vulkan and to `simdgroup_matrix` on Metal.
//!
//! Unlike the Vulkan [`coopmat`](super::coopmat) backend it records plain wgpu commands, so it
//! runs wherever wgpu offers the feature (Metal's Apple7+/Mac2 GPUs, Vulkan devices with
//! `VK_KHR_cooperative_matrix`, devices the caller created with the feature) and records
//! into the caller's own encoder ([`Context::encode`](crate::Context::encode)).
//!
//! The kernel shares the SIMT kernel's host interface: the uniform block
//! ([`GemmParams`](super::simt)), the bindings, the storage snippets of `wgsl/storage/` and
//! the load side of the tile loads (`wgsl/tile_loads.wgsl`). What differs is the multiply (coop tiles of
//! [`CoopShape`], picked from the adapter's list) and the tiling ([`WgslCoopConfig`]).
//! Variants are generated, never copied: a header ([`wgsl_coopmat_source`]) names the coop
//! shape and element types, the storage snippets are the element types' own, and the tiling
//! is set through override constants.

use std::sync::Arc;

use super::simt::TILE_LOADS_WGSL;
use super::snippets;
use super::wgpu_dispatch::{
    gemm_bind_group_layout, k_contiguous, kernel_pipeline, loads_whole_groups, GemmParams,
    WgslDispatch,
};
mod config;

pub use crate::types::CoopShape;
pub use config::WgslCoopConfig;

use super::{tile_grid, unusable_config, Backend, BackendKind, BackendSetup, KernelConfig, Target};
use crate::bindings::{BindingPlan, GemmBuffers};
use crate::error::{Error, Result};
use crate::memo::Memo;
use crate::problem::ResolvedGemm;
use crate::types::{DType, GemmTypes};

/// The WGSL body of the cooperative-matrix kernel (without the header, storage snippets and
/// tile loads; see [`wgsl_coopmat_source`]).
pub const WGSL_COOPMAT_WGSL: &str = include_str!("../../../wgsl/gemm_coopmat.wgsl");

/// How the kernel writes its operand quads to workgroup memory: the staging snippet of
/// `wgsl/coopmat_staging/` put in front of the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Staging {
    /// One `vec4` store per quad, the coop loads reading through a pointer to the vector
    /// (SPIR-V allows it; naga's Metal output takes a pointer to the element type only).
    Vector,
    /// Four element stores per quad.
    Scalar,
}

impl Staging {
    /// The staging naga can write for `backend`: vectors on Vulkan, elements elsewhere.
    pub(crate) fn for_backend(backend: wgpu::Backend) -> Staging {
        if backend == wgpu::Backend::Vulkan {
            Staging::Vector
        } else {
            Staging::Scalar
        }
    }

    fn snippet(self) -> &'static str {
        match self {
            Staging::Vector => include_str!("../../../wgsl/coopmat_staging/vector.wgsl"),
            Staging::Scalar => include_str!("../../../wgsl/coopmat_staging/scalar.wgsl"),
        }
    }
}

/// How the kernel reads A and B from memory: the storage snippet (`wgsl/storage/`) and the
/// loads snippet (`wgsl/coopmat_loads/`) of its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OperandLoads {
    /// Quads of four adjacent elements, each read element by element (unaligned operands).
    Elements,
    /// Quads read with one vector load each (both operands pass `loads_whole_quads`).
    Quads,
    /// Octs of eight adjacent 16-bit elements, one 16-byte load each, written to workgroup
    /// memory as two quads: half the loads and bounds checks of quads. f16 operands that
    /// pass `loads_whole_groups` with width 8, where [`Self::octs_pay`].
    Octs,
}

impl OperandLoads {
    /// The loads `gemm` uses on `config`, with B tiles `b_tile_stride` elements apart.
    fn for_gemm(gemm: &ResolvedGemm, config: &WgslCoopConfig, b_tile_stride: u64) -> OperandLoads {
        let whole = |width| {
            loads_whole_groups(&gemm.a, true, 0, width)
                && loads_whole_groups(&gemm.b, false, b_tile_stride, width)
        };
        if Self::octs_pay(gemm, config) && whole(8) {
            OperandLoads::Octs
        } else if whole(4) {
            OperandLoads::Quads
        } else {
            OperandLoads::Elements
        }
    }

    /// Whether octs beat quads for `gemm` on `config`: f16 inputs summed in f32 with B not
    /// K-contiguous, on tiles of 128 rows. On the H200 (B row-major, same call) they took the
    /// kernel from 108.5 to 126.3 TFLOP/s at 4096³, 512×4096×4096 from 102.0 to 119.8;
    /// elsewhere they were slower: with f16 sums (4096³ 108.7 -> 93.6), with B column-major
    /// (108.5 -> 71.1) and on the 64-row tile (64×4096×4096 18.7 -> 15.3)
    /// (`examples/results/h200-2026-11-28-wgsl-staging/`, call 4).
    fn octs_pay(gemm: &ResolvedGemm, config: &WgslCoopConfig) -> bool {
        let types = gemm.gemm.types;
        types.input == DType::F16
            && types.accumulate == DType::F32
            && !k_contiguous(&gemm.b, false)
            && config.tile_m >= 128
    }

    /// The storage snippet for A and B of type `input`; `None` where it has none (octs of
    /// other than f16).
    fn storage(self, input: DType) -> Option<String> {
        match self {
            OperandLoads::Elements => Some(snippets::native_inputs(input, false)),
            OperandLoads::Quads => Some(snippets::native_inputs(input, true)),
            OperandLoads::Octs => snippets::native_oct_inputs(input),
        }
    }

    fn snippet(self) -> &'static str {
        match self {
            OperandLoads::Elements | OperandLoads::Quads => {
                include_str!("../../../wgsl/coopmat_loads/quads.wgsl")
            }
            OperandLoads::Octs => include_str!("../../../wgsl/coopmat_loads/octs.wgsl"),
        }
    }
}

/// Whether the kernel can store `types` (f16 or f32 A/B, sums and C), and if not, why.
fn check_types(types: GemmTypes) -> std::result::Result<(), String> {
    let float = |t: DType| matches!(t, DType::F32 | DType::F16);
    if float(types.input) && float(types.accumulate) && float(types.output) {
        Ok(())
    } else {
        Err(format!(
            "WGSL cooperative matrices hold f16 or f32 only, not {types}"
        ))
    }
}

/// The complete WGSL of the cooperative-matrix kernel for `types` on `coop` × `coop` tiles
/// (8 or 16): a header with the `enable` directives, the element types and the coop types,
/// the staging snippet, then the storage snippets for the types (A and B bound as `loads`
/// reads them), the tile-load helpers, the loads snippet and the body. `None` for types,
/// sizes or loads the kernel cannot use.
pub(crate) fn wgsl_coopmat_source(
    types: GemmTypes,
    coop: u32,
    loads: OperandLoads,
    staging: Staging,
) -> Option<String> {
    check_types(types).ok()?;
    let inputs = loads.storage(types.input)?;
    if !matches!(coop, 8 | 16) {
        return None;
    }
    let uses_f16 = [types.input, types.accumulate, types.output].contains(&DType::F16);
    let header = format!(
        "// The WGSL cooperative-matrix kernel for {types} on {coop}x{coop} coop tiles.\n\
         {}enable wgpu_cooperative_matrix;\n\
         alias AB = {input};\n\
         alias Acc = {accumulate};\n\
         alias CoopA = coop_mat{coop}x{coop}<AB, A>;\n\
         alias CoopB = coop_mat{coop}x{coop}<AB, B>;\n\
         alias CoopC = coop_mat{coop}x{coop}<Acc, C>;\n\
         const COOP: u32 = {coop}u;\n\
         // Elements in 16 bytes: the padding of a workgroup-memory row (coop loads need 16-byte rows).\n\
         const STAGE_PAD: u32 = {pad}u;\n",
        if uses_f16 { "enable f16;\n" } else { "" },
        input = types.input,
        accumulate = types.accumulate,
        pad = 16 / types.input.size_bytes(),
    );
    Some(
        [
            header.as_str(),
            staging.snippet(),
            &inputs,
            &snippets::native_output(types.output),
            snippets::EPILOGUE,
            TILE_LOADS_WGSL,
            loads.snippet(),
            WGSL_COOPMAT_WGSL,
        ]
        .join("\n"),
    )
}

/// Why the backend is or is not available on a device with `features` whose adapter lists
/// `properties`: the usable coop shapes, or the reason.
pub fn availability(
    features: wgpu::Features,
    properties: &[wgpu::CooperativeMatrixProperties],
) -> std::result::Result<Vec<CoopShape>, String> {
    if !features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Err(if properties.is_empty() {
            "the adapter lists no cooperative matrices (wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX)"
                .into()
        } else {
            "the device was created without wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX".into()
        });
    }
    let shapes = CoopShape::usable(properties);
    if shapes.is_empty() {
        let listed: Vec<String> = properties
            .iter()
            .map(|p| {
                format!(
                    "{}x{}x{} {:?}->{:?}",
                    p.m_size, p.n_size, p.k_size, p.ab_type, p.cr_type
                )
            })
            .collect();
        return Err(format!(
            "no listed cooperative-matrix configuration is a square 8x8x8 or 16x16x16 of f16/f32 (listed: [{}])",
            listed.join(", ")
        ));
    }
    Ok(shapes)
}

/// The cooperative-matrix configurations of the adapter behind a device someone else
/// created (wgpu lists them on the adapter only): on Vulkan read from the physical device, on
/// Metal the fixed list wgpu-hal reports wherever it offers the feature (8×8×8 f32->f32,
/// f16->f16, f16->f32). Empty without `EXPERIMENTAL_COOPERATIVE_MATRIX`.
pub(crate) fn device_properties(device: &wgpu::Device) -> Vec<wgpu::CooperativeMatrixProperties> {
    if !device
        .features()
        .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
    {
        return Vec::new();
    }
    match device.adapter_info().backend {
        wgpu::Backend::Vulkan => vulkan_properties(device),
        wgpu::Backend::Metal => {
            use wgpu::CooperativeScalarType::{F16, F32};
            [(F32, F32), (F16, F16), (F16, F32)]
                .into_iter()
                .map(|(ab_type, cr_type)| wgpu::CooperativeMatrixProperties {
                    m_size: 8,
                    n_size: 8,
                    k_size: 8,
                    ab_type,
                    cr_type,
                    saturating_accumulation: false,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(vulkan_interop)]
fn vulkan_properties(device: &wgpu::Device) -> Vec<wgpu::CooperativeMatrixProperties> {
    let scalar = |t: Option<DType>| match t {
        Some(DType::F32) => Some(wgpu::CooperativeScalarType::F32),
        Some(DType::F16) => Some(wgpu::CooperativeScalarType::F16),
        _ => None,
    };
    let Some(info) = crate::vulkan::properties::query(device) else {
        return Vec::new();
    };
    info.shapes
        .iter()
        .filter(|s| s.subgroup_scope && s.a_type == s.b_type && s.c_type == s.result_type)
        .filter_map(|s| {
            Some(wgpu::CooperativeMatrixProperties {
                m_size: s.m,
                n_size: s.n,
                k_size: s.k,
                ab_type: scalar(s.a_type)?,
                cr_type: scalar(s.c_type)?,
                saturating_accumulation: s.saturating,
            })
        })
        .collect()
}

#[cfg(not(vulkan_interop))]
fn vulkan_properties(_device: &wgpu::Device) -> Vec<wgpu::CooperativeMatrixProperties> {
    Vec::new()
}

/// The subgroup size the kernel assumes: the largest the adapter may use (a logical subgroup
/// must hold a whole hardware subgroup), except on Apple GPUs, whose SIMD groups are always
/// 32 wide while wgpu's Metal backend reports 4..64 for every GPU.
pub fn kernel_subgroup_size(info: &wgpu::AdapterInfo) -> u32 {
    if info.backend == wgpu::Backend::Metal && info.name.starts_with("Apple") {
        32
    } else {
        info.subgroup_max_size.max(1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PipelineKey {
    config: WgslCoopConfig,
    types: GemmTypes,
    /// (A k-contiguous, B k-contiguous).
    layout: (bool, bool),
    loads: OperandLoads,
}

/// The WGSL cooperative-matrix backend of one device.
#[derive(Debug)]
pub struct WgslCoopBackend {
    device: wgpu::Device,
    limits: wgpu::Limits,
    shapes: Vec<CoopShape>,
    subgroup_size: u32,
    shader_f16: bool,
    staging: Staging,
    bind_group_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    modules: Memo<(GemmTypes, u32, OperandLoads), wgpu::ShaderModule>,
    pipelines: Memo<PipelineKey, Arc<wgpu::ComputePipeline>>,
    forced_config: Option<WgslCoopConfig>,
    /// wgpu's runtime checks in the module (only with `KernelOverrides::wgsl_coopmat_checked`).
    checks: crate::shader::Checks,
    /// Persisted driver cache the pipelines are built with (set by the context).
    pipeline_cache: Option<crate::vulkan::pipeline_cache::WgpuPipelineCache>,
    /// Stamps each pass while a GPU timing is under way (set by the context).
    timer: Option<Arc<crate::timing::GpuTimer>>,
}

impl WgslCoopBackend {
    /// Sets the backend up on `device`, whose adapter lists `properties`, or says why it
    /// cannot be.
    pub(crate) fn new(
        setup: &BackendSetup<'_>,
        properties: &[wgpu::CooperativeMatrixProperties],
    ) -> std::result::Result<WgslCoopBackend, String> {
        let (device, overrides) = (setup.device, setup.overrides);
        let shapes = availability(device.features(), properties)?;
        let forced_config = overrides.wgsl_coopmat_config;
        // For measuring what wgpu's checks cost: they clamp every workgroup-memory index
        // (BoundsCheckPolicy::Restrict), which keeps the driver from merging a quad's four
        // adjacent workgroup-memory stores into one, and they bound every loop.
        let checks = if overrides.wgsl_coopmat_checked {
            crate::shader::Checks::Default
        } else {
            crate::shader::Checks::Trusted
        };
        let bind_group_layout = gemm_bind_group_layout(device, "coopgemm wgsl-coopmat");
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("coopgemm wgsl-coopmat"),
            bind_group_layouts: &[Some(&bind_group_layout)],
            immediate_size: 0,
        });
        Ok(WgslCoopBackend {
            device: device.clone(),
            limits: device.limits(),
            shapes,
            subgroup_size: kernel_subgroup_size(&device.adapter_info()),
            shader_f16: device.features().contains(wgpu::Features::SHADER_F16),
            staging: Staging::for_backend(device.adapter_info().backend),
            bind_group_layout,
            pipeline_layout,
            modules: Memo::new("module"),
            pipelines: Memo::new("pipeline"),
            forced_config,
            checks,
            pipeline_cache: setup.wgpu_pipeline_cache("wgsl-coopmat.wgpu"),
            timer: setup.timer.clone(),
        })
    }

    /// One line saying what this backend can do here.
    pub fn describe(&self) -> String {
        let shapes: Vec<String> = self.shapes.iter().map(CoopShape::to_string).collect();
        let types: Vec<String> = self
            .supported_types()
            .iter()
            .map(|t| t.short_name())
            .collect();
        format!(
            "WGSL cooperative matrices [{}], subgroups of {}, types [{}]",
            shapes.join(", "),
            self.subgroup_size,
            types.join(", ")
        )
    }

    /// The coop shapes this device offers that the kernel can use.
    pub fn shapes(&self) -> &[CoopShape] {
        &self.shapes
    }

    /// The subgroup size the kernels are built for.
    pub fn subgroup_size(&self) -> u32 {
        self.subgroup_size
    }

    /// Type combinations this device can run on this backend.
    pub fn supported_types(&self) -> Vec<GemmTypes> {
        GemmTypes::ALL
            .into_iter()
            .filter(|types| self.shape_for(*types).is_ok())
            .collect()
    }

    /// The coop shape used for `types`: the largest listed for its input and sum types.
    pub fn shape_for(&self, types: GemmTypes) -> std::result::Result<CoopShape, String> {
        check_types(types)?;
        let uses_f16 = [types.input, types.accumulate, types.output].contains(&DType::F16);
        if uses_f16 && !self.shader_f16 {
            return Err(format!(
                "{types} needs WGSL f16, which this device lacks (wgpu's SHADER_F16)"
            ));
        }
        self.shapes
            .iter()
            .copied()
            .find(|s| s.input == types.input && s.accumulate == types.accumulate)
            .ok_or_else(|| {
                format!(
                    "the device lists no square cooperative matrix of {} summed in {}",
                    types.input, types.accumulate
                )
            })
    }

    /// Configurations that can run `gemm` here: of the coop size used for its types, within
    /// the device's limits and, for B in column panels, as wide as a panel.
    fn usable_configs(&self, gemm: &ResolvedGemm) -> Vec<WgslCoopConfig> {
        let types = gemm.gemm.types;
        let Ok(shape) = self.shape_for(types) else {
            return Vec::new();
        };
        let panel_width = gemm.b.order.panel_width();
        WgslCoopConfig::CANDIDATES
            .into_iter()
            .filter(|c| {
                c.coop == shape.size
                    && c.check(&self.limits, self.subgroup_size, types).is_ok()
                    && panel_width.is_none_or(|w| c.tile_n == w)
            })
            .collect()
    }

    /// The configuration the heuristic picks for `gemm` (or `COOPGEMM_WGSL_COOPMAT_CONFIG`
    /// where it can run it).
    pub fn choose_config(&self, gemm: &ResolvedGemm) -> Option<WgslCoopConfig> {
        let usable = self.usable_configs(gemm);
        if let Some(config) = self.forced_config.filter(|c| usable.contains(c)) {
            return Some(config);
        }
        let (m, n) = (gemm.gemm.m as u64, gemm.gemm.n as u64);
        let large = m * n >= 1024 * 1024;
        let medium = m * n >= 256 * 256;
        let [thin, large_tiles, medium_tiles, small_tiles] = &PREFERRED;
        let preferred: &[WgslCoopConfig] = if large && (m <= 64 || n <= 64) {
            thin
        } else if large {
            large_tiles
        } else if medium {
            medium_tiles
        } else {
            small_tiles
        };
        preferred
            .iter()
            .copied()
            .chain(usable.iter().copied())
            .find(|config| usable.contains(config))
    }

    fn no_config_reason(&self, gemm: &ResolvedGemm) -> String {
        if let Err(why) = self.shape_for(gemm.gemm.types) {
            return why;
        }
        match gemm.b.order.panel_width() {
            Some(width) => format!("no WGSL coopmat tiling is {width} columns wide (B's panels)"),
            None => "no WGSL coopmat tiling fits this device's limits".into(),
        }
    }

    fn key(&self, gemm: &ResolvedGemm, config: &KernelConfig) -> Result<PipelineKey> {
        let config = match config {
            KernelConfig::WgslCoopmat(config) if self.usable_configs(gemm).contains(config) => {
                *config
            }
            other => return Err(unusable_config(BackendKind::WgslCoopmat, other)),
        };
        let b_tile_stride = GemmParams::b_tile_stride(gemm, config.tile_n);
        Ok(PipelineKey {
            config,
            types: gemm.gemm.types,
            layout: (k_contiguous(&gemm.a, true), k_contiguous(&gemm.b, false)),
            loads: OperandLoads::for_gemm(gemm, &config, b_tile_stride),
        })
    }

    /// The shader module for (types, coop size, loads), built on first use.
    fn module(
        &self,
        types: GemmTypes,
        coop: u32,
        loads: OperandLoads,
    ) -> Result<wgpu::ShaderModule> {
        self.modules.get_or_build((types, coop, loads), |_| {
            self.build_module(types, coop, loads)
        })
    }

    fn build_module(
        &self,
        types: GemmTypes,
        coop: u32,
        loads: OperandLoads,
    ) -> Result<wgpu::ShaderModule> {
        let source = wgsl_coopmat_source(types, coop, loads, self.staging).ok_or_else(|| {
            Error::Unsupported {
                backend: BackendKind::WgslCoopmat,
                reason: format!(
                    "no WGSL coopmat kernel for {types} on {coop}x{coop} tiles with {loads:?}"
                ),
            }
        })?;
        // Without wgpu's runtime checks unless asked for (see KernelOverrides): with each
        // operand held in workgroup memory in its own layout, the checks' index clamping keeps the driver from
        // merging adjacent workgroup-memory stores (H100, 4096³ f16: 32.6 TFLOP/s with, 66.5 without).
        Ok(crate::shader::wgsl_module(
            &self.device,
            "coopgemm wgsl-coopmat",
            &source,
            self.checks,
        ))
    }

    fn pipeline(&self, key: PipelineKey) -> Result<Arc<wgpu::ComputePipeline>> {
        self.pipelines
            .get_or_build(key, |key| self.build_pipeline(key))
    }

    fn build_pipeline(&self, key: &PipelineKey) -> Result<Arc<wgpu::ComputePipeline>> {
        key.config
            .check(&self.limits, self.subgroup_size, key.types)
            .map_err(Error::Pipeline)?;
        let module = self.module(key.types, key.config.coop, key.loads)?;
        let constants = key.config.constants(self.subgroup_size, key.layout);
        let label = key.config.to_string();
        log::debug!(
            "wgsl-coopmat: building pipeline {label} for {} (A, B k-contiguous: {:?}; loads: {:?})",
            key.types,
            key.layout,
            key.loads
        );
        Ok(kernel_pipeline(
            &self.device,
            &label,
            &self.pipeline_layout,
            &module,
            "main",
            &constants,
            self.pipeline_cache.as_ref(),
        ))
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
            label: "coopgemm wgsl-coopmat",
        }
        .record(encoder);
        Ok(())
    }
}

impl Backend for WgslCoopBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::WgslCoopmat
    }

    fn supports(&self, gemm: &ResolvedGemm) -> std::result::Result<(), String> {
        self.shape_for(gemm.gemm.types)?;
        if self.choose_config(gemm).is_none() {
            return Err(self.no_config_reason(gemm));
        }
        Ok(())
    }

    fn records_into_shared_encoder(&self) -> bool {
        true
    }

    fn choose(&self, gemm: &ResolvedGemm) -> Result<KernelConfig> {
        self.choose_config(gemm)
            .map(KernelConfig::WgslCoopmat)
            .ok_or_else(|| Error::Unsupported {
                backend: BackendKind::WgslCoopmat,
                reason: self.no_config_reason(gemm),
            })
    }

    fn candidates(&self, gemm: &ResolvedGemm) -> Vec<KernelConfig> {
        self.usable_configs(gemm)
            .into_iter()
            .map(KernelConfig::WgslCoopmat)
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
        super::record_wgpu(&self.device, "coopgemm wgsl-coopmat", target, |encoder| {
            self.encode(encoder, gemm, buffers, config)
        })
    }
}

#[cfg(test)]
mod tests;

/// The heuristic's tables, favourite first, for thin, large, medium and small outputs. Typed,
/// so that nothing is skipped for a typo; `every_preferred_config_is_valid` checks each.
const PREFERRED: [&[WgslCoopConfig]; 4] = {
    use config::config as c;
    [
        &[
            c(16, 64, 64, 32, 2, 2),
            c(8, 64, 64, 16, 2, 2),
            c(8, 32, 32, 16, 2, 2),
        ],
        &[
            c(16, 128, 128, 32, 4, 2),
            c(16, 128, 128, 16, 2, 2),
            c(16, 128, 64, 32, 4, 2),
            c(8, 64, 64, 32, 2, 2),
            c(8, 64, 64, 16, 2, 2),
        ],
        &[
            c(16, 64, 64, 32, 2, 2),
            c(8, 64, 64, 16, 2, 2),
            c(8, 32, 32, 16, 2, 2),
        ],
        &[
            c(16, 32, 32, 32, 2, 2),
            c(8, 32, 32, 16, 2, 2),
            c(8, 16, 16, 16, 1, 1),
        ],
    ]
};
