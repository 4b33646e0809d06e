//! The configurations a caller forces on the cooperative-matrix backend
//! ([`KernelOverrides`](crate::KernelOverrides)): the coopmat2 tile and skinny tile types,
//! the parsers of the forced tiles and tiling, and the backend's view of them. Compiled on
//! every platform, like `config.rs`.

use super::config::{CoopmatPlan, CoopmatTiling, SkinnyConfig};
use super::decode::DecodeTile;

/// A forced coopmat2 workgroup tile (`COOPGEMM_COOPMAT2_TILE`,
/// [`KernelOverrides::coopmat2_tile`](crate::KernelOverrides::coopmat2_tile)):
/// `BMxBNxBK`, optionally with the K unroll and then the workgroup size,
/// `BMxBNxBKxUNROLL[xINVOCATIONS]`. What it leaves out, the backend chooses.
///
/// ```
/// use coopgemm::config::WorkgroupScopeTile;
/// let tile: WorkgroupScopeTile = "128x256x32x8".parse()?;
/// assert_eq!((tile.block_m, tile.block_n, tile.block_k, tile.k_unroll), (128, 256, 32, Some(8)));
/// assert!("128x256".parse::<WorkgroupScopeTile>().is_err());
/// assert!("128x256x32x0".parse::<WorkgroupScopeTile>().is_err());
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WorkgroupScopeTile {
    /// Rows of C per workgroup.
    pub block_m: u32,
    /// Columns of C per workgroup.
    pub block_n: u32,
    /// K depth of one multiply step.
    pub block_k: u32,
    /// Full K blocks per iteration of the K loop (`None`: the backend's default).
    pub k_unroll: Option<u32>,
    /// Invocations per workgroup (`None`: the device's largest for the types whose
    /// granularity divides the tile).
    pub workgroup_size: Option<u32>,
}

impl std::str::FromStr for WorkgroupScopeTile {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<WorkgroupScopeTile> {
        let numbers: Option<Vec<u32>> = text.split('x').map(|p| p.parse().ok()).collect();
        let tile = |block_m, block_n, block_k, k_unroll, workgroup_size| WorkgroupScopeTile {
            block_m,
            block_n,
            block_k,
            k_unroll,
            workgroup_size,
        };
        match numbers.as_deref() {
            Some(&[bm, bn, bk]) => Some(tile(bm, bn, bk, None, None)),
            Some(&[bm, bn, bk, unroll]) if unroll > 0 => Some(tile(bm, bn, bk, Some(unroll), None)),
            Some(&[bm, bn, bk, unroll, invocations]) if unroll > 0 && invocations > 0 => {
                Some(tile(bm, bn, bk, Some(unroll), Some(invocations)))
            }
            _ => None,
        }
        .ok_or_else(|| {
            crate::Error::invalid_option(
                "coopmat2 tile",
                text,
                "BMxBNxBK[xUNROLL[xINVOCATIONS]] with non-zero UNROLL and INVOCATIONS",
            )
        })
    }
}

/// A forced configuration of the skinny kernel (`COOPGEMM_SKINNY_CONFIG`,
/// [`KernelOverrides::skinny_config`](crate::KernelOverrides::skinny_config)):
/// `BMxBNxSUBGROUPSxK_UNROLL`, the fields of [`SkinnyConfig`] that are not fixed by the
/// GEMM (its types) or the device (the subgroup size). It runs every GEMM the skinny kernel
/// takes where it is valid for the GEMM's layout of B (see
/// [`SkinnyProduct::config`](crate::config::SkinnyProduct::config)).
///
/// ```
/// use coopgemm::config::SkinnyTile;
/// let tile: SkinnyTile = "1x64x8x2".parse()?;
/// assert_eq!((tile.block_m, tile.block_n, tile.subgroups, tile.k_unroll), (1, 64, 8, 2));
/// assert!("1x64x8".parse::<SkinnyTile>().is_err());
/// assert!("1x64x0x2".parse::<SkinnyTile>().is_err());
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SkinnyTile {
    /// Rows of C per workgroup.
    pub block_m: u32,
    /// Columns of C per workgroup.
    pub block_n: u32,
    /// Subgroups per workgroup.
    pub subgroups: u32,
    /// Loads each invocation issues before it sums them ([`SkinnyConfig::k_unroll`]).
    pub k_unroll: u32,
}

impl SkinnyTile {
    /// The tile of `config`.
    pub fn of(config: &SkinnyConfig) -> SkinnyTile {
        SkinnyTile {
            block_m: config.block_m,
            block_n: config.block_n,
            subgroups: config.subgroups,
            k_unroll: config.k_unroll,
        }
    }
}

impl std::str::FromStr for SkinnyTile {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<SkinnyTile> {
        let numbers: Option<Vec<u32>> = text.split('x').map(|p| p.parse().ok()).collect();
        match numbers.as_deref() {
            Some(&[block_m, block_n, subgroups, k_unroll])
                if block_m > 0 && block_n > 0 && subgroups > 0 && k_unroll > 0 =>
            {
                Some(SkinnyTile {
                    block_m,
                    block_n,
                    subgroups,
                    k_unroll,
                })
            }
            _ => None,
        }
        .ok_or_else(|| {
            crate::Error::invalid_option(
                "skinny configuration",
                text,
                "BMxBNxSUBGROUPSxK_UNROLL of non-zero numbers",
            )
        })
    }
}

impl std::str::FromStr for CoopmatTiling {
    type Err = crate::Error;

    /// [`CoopmatTiling::parse`], with an [`Error::InvalidOption`](crate::Error::InvalidOption)
    /// for text it does not accept.
    fn from_str(text: &str) -> crate::Result<CoopmatTiling> {
        CoopmatTiling::parse(text).ok_or_else(|| {
            crate::Error::invalid_option(
                "coopmat tiling",
                text,
                "SG_ROWSxSG_COLSxTILES_MxTILES_NxK_STEPS[xPREFETCH_STAGES] of non-zero numbers, with 1 or 2 prefetch stages",
            )
        })
    }
}

/// The forced configurations of [`KernelOverrides`](crate::KernelOverrides), as the
/// backend uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TuningOverrides {
    /// Never use the `VK_NV_cooperative_matrix2` kernel.
    pub(crate) without_coopmat2: bool,
    /// Only this cooperative-matrix shape (`[M, N, K]`).
    pub(crate) shape: Option<[u32; 3]>,
    /// GEMMs of at most this many rows run on the skinny kernel (0: none); `None`: the
    /// default split between it and the few-row tile (`KernelOverrides::skinny_rows`).
    pub(crate) skinny_rows: Option<u32>,
    /// The skinny kernel's configuration, where it is valid for the GEMM.
    pub(crate) skinny: Option<SkinnyTile>,
    /// GEMMs of 1 to this many rows run on the decode kernel (0: none); `None`: its
    /// default rows (`KernelOverrides::decode_rows`).
    pub(crate) decode_rows: Option<u32>,
    /// The decode kernel's configuration, where it is valid.
    pub(crate) decode: Option<DecodeTile>,
    /// Use this KHR-kernel tiling wherever it fits.
    pub(crate) tiling: Option<CoopmatTiling>,
    /// Use this coopmat2 workgroup tile (and K unroll) wherever it fits.
    pub(crate) workgroup_tile: Option<(u32, u32, u32)>,
    /// The K unroll of the forced coopmat2 tile, where it names one.
    pub(crate) k_unroll: Option<u32>,
    /// The coopmat2 workgroup size (invocations), where the forced tile names one; the
    /// device's largest for the types whose granularity divides each tile otherwise.
    pub(crate) workgroup_size: Option<u32>,
}

impl TuningOverrides {
    /// Whether `plan` is the tile or tiling the caller forces.
    pub(crate) fn forces(&self, plan: &CoopmatPlan) -> bool {
        // (A forced tile or tiling keeps GEMMs of few rows on its kernel instead of the
        // skinny kernel, see `forces_a_tile`.)
        match plan {
            CoopmatPlan::Subgroup(config) => self.tiling == Some(config.tiling),
            CoopmatPlan::WorkgroupScope(config) => {
                self.workgroup_tile == Some((config.block_m, config.block_n, config.block_k))
            }
            // Forced skinny and decode configurations are applied where those plans are
            // made (`CoopmatBackend::skinny_plan`, `decode_plan`), never among these.
            CoopmatPlan::Skinny(_) | CoopmatPlan::Decode(_) => false,
        }
    }

    /// Whether a tile or tiling of the cooperative-matrix kernels is forced: then it runs
    /// wherever it fits, GEMMs of few rows included (so that tests reach its edge cases).
    pub(crate) fn forces_a_tile(&self) -> bool {
        self.tiling.is_some() || self.workgroup_tile.is_some()
    }

    pub(crate) fn new(overrides: &crate::backend::KernelOverrides) -> TuningOverrides {
        let tile = overrides.coopmat2_tile;
        TuningOverrides {
            without_coopmat2: !overrides.coopmat2,
            skinny_rows: overrides.skinny_rows,
            skinny: overrides.skinny_config,
            decode_rows: overrides.decode_rows,
            decode: overrides.decode_config,
            shape: overrides.coopmat_shape,
            tiling: overrides.coopmat_tiling,
            workgroup_tile: tile.map(|tile| (tile.block_m, tile.block_n, tile.block_k)),
            k_unroll: tile.and_then(|tile| tile.k_unroll),
            workgroup_size: tile.and_then(|tile| tile.workgroup_size),
        }
    }
}
