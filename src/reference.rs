//! The CPU reference GEMM, in f64, and the tolerance a GPU result must meet.
//!
//! Tests and examples run every GPU GEMM against [`Reference`]. The reference reads the
//! same [`ResolvedGemm`] the kernels read, so it checks layouts, strides, offsets and
//! batches too. It reproduces the whole C array: elements the GEMM must not touch (gaps
//! between rows, other batches) are expected unchanged, with zero tolerance.

use crate::error::{Error, Operand, Result};
use crate::problem::ResolvedGemm;
use crate::types::{DType, Element};

/// Expected C contents and the allowed error per element.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Expected value of every element of the C array.
    pub expected: Vec<f64>,
    /// Allowed absolute error of every element.
    pub tolerance: Vec<f64>,
}

/// How a GPU result compared with the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Elements compared.
    pub checked: usize,
    /// Largest `|actual - expected| / max(|expected|, 1)` seen (for reports).
    pub max_relative_error: f64,
    /// Largest `|actual - expected| / tolerance` seen; below or at 1 means pass.
    pub worst_tolerance_ratio: f64,
    /// The first element outside its tolerance: (index, actual, expected, tolerance).
    pub first_mismatch: Option<(usize, f64, f64, f64)>,
    /// Number of elements outside their tolerance.
    pub mismatches: usize,
}

impl Comparison {
    /// Whether every element was within its tolerance.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }
}

impl Reference {
    /// Computes the reference for `gemm` from host arrays laid out as the description says.
    ///
    /// ```
    /// use coopgemm::{Gemm, Reference};
    /// let gemm = Gemm::new(2, 2, 2).resolve().unwrap();
    /// let a = [1.0f32, 2.0, 3.0, 4.0];
    /// let b = [1.0f32, 0.0, 0.0, 1.0];
    /// let c = [0.0f32; 4];
    /// let reference = Reference::compute(&gemm, &a, &b, &c).unwrap();
    /// assert_eq!(reference.expected, vec![1.0, 2.0, 3.0, 4.0]);
    /// assert!(reference.compare(&[1.0f32, 2.0, 3.0, 4.0]).passed());
    /// assert!(!reference.compare(&[1.0f32, 2.0, 3.0, 4.5]).passed());
    /// ```
    pub fn compute<I: Element, O: Element>(
        gemm: &ResolvedGemm,
        a: &[I],
        b: &[I],
        c: &[O],
    ) -> Result<Reference> {
        let types = gemm.gemm.types;
        for (operand, dtype) in [
            (Operand::A, I::DTYPE),
            (Operand::B, I::DTYPE),
            (Operand::C, O::DTYPE),
        ] {
            let wanted = if operand == Operand::C {
                types.output
            } else {
                types.input
            };
            if dtype != wanted {
                return Err(Error::HostTypeMismatch { operand, types });
            }
        }
        for (operand, len) in [
            (Operand::A, a.len()),
            (Operand::B, b.len()),
            (Operand::C, c.len()),
        ] {
            let needed = gemm.matrix(operand).required_elements();
            if (len as u64) < needed {
                return Err(Error::HostDataLength {
                    operand,
                    expected: needed,
                    actual: len as u64,
                });
            }
        }
        let alpha = gemm.gemm.alpha as f64;
        let beta = gemm.gemm.beta as f64;
        let accumulate_roundoff = types
            .accumulate
            .unit_roundoff()
            .max(DType::F32.unit_roundoff());
        let output_roundoff = types.output.unit_roundoff();
        let k = gemm.gemm.k;
        // Error bound for a sum of k products as the kernels form it (blocked partial sums):
        // a statistical bound for data of random sign, capped by the worst case (k + 2) u.
        let growth = ((k as f64) + 2.0).min(8.0 * (k as f64).sqrt() + 8.0);

        let mut expected: Vec<f64> = c.iter().map(|v| v.to_f64()).collect();
        let mut tolerance = vec![0.0; c.len()];
        let a_values: Vec<f64> = a.iter().map(|v| v.to_f64()).collect();
        let b_values: Vec<f64> = b.iter().map(|v| v.to_f64()).collect();
        for batch in 0..gemm.gemm.batch {
            for row in 0..gemm.gemm.m {
                for col in 0..gemm.gemm.n {
                    let mut sum = 0.0f64;
                    let mut magnitude = 0.0f64;
                    for l in 0..k {
                        let product = a_values[gemm.a.index(batch, row, l) as usize]
                            * b_values[gemm.b.index(batch, l, col) as usize];
                        sum += product;
                        magnitude += product.abs();
                    }
                    let index = gemm.c.index(batch, row, col) as usize;
                    let old = if beta == 0.0 {
                        0.0
                    } else {
                        beta * expected[index]
                    };
                    let exact = alpha * sum + old;
                    let value = if types.output.is_integer() {
                        exact.round().clamp(i32::MIN as f64, i32::MAX as f64)
                    } else {
                        exact
                    };
                    let bound = growth * accumulate_roundoff * alpha.abs() * magnitude
                        + 2.0 * accumulate_roundoff * (old.abs() + alpha.abs() * sum.abs())
                        + output_roundoff * value.abs();
                    // Integer sums are exact; scaling by a non-integer alpha/beta in float and
                    // converting back may round either way (or truncate): one unit of slack.
                    let integer_slack = if types.output.is_integer() { 1.0 } else { 0.0 };
                    expected[index] = value;
                    tolerance[index] = bound + integer_slack + f64::MIN_POSITIVE;
                }
            }
        }
        Ok(Reference {
            expected,
            tolerance,
        })
    }

    /// Compares a GPU result (the whole C array) with the reference.
    /// NaN must meet NaN, and infinities must match exactly.
    pub fn compare<O: Element>(&self, actual: &[O]) -> Comparison {
        let mut comparison = Comparison {
            checked: 0,
            max_relative_error: 0.0,
            worst_tolerance_ratio: 0.0,
            first_mismatch: None,
            mismatches: 0,
        };
        let count = self.expected.len().min(actual.len());
        for index in 0..count {
            let got = actual[index].to_f64();
            let want = self.expected[index];
            let tolerance = self.tolerance[index];
            comparison.checked += 1;
            let ok = if want.is_nan() || got.is_nan() {
                want.is_nan() && got.is_nan()
            } else if want.is_infinite() || got.is_infinite() {
                want == got
            } else {
                let error = (got - want).abs();
                comparison.max_relative_error = comparison
                    .max_relative_error
                    .max(error / want.abs().max(1.0));
                comparison.worst_tolerance_ratio =
                    comparison.worst_tolerance_ratio.max(error / tolerance);
                error <= tolerance
            };
            if !ok {
                comparison.mismatches += 1;
                if comparison.first_mismatch.is_none() {
                    comparison.first_mismatch = Some((index, got, want, tolerance));
                }
            }
        }
        if actual.len() != self.expected.len() {
            comparison.mismatches += 1;
        }
        comparison
    }
}
