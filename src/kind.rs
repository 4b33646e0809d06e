//! [`BackendKind`]: the names of the backends (a leaf module: errors and options name
//! backends without depending on them).

use std::fmt;

/// Names a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// The portable WGSL SIMT kernel.
    Simt,
    /// The Vulkan cooperative-matrix (tensor-core) kernel.
    Coopmat,
    /// The WGSL kernel on wgpu's own cooperative matrices (tensor cores, Metal simdgroup
    /// matrices).
    WgslCoopmat,
}

impl BackendKind {
    /// Every kind, in the default order of preference (fastest first where measured).
    pub const ALL: [BackendKind; 3] = [
        BackendKind::Coopmat,
        BackendKind::WgslCoopmat,
        BackendKind::Simt,
    ];

    /// The lowercase name used in logs, the `COOPGEMM_BACKEND` variable and benchmarks.
    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Simt => "simt",
            BackendKind::Coopmat => "coopmat",
            BackendKind::WgslCoopmat => "wgsl-coopmat",
        }
    }

    /// Parses [`BackendKind::name`].
    ///
    /// ```
    /// assert_eq!(coopgemm::BackendKind::parse("coopmat"), Some(coopgemm::BackendKind::Coopmat));
    /// ```
    pub fn parse(name: &str) -> Option<BackendKind> {
        BackendKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
