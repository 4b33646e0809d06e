//! Fused small-MLP inference: a whole network evaluated in one dispatch per run.
//!
//! The workload cooperative vectors exist for: many small multilayer perceptrons evaluated
//! per pixel, sample or token (neural materials, radiance caches, small classifiers). Run
//! layer by layer through GEMMs, every hidden activation goes to memory and back; fused, a
//! workgroup keeps its rows' activations on chip through every layer and only the input is
//! read and the output written.
//!
//! - [`MlpDesc`]: the layer widths and each layer's [`MlpActivation`].
//! - [`LayerWeights`]: one layer's weights (`out × in`, row-major, as `torch.nn.Linear`
//!   stores them) and bias, kept as f16.
//! - [`Context::build_mlp`](crate::Context::build_mlp) checks both and uploads the weights
//!   once, in the layout of every kernel the device can run, into an [`Mlp`].
//! - [`Context::build_mlp_sets`](crate::Context::build_mlp_sets) builds a network with
//!   several weight sets (one per material); a run takes a set index per row
//!   ([`MlpBuffers::with_set_indices`], [`MlpGrouping`]).
//! - [`Context::run_mlp`](crate::Context::run_mlp) evaluates it on `rows` rows of f16 or f32
//!   input into f16 or f32 output ([`MlpBuffers`], [`MlpIo`]);
//!   [`Context::record_mlp`](crate::Context::record_mlp) records a run for the caller to
//!   submit, with others ([`RecordedMlp`]);
//!   [`Context::plan_mlp`](crate::Context::plan_mlp) says which kernel runs and why
//!   ([`MlpPlan`]).
//!
//! Semantics, on every kernel: `h₀ = x`, `hₗ₊₁ = actₗ(Wₗ · hₗ + bₗ)` with the weights and
//! biases rounded to f16, products summed in f32 or wider, and hidden activations kept in
//! f16 or wider between layers (the tensor-core kernels round them to f16, as
//! tiny-cuda-nn's fully fused MLP does). [`MlpReference`] computes the same in f64 with
//! the error bound those roundings allow.

// Where the raw-Vulkan interop is not built (see build.rs), `coopmat_absent.rs` and
// `coopvec_absent.rs` stand in.
#[cfg_attr(not(vulkan_interop), path = "coopmat_absent.rs")]
mod coopmat;
#[cfg_attr(not(vulkan_interop), path = "coopvec_absent.rs")]
mod coopvec;
mod desc;
mod kernel;
mod reference;
mod rows;
mod run;
mod sets;
mod simt;

pub use crate::kind::MlpKernel;
pub use desc::{LayerWeights, MlpActivation, MlpDesc, MAX_MLP_SETS, MAX_MLP_WIDTH};
pub use kernel::MlpPlan;
pub use reference::MlpReference;
pub(crate) use rows::BoundRows;
pub use rows::{MlpBuffers, MlpIo, MlpLayout};
pub use run::{Mlp, RecordedMlp};
pub use sets::MlpGrouping;
pub(crate) use sets::{RunOutput, RunTarget};
