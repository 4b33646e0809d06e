//! The tensor-core backend: the GLSL cooperative-matrix GEMM (`glsl/gemm_coopmat.comp`),
//! compiled to SPIR-V ahead of time and run with ash on wgpu's Vulkan device.
//!
//! The kernel is generic over the cooperative-matrix shape and the subgroup size, both
//! specialization constants: this module picks the shape from the list the device reports
//! (16×16×16 on NVIDIA; 16×16×16, 16×16×8 or 16×16×32 for the emulated kernels that CI runs
//! on lavapipe, see [`EMULATED_VARIANTS`]), and a workgroup tiling
//! that fits the device's shared memory. The raw Vulkan work lives in [`crate::vulkan`].

mod config;
mod constants;
mod forced;

pub use config::*;
pub(crate) use forced::TuningOverrides;
pub use forced::WorkgroupScopeTile;

use super::{
    row_block_grid, tile_grid, unusable_config, Backend, BackendKind, BackendSetup, KernelConfig,
    Target,
};
use crate::bindings::{uniform_u32, BindingPlan, GemmBuffers};
use crate::device_info::CoopmatDeviceInfo;
use crate::error::{Error, Result};
use crate::problem::{Order, ResolvedGemm};
use crate::types::CoopmatShape;
use crate::types::{DType, GemmTypes};
use crate::vulkan::device::{self as vulkan_device, EnabledFeatures};
use crate::vulkan::dispatch::{gemm_bindings, PushConstants, VulkanKernels};
use crate::vulkan::prepared::PreparedDispatch;
use crate::vulkan::properties;

/// The cooperative-matrix backend of one Vulkan device.
#[derive(Debug)]
pub struct CoopmatBackend {
    kernels: VulkanKernels,
    info: CoopmatDeviceInfo,
    enabled: EnabledFeatures,
    max_workgroups: u32,
    storage_limits: wgpu::Limits,
    overrides: TuningOverrides,
    /// Stamps each dispatch while a GPU timing is under way.
    timer: Option<std::sync::Arc<crate::timing::GpuTimer>>,
}

/// Whether a shape keeps every tile row a whole number of 16-byte units (the kernel copies
/// and pads shared memory in 16-byte units).
fn shape_fits_kernel(shape: &CoopmatShape, types: GemmTypes) -> bool {
    let element = types.input.size_bytes() as u32;
    let accumulator = types.accumulate.size_bytes() as u32;
    [shape.m, shape.n, shape.k]
        .iter()
        .all(|d| (d * element).is_multiple_of(16))
        && (shape.n * accumulator).is_multiple_of(16)
}

impl CoopmatBackend {
    /// Sets the backend up on `device`, or says why it cannot be. `enabled` is what the
    /// device was opened with, when coopgemm opened it; otherwise it is inferred from wgpu.
    pub(crate) fn new(
        setup: &BackendSetup<'_>,
        queue: &wgpu::Queue,
        enabled: Option<EnabledFeatures>,
    ) -> std::result::Result<CoopmatBackend, String> {
        let device = setup.device;
        let mut info = properties::query(device)
            .ok_or_else(|| format!("not a Vulkan device ({:?})", device.adapter_info().backend))?;
        let enabled = enabled.unwrap_or_else(|| vulkan_device::enabled_by_wgpu(device));
        if enabled.emulated_cooperative_matrix {
            info = info.emulated();
            log::warn!(
                "coopmat backend: cooperative matrices EMULATED in software on {} (a test setting)",
                info.device_name
            );
        }
        if info.shapes.is_empty() {
            return Err(format!(
                "{} lists no VK_KHR_cooperative_matrix configuration",
                info.device_name
            ));
        }
        if !enabled.emulated_cooperative_matrix
            && (!enabled.cooperative_matrix || !enabled.vulkan_memory_model)
        {
            return Err("the device was opened without VK_KHR_cooperative_matrix and the Vulkan memory model (open it with Context::from_adapter, or see the README)".into());
        }
        let kernels = VulkanKernels::new(device, queue, enabled, setup.store)?;
        let limits = device.limits();
        Ok(CoopmatBackend {
            kernels,
            info,
            enabled,
            max_workgroups: limits.max_compute_workgroups_per_dimension,
            storage_limits: limits,
            overrides: TuningOverrides::new(setup.overrides),
            timer: setup.timer.clone(),
        })
    }

    /// The timestamps of the first `pairs` raw dispatches stamped during a GPU timing.
    pub(crate) fn read_timestamps(&self, pairs: u32) -> Result<Vec<[u64; 2]>> {
        self.kernels.read_timestamps(pairs)
    }

    /// The raw-Vulkan kernels (pipelines, descriptor sets, recording) this backend runs on,
    /// which the fused network kernel shares.
    pub(crate) fn raw_kernels(&self) -> &VulkanKernels {
        &self.kernels
    }

    /// `Ok` where the device can run 16×16×16 f16 × f16 → f32 subgroup matrices (real or
    /// emulated) with f16 storage: what the fused network kernel multiplies with.
    pub(crate) fn f16_tiles_16(&self) -> std::result::Result<(), String> {
        if let Some(feature) = self.missing_input_feature(DType::F16) {
            return Err(format!(
                "needs {feature}, which the device does not have enabled"
            ));
        }
        let f16 = Some(DType::F16);
        let f32 = Some(DType::F32);
        self.info
            .shapes
            .iter()
            .any(|s| {
                s.subgroup_scope
                    && !s.saturating
                    && (s.m, s.n, s.k) == (16, 16, 16)
                    && (s.a_type, s.b_type, s.c_type, s.result_type) == (f16, f16, f32, f32)
            })
            .then_some(())
            .ok_or_else(|| "the device lists no 16x16x16 f16 x f16 -> f32 subgroup matrix".into())
    }

    /// `Ok` where the cooperative-vector network kernel can run here: on the device's
    /// `VK_NV_cooperative_vector` (f16 × f16 matrices with an f16 bias into f16 results, in
    /// compute shaders), or on its software stand-in when the backend is emulated.
    pub(crate) fn cooperative_vectors(&self) -> std::result::Result<(), String> {
        if let Some(feature) = self.missing_input_feature(DType::F16) {
            return Err(format!(
                "needs {feature}, which the device does not have enabled"
            ));
        }
        if self.is_emulated() {
            return Ok(());
        }
        let Some(info) = &self.info.cooperative_vector else {
            return Err(format!(
                "{} does not list VK_NV_cooperative_vector",
                self.info.device_name
            ));
        };
        if !info.has_f16() {
            return Err("the device lists no f16 x f16 (f16 bias) -> f16 cooperative-vector combination for compute shaders".into());
        }
        if !self.enabled.cooperative_vector {
            return Err("the device was opened without VK_NV_cooperative_vector and VK_EXT_shader_replicated_composites (open it with Context::from_adapter, or see the README)".into());
        }
        Ok(())
    }

    /// What the device offers, as the backend sees it.
    pub fn device_info(&self) -> &CoopmatDeviceInfo {
        &self.info
    }

    /// What the device was opened with.
    pub fn enabled_features(&self) -> EnabledFeatures {
        self.enabled
    }

    /// One line saying what this backend can do here.
    pub fn describe(&self) -> String {
        let types: Vec<String> = self
            .supported_types()
            .iter()
            .map(|t| t.short_name())
            .collect();
        format!(
            "{}{}: subgroup {}, types [{}], driver bounds checks {}, cooperative vectors {}",
            self.info.device_name,
            if self.is_emulated() {
                " (EMULATED cooperative matrices: software multiply-add, for testing)"
            } else {
                ""
            },
            self.info.subgroup_size,
            types.join(", "),
            if self.enabled.unchecked_pipelines {
                "off (VK_EXT_pipeline_robustness)"
            } else {
                "on"
            },
            match (self.cooperative_vectors(), self.is_emulated()) {
                (Ok(()), true) => "EMULATED (stand-in)".to_string(),
                (Ok(()), false) => "yes".to_string(),
                (Err(why), _) => format!("no ({why})"),
            }
        )
    }

    /// Whether the kernels' matrix operations are emulated in software
    /// ([`ContextOptions::emulate_cooperative_matrix`](crate::ContextOptions)).
    pub fn is_emulated(&self) -> bool {
        self.enabled.emulated_cooperative_matrix
    }

    /// The KHR kernel's variants this backend runs: the real ones, or the emulated ones.
    fn variants(&self) -> &'static [KernelVariant] {
        if self.is_emulated() {
            EMULATED_VARIANTS
        } else {
            VARIANTS
        }
    }

    /// Type combinations this device can run on this backend.
    pub fn supported_types(&self) -> Vec<GemmTypes> {
        self.variants()
            .iter()
            .filter(|v| self.shape_for(v.types).is_ok())
            .map(|v| v.types)
            .collect()
    }

    fn variant(&self, types: GemmTypes) -> std::result::Result<KernelVariant, String> {
        self.variants()
            .iter()
            .copied()
            .find(|v| v.types == types)
            .ok_or_else(|| format!("no cooperative-matrix kernel computes {types}"))
    }

    /// The device feature inputs of type `input` need and the device was opened without,
    /// if any (both kernels need it).
    fn missing_input_feature(&self, input: DType) -> Option<&'static str> {
        let (enabled, feature) = match input {
            DType::F16 => (self.enabled.float16, "shaderFloat16 and 16-bit storage"),
            DType::BF16 => (self.enabled.bfloat16, "VK_KHR_shader_bfloat16"),
            DType::I8 => (self.enabled.int8, "shaderInt8 and 8-bit storage"),
            _ => (true, ""),
        };
        (!enabled).then_some(feature)
    }

    /// The cooperative-matrix shape used for `types`: the largest the device lists for them.
    pub fn shape_for(&self, types: GemmTypes) -> std::result::Result<CoopmatShape, String> {
        self.variant(types)?;
        if let Some(feature) = self.missing_input_feature(types.input) {
            return Err(format!(
                "{types} needs {feature}, which the device does not have enabled"
            ));
        }
        let want = Some(types.input);
        let forced_shape = self.overrides.shape.as_ref();
        self.info
            .shapes
            .iter()
            .filter(|s| {
                s.subgroup_scope
                    && !s.saturating
                    && s.a_type == want
                    && s.b_type == want
                    && s.c_type == Some(types.accumulate)
                    && s.result_type == Some(types.accumulate)
                    && shape_fits_kernel(s, types)
                    && s.m <= 16
                    && s.n <= 16
                    && forced_shape.is_none_or(|f| *f == [s.m, s.n, s.k])
            })
            .max_by_key(|s| (s.m * s.n * s.k, s.n))
            .copied()
            .ok_or_else(|| {
                format!("the device lists no usable cooperative-matrix shape for {types}")
            })
    }

    fn subgroup_size(&self) -> u32 {
        self.info
            .subgroup_size
            .clamp(self.info.min_subgroup_size, self.info.max_subgroup_size)
    }

    /// The kernel and configuration used for a description: the skinny kernel for GEMMs of
    /// at most [`KernelOverrides::skinny_rows`](crate::KernelOverrides::skinny_rows) rows
    /// (unless a tile or tiling is forced); otherwise the `VK_NV_cooperative_matrix2`
    /// kernel where the device has it for these types (it is the faster on NVIDIA, see
    /// `docs/benchmarks.md`; `COOPGEMM_COOPMAT2=0` turns it off), the
    /// `VK_KHR_cooperative_matrix` kernel otherwise.
    pub fn plan(&self, gemm: &ResolvedGemm) -> std::result::Result<CoopmatPlan, String> {
        // GEMMs of a dozen to 64 rows on the coopmat2 kernel's few-row tiles, fewer rows
        // streaming B once on the skinny kernel.
        if let Some(few_rows) = self.few_rows_plan(gemm) {
            return Ok(few_rows);
        }
        if let Some(skinny) = self.skinny_plan(gemm) {
            return Ok(skinny);
        }
        let plans = self.preferred_plans(gemm)?;
        // A tile or tiling forced by the environment, wherever it fits (so that tests run it
        // on every edge case); otherwise the largest tile that still gives the GPU enough
        // workgroups to fill it, and for small problems the smallest tile (candidates are
        // listed largest first).
        if let Some(forced) = plans.iter().find(|plan| self.overrides.forces(plan)) {
            return Ok(*forced);
        }
        let (m, n) = (gemm.gemm.m as u64, gemm.gemm.n as u64);
        let workgroups = |plan: &CoopmatPlan| {
            m.div_ceil(plan.block_m() as u64)
                * n.div_ceil(plan.block_n() as u64)
                * gemm.gemm.batch as u64
        };
        plans
            .iter()
            .find(|plan| workgroups(plan) >= plan.min_workgroups())
            .or(plans.last())
            .copied()
            .ok_or_else(|| "no configuration fits".to_string())
    }

    /// Every configuration that can run `gemm` on the kernel `plan` would use (coopmat2
    /// where usable, else the KHR kernel), largest tile first.
    fn preferred_plans(
        &self,
        gemm: &ResolvedGemm,
    ) -> std::result::Result<Vec<CoopmatPlan>, String> {
        if self.uses_coopmat2() {
            let plans = self.workgroup_scope_configs(gemm);
            if !plans.is_empty() {
                return Ok(plans.into_iter().map(CoopmatPlan::WorkgroupScope).collect());
            }
        }
        self.subgroup_plans(gemm)
    }

    /// Whether the coopmat2 kernel may run: the device has it and the caller did not turn
    /// it off (`KernelOverrides::coopmat2`).
    fn uses_coopmat2(&self) -> bool {
        self.enabled.cooperative_matrix2 && !self.overrides.without_coopmat2
    }

    fn subgroup_plans(&self, gemm: &ResolvedGemm) -> std::result::Result<Vec<CoopmatPlan>, String> {
        Ok(self
            .subgroup_configs(gemm)?
            .into_iter()
            .map(CoopmatPlan::Subgroup)
            .collect())
    }

    /// Every configuration that can run `gemm`: the preferred kernel's (as [`Self::plan`]
    /// picks from), then, where that is the coopmat2 kernel, the KHR kernel's too, so that
    /// tuning chooses between the two kernels by measurement.
    pub fn plans(&self, gemm: &ResolvedGemm) -> std::result::Result<Vec<CoopmatPlan>, String> {
        let skinny = self.skinny_plans(gemm);
        let mut plans = match self.preferred_plans(gemm) {
            Ok(plans) => plans,
            Err(_) if !skinny.is_empty() => Vec::new(),
            Err(reason) => return Err(reason),
        };
        if matches!(plans.first(), Some(CoopmatPlan::WorkgroupScope(_))) {
            // The other K unroll of each coopmat2 tile (unless one is forced), then the KHR
            // kernel's configurations.
            if self.overrides.k_unroll.is_none() {
                let other_unrolls: Vec<CoopmatPlan> = plans
                    .iter()
                    .filter_map(|plan| match plan {
                        CoopmatPlan::WorkgroupScope(config) => Some(config),
                        _ => None,
                    })
                    .flat_map(|config| {
                        WorkgroupScopeConfig::K_UNROLLS
                            .into_iter()
                            .filter(|unroll| *unroll != config.k_unroll)
                            .map(|k_unroll| {
                                CoopmatPlan::WorkgroupScope(WorkgroupScopeConfig {
                                    k_unroll,
                                    ..*config
                                })
                            })
                    })
                    .collect();
                plans.extend(other_unrolls);
            }
            plans.extend(self.subgroup_plans(gemm).unwrap_or_default());
        }
        Ok(skinny.into_iter().chain(plans).collect())
    }

    /// The coopmat2 kernel on a few-row tile
    /// ([`WorkgroupScopeConfig::few_rows_tile`](crate::config::WorkgroupScopeConfig::few_rows_tile)),
    /// where one takes `gemm`, no skinny row count, tile or tiling is forced, and the
    /// device's coopmat2 shape fits the tile (it is then the last of the coopmat2
    /// candidates). The planner splits it along K (`AutoSplit::FEW_ROWS`).
    fn few_rows_plan(&self, gemm: &ResolvedGemm) -> Option<CoopmatPlan> {
        let g = &gemm.gemm;
        if !WorkgroupScopeConfig::takes_few_rows(g.m, g.types)
            || self.overrides.skinny_rows.is_some()
            || self.overrides.forces_a_tile()
            || !self.uses_coopmat2()
        {
            return None;
        }
        self.workgroup_scope_configs(gemm)
            .into_iter()
            .find(WorkgroupScopeConfig::is_few_rows_tile)
            .map(CoopmatPlan::WorkgroupScope)
    }

    /// The skinny kernel's configuration for `gemm` without tuning: the heuristic's where it
    /// fits the device, else the first candidate that does (see [`Self::skinny_plans`]).
    /// Computed without listing every candidate: planning runs on every GEMM.
    fn skinny_plan(&self, gemm: &ResolvedGemm) -> Option<CoopmatPlan> {
        let (variant, b_row_major) = self.skinny_variant(gemm)?;
        let g = &gemm.gemm;
        let heuristic = SkinnyConfig::heuristic(
            variant,
            g.m,
            g.n,
            g.batch,
            b_row_major,
            self.subgroup_size(),
        );
        if self.skinny_fits(gemm, &heuristic) {
            return Some(CoopmatPlan::Skinny(heuristic));
        }
        self.skinny_plans(gemm).into_iter().next()
    }

    /// The skinny kernel's configurations for `gemm`, the heuristic's first; none where
    /// it does not take the GEMM: more rows than
    /// [`KernelOverrides::skinny_rows`](crate::KernelOverrides::skinny_rows), a forced tile
    /// or tiling of the other kernels, B in column panels, types without a variant or a
    /// feature, or a grid the device cannot launch.
    fn skinny_plans(&self, gemm: &ResolvedGemm) -> Vec<CoopmatPlan> {
        let Some((variant, b_row_major)) = self.skinny_variant(gemm) else {
            return Vec::new();
        };
        let g = &gemm.gemm;
        SkinnyConfig::candidates(
            variant,
            g.m,
            g.n,
            g.batch,
            b_row_major,
            self.subgroup_size(),
        )
        .into_iter()
        .filter(|config| self.skinny_fits(gemm, config))
        .map(CoopmatPlan::Skinny)
        .collect()
    }

    /// The skinny kernel's variant for `gemm`'s types and whether B is row-major, where the
    /// kernel takes the GEMM (see [`Self::skinny_plans`]).
    fn skinny_variant(&self, gemm: &ResolvedGemm) -> Option<(KernelVariant, bool)> {
        let g = &gemm.gemm;
        let variants = if self.is_emulated() {
            SKINNY_EMULATED_VARIANTS
        } else {
            SKINNY_VARIANTS
        };
        let variant = variants.iter().find(|v| v.types == g.types)?;
        let max_rows = self
            .overrides
            .skinny_rows
            .unwrap_or(SkinnyConfig::DEFAULT_MAX_ROWS);
        if g.m > max_rows
            || self.overrides.forces_a_tile()
            || gemm.b.order.panel_width().is_some()
            || self.missing_input_feature(g.types.input).is_some()
        {
            return None;
        }
        Some((*variant, gemm.b.order == Order::RowMajor))
    }

    /// Whether the device runs `config` on `gemm`: workgroup size, shared memory, grid.
    fn skinny_fits(&self, gemm: &ResolvedGemm, config: &SkinnyConfig) -> bool {
        config.workgroup_size() <= self.info.max_workgroup_invocations
            && config.shared_memory_bytes() <= self.info.shared_memory_bytes
            && row_block_grid(gemm, (config.block_m, config.block_n), self.grid_limits()).is_ok()
    }

    /// The most workgroups a dispatch may have along each dimension.
    fn grid_limits(&self) -> [u32; 3] {
        self.info
            .max_workgroup_count
            .map(|count| count.min(self.max_workgroups))
    }

    fn workgroup_scope_configs(&self, gemm: &ResolvedGemm) -> Vec<WorkgroupScopeConfig> {
        self.workgroup_scope_configs_or_none(gemm)
            .unwrap_or_default()
    }

    fn workgroup_scope_configs_or_none(
        &self,
        gemm: &ResolvedGemm,
    ) -> Option<Vec<WorkgroupScopeConfig>> {
        let types = gemm.gemm.types;
        let variant = WORKGROUP_SCOPE_VARIANTS
            .iter()
            .copied()
            .find(|v| v.types == types)?;
        if self.missing_input_feature(types.input).is_some() {
            return None;
        }
        let want = [
            Some(types.input),
            Some(types.input),
            Some(types.accumulate),
            Some(types.accumulate),
        ];
        let max_invocations = match self.info.workgroup_scope_max_invocations {
            0 => self.info.max_workgroup_invocations,
            limit => limit.min(self.info.max_workgroup_invocations),
        };
        // The largest workgroup the device offers for these types (more subgroups per
        // tile), unless the forced tile names another.
        let offered = self.info.flexible_shapes.iter().filter(|s| {
            s.workgroup_scope && s.types == want && s.workgroup_invocations <= max_invocations
        });
        let shape = match self.overrides.workgroup_size {
            Some(invocations) => offered
                .clone()
                .find(|s| s.workgroup_invocations == invocations)
                .or_else(|| {
                    log::warn!(
                        "no coopmat2 shape for {invocations} invocations; using the largest"
                    );
                    offered.max_by_key(|s| s.workgroup_invocations)
                })?,
            None => offered.max_by_key(|s| s.workgroup_invocations)?,
        };
        let max_dimension = if self.info.flexible_max_dimension == 0 {
            u32::MAX
        } else {
            self.info.flexible_max_dimension
        };
        let forced = self.overrides.workgroup_tile;
        let fitting: Vec<WorkgroupScopeConfig> = forced
            .into_iter()
            .chain(
                WorkgroupScopeConfig::candidates(types, gemm.b.order == Order::ColumnMajor)
                    .iter()
                    .copied()
                    .chain(WorkgroupScopeConfig::few_rows_tile(gemm.gemm.m, types))
                    .filter(|tile| Some(*tile) != forced),
            )
            .filter(|&(bm, bn, bk)| {
                bm % shape.m_granularity == 0
                    && bn % shape.n_granularity == 0
                    && gemm.b.order.panel_width().is_none_or(|w| bn == w)
                    && bk % shape.k_granularity == 0
                    && bm.max(bn).max(bk) <= max_dimension
            })
            .map(|(block_m, block_n, block_k)| WorkgroupScopeConfig {
                variant,
                block_m,
                block_n,
                block_k,
                workgroup_size: shape.workgroup_invocations,
                k_unroll: self.overrides.k_unroll.unwrap_or(
                    WorkgroupScopeConfig::default_k_unroll(gemm.gemm.k, block_k, types.input),
                ),
            })
            .collect();
        Some(fitting)
    }

    fn subgroup_configs(
        &self,
        gemm: &ResolvedGemm,
    ) -> std::result::Result<Vec<CoopmatConfig>, String> {
        let types = gemm.gemm.types;
        let variant = self.variant(types)?;
        let shape = self.shape_for(types)?;
        let subgroup_size = self.subgroup_size();
        let a_row_major = gemm.a.order == Order::RowMajor;
        let b_row_major = gemm.b.order != Order::ColumnMajor;
        let panel_width = gemm.b.order.panel_width();
        let fits = |config: &CoopmatConfig| {
            config.workgroup_size() <= self.info.max_workgroup_invocations
                && config.shared_memory_bytes(a_row_major, b_row_major)
                    <= self.info.shared_memory_bytes
        };
        let forced = self.overrides.tiling;
        let fitting: Vec<CoopmatConfig> = forced
            .into_iter()
            .chain(
                CoopmatTiling::candidates(types)
                    .iter()
                    .copied()
                    .filter(|tiling| Some(*tiling) != forced),
            )
            .map(|tiling| CoopmatConfig {
                variant,
                shape,
                subgroup_size,
                tiling,
            })
            .filter(fits)
            .filter(|config| panel_width.is_none_or(|w| config.block_n() == w))
            .collect();
        if fitting.is_empty() {
            return Err(match panel_width {
                Some(w) => format!("no cooperative-matrix tiling is {w} columns wide (B's panels)"),
                None => format!(
                    "no tiling fits {} bytes of shared memory",
                    self.info.shared_memory_bytes
                ),
            });
        }
        Ok(fitting)
    }

    /// `config`'s plan, checked against what can run `gemm`, and its pipeline.
    fn build(
        &self,
        gemm: &ResolvedGemm,
        config: &KernelConfig,
    ) -> Result<(CoopmatPlan, ash::vk::Pipeline)> {
        // The heuristic's own plan (what untuned GEMMs run) is checked without listing
        // every candidate: this runs on every GEMM.
        let plan = match config {
            KernelConfig::Coopmat(plan)
                if self.plan(gemm).is_ok_and(|p| p == *plan)
                    || self.plans(gemm).is_ok_and(|p| p.contains(plan)) =>
            {
                *plan
            }
            other => return Err(unusable_config(BackendKind::Coopmat, other)),
        };
        let key = self.pipeline_key(&plan, gemm);
        let pipeline = self.kernels.pipeline(&key, plan.variant().spirv)?;
        Ok((plan, pipeline))
    }

    /// `config`'s pipeline for `gemm`, the ranges it binds, its push constants and its grid;
    /// `None` for a GEMM with nothing to compute.
    fn dispatch(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        config: &KernelConfig,
    ) -> Result<Option<Dispatch>> {
        let plan = BindingPlan::new(gemm, buffers, &self.storage_limits)?;
        let (config, pipeline) = self.build(gemm, config)?;
        let limits = self.grid_limits();
        let tile = (config.block_m(), config.block_n());
        let grid = match config {
            CoopmatPlan::Skinny(_) => row_block_grid(gemm, tile, limits)?,
            _ => tile_grid(gemm, tile, limits)?,
        };
        if gemm.is_empty() {
            return Ok(None);
        }
        let push = PushConstants {
            m: gemm.gemm.m,
            n: gemm.gemm.n,
            k: gemm.gemm.k,
            lda: uniform_u32(gemm.a.leading_dimension),
            ldb: match gemm.b.order {
                Order::ColumnPanels { width } => width,
                _ => uniform_u32(gemm.b.leading_dimension),
            },
            ldc: uniform_u32(gemm.c.leading_dimension),
            a_offset: plan.a.first_element,
            b_offset: plan.b.first_element,
            c_offset: plan.c.first_element,
            a_batch_stride: uniform_u32(gemm.a.batch_stride),
            b_batch_stride: uniform_u32(gemm.b.batch_stride),
            c_batch_stride: uniform_u32(gemm.c.batch_stride),
            alpha: gemm.gemm.alpha,
            beta: gemm.gemm.beta,
            bias_offset: plan.bias.map_or(0, |bias| bias.first_element),
            b_panel_stride: uniform_u32(gemm.b.panel_stride()),
            activation: gemm.gemm.epilogue.activation.shader_code(),
            bias_axis: gemm.gemm.epilogue.bias_code(),
        };
        Ok(Some(Dispatch {
            pipeline,
            plan,
            push,
            grid,
        }))
    }

    /// The dispatch of `gemm` with `config` on `buffers`, bound once for many launches
    /// ([`crate::PreparedGemm`]); `None` for a GEMM with nothing to compute.
    pub(crate) fn prepare_dispatch(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        config: &KernelConfig,
    ) -> Result<Option<PreparedDispatch>> {
        let Some(dispatch) = self.dispatch(gemm, buffers, config)? else {
            return Ok(None);
        };
        self.kernels
            .prepare_dispatch(
                dispatch.pipeline,
                &gemm_bindings(buffers, &dispatch.plan),
                dispatch.push,
                dispatch.grid,
            )
            .map(Some)
    }

    /// GEMMs recorded whose completion has not been observed yet (for leak checks).
    pub fn in_flight(&self) -> usize {
        self.kernels.in_flight()
    }

    /// Raw Vulkan objects held: (pipelines, descriptor pools, events). Flat over time.
    pub fn object_counts(&self) -> (usize, usize, usize) {
        self.kernels.object_counts()
    }
}

/// One GEMM's dispatch: its pipeline, the ranges it binds, its push constants and grid.
struct Dispatch {
    pipeline: ash::vk::Pipeline,
    plan: BindingPlan,
    push: PushConstants,
    grid: [u32; 3],
}

impl Backend for CoopmatBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Coopmat
    }

    fn supports(&self, gemm: &ResolvedGemm) -> std::result::Result<(), String> {
        self.plan(gemm).map(|_| ())
    }

    fn records_into_shared_encoder(&self) -> bool {
        false
    }

    fn choose(&self, gemm: &ResolvedGemm) -> Result<KernelConfig> {
        self.plan(gemm)
            .map(KernelConfig::Coopmat)
            .map_err(|reason| Error::Unsupported {
                backend: BackendKind::Coopmat,
                reason,
            })
    }

    fn candidates(&self, gemm: &ResolvedGemm) -> Vec<KernelConfig> {
        self.plans(gemm)
            .map(|plans| plans.into_iter().map(KernelConfig::Coopmat).collect())
            .unwrap_or_default()
    }

    fn prepare(&self, gemm: &ResolvedGemm, config: &KernelConfig) -> Result<()> {
        self.build(gemm, config).map(drop)
    }

    fn record(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
        config: &KernelConfig,
    ) -> Result<()> {
        let Target::CommandBuffers(list) = target else {
            return Err(Error::Unsupported {
                backend: BackendKind::Coopmat,
                reason: "raw Vulkan commands cannot share a wgpu encoder; use Context::record or Context::run".into(),
            });
        };
        let Some(Dispatch {
            pipeline,
            plan,
            push,
            grid,
        }) = self.dispatch(gemm, buffers, config)?
        else {
            return Ok(());
        };
        let timestamp_pair = self
            .timer
            .as_ref()
            .and_then(|timer| timer.claim_raw(self.kernels.has_timestamps()));
        list.extend(self.kernels.record_raw(
            pipeline,
            &gemm_bindings(buffers, &plan),
            bytemuck::bytes_of(&push),
            grid,
            timestamp_pair,
        )?);
        Ok(())
    }
}
