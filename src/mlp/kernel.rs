//! The choice between the network kernels ([`MlpKernel`], in `kind.rs`).

use std::fmt;

use crate::error::{Error, Result};
use crate::kind::MlpKernel;

/// Which kernel runs a network and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlpPlan {
    /// The kernel that runs.
    pub kernel: MlpKernel,
    /// Why it was chosen: forced, or the first in [`MlpKernel::ALL`]'s order of preference
    /// (fastest first where measured) that can run the network; the kernels after it were
    /// not tried.
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
                    let order = MlpKernel::ALL.map(MlpKernel::name).join(" > ");
                    let reason = match forced {
                        Some(_) => "forced (Mlp::with_kernel)".to_string(),
                        None if rejected.is_empty() => {
                            format!("the first kernel that can run it in preference order {order}")
                        }
                        None => format!(
                            "the first kernel that can run it in preference order {order}; those before cannot"
                        ),
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
