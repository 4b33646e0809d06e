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
mod decode;
mod forced;
mod planning;

pub use config::*;
pub use decode::{DecodeConfig, DecodeTile};
pub(crate) use forced::TuningOverrides;
pub use forced::{SkinnyTile, WorkgroupScopeTile};

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
                bytemuck::bytes_of(&dispatch.push),
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
