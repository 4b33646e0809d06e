//! The fused epilogue: what every kernel applies to an output element after the product,
//! before it is converted to C's type and stored.
//!
//! ```text
//! C(i, j) = activation(alpha * (A * B)(i, j) + beta * C(i, j) + bias)
//! bias    = bias_vector[i] (BiasAxis::PerRow) or bias_vector[j] (BiasAxis::PerColumn)
//! ```
//!
//! All of it happens in the GEMM kernel's own store (no extra pass), in f32. The bias
//! vector is f32 whatever the GEMM's types, lives in [`GemmBuffers::bias`](crate::GemmBuffers),
//! and is shared by every matrix of a batch.

use std::fmt;

/// The element-wise function applied last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Activation {
    /// `x` (no activation).
    #[default]
    Identity,
    /// `max(x, 0)`.
    Relu,
    /// GELU in its tanh form, `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
    Gelu,
    /// SiLU (swish), `x / (1 + e^(-x))`.
    Silu,
}

impl Activation {
    /// Every activation, in the order of their shader codes.
    pub const ALL: [Activation; 4] = [
        Activation::Identity,
        Activation::Relu,
        Activation::Gelu,
        Activation::Silu,
    ];

    /// The number the kernels' `ACTIVATION` constant takes for this function.
    pub const fn shader_code(self) -> u32 {
        match self {
            Activation::Identity => 0,
            Activation::Relu => 1,
            Activation::Gelu => 2,
            Activation::Silu => 3,
        }
    }

    /// Lowercase name for logs and command lines.
    pub const fn name(self) -> &'static str {
        match self {
            Activation::Identity => "identity",
            Activation::Relu => "relu",
            Activation::Gelu => "gelu",
            Activation::Silu => "silu",
        }
    }

    /// Parses [`Activation::name`] (`none` is accepted for `identity`).
    ///
    /// ```
    /// use coopgemm::Activation;
    /// assert_eq!(Activation::parse("gelu"), Some(Activation::Gelu));
    /// assert_eq!(Activation::parse("none"), Some(Activation::Identity));
    /// ```
    pub fn parse(name: &str) -> Option<Activation> {
        if name == "none" {
            return Some(Activation::Identity);
        }
        Activation::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The function, evaluated exactly in f64 (what the CPU reference uses).
    ///
    /// ```
    /// use coopgemm::Activation;
    /// assert_eq!(Activation::Relu.apply(-2.0), 0.0);
    /// assert!((Activation::Gelu.apply(1.0) - 0.841_192).abs() < 1e-6);
    /// assert!((Activation::Silu.apply(1.0) - 0.731_059).abs() < 1e-6);
    /// ```
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Activation::Identity => x,
            Activation::Relu => {
                if x.is_nan() {
                    x
                } else {
                    x.max(0.0)
                }
            }
            Activation::Gelu => {
                let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
                0.5 * x * (1.0 + inner.tanh())
            }
            Activation::Silu => x / (1.0 + (-x).exp()),
        }
    }

    /// An upper bound of `|f'(x)|` over all x: how much an input error can grow.
    pub const fn max_slope(self) -> f64 {
        match self {
            Activation::Identity | Activation::Relu => 1.0,
            Activation::Gelu => 1.13,
            Activation::Silu => 1.1,
        }
    }
}

impl fmt::Display for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which output index a bias vector follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BiasAxis {
    /// One value per row of C (`m` values): `bias[i]`.
    PerRow,
    /// One value per column of C (`n` values): `bias[j]`, the usual linear-layer bias
    /// when rows are samples.
    PerColumn,
}

impl BiasAxis {
    /// The number the kernels' `BIAS_AXIS` constant takes (0 means no bias).
    pub const fn shader_code(self) -> u32 {
        match self {
            BiasAxis::PerRow => 1,
            BiasAxis::PerColumn => 2,
        }
    }
}

/// A bias vector of f32 values added to every output element, indexed by row or column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bias {
    /// Whether the vector runs along the rows or the columns of C.
    pub axis: BiasAxis,
    /// Element index of the vector's first value in its buffer.
    pub offset: u64,
}

/// Everything the kernel does between the product and the store of C, besides alpha and beta.
///
/// ```
/// use coopgemm::{Activation, BiasAxis, Epilogue};
/// let layer = Epilogue::default().bias(BiasAxis::PerColumn).activation(Activation::Relu);
/// assert!(layer.bias.is_some());
/// assert!(!layer.is_identity());
/// assert!(Epilogue::default().is_identity());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Epilogue {
    /// The bias vector, if any.
    pub bias: Option<Bias>,
    /// The activation applied last.
    pub activation: Activation,
}

impl Epilogue {
    /// Adds a bias vector along `axis`, starting at element 0 of the bias buffer.
    pub fn bias(mut self, axis: BiasAxis) -> Epilogue {
        self.bias = Some(Bias { axis, offset: 0 });
        self
    }

    /// Adds a bias vector along `axis`, starting at element `offset` of the bias buffer.
    pub fn bias_at(mut self, axis: BiasAxis, offset: u64) -> Epilogue {
        self.bias = Some(Bias { axis, offset });
        self
    }

    /// Sets the activation.
    pub fn activation(mut self, activation: Activation) -> Epilogue {
        self.activation = activation;
        self
    }

    /// Whether the epilogue leaves `alpha * A * B + beta * C` unchanged.
    pub fn is_identity(&self) -> bool {
        self.bias.is_none() && self.activation == Activation::Identity
    }

    /// The kernels' `BIAS_AXIS` constant: 0 without bias.
    pub fn bias_code(&self) -> u32 {
        self.bias.map_or(0, |bias| bias.axis.shader_code())
    }

    /// A short description for kernel names and logs, e.g. `bias-col+relu`; empty if identity.
    pub fn name(&self) -> String {
        let mut parts = Vec::new();
        match self.bias.map(|b| b.axis) {
            Some(BiasAxis::PerRow) => parts.push("bias-row"),
            Some(BiasAxis::PerColumn) => parts.push("bias-col"),
            None => {}
        }
        if self.activation != Activation::Identity {
            parts.push(self.activation.name());
        }
        parts.join("+")
    }
}
