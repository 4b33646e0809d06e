//! The CPU reference of a network, in f64, with the error each output may carry.

use crate::error::{Error, Operand, Result};
use crate::kind::MlpKernel;
use crate::mlp::desc::{LayerWeights, MlpDesc};
use crate::mlp::rows::MlpLayout;
use crate::reference::Reference;
use crate::types::{DType, Element};

/// The f64 reference of a network's output array, as a [`Reference`] (expected values,
/// tolerances, [`Reference::compare`]).
///
/// The expected value is the network evaluated exactly on the input as stored and the f16
/// weights. The tolerance of each output is a bound propagated through the layers for any
/// kernel that keeps the semantics of [`crate::mlp`]: the input rounded to f16 (where it is
/// f32), sums of `k + 1` terms in f32, each layer's sum rounded to f16 before its activation
/// (the cooperative-vector kernel, whose matrix-vector products have f16 results),
/// activations evaluated in f32 (within a few units in the last place), hidden activations
/// rounded to f16, the output rounded to its type. [`MlpReference::compute_for`] leaves out
/// the rounding of the sums for the kernels that keep them in f32. A missing bias, a wrong
/// activation, a product rounded to f16 or an element of another row is far outside it.
/// Elements of the output array outside the rows' widths are expected unchanged, with zero
/// tolerance.
#[derive(Debug)]
pub struct MlpReference;

const F32_ROUNDOFF: f64 = 5.960_464_477_539_063e-8;
const F16_ROUNDOFF: f64 = 4.882_812_5e-4;
/// Absolute error of rounding to f16 near zero (half the smallest subnormal).
const F16_UNDERFLOW: f64 = 2.980_232_238_769_531_2e-8;
/// Relative error of an activation's exp and division in f32.
const ACTIVATION_ROUNDOFF: f64 = 8.0 * F32_ROUNDOFF;

impl MlpReference {
    /// The reference of `desc` with `weights` on `input`, for an output array whose contents
    /// before the run are `output` (both laid out as `layout` says).
    ///
    /// ```
    /// use coopgemm::testing::MlpReference;
    /// use coopgemm::{LayerWeights, MlpActivation, MlpDesc, MlpLayout};
    /// let desc = MlpDesc::new(2).layer(1, MlpActivation::Relu);
    /// let weights = [LayerWeights::from_f32(&[1.0, -2.0], &[0.5])];
    /// let reference = MlpReference::compute(&desc, &weights, &MlpLayout::new(&desc, 2), &[3.0f32, 1.0, 1.0, 1.0], &[0.0f32; 2]).unwrap();
    /// assert_eq!(reference.expected, vec![1.5, 0.0]);
    /// ```
    pub fn compute<I: Element, O: Element>(
        desc: &MlpDesc,
        weights: &[LayerWeights],
        layout: &MlpLayout,
        input: &[I],
        output: &[O],
    ) -> Result<Reference> {
        // The loosest of the kernels' bounds: the cooperative-vector kernel's.
        Self::compute_for(MlpKernel::Coopvec, desc, weights, layout, input, output)
    }

    /// [`MlpReference::compute`] with the tolerance of one kernel: the sums rounded to f16
    /// before each activation only for [`MlpKernel::Coopvec`].
    pub fn compute_for<I: Element, O: Element>(
        kernel: MlpKernel,
        desc: &MlpDesc,
        weights: &[LayerWeights],
        layout: &MlpLayout,
        input: &[I],
        output: &[O],
    ) -> Result<Reference> {
        Self::compute_sets_for(kernel, desc, &[weights], None, layout, input, output)
    }

    /// [`MlpReference::compute_for`] of a network with several weight sets: row `r` is
    /// evaluated with set `indices[r]` (set 0 for every row where `indices` is `None`); a
    /// row whose index is not below `sets.len()` is not evaluated, its output expected
    /// unchanged (as the kernels leave it).
    pub fn compute_sets_for<I: Element, O: Element>(
        kernel: MlpKernel,
        desc: &MlpDesc,
        sets: &[&[LayerWeights]],
        indices: Option<&[u32]>,
        layout: &MlpLayout,
        input: &[I],
        output: &[O],
    ) -> Result<Reference> {
        let f16_sums = kernel == MlpKernel::Coopvec;
        desc.validate()?;
        if sets.is_empty() {
            return Err(Error::MlpSets {
                sets: 0,
                limit: crate::mlp::MAX_MLP_SETS,
            });
        }
        for (set, weights) in sets.iter().enumerate() {
            desc.check_weights(set, weights)?;
        }
        if let Some(indices) = indices {
            if indices.len() < layout.rows as usize {
                return Err(Error::HostDataLength {
                    operand: Operand::SetIndices,
                    expected: u64::from(layout.rows),
                    actual: indices.len() as u64,
                });
            }
        }
        layout.check(desc)?;
        for (operand, needed, actual) in [
            (Operand::Input, layout.input_elements(desc), input.len()),
            (Operand::Output, layout.output_elements(desc), output.len()),
        ] {
            if (actual as u64) < needed {
                return Err(Error::HostDataLength {
                    operand,
                    expected: needed,
                    actual: actual as u64,
                });
            }
        }
        let mut expected: Vec<f64> = output.iter().map(|v| v.to_f64()).collect();
        let mut tolerance = vec![0.0; output.len()];
        let input_rounding = if I::DTYPE == DType::F16 {
            0.0
        } else {
            F16_ROUNDOFF
        };
        let output_rounding = if O::DTYPE == DType::F16 {
            F16_ROUNDOFF
        } else {
            F32_ROUNDOFF
        };
        let (in_width, out_width) = (desc.input_width() as usize, desc.output_width() as usize);
        for row in 0..layout.rows as usize {
            let set = indices.map_or(0, |indices| indices[row] as usize);
            let Some(weights) = sets.get(set) else {
                continue;
            };
            let start = layout.input_offset as usize + row * layout.input_stride as usize;
            let x: Vec<f64> = input[start..start + in_width]
                .iter()
                .map(|v| v.to_f64())
                .collect();
            let error: Vec<f64> = x
                .iter()
                .map(|v| input_rounding * v.abs() + F16_UNDERFLOW)
                .collect();
            let (y, bound) = evaluate(desc, weights, x, error, output_rounding, f16_sums);
            let start = layout.output_offset as usize + row * layout.output_stride as usize;
            expected[start..start + out_width].copy_from_slice(&y);
            tolerance[start..start + out_width].copy_from_slice(&bound);
        }
        let checked = vec![true; output.len()];
        Ok(Reference {
            expected,
            tolerance,
            checked,
        })
    }
}

/// One row through the network: the exact outputs and their error bounds, from the exact
/// input `h` and the bound `error` of what a kernel reads of it; `f16_sums` where each
/// layer's sum is rounded to f16 before its activation.
fn evaluate(
    desc: &MlpDesc,
    weights: &[LayerWeights],
    mut h: Vec<f64>,
    mut error: Vec<f64>,
    output_rounding: f64,
    f16_sums: bool,
) -> (Vec<f64>, Vec<f64>) {
    for (layer, parameters) in weights.iter().enumerate() {
        let (inputs, outputs) = desc.layer_shape(layer);
        let activation = desc.activations()[layer];
        let last = layer + 1 == desc.layers();
        let sum_roundoff = f64::from(inputs + 1) * F32_ROUNDOFF * 1.01;
        let rounding = if last { output_rounding } else { F16_ROUNDOFF };
        let mut next = Vec::with_capacity(outputs as usize);
        let mut next_error = Vec::with_capacity(outputs as usize);
        for o in 0..outputs as usize {
            let row = &parameters.weights[o * inputs as usize..][..inputs as usize];
            let bias = parameters.bias[o].to_f64();
            let (mut z, mut magnitude, mut propagated) = (bias, bias.abs(), 0.0);
            for ((w, x), e) in row.iter().zip(&h).zip(&error) {
                let w = w.to_f64();
                z += w * x;
                magnitude += w.abs() * (x.abs() + e);
                propagated += w.abs() * e;
            }
            let mut z_error = propagated + sum_roundoff * magnitude;
            if f16_sums {
                z_error += F16_ROUNDOFF * (z.abs() + z_error) * 1.01 + F16_UNDERFLOW;
            }
            let value = activation.apply(z);
            let evaluation = if activation.code() >= 3 {
                ACTIVATION_ROUNDOFF * (z.abs() + z_error + value.abs())
            } else {
                0.0
            };
            let value_error = activation.lipschitz() * z_error + evaluation;
            next_error
                .push(value_error + rounding * (value.abs() + value_error) * 1.01 + F16_UNDERFLOW);
            next.push(value);
        }
        h = next;
        error = next_error;
    }
    (h, error)
}
