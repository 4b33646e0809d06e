//! The network kernels and the choice between them.

use std::fmt;

use crate::error::{Error, Result};

/// A kernel that evaluates a whole network in one dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MlpKernel {
    /// Fused on cooperative matrices (`glsl/mlp_coopmat.comp`, raw Vulkan through the
    /// cooperative-matrix backend): a workgroup keeps 128 rows' activations in shared
    /// memory through every layer, f16 × f16 → f32 16×16×16 tiles; widths up to 128.
    Coopmat,
    /// Fused SIMT in WGSL (`wgsl/mlp_simt.wgsl`): one invocation per row, activations in
    /// registers; every wgpu platform.
    Simt,
}

impl MlpKernel {
    /// Every kernel, in the order [`Context::plan_mlp`](crate::Context::plan_mlp) prefers
    /// them.
    pub const ALL: [MlpKernel; 2] = [MlpKernel::Coopmat, MlpKernel::Simt];

    /// The kernel's name in logs, records and command lines.
    pub const fn name(self) -> &'static str {
        match self {
            MlpKernel::Coopmat => "coopmat",
            MlpKernel::Simt => "simt",
        }
    }

    /// Whether it records plain wgpu commands, so that it can share a caller's encoder
    /// ([`Context::encode_mlp`](crate::Context::encode_mlp)).
    pub const fn records_into_shared_encoder(self) -> bool {
        matches!(self, MlpKernel::Simt)
    }

    /// Parses [`MlpKernel::name`].
    pub fn parse(name: &str) -> Option<MlpKernel> {
        MlpKernel::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for MlpKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which kernel runs a network and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlpPlan {
    /// The kernel that runs.
    pub kernel: MlpKernel,
    /// Why it was chosen.
    pub reason: String,
    /// The kernels that come before it in preference and cannot run the network, with why.
    pub rejected: Vec<(MlpKernel, String)>,
}

impl MlpPlan {
    /// The first kernel of `candidates` (in preference order, each with whether it can run
    /// the network) that can, or the `forced` one.
    pub(crate) fn choose(
        candidates: &[(MlpKernel, std::result::Result<(), String>)],
        forced: Option<MlpKernel>,
    ) -> Result<MlpPlan> {
        let mut rejected = Vec::new();
        for (kernel, support) in candidates {
            if forced.is_some_and(|f| f != *kernel) {
                continue;
            }
            match support {
                Ok(()) => {
                    let reason = match forced {
                        Some(_) => "forced (Mlp::with_kernel)".to_string(),
                        None if rejected.is_empty() => "the first kernel that can run it".into(),
                        None => "the first kernel that can run it; those before cannot".into(),
                    };
                    return Ok(MlpPlan {
                        kernel: *kernel,
                        reason,
                        rejected,
                    });
                }
                Err(why) => rejected.push((*kernel, why.clone())),
            }
        }
        if let Some(kernel) = forced {
            if rejected.is_empty() {
                rejected.push((kernel, "not available on this device".into()));
            }
        }
        Err(Error::MlpNoKernel { reasons: rejected })
    }
}

impl fmt::Display for MlpPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.kernel, self.reason)?;
        for (kernel, why) in &self.rejected {
            write!(f, "; not {kernel}: {why}")?;
        }
        Ok(())
    }
}
