//! # coopgemm
//!
//! Fast matrix multiplication (GEMM) on any GPU that wgpu can drive, with a Vulkan
//! cooperative-matrix (tensor-core) fast path.
//!
//! - A portable **SIMT** backend: a tiled WGSL kernel that runs on every wgpu backend
//!   (Vulkan, Metal, DX12, GL) and on CPU drivers such as Mesa lavapipe.
//! - A **cooperative-matrix** backend: a GLSL `GL_KHR_cooperative_matrix` kernel compiled to
//!   SPIR-V, driven with ash through wgpu's Vulkan HAL on the same device and buffers.
//!
//! Both implement [`Backend`]; a [`Context`] picks one per GEMM from what the device
//! offers ([`Selection`] says which and why), and can be told which to use.
//!
//! ```no_run
//! use coopgemm::{Context, Gemm, GemmTypes, MatrixLayout, Reference};
//!
//! let context = Context::new_blocking()?;
//! // C (64 x 32) = A (64 x 128, column-major) * B (128 x 32)
//! let gemm = Gemm::new(64, 32, 128).a(MatrixLayout::column_major()).types(GemmTypes::F32);
//! let a: Vec<f32> = (0..64 * 128).map(|i| (i % 7) as f32).collect();
//! let b: Vec<f32> = (0..128 * 32).map(|i| (i % 5) as f32).collect();
//! let c = vec![0.0f32; 64 * 32];
//! let result = context.multiply(&gemm, &a, &b, &c)?;
//! let reference = Reference::compute(&gemm.resolve()?, &a, &b, &c)?;
//! assert!(reference.compare(&result).passed());
//! # Ok::<(), coopgemm::Error>(())
//! ```
//!
//! On your own buffers and encoder:
//!
//! ```no_run
//! # let context = coopgemm::Context::new_blocking()?;
//! # let (a, b, c) = (context.upload("a", &[0f32; 16])?, context.upload("b", &[0f32; 16])?, context.upload("c", &[0f32; 16])?);
//! use coopgemm::{Gemm, GemmBuffers};
//! let gemm = Gemm::new(4, 4, 4);
//! let mut encoder = context.device().create_command_encoder(&Default::default());
//! context.encode(&mut encoder, &gemm, &GemmBuffers::new(&a, &b, &c ))?;
//! context.queue().submit([encoder.finish()]);
//! # Ok::<(), coopgemm::Error>(())
//! ```
#![warn(missing_docs)]
// Unsafe code lives in `vulkan` only (raw Vulkan interop, and the SIMT module built without
// wgpu's runtime checks); every block there says why it is sound.
#![deny(unsafe_code)]

mod autotune;
mod backend;
mod backends;
mod bindings;
mod context;
mod disk_cache;
mod epilogue;
mod error;
mod gpu_time;
mod host;
mod lifecycle;
mod memo;
mod open;
mod options;
mod packing;
mod planner;
mod problem;
mod reference;
mod scratch;
mod selection;
mod shader;
mod split_k;
mod staging;
mod timing;
mod types;
#[allow(unsafe_code)]
mod vulkan;

pub use backend::{Backend, BackendKind, KernelConfig, KernelInfo, KernelOverrides, Target};
pub use backends::BackendStatus;
pub use bindings::{GemmBuffers, MAX_ELEMENT_INDEX};
pub use context::{Context, RecordedGemm, SubmittedGemm};
pub use disk_cache::cache_key;
pub use epilogue::{Activation, Bias, BiasAxis, Epilogue};
pub use error::{Error, Operand, Result};
pub use host::HOST_BUFFER_USAGES;
pub use options::{
    AutotuneChoice, BackendChoice, ContextOptions, DiskCache, SplitKChoice, StageBChoice,
};
pub use packing::PackedB;
pub use planner::Plan;
pub use problem::{Gemm, MatrixLayout, Order, ResolvedBias, ResolvedGemm, ResolvedMatrix};
pub use reference::{sample_data, sample_values, Comparison, Reference, SampleData};
pub use selection::{Selection, COOPMAT_MIN_MULTIPLY_ADDS};
pub use split_k::SplitK;
pub use staging::STAGE_B_MIN_ROWS;
pub use types::{DType, Element, GemmTypes};

/// The kernel configurations of each backend: what a [`KernelConfig`] holds.
pub mod config {
    pub use crate::backend::coopmat::{
        CoopmatConfig, CoopmatPlan, CoopmatTiling, KernelVariant, WorkgroupScopeConfig,
        WorkgroupScopeTile,
    };
    pub use crate::backend::simt::SimtConfig;
    pub use crate::backend::wgsl_coopmat::{CoopShape, WgslCoopConfig};
    pub use crate::types::CoopmatShape;
}

/// What the backends know of the device (cooperative-matrix properties, enabled
/// extensions, raw object counts, the embedded SPIR-V variants), for `examples/info.rs` and
/// the tests through [`Context::coopmat`] and [`Context::wgsl_coopmat`]. Not part of the
/// stable API.
#[doc(hidden)]
pub mod introspection {
    pub use crate::backend::coopmat::CoopmatBackend;
    #[cfg(vulkan_interop)]
    pub use crate::backend::coopmat::{EMULATED_VARIANTS, VARIANTS, WORKGROUP_SCOPE_VARIANTS};
    pub use crate::backend::wgsl_coopmat::WgslCoopBackend;
    #[cfg(vulkan_interop)]
    pub use crate::vulkan::properties::CoopmatDeviceInfo;
    pub use crate::vulkan::EnabledFeatures;
}

/// The README's Rust examples, compiled as doctests so they cannot go stale.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
