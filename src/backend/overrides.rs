//! [`KernelOverrides`]: configurations a caller forces on the backends, typed.

use super::coopmat::{CoopmatTiling, DecodeTile, SkinnyTile, WorkgroupScopeTile};
use super::simt::SimtConfig;
use super::wgsl_coopmat::WgslCoopConfig;

/// Configurations forced per backend, for experiments and benchmarks (names as in logs and
/// benchmark records; each type parses its name with `str::parse`, and
/// [`ContextOptions::from_env`](crate::ContextOptions::from_env) reads them from the
/// variables named below). A forced configuration is tried first wherever it fits a GEMM;
/// where it cannot run one, the backend falls back to its own choice.
///
/// ```
/// use coopgemm::{config::SimtConfig, KernelOverrides};
/// let overrides = KernelOverrides::default().with_simt_config("128x128x8-t8x8".parse::<SimtConfig>()?);
/// assert_eq!(overrides.simt_config.unwrap().tile_m, 128);
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelOverrides {
    /// A SIMT configuration, e.g. `128x128x8-t8x8` (`COOPGEMM_SIMT_CONFIG`).
    pub simt_config: Option<SimtConfig>,
    /// Whether the SIMT kernel loads aligned A and B as vectors (`COOPGEMM_SIMT_VECTOR_LOADS`;
    /// `None`: on GPUs yes, on CPU drivers no).
    pub simt_vector_loads: Option<bool>,
    /// Whether the `VK_NV_cooperative_matrix2` kernel may run (`COOPGEMM_COOPMAT2=0` keeps
    /// f16/bf16 on the `VK_KHR_cooperative_matrix` kernel).
    pub coopmat2: bool,
    /// GEMMs of at most this many rows run on the coopmat backend's skinny kernel (B
    /// streamed once; `COOPGEMM_SKINNY_ROWS`, 0 turns it off). `None`: up to
    /// [`SkinnyConfig::DEFAULT_MAX_ROWS`](crate::config::SkinnyConfig::DEFAULT_MAX_ROWS),
    /// except the GEMMs the coopmat2 kernel's few-row tiles take
    /// ([`WorkgroupScopeConfig::takes_few_rows`](crate::config::WorkgroupScopeConfig::takes_few_rows));
    /// a number sends exactly the GEMMs of that many rows or fewer to the skinny kernel.
    pub skinny_rows: Option<u32>,
    /// The skinny kernel's configuration, e.g. `1x64x8x2` (`COOPGEMM_SKINNY_CONFIG`), for
    /// every GEMM it runs where the configuration is valid (others keep the heuristic's).
    pub skinny_config: Option<SkinnyTile>,
    /// GEMMs of at most this many rows run on the coopmat backend's decode kernel
    /// (`COOPGEMM_DECODE_ROWS`, 0 turns it off). `None`: the GEMMs
    /// [`DecodeConfig::takes_by_default`](crate::config::DecodeConfig::takes_by_default);
    /// a number sends the GEMMs of 1 to that many rows (at most the cooperative matrix's
    /// rows) of every type it has to it. A forced [`Self::skinny_rows`] takes precedence.
    pub decode_rows: Option<u32>,
    /// The decode kernel's configuration, e.g. `16x64x8` (`COOPGEMM_DECODE_CONFIG`), for
    /// every GEMM it runs where the configuration is valid.
    pub decode_config: Option<DecodeTile>,
    /// Only this cooperative-matrix shape `[M, N, K]` from the device's list
    /// (`COOPGEMM_COOPMAT_SHAPE=MxNxK`).
    pub coopmat_shape: Option<[u32; 3]>,
    /// The KHR kernel's tiling, e.g. `2x4x4x2x1` or `2x4x4x2x1x2`
    /// (`COOPGEMM_COOPMAT_TILING`).
    pub coopmat_tiling: Option<CoopmatTiling>,
    /// The coopmat2 kernel's workgroup tile, e.g. `128x256x32x8` (`COOPGEMM_COOPMAT2_TILE`).
    pub coopmat2_tile: Option<WorkgroupScopeTile>,
    /// A wgsl-coopmat configuration, e.g. `c16-128x128x32-w4x2`
    /// (`COOPGEMM_WGSL_COOPMAT_CONFIG`).
    pub wgsl_coopmat_config: Option<WgslCoopConfig>,
    /// Build the wgsl-coopmat kernel with wgpu's runtime checks (`COOPGEMM_WGSL_COOPMAT_CHECKS=1`).
    /// By default it is built without them, like the SIMT kernel: its indices are in bounds
    /// by construction (`tests/guard.rs` checks it), and on the H100 the checks halve its
    /// speed (`docs/benchmarks.md`).
    pub wgsl_coopmat_checked: bool,
}

impl Default for KernelOverrides {
    /// Nothing forced: every backend chooses for itself.
    fn default() -> Self {
        KernelOverrides {
            simt_config: None,
            simt_vector_loads: None,
            coopmat2: true,
            skinny_rows: None,
            skinny_config: None,
            decode_rows: None,
            decode_config: None,
            coopmat_shape: None,
            coopmat_tiling: None,
            coopmat2_tile: None,
            wgsl_coopmat_config: None,
            wgsl_coopmat_checked: false,
        }
    }
}

/// `with_<field>(value)` methods: a `#[non_exhaustive]` options struct with one field set,
/// for building one in one expression (there is no struct literal outside the crate).
macro_rules! setters {
    ($target:ident { $($(#[$doc:meta])* $setter:ident: $field:ident: $type:ty,)* }) => {
        impl $target {
            $(
                $(#[$doc])*
                pub fn $setter(mut self, value: $type) -> Self {
                    self.$field = value.into();
                    self
                }
            )*
        }
    };
}
pub(crate) use setters;

setters! { KernelOverrides {
    /// Forces [`Self::simt_config`].
    with_simt_config: simt_config: SimtConfig,
    /// Sets [`Self::simt_vector_loads`].
    with_simt_vector_loads: simt_vector_loads: bool,
    /// Sets [`Self::coopmat2`].
    with_coopmat2: coopmat2: bool,
    /// Forces [`Self::skinny_config`].
    with_skinny_config: skinny_config: SkinnyTile,
    /// Sets [`Self::decode_rows`].
    with_decode_rows: decode_rows: u32,
    /// Forces [`Self::decode_config`].
    with_decode_config: decode_config: DecodeTile,
    /// Forces [`Self::coopmat_shape`].
    with_coopmat_shape: coopmat_shape: [u32; 3],
    /// Forces [`Self::coopmat_tiling`].
    with_coopmat_tiling: coopmat_tiling: CoopmatTiling,
    /// Forces [`Self::coopmat2_tile`].
    with_coopmat2_tile: coopmat2_tile: WorkgroupScopeTile,
    /// Forces [`Self::wgsl_coopmat_config`].
    with_wgsl_coopmat_config: wgsl_coopmat_config: WgslCoopConfig,
    /// Sets [`Self::wgsl_coopmat_checked`].
    with_wgsl_coopmat_checked: wgsl_coopmat_checked: bool,
} }
