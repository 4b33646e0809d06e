//! # coopgemm
//!
//! Fast matrix multiplication (GEMM) on any GPU that wgpu can drive, with a Vulkan
//! cooperative-matrix (tensor-core) fast path.
//!
//! - A portable **SIMT** backend: a tiled WGSL kernel that runs on every wgpu backend
//!   (Vulkan, Metal, DX12, GL) and on CPU drivers such as Mesa lavapipe.
//! - A **cooperative-matrix** backend (`coopmat`): GLSL `GL_KHR_cooperative_matrix` and
//!   `GL_NV_cooperative_matrix2` kernels compiled to SPIR-V, driven with ash through wgpu's
//!   Vulkan HAL on the same device and buffers.
//! - A **WGSL cooperative-matrix** backend (`wgsl-coopmat`): a WGSL kernel on wgpu's own
//!   experimental cooperative matrices (Vulkan and Metal), recorded with plain wgpu.
//!
//! The three sit behind one internal backend interface; a [`Context`] picks one per GEMM
//! from what the device offers ([`Selection`] says which and why, [`Plan`] the whole
//! decision), and can be told which to use ([`BackendChoice`]).
//!
//! ## Environment variables
//!
//! Only [`ContextOptions::from_env`] and [`ContextOptions::with_env`] read coopgemm's
//! `COOPGEMM_*` variables (and wgpu's `WGPU_BACKEND`, `WGPU_ADAPTER_NAME`, `WGPU_DEBUG`,
//! `WGPU_VALIDATION`); a bad value is an [`Error::InvalidOption`]. [`ContextOptions::default`],
//! [`Context::new`], [`Context::from_adapter`] and [`Context::from_wgpu`] read none, except
//! that the default disk cache ([`DiskCache::Default`]) finds its directory in
//! `COOPGEMM_CACHE_DIR`, `XDG_CACHE_HOME` or `HOME` (as does [`DiskCache::directory`]).
//! `docs/api.md` lists the public items and why each exists.
//!
//! ```no_run
//! use coopgemm::{testing::Reference, Context, Gemm, GemmTypes, MatrixLayout};
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
mod diagnostics;
mod disk_cache;
mod epilogue;
mod error;
mod gpu_time;
mod host;
mod kind;
mod lifecycle;
mod memo;
pub mod mlp;
mod open;
mod options;
mod packing;
mod planner;
mod prepared;
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

// The public surface: what a caller needs to describe, plan and run GEMMs, at the root;
// kernel configurations in `config`, device facts in `device_info`, the test harness in
// `testing`. docs/api.md lists every public item and why it exists.
pub use backend::{BackendKind, KernelConfig, KernelInfo, KernelOverrides};
pub use backends::BackendStatus;
pub use bindings::GemmBuffers;
pub use context::{Context, RecordedGemm, SubmittedGemm};
pub use disk_cache::DiskCache;
pub use epilogue::{Activation, Bias, BiasAxis, Epilogue};
pub use error::{Error, Operand, Result};
pub use host::HOST_BUFFER_USAGES;
pub use mlp::{
    LayerWeights, Mlp, MlpActivation, MlpBuffers, MlpDesc, MlpGrouping, MlpIo, MlpKernel,
    MlpLayout, MlpPlan, RecordedMlp, MAX_MLP_SETS, MAX_MLP_WIDTH,
};
pub use options::{AutotuneChoice, BackendChoice, ContextOptions, SplitKChoice, StageBChoice};
pub use packing::PackedB;
pub use planner::Plan;
pub use prepared::{PreparedGemm, PreparedMlp, PreparedWork};
pub use problem::{Gemm, MatrixLayout, Order};
pub use selection::Selection;
pub use split_k::SplitK;
pub use types::{DType, Element, GemmTypes};

/// The kernel configurations of each backend: what a [`KernelConfig`] holds, what
/// [`KernelOverrides`] forces, and how their names parse. The same types exist on every
/// platform, including those where the Vulkan cooperative-matrix backend is not built.
pub mod config {
    pub use crate::backend::coopmat::{
        CoopmatConfig, CoopmatPlan, CoopmatTiling, DecodeConfig, DecodeTile, KernelVariant,
        SkinnyConfig, SkinnyProduct, SkinnyTile, WorkgroupScopeConfig, WorkgroupScopeTile,
    };
    pub use crate::backend::simt::SimtConfig;
    pub use crate::backend::wgsl_coopmat::WgslCoopConfig;
    pub use crate::types::{CoopShape, CoopmatShape};
}

pub mod device_info;
pub mod testing;

/// The README's Rust examples, compiled as doctests so they cannot go stale.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The Rust examples of `docs/usage.md`, compiled as doctests like the README's.
#[doc = include_str!("../docs/usage.md")]
#[cfg(doctest)]
pub struct UsageDoctests;

/// The Rust examples of `docs/networks.md`, compiled as doctests like the README's.
#[doc = include_str!("../docs/networks.md")]
#[cfg(doctest)]
pub struct NetworksDoctests;
