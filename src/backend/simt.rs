//! The portable backend: a WGSL tiled GEMM (`wgsl/gemm_simt.wgsl`) on plain wgpu.
//!
//! The kernel's tile sizes are WGSL `override` constants; [`SimtConfig::ALL`] names the
//! combinations the host picks from. Pipelines are built once per (configuration,
//! operand layout) and cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use super::{check_grid, Backend, BackendKind, KernelInfo, Target};
use crate::bindings::{BindingPlan, GemmBuffers};
use crate::error::{Error, Result};
use crate::problem::{Order, ResolvedGemm, ResolvedMatrix};
use crate::types::GemmTypes;

/// The WGSL source of the SIMT kernel.
pub const SIMT_WGSL: &str = include_str!("../../wgsl/gemm_simt.wgsl");

/// One tile configuration of the SIMT kernel.
///
/// ```
/// use coopgemm::backend::simt::SimtConfig;
/// let large = SimtConfig::by_name("128x128x8-t8x8").unwrap();
/// assert_eq!(large.workgroup_size(), 256);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimtConfig {
    /// Short name, `TILE_MxTILE_NxTILE_K-tTHREAD_MxTHREAD_N`.
    pub name: &'static str,
    /// Rows of C per workgroup.
    pub tile_m: u32,
    /// Columns of C per workgroup.
    pub tile_n: u32,
    /// K depth of one workgroup-memory stage.
    pub tile_k: u32,
    /// Rows of C per invocation (4 or 8).
    pub thread_m: u32,
    /// Columns of C per invocation (4 or 8).
    pub thread_n: u32,
}

impl SimtConfig {
    /// Every named configuration.
    pub const ALL: [SimtConfig; 7] = [
        SimtConfig {
            name: "128x128x16-t8x8",
            tile_m: 128,
            tile_n: 128,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "128x128x8-t8x8",
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "128x64x16-t8x8",
            tile_m: 128,
            tile_n: 64,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "64x128x16-t8x8",
            tile_m: 64,
            tile_n: 128,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "64x64x16-t8x8",
            tile_m: 64,
            tile_n: 64,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "64x64x8-t4x4",
            tile_m: 64,
            tile_n: 64,
            tile_k: 8,
            thread_m: 4,
            thread_n: 4,
        },
        SimtConfig {
            name: "32x32x16-t4x4",
            tile_m: 32,
            tile_n: 32,
            tile_k: 16,
            thread_m: 4,
            thread_n: 4,
        },
    ];

    /// Finds a configuration by name.
    pub fn by_name(name: &str) -> Option<SimtConfig> {
        SimtConfig::ALL
            .into_iter()
            .find(|config| config.name == name)
    }

    /// Invocations per workgroup.
    pub const fn workgroup_size(&self) -> u32 {
        (self.tile_m / self.thread_m) * (self.tile_n / self.thread_n)
    }

    /// Bytes of workgroup memory the configuration uses (two stages of A and B, padded).
    pub const fn workgroup_memory_bytes(&self) -> u32 {
        2 * self.tile_k * ((self.tile_m / 4 + 1) + (self.tile_n / 4 + 1)) * 16
    }

    /// Checks the constraints the kernel relies on; `Err` says which one fails.
    pub fn check(&self, limits: &wgpu::Limits) -> std::result::Result<(), String> {
        let size = self.workgroup_size();
        if ![4, 8].contains(&self.thread_m) || ![4, 8].contains(&self.thread_n) {
            return Err("thread tile must be 4 or 8 each way".into());
        }
        if !self.tile_m.is_multiple_of(self.thread_m) || !self.tile_n.is_multiple_of(self.thread_n)
        {
            return Err("tile must hold whole invocation blocks".into());
        }
        for loads in [self.tile_m * self.tile_k, self.tile_n * self.tile_k] {
            if loads % size != 0 || loads / size > 16 {
                return Err("each invocation must stage 1..=16 elements per operand".into());
            }
        }
        if size > limits.max_compute_invocations_per_workgroup
            || size > limits.max_compute_workgroup_size_x
        {
            return Err(format!("{size} invocations exceed the device limit"));
        }
        if self.workgroup_memory_bytes() > limits.max_compute_workgroup_storage_size {
            return Err(format!(
                "{} bytes of workgroup memory exceed the device's {}",
                self.workgroup_memory_bytes(),
                limits.max_compute_workgroup_storage_size
            ));
        }
        Ok(())
    }

    /// The pipeline-overridable constants for this configuration and operand layout.
    pub fn constants(
        &self,
        a_k_contiguous: bool,
        b_k_contiguous: bool,
    ) -> Vec<(&'static str, f64)> {
        vec![
            ("TILE_M", self.tile_m as f64),
            ("TILE_N", self.tile_n as f64),
            ("TILE_K", self.tile_k as f64),
            ("THREAD_M", self.thread_m as f64),
            ("THREAD_N", self.thread_n as f64),
            ("WORKGROUP_SIZE", self.workgroup_size() as f64),
            ("A_K_CONTIGUOUS", if a_k_contiguous { 1.0 } else { 0.0 }),
            ("B_K_CONTIGUOUS", if b_k_contiguous { 1.0 } else { 0.0 }),
        ]
    }
}

/// The kernel's uniform block; mirrors `Params` in `gemm_simt.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct SimtParams {
    m: u32,
    n: u32,
    k: u32,
    padding0: u32,
    a_first: u32,
    a_outer_stride: u32,
    a_k_stride: u32,
    a_batch_stride: u32,
    b_first: u32,
    b_outer_stride: u32,
    b_k_stride: u32,
    b_batch_stride: u32,
    c_first: u32,
    c_row_stride: u32,
    c_col_stride: u32,
    c_batch_stride: u32,
    alpha: f32,
    beta: f32,
    padding1: [u32; 2],
}

/// A stride as the kernel's 32-bit arithmetic sees it. Strides larger than `u32::MAX` only
/// occur when they are never multiplied by a non-zero index (binding checks guarantee it).
fn stride32(stride: u64) -> u32 {
    stride.min(u32::MAX as u64) as u32
}

impl SimtParams {
    fn new(gemm: &ResolvedGemm, plan: &BindingPlan) -> SimtParams {
        // A is addressed as (row = outer, k); B as (col = outer, k).
        let (a_outer, a_k) = (gemm.a.row_stride(), gemm.a.col_stride());
        let (b_k, b_outer) = (gemm.b.row_stride(), gemm.b.col_stride());
        SimtParams {
            m: gemm.gemm.m,
            n: gemm.gemm.n,
            k: gemm.gemm.k,
            padding0: 0,
            a_first: plan.a.first_element,
            a_outer_stride: stride32(a_outer),
            a_k_stride: stride32(a_k),
            a_batch_stride: stride32(gemm.a.batch_stride),
            b_first: plan.b.first_element,
            b_outer_stride: stride32(b_outer),
            b_k_stride: stride32(b_k),
            b_batch_stride: stride32(gemm.b.batch_stride),
            c_first: plan.c.first_element,
            c_row_stride: stride32(gemm.c.row_stride()),
            c_col_stride: stride32(gemm.c.col_stride()),
            c_batch_stride: stride32(gemm.c.batch_stride),
            alpha: gemm.gemm.alpha,
            beta: gemm.gemm.beta,
            padding1: [0; 2],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PipelineKey {
    config: SimtConfig,
    a_k_contiguous: bool,
    b_k_contiguous: bool,
}

/// The SIMT backend of one device.
#[derive(Debug)]
pub struct SimtBackend {
    device: wgpu::Device,
    limits: wgpu::Limits,
    is_cpu: bool,
    module: wgpu::ShaderModule,
    bind_group_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Mutex<HashMap<PipelineKey, Arc<wgpu::ComputePipeline>>>,
    forced_config: Option<SimtConfig>,
    /// Persisted driver cache the pipelines are built with (set by the context).
    pub(crate) pipeline_cache: Option<crate::vulkan::pipeline_cache::WgpuPipelineCache>,
}

fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Whether consecutive k of an operand are adjacent in memory.
fn k_contiguous(matrix: &ResolvedMatrix, k_is_column: bool) -> bool {
    match matrix.order {
        Order::RowMajor => k_is_column,
        Order::ColumnMajor => !k_is_column,
    }
}

impl SimtBackend {
    /// Builds the backend for a device. `is_cpu` selects configurations suited to CPU drivers.
    pub fn new(device: &wgpu::Device, is_cpu: bool) -> SimtBackend {
        let descriptor = wgpu::ShaderModuleDescriptor {
            label: Some("coopgemm simt"),
            source: wgpu::ShaderSource::Wgsl(SIMT_WGSL.into()),
        };
        // Without runtime checks: naga's bounds clamps on every workgroup-memory access cost
        // more than half of the kernel's speed on NVIDIA (12.8 vs 29.8 TFLOP/s at 4096³),
        // and the kernel's own range checks already keep every index in bounds.
        let module = crate::vulkan::trusted_shader_module(device, descriptor);
        let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("coopgemm simt"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: wgpu::BufferSize::new(
                            std::mem::size_of::<SimtParams>() as u64
                        ),
                    },
                    count: None,
                },
                storage_entry(1, true),
                storage_entry(2, true),
                storage_entry(3, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("coopgemm simt"),
            bind_group_layouts: &[Some(&bind_group_layout)],
            immediate_size: 0,
        });
        let forced_config = std::env::var("COOPGEMM_SIMT_CONFIG").ok().and_then(|name| {
            let config = SimtConfig::by_name(&name);
            if config.is_none() {
                log::warn!("COOPGEMM_SIMT_CONFIG={name} names no SIMT configuration; ignoring it");
            }
            config
        });
        SimtBackend {
            device: device.clone(),
            limits: device.limits(),
            is_cpu,
            module,
            bind_group_layout,
            pipeline_layout,
            pipelines: Mutex::new(HashMap::new()),
            forced_config,
            pipeline_cache: None,
        }
    }

    /// The configuration this backend uses for a description.
    pub fn choose_config(&self, gemm: &ResolvedGemm) -> SimtConfig {
        if let Some(config) = self.forced_config.filter(|c| c.check(&self.limits).is_ok()) {
            return config;
        }
        let (m, n) = (gemm.gemm.m as u64, gemm.gemm.n as u64);
        let preferred: &[&str] = if m * n >= 512 * 512 {
            &[
                "128x128x8-t8x8",
                "64x64x16-t8x8",
                "64x64x8-t4x4",
                "32x32x16-t4x4",
            ]
        } else if m * n >= 128 * 128 || self.is_cpu {
            &["64x64x16-t8x8", "64x64x8-t4x4", "32x32x16-t4x4"]
        } else {
            &["32x32x16-t4x4", "64x64x8-t4x4"]
        };
        preferred
            .iter()
            .filter_map(|name| SimtConfig::by_name(name))
            .chain(SimtConfig::ALL)
            .find(|config| config.check(&self.limits).is_ok())
            .unwrap_or(SimtConfig::ALL[3])
    }

    fn pipeline(&self, key: PipelineKey) -> Result<Arc<wgpu::ComputePipeline>> {
        let mut pipelines = self
            .pipelines
            .lock()
            .map_err(|_| Error::Pipeline("pipeline cache poisoned".into()))?;
        if let Some(pipeline) = pipelines.get(&key) {
            return Ok(pipeline.clone());
        }
        key.config.check(&self.limits).map_err(Error::Pipeline)?;
        let constants = key.config.constants(key.a_k_contiguous, key.b_k_contiguous);
        log::debug!(
            "simt: building pipeline {} (A k-contiguous {}, B k-contiguous {})",
            key.config.name,
            key.a_k_contiguous,
            key.b_k_contiguous
        );
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(key.config.name),
                layout: Some(&self.pipeline_layout),
                module: &self.module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    // Every workgroup-memory element is written before it is read.
                    zero_initialize_workgroup_memory: false,
                },
                cache: self.pipeline_cache.as_ref().map(|cache| cache.cache()),
            });
        if let Some(cache) = &self.pipeline_cache {
            cache.save();
        }
        let pipeline = Arc::new(pipeline);
        pipelines.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    fn key(&self, gemm: &ResolvedGemm) -> PipelineKey {
        PipelineKey {
            config: self.choose_config(gemm),
            a_k_contiguous: k_contiguous(&gemm.a, true),
            b_k_contiguous: k_contiguous(&gemm.b, false),
        }
    }

    fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
    ) -> Result<KernelInfo> {
        let plan = BindingPlan::new(gemm, buffers, &self.limits)?;
        let key = self.key(gemm);
        let config = key.config;
        let grid = [
            gemm.gemm.n.div_ceil(config.tile_n),
            gemm.gemm.m.div_ceil(config.tile_m),
            gemm.gemm.batch,
        ];
        check_grid(grid, [self.limits.max_compute_workgroups_per_dimension; 3])?;
        let info = KernelInfo {
            backend: BackendKind::Simt,
            config: config.name.to_string(),
        };
        if gemm.is_empty() {
            return Ok(info);
        }
        let pipeline = self.pipeline(key)?;
        let params = SimtParams::new(gemm, &plan);
        let params_buffer = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("coopgemm simt params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coopgemm simt"),
            layout: &self.bind_group_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params_buffer.as_entire_binding(),
                },
                plan.a.bind_group_entry(1, buffers.a),
                plan.b.bind_group_entry(2, buffers.b),
                plan.c.bind_group_entry(3, buffers.c),
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("coopgemm simt"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
        Ok(info)
    }
}

impl Backend for SimtBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Simt
    }

    fn supports(&self, gemm: &ResolvedGemm) -> std::result::Result<(), String> {
        if gemm.gemm.types != GemmTypes::F32 {
            return Err(format!(
                "the SIMT kernel computes f32 only, not {}",
                gemm.gemm.types
            ));
        }
        Ok(())
    }

    fn records_into_shared_encoder(&self) -> bool {
        true
    }

    fn prepare(&self, gemm: &ResolvedGemm) -> Result<KernelInfo> {
        let key = self.key(gemm);
        self.pipeline(key)?;
        Ok(KernelInfo {
            backend: BackendKind::Simt,
            config: key.config.name.to_string(),
        })
    }

    fn record(
        &self,
        gemm: &ResolvedGemm,
        buffers: &GemmBuffers<'_>,
        target: Target<'_>,
    ) -> Result<KernelInfo> {
        match target {
            Target::Encoder(encoder) => self.encode(encoder, gemm, buffers),
            Target::CommandBuffers(list) => {
                let mut encoder =
                    self.device
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("coopgemm simt"),
                        });
                let info = self.encode(&mut encoder, gemm, buffers)?;
                list.push(encoder.finish());
                Ok(info)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every named configuration, with every operand layout, parses, validates and
    /// specialises with naga, and fits the default limits where it claims to.
    #[test]
    fn every_configuration_validates_with_naga() {
        let module = naga::front::wgsl::parse_str(SIMT_WGSL)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string(SIMT_WGSL)));
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(SIMT_WGSL)));
        let limits = wgpu::Limits {
            // What discrete GPUs offer; CPU drivers (lavapipe: 32 KiB) skip the configs that exceed it.
            max_compute_workgroup_storage_size: 49152,
            ..wgpu::Limits::default()
        };
        for config in SimtConfig::ALL {
            config
                .check(&limits)
                .unwrap_or_else(|e| panic!("{}: {e}", config.name));
            for (a_k, b_k) in [(false, false), (false, true), (true, false), (true, true)] {
                let mut constants = naga::back::PipelineConstants::default();
                for (name, value) in config.constants(a_k, b_k) {
                    constants.insert(name.to_string(), value);
                }
                let (specialised, specialised_info) =
                    naga::back::pipeline_constants::process_overrides(
                        &module,
                        &info,
                        Some((naga::ShaderStage::Compute, "main")),
                        &constants,
                    )
                    .unwrap_or_else(|e| panic!("{}: {e:?}", config.name));
                let workgroup_bytes: u32 = specialised
                    .global_variables
                    .iter()
                    .filter(|(_, var)| var.space == naga::AddressSpace::WorkGroup)
                    .map(|(_, var)| specialised.types[var.ty].inner.size(specialised.to_ctx()))
                    .sum();
                assert_eq!(
                    workgroup_bytes,
                    config.workgroup_memory_bytes(),
                    "{}",
                    config.name
                );
                let entry = &specialised.entry_points[0];
                assert_eq!(
                    entry.workgroup_size,
                    [config.workgroup_size(), 1, 1],
                    "{}",
                    config.name
                );
                drop(specialised_info);
            }
        }
    }

    #[test]
    fn configuration_constraints_reject_bad_tiles() {
        let limits = wgpu::Limits::default();
        let bad = SimtConfig {
            name: "bad",
            tile_m: 48,
            tile_n: 64,
            tile_k: 8,
            thread_m: 8,
            thread_n: 8,
        };
        assert!(bad.check(&limits).is_err());
        let too_big = SimtConfig {
            name: "big",
            tile_m: 256,
            tile_n: 256,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        };
        assert!(too_big.check(&limits).is_err());
    }
}
