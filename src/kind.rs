//! [`BackendKind`] and [`MlpKernel`]: the names of the GEMM backends and of the network
//! kernels (a leaf module: errors and options name them without depending on them).

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

/// A kernel that evaluates a whole network in one dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MlpKernel {
    /// Fused on cooperative vectors (`glsl/mlp_coopvec.comp`, `VK_NV_cooperative_vector`,
    /// raw Vulkan through the cooperative-matrix backend): one invocation per row, its
    /// activations f16 vectors through every layer, one matrix-vector multiply-add (bias
    /// fused, f16 results) per layer; widths up to 256, up to 8 layers. Its layer sums are
    /// rounded to f16 ([`MlpReference::compute_for`](crate::testing::MlpReference::compute_for)).
    Coopvec,
    /// Fused on cooperative matrices with every subgroup on rows of its own
    /// (`glsl/mlp_coopmat_rows.comp`, raw Vulkan through the cooperative-matrix backend): a
    /// workgroup keeps the whole network's weights in shared memory, each subgroup holds its
    /// 32 rows' activations in registers through every layer, f16 × f16 → f32 16×16×16
    /// tiles; up to 8 layers whose weights fit the device's shared memory, runs without set
    /// indices.
    CoopmatRows,
    /// Fused on cooperative matrices (`glsl/mlp_coopmat.comp`, raw Vulkan through the
    /// cooperative-matrix backend): a workgroup keeps 128 rows' activations in shared
    /// memory through every layer, each subgroup computes output columns with weights read
    /// from memory, f16 × f16 → f32 16×16×16 tiles; widths up to 128, any number of layers,
    /// set indices.
    Coopmat,
    /// Fused SIMT in WGSL (`wgsl/mlp_simt.wgsl`): one invocation per row, activations in
    /// registers; every wgpu platform.
    Simt,
}

impl MlpKernel {
    /// Every kernel, in the order [`Context::plan_mlp`](crate::Context::plan_mlp) prefers
    /// them: fastest first where measured. On the H100 (2026-11-28,
    /// `examples/results/h100-2026-11-28-coopmat-rows/`) cooperative vectors ran mlp64 at
    /// 2^20 rows in 0.22 ms of GPU time, the row kernel in 0.32 and the block kernel in 0.69;
    /// all far ahead of SIMT.
    pub const ALL: [MlpKernel; 4] = [
        MlpKernel::Coopvec,
        MlpKernel::CoopmatRows,
        MlpKernel::Coopmat,
        MlpKernel::Simt,
    ];

    /// The kernel's name in logs, records and command lines.
    pub const fn name(self) -> &'static str {
        match self {
            MlpKernel::Coopvec => "coopvec",
            MlpKernel::CoopmatRows => "coopmat-rows",
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
