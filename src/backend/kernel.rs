//! [`KernelConfig`]: one kernel configuration of one backend, typed; [`KernelInfo`]: what ran.
//!
//! Configurations are what the backends' heuristics pick, what the autotuner times and keeps,
//! and what a [`Plan`](crate::Plan) carries to the backend that records it. They become text
//! only at the edges: logs, the disk cache, benchmark records and environment overrides.

use std::fmt;

use super::coopmat::CoopmatPlan;
use super::kind::BackendKind;
use super::simt::SimtConfig;
use super::wgsl_coopmat::WgslCoopConfig;
use crate::epilogue::Epilogue;

/// A kernel configuration of one backend.
///
/// ```
/// use coopgemm::{config::SimtConfig, BackendKind, KernelConfig};
/// let config = KernelConfig::Simt("128x64x8-t8x4".parse::<SimtConfig>()?);
/// assert_eq!(config.backend(), BackendKind::Simt);
/// assert_eq!(config.tile(), (128, 64));
/// assert_eq!(config.to_string(), "128x64x8-t8x4");
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KernelConfig {
    /// A tiling of the portable WGSL kernel.
    Simt(SimtConfig),
    /// The Vulkan cooperative-matrix backend's kernel and tiling (KHR or coopmat2).
    Coopmat(CoopmatPlan),
    /// A tiling of the WGSL cooperative-matrix kernel.
    WgslCoopmat(WgslCoopConfig),
}

impl KernelConfig {
    /// The backend that runs it.
    pub fn backend(&self) -> BackendKind {
        match self {
            KernelConfig::Simt(_) => BackendKind::Simt,
            KernelConfig::Coopmat(_) => BackendKind::Coopmat,
            KernelConfig::WgslCoopmat(_) => BackendKind::WgslCoopmat,
        }
    }

    /// The workgroup tile (rows, columns of C): its width is the panel width B is packed in
    /// for it, and the count of tiles decides split-K.
    pub fn tile(&self) -> (u32, u32) {
        match self {
            KernelConfig::Simt(config) => (config.tile_m, config.tile_n),
            KernelConfig::Coopmat(plan) => (plan.block_m(), plan.block_n()),
            KernelConfig::WgslCoopmat(config) => (config.tile_m, config.tile_n),
        }
    }

    /// How [`Context::pack_b`](crate::Context::pack_b) lays B out for it: column panels of
    /// its tile width, or K-contiguous where its kernel reads B fastest that way.
    pub(crate) fn packed_form(&self) -> PackedForm {
        match self {
            KernelConfig::Coopmat(plan) if plan.packs_b_k_contiguous() => PackedForm::KContiguous,
            _ => PackedForm::Panels {
                width: self.tile().1,
            },
        }
    }
}

impl fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelConfig::Simt(config) => config.fmt(f),
            KernelConfig::Coopmat(plan) => plan.fmt(f),
            KernelConfig::WgslCoopmat(config) => config.fmt(f),
        }
    }
}

/// What runs (or ran) one GEMM: the backend, the kernel configuration, whether B was staged
/// and how the GEMM was split along K. Its [`Display`](fmt::Display) is the one-word name of
/// logs and benchmark records: the configuration, then `+stageb` where B is staged
/// K-contiguous first, `+splitkN` for `N` partial GEMMs, then `+<epilogue>` where the
/// epilogue does anything (e.g. `128x128x8-t8x8+splitk4+bias-col-relu`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelInfo {
    /// The backend.
    pub backend: BackendKind,
    /// The configuration (of the partial GEMMs, when split).
    pub config: KernelConfig,
    /// Whether B is copied K-contiguous into a scratch buffer before the kernel runs
    /// ([`StageBChoice`](crate::StageBChoice)).
    pub staged_b: bool,
    /// The number of partial GEMMs when split along K.
    pub split_k: Option<u32>,
    /// The fused epilogue's name, when it does anything.
    pub epilogue: Option<String>,
}

impl KernelInfo {
    /// The info for `config` running a GEMM with `epilogue`, after staging B where
    /// `staged_b`, split into `split_k` partial GEMMs when `Some`.
    pub(crate) fn new(
        config: KernelConfig,
        staged_b: bool,
        split_k: Option<u32>,
        epilogue: &Epilogue,
    ) -> Self {
        KernelInfo {
            backend: config.backend(),
            config,
            staged_b,
            split_k,
            epilogue: (!epilogue.is_identity()).then(|| epilogue.name()),
        }
    }
}

impl fmt::Display for KernelInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.config)?;
        if self.staged_b {
            write!(f, "+stageb")?;
        }
        if let Some(partials) = self.split_k {
            write!(f, "+splitk{partials}")?;
        }
        if let Some(epilogue) = &self.epilogue {
            write!(f, "+{epilogue}")?;
        }
        Ok(())
    }
}

/// How B is packed for a kernel configuration
/// ([`KernelConfig::packed_form`](crate::KernelConfig)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PackedForm {
    /// Column panels `width` wide ([`Order::ColumnPanels`](crate::Order::ColumnPanels)).
    Panels {
        /// Columns per panel: the kernel's tile width.
        width: u32,
    },
    /// Column-major, every column's K elements padded with zeros to a multiple of 16 bytes.
    KContiguous,
}
