//! Which backend runs a GEMM, and why.
//!
//! The choice is made per GEMM from what the device offers: the cooperative-matrix backend
//! when it can run the description and the problem is large enough for tensor cores to pay
//! for themselves, the SIMT backend otherwise. [`BackendChoice::Force`] (from the
//! environment, `COOPGEMM_BACKEND=simt|coopmat|wgsl-coopmat`, with
//! `ContextOptions::from_env`) overrides it. The default order is the Vulkan cooperative-matrix kernel, then the WGSL one,
//! then SIMT ([`BackendKind::ALL`]); where a context autotunes, the first GEMM of a shape
//! class that both tensor-core backends can run times them and keeps the faster.

use crate::backend::{Backend, BackendKind};
use crate::error::{Error, Result};
use crate::options::BackendChoice;
use crate::problem::ResolvedGemm;
use crate::types::GemmTypes;

/// The outcome of a selection.
///
/// ```no_run
/// let context = coopgemm::Context::new_blocking()?;
/// let selection = context.select(&coopgemm::Gemm::new(4096, 4096, 4096))?;
/// println!("{} because {}", selection.backend, selection.reason);
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Selection {
    /// The backend that will run the GEMM.
    pub backend: BackendKind,
    /// Why it was chosen.
    pub reason: String,
    /// The backends passed over, with why.
    pub rejected: Vec<(BackendKind, String)>,
}

/// Below this many multiply-adds (m·n·k·batch) an f32 GEMM stays on SIMT when both can
/// run it: launching tensor-core tiles for a tiny product costs more than it saves.
pub const COOPMAT_MIN_MULTIPLY_ADDS: f64 = 64.0 * 64.0 * 64.0;

/// The selection rules of one context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectionPolicy {
    choice: BackendChoice,
}

impl SelectionPolicy {
    /// The policy for `choice`.
    pub fn new(choice: BackendChoice) -> SelectionPolicy {
        SelectionPolicy { choice }
    }

    /// The choice in force.
    pub fn choice(&self) -> BackendChoice {
        self.choice
    }

    /// Picks a backend for `gemm`. `backend(kind)` gives the backend or why it is unavailable;
    /// `shared_encoder` restricts the choice to backends that record plain wgpu commands.
    pub fn select<'a>(
        &self,
        gemm: &ResolvedGemm,
        shared_encoder: bool,
        backend: impl Fn(BackendKind) -> std::result::Result<&'a dyn Backend, String>,
    ) -> Result<Selection> {
        let usable = |kind: BackendKind| -> std::result::Result<(), String> {
            let candidate = backend(kind)?;
            if shared_encoder && !candidate.records_into_shared_encoder() {
                return Err("records raw Vulkan commands, which cannot share a wgpu encoder (use Context::record or Context::run)".into());
            }
            candidate.supports(gemm)
        };
        if let BackendChoice::Force(kind) = self.choice {
            let source = "BackendChoice::Force (ContextOptions::backend or COOPGEMM_BACKEND)";
            return match usable(kind) {
                Ok(()) => Ok(Selection {
                    backend: kind,
                    reason: format!("forced by {source}"),
                    rejected: Vec::new(),
                }),
                Err(reason) => Err(Error::Unsupported {
                    backend: kind,
                    reason: format!("forced by {source}, but {reason}"),
                }),
            };
        }
        let mut rejected = Vec::new();
        for kind in BackendKind::ALL {
            match usable(kind) {
                Ok(()) => {
                    let tensor_cores =
                        matches!(kind, BackendKind::Coopmat | BackendKind::WgslCoopmat);
                    if tensor_cores && gemm.gemm.types == GemmTypes::F32 {
                        let work = gemm.gemm.m as f64
                            * gemm.gemm.n as f64
                            * gemm.gemm.k as f64
                            * gemm.gemm.batch as f64;
                        if work < COOPMAT_MIN_MULTIPLY_ADDS && usable(BackendKind::Simt).is_ok() {
                            rejected.push((
                                kind,
                                format!(
                                    "{work} multiply-adds are too few to pay for tensor-core tiles"
                                ),
                            ));
                            continue;
                        }
                    }
                    let reason = match kind {
                        BackendKind::Coopmat => format!(
                            "the device has cooperative matrices for {}",
                            gemm.gemm.types
                        ),
                        BackendKind::WgslCoopmat => format!(
                            "the device has WGSL cooperative matrices for {}",
                            gemm.gemm.types
                        ),
                        BackendKind::Simt if rejected.is_empty() => {
                            "the fastest backend available".to_string()
                        }
                        BackendKind::Simt => format!(
                            "fallback: {}",
                            rejected
                                .iter()
                                .map(|(k, why)| format!("{k}: {why}"))
                                .collect::<Vec<_>>()
                                .join("; ")
                        ),
                    };
                    return Ok(Selection {
                        backend: kind,
                        reason,
                        rejected,
                    });
                }
                Err(reason) => rejected.push((kind, reason)),
            }
        }
        Err(Error::NoBackend { reasons: rejected })
    }
}
