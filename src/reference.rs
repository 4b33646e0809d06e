//! The CPU reference GEMM, in f64, and the tolerance a GPU result must meet.
//!
//! Tests and examples run every GPU GEMM against [`Reference`]. The reference reads the
//! same [`ResolvedGemm`] the kernels read, so it checks layouts, strides, offsets and
//! batches too. It reproduces the whole C array: elements the GEMM must not touch (gaps
//! between rows, other batches) are expected unchanged, with zero tolerance.

use crate::epilogue::{Activation, BiasAxis};
use crate::error::Result;
use crate::problem::ResolvedGemm;
use crate::types::{DType, Element};

/// Reproducible pseudo-random test data whose products are exact in every element type:
/// multiples of 1/16 in [-1, 1) for float types, integers in [-8, 8) for integer types.
/// Only the summation can then round, which makes the reference comparison sharp.
///
/// ```
/// let values: Vec<half::f16> = coopgemm::testing::sample_values(4, 7);
/// assert!(values.iter().all(|v| v.to_f32().abs() <= 1.0));
/// assert_eq!(values, coopgemm::testing::sample_values::<half::f16>(4, 7));
/// ```
pub fn sample_values<T: Element>(count: usize, seed: u64) -> Vec<T> {
    xorshift(seed)
        .take(count)
        .map(|state| {
            let unit = (state >> 40) as f64 / (1u64 << 24) as f64; // [0, 1)
            let value = if T::DTYPE.is_integer() {
                (unit * 16.0).floor() - 8.0
            } else {
                ((unit * 32.0).floor() - 16.0) / 16.0
            };
            T::from_f64_lossy(value)
        })
        .collect()
}

/// `count` reproducible weight-set indices in `0..sets` (`sets` ≥ 1), uniform: a per-row set
/// index for networks with several weight sets, rows assigned a set at random.
///
/// ```
/// let indices = coopgemm::testing::sample_set_indices(1000, 16, 7);
/// assert!(indices.iter().all(|&set| set < 16));
/// assert!((0..16).all(|set| indices.contains(&set)));
/// ```
pub fn sample_set_indices(count: usize, sets: u32, seed: u64) -> Vec<u32> {
    xorshift(seed)
        .take(count)
        .map(|state| ((state >> 16) % u64::from(sets.max(1))) as u32)
        .collect()
}

/// The xorshift64 stream from `seed` (any seed, 0 included).
fn xorshift(seed: u64) -> impl Iterator<Item = u64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::iter::repeat_with(move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    })
}

/// Which kind of test data [`sample_data`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleData {
    /// [`sample_values`]: every product exact in every type, so only the summation rounds.
    /// Sharp on summation order and layouts, blind to products or sums rounded too early.
    ExactProducts,
    /// Uniform in [-1, 1), rounded to the element type: every mantissa bit in use, so a
    /// kernel, driver or emulation that rounds products or partial sums to a narrower type
    /// than the one the GEMM accumulates in misses the reference's tolerance.
    FullMantissa,
    /// Full-mantissa values of magnitude 128 to 512 (integers: the type's full range):
    /// f16 products then overflow f16 but not f32, so a GEMM that sums f16 inputs in f32
    /// must not turn them into infinities. Meant for f32 outputs.
    LargeMagnitude,
}

impl SampleData {
    /// Every kind.
    pub const ALL: [SampleData; 3] = [
        SampleData::ExactProducts,
        SampleData::FullMantissa,
        SampleData::LargeMagnitude,
    ];

    /// A short name for logs.
    pub fn name(self) -> &'static str {
        match self {
            SampleData::ExactProducts => "exact-products",
            SampleData::FullMantissa => "full-mantissa",
            SampleData::LargeMagnitude => "large-magnitude",
        }
    }
}

/// Reproducible pseudo-random test data of the given kind (see [`SampleData`]).
///
/// ```
/// use coopgemm::testing::{sample_data, SampleData};
/// let values: Vec<half::f16> = sample_data(SampleData::FullMantissa, 64, 7);
/// // Not all multiples of 1/16: the low mantissa bits are in use.
/// assert!(values.iter().any(|v| (v.to_f32() * 16.0).fract() != 0.0));
/// let large: Vec<half::f16> = sample_data(SampleData::LargeMagnitude, 64, 7);
/// assert!(large.iter().all(|v| (128.0..=512.0).contains(&v.to_f32().abs())));
/// ```
pub fn sample_data<T: Element>(data: SampleData, count: usize, seed: u64) -> Vec<T> {
    if data == SampleData::ExactProducts {
        return sample_values(count, seed);
    }
    let mut state = seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
    (0..count)
        .map(|_| {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let bits = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
            let unit = (bits >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
            let signed = unit * 2.0 - 1.0; // [-1, 1)
            let value = match (T::DTYPE, data) {
                (DType::I8, _) => (unit * 256.0).floor() - 128.0,
                (DType::I32, _) => (unit * 65536.0).floor() - 32768.0,
                (_, SampleData::LargeMagnitude) => signed.signum() * (128.0 + 384.0 * signed.abs()),
                _ => signed,
            };
            T::from_f64_lossy(value)
        })
        .collect()
}

/// Expected C contents and the allowed error per element.
#[derive(Debug, Clone)]
pub struct Reference {
    /// Expected value of every element of the C array.
    pub expected: Vec<f64>,
    /// Allowed absolute error of every element.
    pub tolerance: Vec<f64>,
    /// Whether each element is compared (all, or the sampled ones of [`Reference::sampled`]).
    pub checked: Vec<bool>,
}

/// How a GPU result compared with the reference.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// use coopgemm::{testing::Reference, Gemm};
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
        Reference::compute_with_bias(gemm, a, b, c, None)
    }

    /// [`Reference::compute`] for a GEMM whose epilogue reads a bias vector.
    ///
    /// ```
    /// use coopgemm::{testing::Reference, Activation, BiasAxis, Gemm};
    /// let gemm = Gemm::new(1, 2, 1).bias(BiasAxis::PerColumn).activation(Activation::Relu);
    /// let reference =
    ///     Reference::compute_with_bias(&gemm.resolve().unwrap(), &[2.0f32], &[1.0, 1.0], &[0.0f32; 2], Some(&[1.0, -5.0]))
    ///         .unwrap();
    /// assert_eq!(reference.expected, vec![3.0, 0.0]);
    /// ```
    pub fn compute_with_bias<I: Element, O: Element>(
        gemm: &ResolvedGemm,
        a: &[I],
        b: &[I],
        c: &[O],
        bias: Option<&[f32]>,
    ) -> Result<Reference> {
        let (a_values, b_values, mut expected) = widen(gemm, a, b, c)?;
        gemm.check_host_bias(bias)?;
        let mut tolerance = vec![0.0; c.len()];
        let element = ElementReference::new(gemm, bias);
        for batch in 0..gemm.gemm.batch {
            for row in 0..gemm.gemm.m {
                for col in 0..gemm.gemm.n {
                    let index = gemm.c.index(batch, row, col) as usize;
                    (expected[index], tolerance[index]) =
                        element.compute(&a_values, &b_values, expected[index], batch, row, col);
                }
            }
        }
        let checked = vec![true; expected.len()];
        Ok(Reference {
            expected,
            tolerance,
            checked,
        })
    }

    /// Like [`Reference::compute`], but only for `samples` output elements spread over the
    /// whole C (always including its corners), for products too large to check in full on
    /// the CPU. Elements not sampled are not compared.
    pub fn sampled<I: Element, O: Element>(
        gemm: &ResolvedGemm,
        a: &[I],
        b: &[I],
        c: &[O],
        samples: usize,
    ) -> Result<Reference> {
        Reference::sampled_with_bias(gemm, a, b, c, None, samples)
    }

    /// [`Reference::sampled`] for a GEMM whose epilogue reads a bias vector.
    pub fn sampled_with_bias<I: Element, O: Element>(
        gemm: &ResolvedGemm,
        a: &[I],
        b: &[I],
        c: &[O],
        bias: Option<&[f32]>,
        samples: usize,
    ) -> Result<Reference> {
        let (a_values, b_values, mut expected) = widen(gemm, a, b, c)?;
        gemm.check_host_bias(bias)?;
        let mut tolerance = vec![0.0; c.len()];
        let mut checked = vec![false; c.len()];
        let (batches, m, n) = (
            gemm.gemm.batch as u64,
            gemm.gemm.m as u64,
            gemm.gemm.n as u64,
        );
        let total = batches * m * n;
        if total > 0 {
            let element = ElementReference::new(gemm, bias);
            let mut state = 0x2545_F491_4F6C_DD1Du64;
            let corners = [0, n - 1, (m - 1) * n, m * n - 1, total - 1];
            for sample in 0..samples as u64 {
                let flat = match corners.get(sample as usize) {
                    Some(corner) => *corner,
                    None => {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state % total
                    }
                };
                let (batch, row, col) = (
                    (flat / (m * n)) as u32,
                    ((flat / n) % m) as u32,
                    (flat % n) as u32,
                );
                let index = gemm.c.index(batch, row, col) as usize;
                let old = c[index].to_f64();
                (expected[index], tolerance[index]) =
                    element.compute(&a_values, &b_values, old, batch, row, col);
                checked[index] = true;
            }
        }
        Ok(Reference {
            expected,
            tolerance,
            checked,
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
        for (index, actual) in actual.iter().enumerate().take(self.expected.len()) {
            let got = actual.to_f64();
            let want = self.expected[index];
            let tolerance = self.tolerance[index];
            if !self.checked[index] {
                continue; // not sampled
            }
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
            comparison.checked += 1;
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

/// Checks host data against the description and widens it to f64.
fn widen<I: Element, O: Element>(
    gemm: &ResolvedGemm,
    a: &[I],
    b: &[I],
    c: &[O],
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    gemm.check_host_data(a, b, c)?;
    let to_f64 = |values: &[I]| values.iter().map(|v| v.to_f64()).collect::<Vec<f64>>();
    Ok((to_f64(a), to_f64(b), c.iter().map(|v| v.to_f64()).collect()))
}

/// Computes single elements of the reference, with their tolerance.
struct ElementReference<'a> {
    gemm: &'a ResolvedGemm,
    bias: Option<&'a [f32]>,
    activation: Activation,
    alpha: f64,
    beta: f64,
    integer_output: bool,
    accumulate_roundoff: f64,
    output_roundoff: f64,
    /// Absolute rounding below the normal ranges: of C's type, and of the partial sums.
    subnormal_roundoff: f64,
    growth: f64,
}

impl<'a> ElementReference<'a> {
    fn new(gemm: &'a ResolvedGemm, bias: Option<&'a [f32]>) -> Self {
        let types = gemm.gemm.types;
        let k = gemm.gemm.k as f64;
        ElementReference {
            gemm,
            bias,
            activation: gemm.gemm.epilogue.activation,
            alpha: gemm.gemm.alpha as f64,
            beta: gemm.gemm.beta as f64,
            integer_output: types.output.is_integer(),
            accumulate_roundoff: types
                .accumulate
                .unit_roundoff()
                .max(DType::F32.unit_roundoff()),
            output_roundoff: types.output.unit_roundoff(),
            subnormal_roundoff: types.output.subnormal_roundoff()
                + (k + 2.0) * types.accumulate.subnormal_roundoff(),
            // Error growth of a sum of k products as the kernels form it (blocked partial
            // sums): a statistical bound for data of random sign, capped by the worst case.
            growth: (k + 2.0).min(8.0 * k.sqrt() + 8.0),
        }
    }

    /// (expected value, tolerance) of C(batch, row, col) whose old value is `old`.
    fn compute(
        &self,
        a: &[f64],
        b: &[f64],
        old: f64,
        batch: u32,
        row: u32,
        col: u32,
    ) -> (f64, f64) {
        let gemm = self.gemm;
        let mut sum = 0.0f64;
        let mut magnitude = 0.0f64;
        for l in 0..gemm.gemm.k {
            let product =
                a[gemm.a.index(batch, row, l) as usize] * b[gemm.b.index(batch, l, col) as usize];
            sum += product;
            magnitude += product.abs();
        }
        let scaled_old = if self.beta == 0.0 {
            0.0
        } else {
            self.beta * old
        };
        let bias = match (self.gemm.gemm.epilogue.bias, self.gemm.bias, self.bias) {
            (Some(bias), Some(resolved), Some(values)) => {
                let position = match bias.axis {
                    BiasAxis::PerRow => row,
                    BiasAxis::PerColumn => col,
                };
                values[(resolved.offset + position as u64) as usize] as f64
            }
            _ => 0.0,
        };
        let exact = self.alpha * sum + scaled_old + bias;
        let value = if self.integer_output {
            exact.round().clamp(i32::MIN as f64, i32::MAX as f64)
        } else {
            self.activation.apply(exact)
        };
        let before_activation =
            self.growth * self.accumulate_roundoff * self.alpha.abs() * magnitude
                + 2.0
                    * self.accumulate_roundoff
                    * (scaled_old.abs() + self.alpha.abs() * sum.abs() + bias.abs());
        // The activation scales an input error by at most its slope, and its own f32
        // evaluation (exp, division) adds a few units of roundoff of its input.
        let activation_error = if self.activation == Activation::Identity {
            0.0
        } else {
            16.0 * DType::F32.unit_roundoff() * (exact.abs() + value.abs())
        };
        let bound = self.activation.max_slope() * before_activation
            + activation_error
            + self.output_roundoff * value.abs()
            + self.subnormal_roundoff;
        // Integer sums are exact, and every kernel keeps alpha 1 with beta 0 or 1 in integer
        // arithmetic (sum, or sum + C): no slack at all there. Scaling by another alpha or
        // beta in float and converting back may round either way (or truncate): one unit.
        if self.integer_output && self.alpha == 1.0 && (self.beta == 0.0 || self.beta == 1.0) {
            return (value, f64::MIN_POSITIVE);
        }
        let integer_slack = if self.integer_output { 1.0 } else { 0.0 };
        (value, bound + integer_slack + f64::MIN_POSITIVE)
    }
}

#[cfg(test)]
mod tests {
    //! The tolerances are sharp enough to catch the precision mistakes a kernel, driver or
    //! emulation can make: each deliberately lossy CPU GEMM below must fail them on
    //! full-mantissa data, while an honest f32-accumulating one passes.
    use super::*;
    use crate::problem::Gemm;
    use crate::types::GemmTypes;
    use half::{bf16, f16};

    /// How a CPU GEMM of row-major m x k by k x n forms each C element.
    #[derive(Clone, Copy, Debug)]
    enum Arithmetic {
        /// f32 products summed in f32, in order (what the kernels promise).
        Honest,
        /// Each product rounded to f16 before the f32 sum.
        ProductsInF16,
        /// Products and partial sums in f16.
        SumsInF16,
    }

    /// Row-major m x k times k x n, the inputs widened to f32 (exactly, for 16-bit types).
    fn cpu_gemm<I: Element>(
        m: usize,
        n: usize,
        k: usize,
        a: &[I],
        b: &[I],
        how: Arithmetic,
    ) -> Vec<f32> {
        let wide = |v: &[I]| v.iter().map(|x| x.to_f64() as f32).collect::<Vec<f32>>();
        let (a, b) = (wide(a), wide(b));
        let f16_round = |x: f32| f16::from_f32(x).to_f32();
        let mut c = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut sum = 0.0f32;
                for l in 0..k {
                    let product = a[i * k + l] * b[l * n + j];
                    sum = match how {
                        Arithmetic::Honest => sum + product,
                        Arithmetic::ProductsInF16 => sum + f16_round(product),
                        Arithmetic::SumsInF16 => f16_round(sum + f16_round(product)),
                    };
                }
                c[i * n + j] = sum;
            }
        }
        c
    }

    fn passes(types: GemmTypes, k: u32, data: SampleData, how: Arithmetic) -> bool {
        let (m, n) = (16u32, 16u32);
        let gemm = Gemm::new(m, n, k).types(types).resolve().unwrap();
        let a: Vec<f16> = sample_data(data, (m * k) as usize, 1);
        let b: Vec<f16> = sample_data(data, (k * n) as usize, 2);
        let c = cpu_gemm(m as usize, n as usize, k as usize, &a, &b, how);
        let reference = Reference::compute(&gemm, &a, &b, &vec![0.0f32; c.len()]).unwrap();
        reference.compare(&c).passed()
    }

    #[test]
    fn honest_f32_accumulation_passes() {
        for k in [1, 64, 256, 2048] {
            for data in SampleData::ALL {
                assert!(
                    passes(GemmTypes::F16_F32, k, data, Arithmetic::Honest),
                    "k {k} {data:?}"
                );
            }
        }
    }

    #[test]
    fn products_rounded_to_f16_fail() {
        for k in [16, 64, 256] {
            assert!(
                !passes(
                    GemmTypes::F16_F32,
                    k,
                    SampleData::FullMantissa,
                    Arithmetic::ProductsInF16
                ),
                "k {k}"
            );
        }
        // The exact-product data cannot see it: why the full-mantissa data exists.
        assert!(passes(
            GemmTypes::F16_F32,
            64,
            SampleData::ExactProducts,
            Arithmetic::ProductsInF16
        ));
    }

    #[test]
    fn f16_partial_sums_fail_an_f32_accumulating_gemm() {
        for k in [16, 64, 256, 2048] {
            assert!(
                !passes(
                    GemmTypes::F16_F32,
                    k,
                    SampleData::FullMantissa,
                    Arithmetic::SumsInF16
                ),
                "k {k}"
            );
        }
    }

    #[test]
    fn f16_overflow_fails_where_f32_sums_were_asked_for() {
        // Products of 128..512 reach 262144 > 65504: infinities in f16, fine in f32.
        assert!(!passes(
            GemmTypes::F16_F32,
            64,
            SampleData::LargeMagnitude,
            Arithmetic::ProductsInF16
        ));
        assert!(passes(
            GemmTypes::F16_F32,
            64,
            SampleData::LargeMagnitude,
            Arithmetic::Honest
        ));
    }

    #[test]
    fn bf16_outputs_truncated_instead_of_rounded_fail() {
        let (m, n, k) = (16u32, 16u32, 64u32);
        let gemm = Gemm::new(m, n, k)
            .types(GemmTypes::BF16_F32_BF16)
            .resolve()
            .unwrap();
        let a: Vec<bf16> = sample_data(SampleData::FullMantissa, (m * k) as usize, 3);
        let b: Vec<bf16> = sample_data(SampleData::FullMantissa, (k * n) as usize, 4);
        let sums = cpu_gemm(
            m as usize,
            n as usize,
            k as usize,
            &a,
            &b,
            Arithmetic::Honest,
        );
        let reference = Reference::compute(&gemm, &a, &b, &vec![bf16::ZERO; sums.len()]).unwrap();
        let rounded: Vec<bf16> = sums.iter().map(|&x| bf16::from_f32(x)).collect();
        let truncated: Vec<bf16> = sums
            .iter()
            .map(|&x| bf16::from_bits((x.to_bits() >> 16) as u16))
            .collect();
        assert!(reference.compare(&rounded).passed());
        assert!(!reference.compare(&truncated).passed());
    }
}
