//! The decode kernel's configurations (`glsl/gemm_decode.comp`): GEMMs of up to 16 rows
//! on subgroup-scope cooperative matrices, the subgroups of a workgroup splitting K, each
//! streaming its own steps of B through a private shared-memory stage. Compiled on every
//! platform, like `config.rs`.

use std::fmt;

use super::config::KernelVariant;
use crate::types::{CoopmatShape, DType, GemmTypes};

/// A configuration of the decode kernel (`glsl/gemm_decode.comp`), for decode products:
/// a few rows of activations times a weight matrix, bound by reading B once. A workgroup
/// computes one `shape.m × block_n` block of C; its `subgroups` subgroups take every
/// `subgroups`-th step of `block_k` along K, each through its own stage, and sum their
/// accumulators once at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DecodeConfig {
    /// The kernel variant (type combination; floating-point inputs are summed in f32).
    pub variant: KernelVariant,
    /// The cooperative-matrix shape (its `m` is the rows of C per workgroup).
    pub shape: CoopmatShape,
    /// Subgroup size the pipeline runs with.
    pub subgroup_size: u32,
    /// Cooperative-matrix tiles along N per workgroup.
    pub tiles_n: u32,
    /// Subgroups per workgroup, each on its own steps along K.
    pub subgroups: u32,
    /// K per step (a multiple of the shape's K and of a 16-byte vector's elements).
    pub block_k: u32,
}

impl DecodeConfig {
    /// Bytes of one row of a step (`block_k` elements) the heuristic chooses: 64 (32 f16,
    /// 64 int8 elements).
    const HEURISTIC_STEP_BYTES: u32 = 64;
    /// Cooperative-matrix tiles along N the heuristic chooses.
    const HEURISTIC_TILES_N: u32 = 2;
    /// Subgroups per workgroup the heuristic chooses.
    const HEURISTIC_SUBGROUPS: u32 = 8;
    /// The rows of the 8-bit GEMMs with B row-major (N contiguous) that the planner sends
    /// to the decode kernel by default. There it beat the skinny kernel and the coopmat2
    /// kernel's few-row tile on the H200 on every shape measured (GPU time):
    /// - 8 to 16 rows (`examples/results/h200-2026-11-28-decode-kernel/`, call 3): 16 x 4096
    ///   x 14336 54 us against 91, 16 x 14336 x 4096 63 against 70, 16 x 4096 x 4096 18
    ///   against 28; 8 and 12 rows of 4096 x 14336 54 against 86 and 137 (skinny);
    /// - 4 to 7 rows (`examples/results/h200-2026-11-28-decode-columns/`, call 3, four N x K
    ///   pairs): 4 x 4096 x 14336 53 against 66, 6 x 4096 x 14336 54 against 88, 6 x 4096 x
    ///   4096 17 against 30 (skinny).
    ///
    /// With f16 or bf16 weights it was slower wherever B comes from memory (f16, 16 x 4096
    /// x 14336: 71-75 us against 61-62 on the 32-row few-row tile, about 48 on the 16-row
    /// one since 2026-12-02; 1 to 8 rows 1.3-2x slower than
    /// the skinny kernel), so those stay on the other kernels; tuning still times it.
    pub const ROWS_B_ROW_MAJOR: std::ops::RangeInclusive<u32> = 4..=16;

    /// The rows of the 8-bit GEMMs with B column-major (K contiguous, how `torch.nn.Linear`
    /// stores weights) that the planner sends to the decode kernel by default: every shape,
    /// except where the coopmat2 kernel's 16-row few-row tile would take the GEMM
    /// ([`WorkgroupScopeConfig::FEW_ROWS_I8`](super::config::WorkgroupScopeConfig::FEW_ROWS_I8)
    /// rows, where the device runs that kernel) and B has more than
    /// [`Self::CACHED_B_ELEMENTS`] elements or the GEMM is a batch. On the H200 (GPU time,
    /// `examples/results/h200-2026-11-28-decode-columns/`, calls 2 and 3, N x K pairs from
    /// 2048 to 14336) it beat the skinny kernel on every shape from 5 to 15 rows (5 x 4096 x
    /// 14336 41 us against 52, 12 x 14336 x 4096 48 against 78, 13 x 4096 x 14336 42
    /// against 93) and lost to it at 4 rows (41 against 34 at 4 x 4096 x 14336). At 16 rows
    /// the 16-row tile beats it wherever B comes from memory
    /// (`examples/results/h200-2026-12-02-few-rows-down/`, call 2: 16 x 4096 x 14336 33.2
    /// us against 41.8, 16 x 8192 x 8192 32.1 against 46.1) and loses at 16 x 4096 x 4096
    /// (15.6-15.8 against 13.9).
    pub const ROWS_B_COLUMN_MAJOR: std::ops::RangeInclusive<u32> = 5..=16;
    /// Single 8-bit GEMMs of 16 rows with B column-major whose B has at most this many
    /// elements (16 MiB: a 4096 x 4096 weight matrix, which the H200's L2 cache holds
    /// between products) stay on the decode kernel beside the 16-row few-row tile
    /// ([`Self::ROWS_B_COLUMN_MAJOR`], [`Self::takes_by_default`]).
    pub const CACHED_B_ELEMENTS: u64 = 4096 * 4096;

    /// Whether the planner sends a GEMM of `rows` rows of `types`, `batch` products whose B
    /// (row-major or not) holds `b_elements` elements each (n x k), to the decode kernel by
    /// default: 8-bit weights, [`Self::ROWS_B_ROW_MAJOR`] or [`Self::ROWS_B_COLUMN_MAJOR`]
    /// rows (with [`Self::CACHED_B_ELEMENTS`]). `few_row_tile`: whether the coopmat2
    /// kernel's few-row tile would take the GEMM otherwise (the device runs that kernel and
    /// `rows` are in
    /// [`WorkgroupScopeConfig::FEW_ROWS_I8`](super::config::WorkgroupScopeConfig::FEW_ROWS_I8)).
    /// Beside that tile only single products (batch 1) stay here: the slices of a GEMM
    /// split along K are one batched GEMM (16 x 4096 x 14336 in 8 slices: a batch of 8
    /// GEMMs of K = 1792), which must stay on the tile the split was planned for, and a
    /// batch of weight matrices is read from memory anyway.
    ///
    /// ```
    /// use coopgemm::{config::DecodeConfig, GemmTypes};
    /// let i8 = GemmTypes::I8_I32;
    /// let takes = DecodeConfig::takes_by_default;
    /// let b = |n: u64, k: u64| n * k;
    /// assert!(takes(16, b(14336, 4096), 1, i8, true, true));
    /// assert!(takes(12, b(14336, 4096), 1, i8, false, false));
    /// assert!(!takes(16, b(14336, 4096), 1, i8, false, true));
    /// assert!(!takes(16, b(4096, 14336), 1, i8, false, true));
    /// assert!(takes(16, b(4096, 4096), 1, i8, false, true));
    /// // The 8 slices of 16 x 2048 x 8193 (K = 1024 each) stay on the tile.
    /// assert!(!takes(16, b(2048, 1024), 8, i8, false, true));
    /// assert!(takes(16, b(14336, 4096), 1, i8, false, false));
    /// assert!(takes(4, b(4096, 14336), 1, i8, true, false));
    /// assert!(!takes(4, b(4096, 14336), 1, i8, false, false));
    /// assert!(!takes(16, b(4096, 4096), 1, GemmTypes::F16_F32, true, true));
    /// ```
    pub fn takes_by_default(
        rows: u32,
        b_elements: u64,
        batch: u32,
        types: GemmTypes,
        b_row_major: bool,
        few_row_tile: bool,
    ) -> bool {
        types.input == DType::I8
            && if b_row_major {
                Self::ROWS_B_ROW_MAJOR.contains(&rows)
            } else {
                Self::ROWS_B_COLUMN_MAJOR.contains(&rows)
                    && (!few_row_tile || (batch == 1 && b_elements <= Self::CACHED_B_ELEMENTS))
            }
    }

    /// Rows of C per workgroup.
    pub fn block_m(&self) -> u32 {
        self.shape.m
    }

    /// Columns of C per workgroup.
    pub fn block_n(&self) -> u32 {
        self.tiles_n * self.shape.n
    }

    /// Invocations per workgroup.
    pub fn workgroup_size(&self) -> u32 {
        self.subgroup_size * self.subgroups
    }

    /// Shared memory the kernel declares (mirrors `SHARED_VECTORS` in the kernel): the
    /// subgroups' stages, or their accumulator tiles after the K loop, whichever is larger.
    pub fn shared_memory_bytes(&self, a_row_major: bool, b_row_major: bool) -> u32 {
        let vector = 16 / self.input_bytes();
        let (bm, bn, bk) = (self.block_m(), self.block_n(), self.block_k);
        // Rows of the stored tile, and their stride in 16-byte units (padded to odd).
        let tile = |row_major: bool, rows: u32, columns: u32| {
            let (stored_rows, row_elements) = if row_major {
                (rows, columns)
            } else {
                (columns, rows)
            };
            stored_rows * ((row_elements / vector) | 1)
        };
        let stage = tile(a_row_major, bm, bk) + tile(b_row_major, bk, bn);
        let accumulator_bytes = self.variant.types.accumulate.size_bytes() as u32;
        let scratch_row = ((self.shape.n * accumulator_bytes) / 16) | 1;
        let scratch = self.subgroups * self.tiles_n * self.shape.m * scratch_row;
        16 * (self.subgroups * stage).max(scratch)
    }

    fn input_bytes(&self) -> u32 {
        self.variant.types.input.size_bytes() as u32
    }

    /// Whether the kernel can be built with this configuration: whole cooperative-matrix
    /// steps and whole 16-byte units in every stored row of a stage.
    pub fn is_valid(&self) -> bool {
        let vector = 16 / self.input_bytes();
        self.tiles_n > 0
            && self.subgroups > 0
            && self.block_k > 0
            && self.block_k.is_multiple_of(self.shape.k)
            && self.block_k.is_multiple_of(vector)
            && self.block_m().is_multiple_of(vector)
            && self.block_n().is_multiple_of(vector)
    }

    /// The heuristic's configuration: two tiles along N, eight subgroups, steps of 64 bytes
    /// per row (the fastest on the H200 for f16 and int8 at 16 rows, see
    /// [`Self::ROWS_B_ROW_MAJOR`]'s record: f16 16 x 4096 x 14336 72-75 us, against 81-122 for
    /// one tile or four subgroups or steps of 128 or 256 bytes).
    pub fn heuristic(variant: KernelVariant, shape: CoopmatShape, subgroup_size: u32) -> Self {
        let step = Self::HEURISTIC_STEP_BYTES / variant.types.input.size_bytes() as u32;
        DecodeConfig {
            variant,
            shape,
            subgroup_size,
            tiles_n: Self::HEURISTIC_TILES_N,
            subgroups: Self::HEURISTIC_SUBGROUPS,
            block_k: step.max(shape.k).next_multiple_of(shape.k),
        }
    }

    /// Every configuration tuning tries: the heuristic's first, then 1 or 2 tiles along N,
    /// 8 or 4 subgroups, steps of 64 or 128 bytes per row (those that are valid).
    pub fn candidates(
        variant: KernelVariant,
        shape: CoopmatShape,
        subgroup_size: u32,
    ) -> Vec<Self> {
        let first = Self::heuristic(variant, shape, subgroup_size);
        let bytes = variant.types.input.size_bytes() as u32;
        let mut all = vec![first];
        for tiles_n in [2, 1] {
            for subgroups in [8, 4] {
                for step_bytes in [64, 128] {
                    let config = DecodeConfig {
                        tiles_n,
                        subgroups,
                        block_k: step_bytes / bytes,
                        ..first
                    };
                    if config.is_valid() && !all.contains(&config) {
                        all.push(config);
                    }
                }
            }
        }
        all
    }

    /// `self` with the fields a forced [`DecodeTile`] names, where that is valid.
    pub fn with_tile(&self, tile: DecodeTile) -> Option<Self> {
        if !tile.block_n.is_multiple_of(self.shape.n) {
            return None;
        }
        let config = DecodeConfig {
            tiles_n: tile.block_n / self.shape.n,
            subgroups: tile.subgroups,
            block_k: tile.block_k,
            ..*self
        };
        config.is_valid().then_some(config)
    }
}

/// A short name for logs and benchmark records:
/// `decode-<types>-<block_m>x<block_n>-k<block_k>-sg<subgroup size>x<subgroups>`.
impl fmt::Display for DecodeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "decode-{}-{}x{}-k{}-sg{}x{}",
            self.variant.types.short_name(),
            self.block_m(),
            self.block_n(),
            self.block_k,
            self.subgroup_size,
            self.subgroups
        )
    }
}

/// A forced configuration of the decode kernel (`COOPGEMM_DECODE_CONFIG`,
/// [`KernelOverrides::decode_config`](crate::KernelOverrides::decode_config)):
/// `BNxBKxSUBGROUPS`, the fields of [`DecodeConfig`] that are not fixed by the GEMM or the
/// device. It runs every GEMM the decode kernel takes where it is valid.
///
/// ```
/// use coopgemm::config::DecodeTile;
/// let tile: DecodeTile = "16x64x8".parse()?;
/// assert_eq!((tile.block_n, tile.block_k, tile.subgroups), (16, 64, 8));
/// assert!("16x64".parse::<DecodeTile>().is_err());
/// assert!("16x64x0".parse::<DecodeTile>().is_err());
/// # Ok::<(), coopgemm::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DecodeTile {
    /// Columns of C per workgroup.
    pub block_n: u32,
    /// K per step.
    pub block_k: u32,
    /// Subgroups per workgroup.
    pub subgroups: u32,
}

impl std::str::FromStr for DecodeTile {
    type Err = crate::Error;

    fn from_str(text: &str) -> crate::Result<DecodeTile> {
        let numbers: Option<Vec<u32>> = text.split('x').map(|p| p.parse().ok()).collect();
        match numbers.as_deref() {
            Some(&[block_n, block_k, subgroups]) if block_n > 0 && block_k > 0 && subgroups > 0 => {
                Some(DecodeTile {
                    block_n,
                    block_k,
                    subgroups,
                })
            }
            _ => None,
        }
        .ok_or_else(|| {
            crate::Error::invalid_option(
                "decode configuration",
                text,
                "BNxBKxSUBGROUPS of non-zero numbers",
            )
        })
    }
}
