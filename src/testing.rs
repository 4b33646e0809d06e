//! The test harness coopgemm's own tests, examples and benchmarks check GEMMs with, public
//! so that a caller can check results on their own device the same way: a reference GEMM
//! computed on the CPU in f64 ([`Reference`]), the comparison with per-type tolerances
//! ([`Comparison`]), reproducible sample data ([`sample_data`], [`sample_values`]), the
//! resolved form of a description that the reference reads ([`ResolvedGemm`], from
//! [`Gemm::resolve`](crate::Gemm::resolve)), and the planner's thresholds, for tests that
//! predict its choices; for networks, [`MlpReference`] and [`sample_set_indices`]. Not needed to run GEMMs or networks.
//!
//! ```no_run
//! use coopgemm::testing::{sample_data, Reference, SampleData};
//! use coopgemm::{Context, Gemm};
//! let context = Context::new_blocking()?;
//! let gemm = Gemm::new(64, 32, 128);
//! let a: Vec<f32> = sample_data(SampleData::FullMantissa, 64 * 128, 1);
//! let b: Vec<f32> = sample_data(SampleData::FullMantissa, 128 * 32, 2);
//! let c = vec![0.0f32; 64 * 32];
//! let result = context.multiply(&gemm, &a, &b, &c)?;
//! let reference = Reference::compute(&gemm.resolve()?, &a, &b, &c)?;
//! assert!(reference.compare(&result).passed());
//! # Ok::<(), coopgemm::Error>(())
//! ```

pub use crate::mlp::MlpReference;
pub use crate::problem::{ResolvedBias, ResolvedGemm, ResolvedMatrix};
pub use crate::reference::{
    sample_data, sample_set_indices, sample_values, Comparison, Reference, SampleData,
};
pub use crate::selection::COOPMAT_MIN_MULTIPLY_ADDS;
pub use crate::staging::STAGE_B_MIN_ROWS;
