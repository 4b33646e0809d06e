//! What a network is: its widths, activations and weights, checked before anything is
//! uploaded.

use std::fmt;

use half::f16;

use crate::error::{Error, Result};

/// The widest layer (input, hidden or output) any network kernel takes. Each kernel may
/// take less ([`MlpPlan`](crate::MlpPlan) says which kernels refuse a network and why).
pub const MAX_MLP_WIDTH: u32 = 256;

/// The most weight sets a network takes ([`Context::build_mlp_sets`](crate::Context::build_mlp_sets)):
/// the library's grouping pre-pass keeps a histogram of the sets in 8 KiB of workgroup
/// memory.
pub const MAX_MLP_SETS: usize = 2047;

/// The element-wise function after a layer's product and bias.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum MlpActivation {
    /// `x`.
    #[default]
    None,
    /// `max(x, 0)`.
    Relu,
    /// `x` for `x ≥ 0`, else `slope · x`.
    LeakyRelu(f32),
    /// GELU in its tanh form, `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
    Gelu,
    /// SiLU (swish), `x / (1 + e^(-x))`.
    Silu,
    /// The logistic function, `1 / (1 + e^(-x))`.
    Sigmoid,
}

impl MlpActivation {
    /// The number the kernels switch on.
    pub(crate) const fn code(self) -> u32 {
        match self {
            MlpActivation::None => 0,
            MlpActivation::Relu => 1,
            MlpActivation::LeakyRelu(_) => 2,
            MlpActivation::Gelu => 3,
            MlpActivation::Silu => 4,
            MlpActivation::Sigmoid => 5,
        }
    }

    /// The slope of [`MlpActivation::LeakyRelu`], 0 for the others.
    pub(crate) const fn slope(self) -> f32 {
        match self {
            MlpActivation::LeakyRelu(slope) => slope,
            _ => 0.0,
        }
    }

    /// A bound on `|act(x) - act(y)| / |x - y|`, used by the reference's error bound.
    pub(crate) fn lipschitz(self) -> f64 {
        match self {
            MlpActivation::None | MlpActivation::Relu => 1.0,
            MlpActivation::LeakyRelu(slope) => f64::from(slope.abs()).max(1.0),
            MlpActivation::Gelu => 1.13,
            MlpActivation::Silu => 1.1,
            MlpActivation::Sigmoid => 0.25,
        }
    }

    /// The function, evaluated in f64 (what [`MlpReference`](crate::testing::MlpReference) uses).
    ///
    /// ```
    /// use coopgemm::MlpActivation;
    /// assert_eq!(MlpActivation::LeakyRelu(0.125).apply(-8.0), -1.0);
    /// assert_eq!(MlpActivation::Sigmoid.apply(0.0), 0.5);
    /// ```
    pub fn apply(self, x: f64) -> f64 {
        match self {
            MlpActivation::None => x,
            MlpActivation::Relu => {
                if x.is_nan() {
                    x
                } else {
                    x.max(0.0)
                }
            }
            MlpActivation::LeakyRelu(slope) => {
                if x >= 0.0 || x.is_nan() {
                    x
                } else {
                    f64::from(slope) * x
                }
            }
            MlpActivation::Gelu => crate::Activation::Gelu.apply(x),
            MlpActivation::Silu => crate::Activation::Silu.apply(x),
            MlpActivation::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        }
    }

    /// Parses `none`, `relu`, `leaky-relu:SLOPE`, `gelu`, `silu` or `sigmoid`.
    ///
    /// ```
    /// use coopgemm::MlpActivation;
    /// assert_eq!(MlpActivation::parse("leaky-relu:0.01"), Some(MlpActivation::LeakyRelu(0.01)));
    /// assert_eq!(MlpActivation::parse("tanh"), None);
    /// ```
    pub fn parse(text: &str) -> Option<MlpActivation> {
        Some(match text {
            "none" | "identity" => MlpActivation::None,
            "relu" => MlpActivation::Relu,
            "gelu" => MlpActivation::Gelu,
            "silu" => MlpActivation::Silu,
            "sigmoid" => MlpActivation::Sigmoid,
            _ => MlpActivation::LeakyRelu(text.strip_prefix("leaky-relu:")?.parse().ok()?),
        })
    }
}

impl fmt::Display for MlpActivation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MlpActivation::None => f.write_str("none"),
            MlpActivation::Relu => f.write_str("relu"),
            MlpActivation::LeakyRelu(slope) => write!(f, "leaky-relu:{slope}"),
            MlpActivation::Gelu => f.write_str("gelu"),
            MlpActivation::Silu => f.write_str("silu"),
            MlpActivation::Sigmoid => f.write_str("sigmoid"),
        }
    }
}

/// A network's shape: the input width, then per layer its output width and activation.
///
/// ```
/// use coopgemm::{MlpActivation, MlpDesc};
/// // 64 -> 64 -> 64 -> 16, ReLU between layers, none after the last.
/// let desc = MlpDesc::new(64)
///     .layer(64, MlpActivation::Relu)
///     .layer(64, MlpActivation::Relu)
///     .layer(16, MlpActivation::None);
/// assert_eq!(desc.widths(), [64, 64, 64, 16]);
/// assert_eq!(desc.to_string(), "64-relu-64-relu-64-none-16");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MlpDesc {
    widths: Vec<u32>,
    activations: Vec<MlpActivation>,
}

impl MlpDesc {
    /// A network taking rows of `input_width` values, with no layers yet.
    pub fn new(input_width: u32) -> MlpDesc {
        MlpDesc {
            widths: vec![input_width],
            activations: Vec::new(),
        }
    }

    /// `widths[0] → widths[1] → …`, every layer but the last followed by `hidden`, the last
    /// by `output` (the shape of `torch.nn.Sequential` of `Linear`s and activations).
    pub fn uniform(widths: &[u32], hidden: MlpActivation, output: MlpActivation) -> MlpDesc {
        let mut desc = MlpDesc::new(widths.first().copied().unwrap_or(0));
        for (i, &width) in widths.iter().enumerate().skip(1) {
            let last = i + 1 == widths.len();
            desc = desc.layer(width, if last { output } else { hidden });
        }
        desc
    }

    /// Appends a layer of `width` outputs followed by `activation`.
    pub fn layer(mut self, width: u32, activation: MlpActivation) -> MlpDesc {
        self.widths.push(width);
        self.activations.push(activation);
        self
    }

    /// Input width, then each layer's output width.
    pub fn widths(&self) -> &[u32] {
        &self.widths
    }

    /// Each layer's activation.
    pub fn activations(&self) -> &[MlpActivation] {
        &self.activations
    }

    /// Number of layers (weight matrices).
    pub fn layers(&self) -> usize {
        self.activations.len()
    }

    /// Width of the input rows.
    pub fn input_width(&self) -> u32 {
        self.widths[0]
    }

    /// Width of the output rows.
    pub fn output_width(&self) -> u32 {
        *self.widths.last().unwrap_or(&0)
    }

    /// `(inputs, outputs)` of layer `layer`.
    pub(crate) fn layer_shape(&self, layer: usize) -> (u32, u32) {
        (self.widths[layer], self.widths[layer + 1])
    }

    /// The widest layer (input, hidden or output).
    pub fn max_width(&self) -> u32 {
        self.widths.iter().copied().max().unwrap_or(0)
    }

    /// Floating-point operations per row: `2 · Σ inputs · outputs` (as PyTorch's counts).
    pub fn flops_per_row(&self) -> u64 {
        (0..self.layers())
            .map(|l| {
                let (i, o) = self.layer_shape(l);
                2 * u64::from(i) * u64::from(o)
            })
            .sum()
    }

    /// Checks the shape: at least one layer, every width in `1..=MAX_MLP_WIDTH`, finite
    /// leaky-ReLU slopes.
    pub fn validate(&self) -> Result<()> {
        if self.layers() == 0 {
            return Err(Error::MlpNoLayers);
        }
        for (position, &width) in self.widths.iter().enumerate() {
            if width == 0 || width > MAX_MLP_WIDTH {
                return Err(Error::MlpWidth {
                    position,
                    width,
                    limit: MAX_MLP_WIDTH,
                });
            }
        }
        for (layer, activation) in self.activations.iter().enumerate() {
            if !activation.slope().is_finite() {
                return Err(Error::MlpActivation {
                    layer,
                    reason: format!("{activation} has a slope that is not finite"),
                });
            }
        }
        Ok(())
    }

    /// Checks one set of weights against the shape.
    pub(crate) fn check_weights(&self, set: usize, weights: &[LayerWeights]) -> Result<()> {
        if weights.len() != self.layers() {
            return Err(Error::MlpWeights {
                set,
                layer: weights.len().min(self.layers()),
                what: "layers",
                expected: self.layers(),
                actual: weights.len(),
            });
        }
        for (layer, w) in weights.iter().enumerate() {
            let (inputs, outputs) = self.layer_shape(layer);
            let expected = inputs as usize * outputs as usize;
            for (what, expected, actual) in [
                ("weights", expected, w.weights.len()),
                ("bias", outputs as usize, w.bias.len()),
            ] {
                if expected != actual {
                    return Err(Error::MlpWeights {
                        set,
                        layer,
                        what,
                        expected,
                        actual,
                    });
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for MlpDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.widths[0])?;
        for (width, activation) in self.widths[1..].iter().zip(&self.activations) {
            write!(f, "-{activation}-{width}")?;
        }
        Ok(())
    }
}

/// One layer's parameters: `weights` is `outputs × inputs`, row-major (row `o` holds the
/// weights of output `o`, as `torch.nn.Linear.weight`), `bias` has one value per output.
/// Kept as f16, the type every network kernel multiplies in.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    /// `outputs × inputs`, row-major.
    pub weights: Vec<f16>,
    /// One per output.
    pub bias: Vec<f16>,
}

impl LayerWeights {
    /// From f16 values.
    pub fn new(weights: Vec<f16>, bias: Vec<f16>) -> LayerWeights {
        LayerWeights { weights, bias }
    }

    /// From f32 values, rounded to the nearest f16.
    pub fn from_f32(weights: &[f32], bias: &[f32]) -> LayerWeights {
        LayerWeights {
            weights: weights.iter().map(|&w| f16::from_f32(w)).collect(),
            bias: bias.iter().map(|&b| f16::from_f32(b)).collect(),
        }
    }

    /// Deterministic weights for `desc` from `seed`: uniform in ±1/√inputs (PyTorch's
    /// default initialisation range) and biases in ±0.1, full f16 mantissas. For tests,
    /// benchmarks and examples.
    pub fn seeded(desc: &MlpDesc, seed: u64) -> Vec<LayerWeights> {
        let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        (0..desc.layers())
            .map(|layer| {
                let (inputs, outputs) = desc.layer_shape(layer);
                let scale = 1.0 / f64::from(inputs).sqrt();
                let weights = (0..inputs * outputs)
                    .map(|_| f16::from_f64(next() * scale))
                    .collect();
                let bias = (0..outputs).map(|_| f16::from_f64(next() * 0.1)).collect();
                LayerWeights { weights, bias }
            })
            .collect()
    }
}
