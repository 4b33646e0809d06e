//! The cooperative-matrix backend's configurations: the SPIR-V variants, the KHR kernel's
//! tilings ([`CoopmatConfig`]), the coopmat2 kernel's tiles ([`WorkgroupScopeConfig`]), the
//! skinny kernel's blocks ([`SkinnyConfig`]) and the choice between them and the decode
//! kernel's configurations ([`DecodeConfig`](super::DecodeConfig)): [`CoopmatPlan`].

use std::fmt;

use super::decode::DecodeConfig;
use super::forced::SkinnyTile;
use crate::problem::Order;
use crate::types::{CoopmatShape, DType, GemmTypes};

/// One SPIR-V build of the kernel, for one type combination.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct KernelVariant {
    /// The SPIR-V file's stem (`glsl/spirv/<name>.spv`).
    pub name: &'static str,
    /// The types it computes.
    pub types: GemmTypes,
    /// The module, as compiled by `tools/spirv` from the table in `glsl/variants.txt`.
    pub spirv: &'static [u8],
}

// Variants are equal when their names are (each module has one name in glsl/variants.txt);
// comparing or hashing the SPIR-V bytes would only cost time.
impl PartialEq for KernelVariant {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for KernelVariant {}

impl std::hash::Hash for KernelVariant {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

// VARIANTS, EMULATED_VARIANTS and WORKGROUP_SCOPE_VARIANTS, from glsl/variants.txt.
include!(concat!(env!("OUT_DIR"), "/kernel_variants.rs"));

impl KernelVariant {
    /// Every SPIR-V module the cooperative-matrix backend embeds (the KHR kernel's, its
    /// emulated forms for testing, the coopmat2 kernel's), as listed in `glsl/variants.txt`.
    pub fn embedded() -> impl Iterator<Item = KernelVariant> {
        VARIANTS
            .iter()
            .chain(EMULATED_VARIANTS)
            .chain(WORKGROUP_SCOPE_VARIANTS)
            .chain(SKINNY_VARIANTS)
            .chain(SKINNY_EMULATED_VARIANTS)
            .chain(DECODE_VARIANTS)
            .chain(DECODE_EMULATED_VARIANTS)
            .copied()
    }
}

/// A configuration of the `VK_NV_cooperative_matrix2` kernel: one workgroup-scope matrix
/// per operand tile, loaded and stored through tensor layouts (the driver moves them through shared memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WorkgroupScopeConfig {
    /// The kernel variant (type combination).
    pub variant: KernelVariant,
    /// Rows of C per workgroup.
    pub block_m: u32,
    /// Columns of C per workgroup.
    pub block_n: u32,
    /// K depth of one multiply step.
    pub block_k: u32,
    /// Invocations per workgroup (the device's requirement for the shape).
    pub workgroup_size: u32,
    /// Full K blocks issued back to back per iteration of the K loop.
    pub k_unroll: u32,
}

impl WorkgroupScopeConfig {
    /// The K unrolls tuning chooses between (`K_UNROLL`: full K blocks issued back to back
    /// per iteration of the K loop).
    pub const K_UNROLLS: [u32; 2] = [8, 16];

    /// K blocks per unrolled group on the 16-row few-row tiles (16x64x64, and 16x64x128 for
    /// 8-bit inputs; 64 invocations, so each subgroup holds a larger share of the tile and
    /// the unrolled loop is the longest code the kernel has). On the H200 (first use, no
    /// caches, GPU time in the same call; `examples/results/h200-2026-12-02-builds-and-splits/`)
    /// the f16 tile built in 0.47 s with unroll 2, 1.48 with 4, 2.85 with 8 and 6.2 with 16;
    /// with 4 it ran 16 x 4096 x 14336 in 52.1 / 45.5 us (B column / row-major) against
    /// 52.5 / 46.9 with 8, 16 x 14336 x 4096 in 48.8 / 47.0 against 48.1 / 47.3, and the
    /// GEMMs of fewer rows faster (12 x 4096 x 14336 50.7 / 49.8 against 57.0 / 55.3). With
    /// 8-bit inputs 4 ran within 2.4 % of 8 (16 x 8192 x 4096 17.0 against 16.6 us), 2 up
    /// to 7 % slower. The larger few-row tiles keep [`Self::default_k_unroll`]'s 8 or 16:
    /// they build in 0.4-1.4 s with 8 and ran 5-10 % slower with 2.
    pub const SIXTEEN_ROW_K_UNROLL: u32 = 4;

    /// K blocks per unrolled group for `tile` (block_m, block_n, block_k) over a K of `k`
    /// of `input` elements, unless `COOPGEMM_COOPMAT2_TILE` names another: on the 16-row
    /// few-row tiles [`Self::SIXTEEN_ROW_K_UNROLL`]; otherwise 16 for long K loops (128
    /// blocks or more; 32 with 8-bit inputs), 8 for shorter ones (the measurements:
    /// `docs/benchmarks.md`, K unroll).
    ///
    /// ```
    /// use coopgemm::{config::WorkgroupScopeConfig, DType};
    /// let unroll = WorkgroupScopeConfig::default_k_unroll;
    /// assert_eq!(unroll((128, 256, 32), 4096, DType::F16), 16);
    /// assert_eq!(unroll((128, 128, 64), 4096, DType::F16), 8);
    /// assert_eq!(unroll((128, 128, 128), 4096, DType::I8), 16);
    /// assert_eq!(unroll((16, 64, 64), 14336, DType::F16), WorkgroupScopeConfig::SIXTEEN_ROW_K_UNROLL);
    /// assert_eq!(unroll((16, 64, 128), 4096, DType::I8), WorkgroupScopeConfig::SIXTEEN_ROW_K_UNROLL);
    /// assert_eq!(unroll((32, 64, 64), 1024, DType::F16), 8);
    /// ```
    pub fn default_k_unroll(tile: (u32, u32, u32), k: u32, input: DType) -> u32 {
        if tile.0 == 16 && Self::few_rows_tiles(input).contains(&tile) {
            return Self::SIXTEEN_ROW_K_UNROLL;
        }
        let long_loop = if input.size_bytes() == 1 { 32 } else { 128 };
        if k / tile.2 >= long_loop {
            16
        } else {
            8
        }
    }

    /// (block_m, block_n, block_k) to try for `types`, largest tile first (the
    /// heuristic's favourite first among equal tiles), for B stored with K contiguous
    /// (column-major) or not. With f16 sums, 256x256x32 holds as many accumulator
    /// registers as 128x256 with f32 sums and wins wherever it makes two waves of
    /// workgroups ([`CoopmatPlan::min_workgroups`]); 8-bit inputs want K-contiguous B,
    /// 2-byte inputs gain nothing from it (the measurements: `docs/benchmarks.md`,
    /// workgroup tiles).
    ///
    /// ```
    /// use coopgemm::{config::WorkgroupScopeConfig, GemmTypes};
    /// assert_eq!(WorkgroupScopeConfig::candidates(GemmTypes::F16_ACC_F16, false)[0], (256, 256, 32));
    /// assert_eq!(WorkgroupScopeConfig::candidates(GemmTypes::F16_F32, true)[0], (128, 256, 32));
    /// assert_eq!(WorkgroupScopeConfig::candidates(GemmTypes::I8_I32, false)[0], (256, 128, 64));
    /// assert_eq!(WorkgroupScopeConfig::candidates(GemmTypes::I8_I32, true)[0], (128, 128, 128));
    /// ```
    pub fn candidates(types: GemmTypes, b_k_contiguous: bool) -> &'static [(u32, u32, u32)] {
        if Self::wants_k_contiguous_b(types) {
            return if b_k_contiguous {
                &[
                    (128, 128, 128),
                    (128, 256, 64),
                    (256, 128, 64),
                    (64, 64, 64),
                ]
            } else {
                &[
                    (256, 128, 64),
                    (128, 256, 64),
                    (128, 128, 128),
                    (128, 128, 64),
                    (64, 64, 64),
                ]
            };
        }
        if types.accumulate.size_bytes() == 2 {
            &[
                (256, 256, 32),
                (128, 256, 64),
                (128, 256, 32),
                (128, 128, 64),
                (128, 128, 32),
                (64, 64, 32),
            ]
        } else {
            &[(128, 256, 32), (128, 128, 64), (128, 128, 32), (64, 64, 32)]
        }
    }

    /// The tiles (block_m, block_n, block_k) for GEMMs of [`Self::FEW_ROWS`] rows (or
    /// [`Self::FEW_ROWS_B_ROW_MAJOR`]), the first whose rows hold the GEMM's: 16 rows by 64
    /// columns of C per workgroup up to 16 rows (64 invocations: the devices' coopmat2
    /// shapes of 128 and 256 invocations want 32 rows), 32 by 64 up to 32 rows, 64 by 128
    /// above; split along K so that their few tiles fill the GPU
    /// (`split_k::AutoSplit::few_rows`).
    /// - The 16-row tile (H200, GPU time, B column / row-major,
    ///   `examples/results/h200-2026-12-02-sixteen-row-tiles/`): 16 x 4096 x 14336 47.7 /
    ///   47.1 us (8 slices) against 62.5 / 61.0 on the 32-row tile, 16 x 14336 x 4096 48.4 /
    ///   47.3 (2 slices) against 62.2 / 61.2, 12 x 4096 x 14336 57.4 / 55.4 against 62.3 /
    ///   61.0, 16 x 4096 x 4096 18.8 / 18.0 (4 slices, as planned) against 21.1 / 21.1;
    ///   bf16 alike. Tiles of 16 x 128, 16 x 32, 16 x 64 x 32, 64 x 16 with the operands
    ///   swapped and 32 invocations were all slower.
    /// - The 32-row tile gives a decode product twice the workgroups of a 128-column one at
    ///   the same split; on the H100 16 x 4096 x 14336 ran in 73-78 us on it (4 slices)
    ///   against 79-88 on 32x128x64 tiles, 32 x 4096 x 14336 in 63-68 against 65-70
    ///   (`examples/results/h100-2026-11-27-few-row-tiles/`).
    pub const FEW_ROWS_TILES: [(u32, u32, u32); 3] = [(16, 64, 64), (32, 64, 64), (64, 128, 64)];
    /// GEMMs of this many rows with f16 inputs summed in f32 run on a few-row tile
    /// ([`Self::few_rows_tile`]) instead of the skinny kernel, which does every
    /// multiply-add on the CUDA cores, or the large tiles, which leave most of the GPU idle
    /// (with B row-major from fewer rows: [`Self::FEW_ROWS_B_ROW_MAJOR`]).
    /// - 9 to 11 rows on the 16-row tile (H200, GPU time, B column / row-major,
    ///   `examples/results/h200-2026-12-02-few-rows-down/`, call 1): 9 x 4096 x 14336
    ///   56.3 / 54.7 us against 79.0 / 106.7 on the skinny kernel, 9 x 14336 x 4096 57.3 /
    ///   53.8 against 81.2 / 96.1, 9 x 4096 x 4096 22.3 / 22.4 against 28.1 / 33.8; 10 and
    ///   11 rows alike. At 8 rows and fewer the skinny kernel, which holds 4 rows per
    ///   workgroup, ties with B column-major (8 x 4096 x 14336 57.8 against 56.6, 8 x 4096 x
    ///   4096 21.2 against 23.0) and wins at 5 (56.5 against 62.7).
    /// - On the H100, 32 rows per tile, split 4: 16 x 4096 x 14336 took 80-84 us against
    ///   108-111 on the skinny kernel, 32 x 4096 x 14336 67-70 against 212-216, 32 x 4096 x
    ///   4096 22-23 against 66 (`examples/results/h100-2026-11-27-few-rows/`);
    /// - 64 rows per tile: 64 x 4096 x 4096 31-32 us in 4 slices against 49-76 on the
    ///   64x64x32 tile, 64 x 4096 x 14336 71-76 (4 slices) against 141-150, 64 x 14336 x 4096
    ///   71-72 unsplit against 95-108, 48 x 4096 x 4096 53-54 against 92-96
    ///   (`examples/results/h100-2026-11-27-rows64/`).
    pub const FEW_ROWS: std::ops::RangeInclusive<u32> = 9..=64;
    /// [`Self::FEW_ROWS`] where B is row-major (N contiguous), which the skinny kernel reads
    /// in 4-row workgroups less well: on the H200 (GPU time, the records of
    /// [`Self::FEW_ROWS`]) the 16-row tile ran 5 to 8 rows of 4096 x 14336 in 54.2-54.7 us
    /// against 66.8-70.5 on the skinny kernel, of 14336 x 4096 in 53.6-53.8 against
    /// 70.0-72.0, and tied at 4096 x 4096 (21.6-22.1 against 21.7-22.1); at 4 rows the
    /// skinny kernel wins (4 x 4096 x 14336 51.4 against 54.3,
    /// `examples/results/h200-2026-12-02-sixteen-row-tiles/`, call 2).
    pub const FEW_ROWS_B_ROW_MAJOR: std::ops::RangeInclusive<u32> = 5..=64;
    /// The few-row tiles of 8-bit inputs (block_m, block_n, block_k): 16 rows by 64
    /// columns up to 16 rows (64 invocations), then 32 columns wide for GEMMs of fewer
    /// than [`Self::FEW_ROWS_I8_WIDE_FROM`] columns, so that they still make about 128
    /// workgroups, 64 from there; split along K (i32 partials,
    /// `split_k::AutoSplit::few_rows`).
    /// - The 16-row tile (H200, GPU time, B column-major,
    ///   `examples/results/h200-2026-12-02-few-rows-down/`, call 2): 16 x 4096 x 14336 33.2
    ///   us in 8 slices against 41.8 on the decode kernel, 16 x 8192 x 8192 32.1 against
    ///   46.1 (decode), 16 x 14336 x 4096 35.8 unsplit against 40.7 on the 32x64x128 tile,
    ///   16 x 8192 x 4096 16.5 against 20.7. Split in 2 by force, 16 x 14336 x 4096 took
    ///   32.7 but 16 x 8192 x 4096 17.4, so 8-bit splits still start at 8192 of K. K
    ///   unrolls of 4, 8 and 16 ran within 4 % of each other. Its pipelines took 3.6-7.6 s
    ///   to build with unroll 8 (0.7-1.5 s with 1; call 1 there; unroll 4 since,
    ///   [`Self::SIXTEEN_ROW_K_UNROLL`]): what looked like a stall
    ///   of the guarded few-row suite in `h200-2026-12-02-sixteen-row-tiles/` was those
    ///   builds against a 160 s timeout.
    /// - The 32-row tiles on the H100 (i8, GPU time, column / row-major B,
    ///   `examples/results/h100-2026-11-28-few-rows-types/`), against the skinny kernel:
    ///   16 x 4096 x 4096 18.8 / 26.8 us against 32.8 / 51.4, 16 x 14336 x 4096 42.1 / 69.7
    ///   against 100.4 / 151.1, 16 x 4096 x 14336 (4 slices) 50.8 / 90.7 against 94.2 /
    ///   128.6, 32 x 4096 x 14336 (4 slices) 41.1 / 76.4 against 175.5 / 243.5.
    pub const FEW_ROWS_I8_TILES: [(u32, u32, u32); 3] =
        [(16, 64, 128), (32, 32, 128), (32, 64, 128)];
    /// GEMMs of 8-bit inputs with this many rows (the row counts measured) run on a
    /// few-row tile ([`Self::FEW_ROWS_I8_TILES`]), except those the decode kernel keeps
    /// (`DecodeConfig::takes_by_default`: B row-major, or a B that stays in the L2 cache).
    pub const FEW_ROWS_I8: std::ops::RangeInclusive<u32> = 16..=32;
    /// 8-bit GEMMs of at least this many columns take the wider few-row tile.
    pub const FEW_ROWS_I8_WIDE_FROM: u32 = 8192;

    /// Whether GEMMs of `rows` rows and `types`, B stored in `b_order`, run on a few-row
    /// tile: 16-bit float inputs (f16 or bf16: the same bytes per weight, the same tile)
    /// summed in f32 (f16 sums are not split along K), [`Self::FEW_ROWS`] rows
    /// ([`Self::FEW_ROWS_B_ROW_MAJOR`] with B row-major or in column panels); 8-bit inputs,
    /// [`Self::FEW_ROWS_I8`] rows.
    ///
    /// ```
    /// use coopgemm::{config::WorkgroupScopeConfig, GemmTypes, Order};
    /// let takes = WorkgroupScopeConfig::takes_few_rows;
    /// let (row, column) = (Order::RowMajor, Order::ColumnMajor);
    /// assert!(takes(16, GemmTypes::F16_F32, column));
    /// assert!(takes(16, GemmTypes::BF16_F32, row));
    /// assert!(takes(64, GemmTypes::F16_F32, column));
    /// assert!(takes(9, GemmTypes::F16_F32, column));
    /// assert!(!takes(8, GemmTypes::F16_F32, column));
    /// assert!(takes(5, GemmTypes::F16_F32, row));
    /// assert!(!takes(4, GemmTypes::F16_F32, row));
    /// assert!(takes(5, GemmTypes::F16_F32, Order::ColumnPanels { width: 64 }));
    /// assert!(!takes(65, GemmTypes::F16_F32, row));
    /// assert!(!takes(16, GemmTypes::F16_ACC_F16, column));
    /// assert!(takes(16, GemmTypes::I8_I32, column));
    /// assert!(!takes(12, GemmTypes::I8_I32, row));
    /// assert!(!takes(48, GemmTypes::I8_I32, column));
    /// ```
    pub fn takes_few_rows(rows: u32, types: GemmTypes, b_order: Order) -> bool {
        // Column panels keep N contiguous, like row-major B (and `pack_b` packs the GEMMs
        // the tile takes for it).
        let sixteen_bit_rows = if b_order == Order::ColumnMajor {
            Self::FEW_ROWS
        } else {
            Self::FEW_ROWS_B_ROW_MAJOR
        };
        match (types.input, types.accumulate) {
            (DType::F16 | DType::BF16, DType::F32) => sixteen_bit_rows.contains(&rows),
            (DType::I8, DType::I32) => Self::FEW_ROWS_I8.contains(&rows),
            _ => false,
        }
    }

    /// The few-row tile for GEMMs of `rows` rows, `columns` columns, `types` and B in
    /// `b_order`, where they take one ([`Self::takes_few_rows`]): for 16-bit inputs the one
    /// of 16 rows up to 16 rows, of 32 up to 32, of 64 above; for 8-bit inputs the one of
    /// 16 rows up to 16 rows, then the narrow one below [`Self::FEW_ROWS_I8_WIDE_FROM`]
    /// columns, the wide one from there.
    ///
    /// ```
    /// use coopgemm::{config::WorkgroupScopeConfig, GemmTypes, Order};
    /// let tile = |rows, columns, types| {
    ///     WorkgroupScopeConfig::few_rows_tile(rows, columns, types, Order::ColumnMajor)
    /// };
    /// assert_eq!(tile(12, 4096, GemmTypes::F16_F32), Some((16, 64, 64)));
    /// assert_eq!(tile(17, 4096, GemmTypes::F16_F32), Some((32, 64, 64)));
    /// assert_eq!(tile(32, 4096, GemmTypes::F16_F32), Some((32, 64, 64)));
    /// assert_eq!(tile(33, 4096, GemmTypes::F16_F32), Some((64, 128, 64)));
    /// assert_eq!(tile(1, 4096, GemmTypes::F16_F32), None);
    /// assert_eq!(tile(16, 4096, GemmTypes::I8_I32), Some((16, 64, 128)));
    /// assert_eq!(tile(17, 4096, GemmTypes::I8_I32), Some((32, 32, 128)));
    /// assert_eq!(tile(24, 14336, GemmTypes::I8_I32), Some((32, 64, 128)));
    /// ```
    pub fn few_rows_tile(
        rows: u32,
        columns: u32,
        types: GemmTypes,
        b_order: Order,
    ) -> Option<(u32, u32, u32)> {
        if !Self::takes_few_rows(rows, types, b_order) {
            return None;
        }
        if types.input == DType::I8 {
            let [sixteen_rows, narrow, wide] = Self::FEW_ROWS_I8_TILES;
            return Some(if rows <= sixteen_rows.0 {
                sixteen_rows
            } else if columns < Self::FEW_ROWS_I8_WIDE_FROM {
                narrow
            } else {
                wide
            });
        }
        Self::FEW_ROWS_TILES
            .iter()
            .find(|tile| rows <= tile.0)
            .or(Self::FEW_ROWS_TILES.last())
            .copied()
    }

    /// Whether this is one of the few-row tiles of its input type
    /// ([`Self::FEW_ROWS_TILES`], [`Self::FEW_ROWS_I8_TILES`]).
    pub fn is_few_rows_tile(&self) -> bool {
        Self::few_rows_tiles(self.variant.types.input).contains(&(
            self.block_m,
            self.block_n,
            self.block_k,
        ))
    }

    /// The few-row tiles of `input`'s type.
    fn few_rows_tiles(input: DType) -> &'static [(u32, u32, u32)] {
        if input == DType::I8 {
            &Self::FEW_ROWS_I8_TILES
        } else {
            &Self::FEW_ROWS_TILES
        }
    }

    /// Whether the kernel reads B of `types` fastest with K contiguous (column-major): with
    /// 8-bit inputs (see [`Self::candidates`]).
    pub fn wants_k_contiguous_b(types: GemmTypes) -> bool {
        types.input.size_bytes() == 1
    }

    /// Whether B is best packed with K contiguous (column-major) rather than in row-major
    /// column panels for this configuration ([`Self::wants_k_contiguous_b`]).
    pub fn packs_b_k_contiguous(&self) -> bool {
        Self::wants_k_contiguous_b(self.variant.types)
    }
}

/// What runs one GEMM on the cooperative-matrix backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CoopmatPlan {
    /// The `VK_KHR_cooperative_matrix` kernel: subgroup-scope tiles, loaded into shared memory by hand.
    Subgroup(CoopmatConfig),
    /// The `VK_NV_cooperative_matrix2` kernel: workgroup-scope matrices, tensor addressing.
    WorkgroupScope(WorkgroupScopeConfig),
    /// The skinny kernel for GEMMs of a few rows: no cooperative matrices, B streamed once.
    Skinny(SkinnyConfig),
    /// The decode kernel for GEMMs of up to 16 rows: subgroup-scope matrices, each subgroup
    /// streaming its own steps of K.
    Decode(DecodeConfig),
}

impl CoopmatPlan {
    /// Rows of C per workgroup.
    pub fn block_m(&self) -> u32 {
        match self {
            CoopmatPlan::Subgroup(config) => config.block_m(),
            CoopmatPlan::WorkgroupScope(config) => config.block_m,
            CoopmatPlan::Skinny(config) => config.block_m,
            CoopmatPlan::Decode(config) => config.block_m(),
        }
    }

    /// Columns of C per workgroup.
    pub fn block_n(&self) -> u32 {
        match self {
            CoopmatPlan::Subgroup(config) => config.block_n(),
            CoopmatPlan::WorkgroupScope(config) => config.block_n,
            CoopmatPlan::Skinny(config) => config.block_n,
            CoopmatPlan::Decode(config) => config.block_n(),
        }
    }

    /// Workgroups a GEMM should make before the heuristic picks this tile over a smaller
    /// one: 128, enough to fill a large GPU, for tiles up to 128×256; twice that for
    /// 256×256, whose workgroups take a whole SM's registers each, so that a partial last
    /// wave costs less (the measurements: `docs/benchmarks.md`, two waves).
    pub fn min_workgroups(&self) -> u64 {
        const MIN_WORKGROUPS: u64 = 128;
        const LARGE_TILE: u64 = 128 * 256;
        let area = self.block_m() as u64 * self.block_n() as u64;
        MIN_WORKGROUPS * area.div_ceil(LARGE_TILE).max(1)
    }

    /// Whether [`Context::pack_b`](crate::Context::pack_b) packs B with K contiguous for
    /// it (coopmat2 with 8-bit inputs, and the skinny kernel) rather than in column panels.
    pub fn packs_b_k_contiguous(&self) -> bool {
        match self {
            CoopmatPlan::Subgroup(_) => false,
            CoopmatPlan::WorkgroupScope(config) => config.packs_b_k_contiguous(),
            // Its K lanes read K-contiguous B fastest, and it takes no column panels.
            CoopmatPlan::Skinny(_) => true,
            // It stages B as stored; K contiguous gives whole 16-byte rows of any width.
            CoopmatPlan::Decode(_) => true,
        }
    }

    /// The compiled module it runs.
    pub fn variant(&self) -> KernelVariant {
        match self {
            CoopmatPlan::Subgroup(config) => config.variant,
            CoopmatPlan::WorkgroupScope(config) => config.variant,
            CoopmatPlan::Skinny(config) => config.variant,
            CoopmatPlan::Decode(config) => config.variant,
        }
    }
}

/// A short name for logs and benchmark records: `coopmat2-<types>-<BM>x<BN>x<BK>-u<K unroll>-wg<invocations>`.
impl fmt::Display for WorkgroupScopeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "coopmat2-{}-{}x{}x{}-u{}-wg{}",
            self.variant.types.short_name(),
            self.block_m,
            self.block_n,
            self.block_k,
            self.k_unroll,
            self.workgroup_size
        )
    }
}

/// The kernel's configuration's name.
impl fmt::Display for CoopmatPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoopmatPlan::Subgroup(config) => config.fmt(f),
            CoopmatPlan::WorkgroupScope(config) => config.fmt(f),
            CoopmatPlan::Skinny(config) => config.fmt(f),
            CoopmatPlan::Decode(config) => config.fmt(f),
        }
    }
}

/// A configuration of the skinny kernel (`glsl/gemm_skinny.comp`), for GEMMs of a few rows
/// (decode: a few activations times a weight matrix), which are bound by reading B once.
/// A workgroup computes `block_m × block_n` outputs, its invocations splitting K; how they
/// walk B follows B's layout (see the kernel's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SkinnyConfig {
    /// The kernel variant (type combination).
    pub variant: KernelVariant,
    /// Rows of C per workgroup (at most [`SkinnyConfig::MAX_BLOCK_M`]).
    pub block_m: u32,
    /// Columns of C per workgroup (with B row-major, a multiple of the 16-byte vector's
    /// elements).
    pub block_n: u32,
    /// Subgroup size the pipeline runs with.
    pub subgroup_size: u32,
    /// Subgroups per workgroup.
    pub subgroups: u32,
    /// 16-byte chunks along K (K lanes), or rows of B (N lanes with at most 2 rows per
    /// workgroup), each invocation loads before it sums them.
    pub k_unroll: u32,
}

impl SkinnyConfig {
    /// GEMMs with at most this many rows run on the skinny kernel unless
    /// [`KernelOverrides::skinny_rows`](crate::KernelOverrides::skinny_rows) says otherwise:
    /// on the H100 it beats the coopmat2 kernel's large tiles up to 32 rows (at 4096 x 4096
    /// and 4096 x 14336; 1.3-2x at 32 rows) and loses at 64 (`docs/benchmarks.md`, decode).
    /// Where the coopmat2 kernel runs the types, its few-row tile takes the GEMMs of
    /// [`WorkgroupScopeConfig::FEW_ROWS`] rows first
    /// ([`WorkgroupScopeConfig::takes_few_rows`]).
    pub const DEFAULT_MAX_ROWS: u32 = 32;
    /// The most rows of C one workgroup computes.
    pub const MAX_BLOCK_M: u32 = 8;
    /// The most rows of C per workgroup the heuristic chooses.
    const HEURISTIC_BLOCK_M: u32 = 4;
    /// The most partial sums one invocation keeps.
    const MAX_SUMS: u32 = 64;
    /// With B row-major: the fewest blocks the heuristic leaves before it narrows their rows
    /// of B (from 8 chunks, 128 bytes)...
    pub const ROW_MAJOR_BLOCKS: u64 = 128;
    /// ...and the invocations it brings 1 or 2 rows (A loaded as scalars) to, with up to
    /// 1024 per workgroup (at least 256), each summing fewer rows of B. On the H100 (GPU
    /// time, `examples/results/h100-2026-11-27-skinny/`), f16: 1 x 4096 x 14336 on 128
    /// blocks of 1x32 took 49.4 us with 32 subgroups each (2.38 TB/s), 113.5 with 8;
    /// 1 x 4096 x 4096 11.8 against 21.6; 512 blocks of 1x8 with 8 subgroups (the heuristic
    /// before) 63 and 21; split along K into 4 or 8 slices instead, 55 and 16 on the GPU but
    /// 20-30 us more per GEMM on the host. 1 x 14336 x 4096 on 224 blocks of 1x64 with 32
    /// subgroups 44.1 (2.66 TB/s), with 16 48.9, 448 of 1x32 with 8 51.1. 8-bit weights:
    /// 1x32 with 32 subgroups 31.0 at N = 4096 (1x16 with 8 before: 44.0), 1x64 with 32
    /// 31.1 at N = 14336 (with 16: 29.6; 1x16 with 8 before: 44.7).
    pub const SCALAR_A_INVOCATIONS: u64 = 1024 * 256;
    /// The same for more rows per block (A in 16-byte chunks, 16 sums per invocation and
    /// row): 4 x 4096 x 14336 on 128 blocks of 4x32 with 16 subgroups 57.3 us (73.4 on 256
    /// blocks of 4x16 with 8 before; 150 with 32), 4 x 14336 x 4096 on 224 blocks of 4x64
    /// with 8 51.4 (59.3 on 448 of 4x32 before), 8 x 4096 x 14336 on 128 of 4x64 with 16
    /// 71.1 (68.9 on 256 of 4x32 with 8 before).
    pub const ROW_BLOCK_INVOCATIONS: u64 = 256 * 256;

    /// Invocations per workgroup.
    pub fn workgroup_size(&self) -> u32 {
        self.subgroup_size * self.subgroups
    }

    /// Shared memory the kernel declares: one 4-byte partial sum per subgroup and output.
    pub fn shared_memory_bytes(&self) -> u32 {
        4 * self.subgroups * self.block_m * self.block_n
    }

    /// The heuristic's configuration for `product`: what the planner runs without tuning,
    /// and the first of [`SkinnyConfig::candidates`].
    ///
    /// The heuristic follows what tuning picked on the H100 (`docs/benchmarks.md`, decode):
    /// at most 4 rows per workgroup (more cost more in registers than the extra reads of B
    /// from L2 save), split evenly and rounded up to a power of two. With K-contiguous B a
    /// workgroup takes as many columns as rows (at least 2), so that it reads no more of A
    /// than of B (one row of 8-bit weights: 4 columns, one chunk each in flight). With
    /// row-major B, up to 8 chunks side by side along a row of B (128 bytes) while that
    /// leaves [`Self::ROW_MAJOR_BLOCKS`] blocks, each block's rows of B spread over up to 1024
    /// invocations ([`Self::SCALAR_A_INVOCATIONS`] in all for 1 or 2 rows, which load A as
    /// scalars, [`Self::ROW_BLOCK_INVOCATIONS`] for more).
    ///
    /// ```
    /// use coopgemm::config::{KernelVariant, SkinnyConfig, SkinnyProduct};
    /// let f16 = KernelVariant::embedded().find(|v| v.name == "gemm_skinny_f16_f32").unwrap();
    /// let first = SkinnyConfig::heuristic(SkinnyProduct::new(f16, 1, 14336, false, 32));
    /// assert_eq!((first.block_m, first.block_n), (1, 2));
    /// let first = SkinnyConfig::heuristic(SkinnyProduct::new(f16, 16, 4096, false, 32));
    /// assert_eq!((first.block_m, first.block_n, first.k_unroll), (4, 4, 1));
    /// // One row, B row-major: 128 blocks of 4 chunks, 32 subgroups each.
    /// let first = SkinnyConfig::heuristic(SkinnyProduct::new(f16, 1, 4096, true, 32));
    /// assert_eq!((first.block_m, first.block_n, first.subgroups), (1, 32, 32));
    /// let first = SkinnyConfig::heuristic(SkinnyProduct::new(f16, 1, 14336, true, 32));
    /// assert_eq!((first.block_m, first.block_n, first.subgroups), (1, 64, 32));
    /// // 16 rows, B row-major: 4 blocks of rows times 64 of 8 chunks, 8 subgroups each.
    /// let first = SkinnyConfig::heuristic(SkinnyProduct::new(f16, 16, 4096, true, 32));
    /// assert_eq!((first.block_m, first.block_n, first.subgroups), (4, 64, 8));
    /// ```
    pub fn heuristic(product: SkinnyProduct) -> SkinnyConfig {
        let SkinnyProduct {
            m,
            n,
            batch,
            b_row_major,
            ..
        } = product;
        let shape = SkinnyShape::new(product);
        let block_m = shape.block_m;
        if b_row_major {
            let blocks = |block_n: u32| {
                m.max(1).div_ceil(block_m) as u64 * n.div_ceil(block_n) as u64 * batch.max(1) as u64
            };
            // Rows of B up to 8 chunks wide while that leaves enough blocks, and the rows of
            // B of each block spread over as many subgroups as bring the GPU to its target.
            let lanes = shape
                .lanes(&[8, 4, 2, 1])
                .into_iter()
                .find(|&l| blocks(l * shape.vector) >= Self::ROW_MAJOR_BLOCKS)
                .unwrap_or(1);
            let block_n = lanes * shape.vector;
            let subgroups = shape.row_major_subgroups_for(block_m, blocks(block_n));
            shape.config(block_m, block_n, subgroups, shape.row_major_unroll(block_m))
        } else if block_m == 1 && shape.vector == 16 {
            // 8-bit weights: four columns with one chunk each in flight (two columns with
            // two chunks each left a tenth of the bandwidth unused on the H100).
            shape.config(1, 4, shape.k_contiguous_subgroups(), 1)
        } else {
            let first_unroll = if block_m == 1 { 2 } else { 1 };
            shape.config(
                block_m,
                block_m.max(2),
                shape.k_contiguous_subgroups(),
                first_unroll,
            )
        }
    }

    /// The configurations tuning measures for the same product: the
    /// [heuristic](SkinnyConfig::heuristic)'s first, then twice and half as many rows per
    /// workgroup and other widths, subgroup counts and K unrolls, each once.
    pub fn candidates(product: SkinnyProduct) -> Vec<SkinnyConfig> {
        let SkinnyProduct { m, b_row_major, .. } = product;
        let shape = SkinnyShape::new(product);
        let block_m = shape.block_m;
        // Alternatives for tuning: twice and half as many rows per workgroup.
        let other_block_m: Vec<u32> = [2 * block_m, block_m / 2]
            .into_iter()
            .filter(|&bm| {
                (1..=Self::MAX_BLOCK_M).contains(&bm)
                    && bm < 2 * m.max(1)
                    && (!b_row_major || bm * shape.vector <= Self::MAX_SUMS)
            })
            .collect();
        let mut list = vec![Self::heuristic(product)];
        for bm in std::iter::once(block_m).chain(other_block_m) {
            if b_row_major {
                let subgroups = shape.row_major_subgroups();
                for lanes in shape.lanes(&[1, 2, 4, 8, 16]) {
                    let unroll = shape.row_major_unroll(bm);
                    list.push(shape.config(bm, lanes * shape.vector, subgroups, unroll));
                    list.push(shape.config(
                        bm,
                        lanes * shape.vector,
                        subgroups.div_ceil(2),
                        2 * unroll,
                    ));
                    if shape.scalar_a(bm) {
                        // The widest workgroups, each summing the fewest rows of B.
                        let most = shape.most_subgroups();
                        list.push(shape.config(bm, lanes * shape.vector, most, unroll));
                    }
                }
            } else {
                let subgroups = shape.k_contiguous_subgroups();
                for block_n in [1, 2, 4, 8] {
                    if bm * block_n <= Self::MAX_SUMS {
                        for (subgroups, k_unroll) in
                            [(subgroups, 1), (subgroups, 2), (2 * subgroups, 2)]
                        {
                            list.push(shape.config(bm, block_n, subgroups, k_unroll));
                        }
                    }
                }
            }
        }
        let mut seen = Vec::new();
        list.retain(|c| {
            let new = !seen.contains(c);
            seen.push(*c);
            new
        });
        list
    }
}

/// A product as the skinny kernel's heuristic and tuning see it
/// ([`SkinnyConfig::heuristic`], [`SkinnyConfig::candidates`]): `batch` products of
/// `m × n` of `variant`'s types, B row-major (`b_row_major`) or K-contiguous, on subgroups
/// of `subgroup_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkinnyProduct {
    /// The kernel variant (its types).
    pub variant: KernelVariant,
    /// Rows of C.
    pub m: u32,
    /// Columns of C.
    pub n: u32,
    /// Products in the batch.
    pub batch: u32,
    /// Whether B is row-major (else K-contiguous).
    pub b_row_major: bool,
    /// Invocations per subgroup.
    pub subgroup_size: u32,
}

impl SkinnyProduct {
    /// One `m × n` product (a batch of 1).
    pub fn new(
        variant: KernelVariant,
        m: u32,
        n: u32,
        b_row_major: bool,
        subgroup_size: u32,
    ) -> SkinnyProduct {
        SkinnyProduct {
            variant,
            m,
            n,
            batch: 1,
            b_row_major,
            subgroup_size,
        }
    }

    /// The configuration of `tile` for this product, where the kernel can run it: at most
    /// [`SkinnyConfig::MAX_BLOCK_M`] rows, and a partial sum per row and column (B
    /// K-contiguous) or per row and vector element (B row-major) within the kernel's
    /// budget; with B row-major, columns in whole 16-byte vectors side by side on a
    /// power-of-two number of lanes no wider than a subgroup.
    ///
    /// ```
    /// use coopgemm::config::{KernelVariant, SkinnyProduct, SkinnyTile};
    /// let f16 = KernelVariant::embedded().find(|v| v.name == "gemm_skinny_f16_f32").unwrap();
    /// let row_major = SkinnyProduct::new(f16, 1, 4096, true, 32);
    /// assert!(row_major.config("1x64x8x2".parse::<SkinnyTile>()?).is_some());
    /// // 12 columns are not whole vectors of 8 f16.
    /// assert!(row_major.config("1x12x8x2".parse::<SkinnyTile>()?).is_none());
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    pub fn config(&self, tile: SkinnyTile) -> Option<SkinnyConfig> {
        let shape = SkinnyShape::new(*self);
        let SkinnyTile {
            block_m,
            block_n,
            subgroups,
            k_unroll,
        } = tile;
        let sums = if self.b_row_major {
            block_m * shape.vector
        } else {
            block_m * block_n
        };
        let lanes = block_n / shape.vector;
        let valid = (1..=SkinnyConfig::MAX_BLOCK_M).contains(&block_m)
            && block_n > 0
            && subgroups > 0
            && k_unroll > 0
            && sums <= SkinnyConfig::MAX_SUMS
            && (!self.b_row_major
                || (block_n % shape.vector == 0
                    && lanes.is_power_of_two()
                    && lanes <= self.subgroup_size));
        valid.then(|| shape.config(block_m, block_n, subgroups, k_unroll))
    }
}

/// What [`SkinnyConfig::heuristic`] and [`SkinnyConfig::candidates`] derive alike from the
/// product: 16-byte vectors of the input type, the heuristic's rows per workgroup, and the
/// subgroup counts and unrolls each layout of B takes.
struct SkinnyShape {
    variant: KernelVariant,
    vector: u32,
    block_m: u32,
    subgroup_size: u32,
}

impl SkinnyShape {
    fn new(product: SkinnyProduct) -> SkinnyShape {
        let m = product.m.max(1);
        let row_blocks = m.div_ceil(SkinnyConfig::HEURISTIC_BLOCK_M);
        SkinnyShape {
            variant: product.variant,
            vector: 16 / product.variant.types.input.size_bytes() as u32,
            block_m: m.div_ceil(row_blocks).next_power_of_two(),
            subgroup_size: product.subgroup_size,
        }
    }

    fn config(&self, block_m: u32, block_n: u32, subgroups: u32, k_unroll: u32) -> SkinnyConfig {
        SkinnyConfig {
            variant: self.variant,
            block_m,
            block_n,
            subgroup_size: self.subgroup_size,
            subgroups,
            k_unroll,
        }
    }

    /// The lane counts of `list` a subgroup has.
    fn lanes(&self, list: &[u32]) -> Vec<u32> {
        list.iter()
            .copied()
            .filter(|&l| l <= self.subgroup_size)
            .collect()
    }

    /// Row-major B, at most 2 rows: A's elements as scalars, 2 rows of B per step.
    fn scalar_a(&self, block_m: u32) -> bool {
        block_m <= 2
    }

    fn row_major_unroll(&self, block_m: u32) -> u32 {
        if self.scalar_a(block_m) {
            2
        } else {
            1
        }
    }

    fn row_major_subgroups(&self) -> u32 {
        (256 / self.subgroup_size).max(1)
    }

    /// Subgroups per workgroup for `blocks` blocks of `block_m` rows with B row-major:
    /// enough for [`SkinnyConfig::SCALAR_A_INVOCATIONS`] in all (1 or 2 rows, A loaded as
    /// scalars) or [`SkinnyConfig::ROW_BLOCK_INVOCATIONS`], a power of two, 256 to 1024
    /// invocations per workgroup and at most 32 subgroups (what devices allow of a required
    /// subgroup size: `maxComputeWorkgroupSubgroups` is 32 on lavapipe's 8-wide subgroups).
    fn row_major_subgroups_for(&self, block_m: u32, blocks: u64) -> u32 {
        let invocations = if self.scalar_a(block_m) {
            SkinnyConfig::SCALAR_A_INVOCATIONS
        } else {
            SkinnyConfig::ROW_BLOCK_INVOCATIONS
        };
        let wanted = invocations / blocks.max(1) / self.subgroup_size as u64;
        let wanted = wanted.clamp(
            self.row_major_subgroups() as u64,
            self.most_subgroups() as u64,
        ) as u32;
        1 << wanted.ilog2()
    }

    /// The most subgroups a skinny workgroup has: 1024 invocations, at most 32 subgroups.
    fn most_subgroups(&self) -> u32 {
        (1024 / self.subgroup_size).clamp(1, 32)
    }

    fn k_contiguous_subgroups(&self) -> u32 {
        (128 / self.subgroup_size).max(1)
    }
}

/// A short name for logs and benchmark records:
/// `skinny-<types>-<block_m>x<block_n>-sg<subgroup size>x<subgroups>-u<K unroll>`.
impl fmt::Display for SkinnyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skinny-{}-{}x{}-sg{}x{}-u{}",
            self.variant.types.short_name(),
            self.block_m,
            self.block_n,
            self.subgroup_size,
            self.subgroups,
            self.k_unroll
        )
    }
}

/// A workgroup tiling of the kernel: `sg_rows × sg_cols` subgroups, each owning
/// `tiles_m × tiles_n` cooperative-matrix tiles, walking K in stages of `bk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CoopmatTiling {
    /// Subgroups per workgroup along M.
    pub sg_rows: u32,
    /// Subgroups per workgroup along N.
    pub sg_cols: u32,
    /// Cooperative-matrix tiles per subgroup along M.
    pub tiles_m: u32,
    /// Cooperative-matrix tiles per subgroup along N.
    pub tiles_n: u32,
    /// K depth of one shared-memory stage, in cooperative-matrix K steps.
    pub k_steps: u32,
    /// Stages whose global loads are in flight in registers while one is multiplied: 1, or
    /// 2 (two register sets, used alternately).
    pub prefetch_stages: u32,
}

impl CoopmatTiling {
    /// Parses `SG_ROWSxSG_COLSxTILES_MxTILES_NxK_STEPS[xPREFETCH_STAGES]`, e.g. `2x2x4x4x2`
    /// or `2x4x4x4x1x2` (prefetch stages 1 or 2, default 1).
    ///
    /// ```
    /// use coopgemm::config::CoopmatTiling;
    /// assert_eq!(CoopmatTiling::parse("2x4x4x4x1").unwrap().prefetch_stages, 1);
    /// assert_eq!(CoopmatTiling::parse("2x4x4x4x1x2").unwrap().prefetch_stages, 2);
    /// assert_eq!(CoopmatTiling::parse("2x4x4x4x1x3"), None);
    /// assert_eq!(CoopmatTiling::parse("2x4x4x4"), None);
    /// assert_eq!(CoopmatTiling::parse("2x4x0x4x1"), None);
    /// ```
    pub fn parse(text: &str) -> Option<CoopmatTiling> {
        let numbers: Vec<u32> = text
            .split('x')
            .map(|part| part.parse().ok())
            .collect::<Option<_>>()?;
        if numbers.contains(&0) {
            return None;
        }
        let prefetch_stages = match numbers[..] {
            [_, _, _, _, _] => 1,
            [_, _, _, _, _, stages @ (1 | 2)] => stages,
            _ => return None,
        };
        let [sg_rows, sg_cols, tiles_m, tiles_n, k_steps] = numbers[..5] else {
            return None;
        };
        Some(CoopmatTiling {
            sg_rows,
            sg_cols,
            tiles_m,
            tiles_n,
            k_steps,
            prefetch_stages,
        })
    }

    /// Tilings to try for `types`, the heuristic's choice first (the first that fits the
    /// device's shared memory).
    ///
    /// 8-bit inputs start with 2x4x8x2x1 (256×128 workgroup tiles, 128×32 per subgroup),
    /// which loses with f16. Two prefetch stages pay where the sums are 32 bits wide, on
    /// each type's first tiling; with f16 sums they lose, and so do larger subgroup tiles
    /// (the measurements: `docs/benchmarks.md`, the KHR kernel).
    ///
    /// ```
    /// use coopgemm::{config::CoopmatTiling, GemmTypes};
    /// assert_eq!(CoopmatTiling::candidates(GemmTypes::I8_I32)[0].tiles_m, 8);
    /// assert_eq!(CoopmatTiling::candidates(GemmTypes::F16_ACC_F16)[0].tiles_m, 4);
    /// assert_eq!(CoopmatTiling::candidates(GemmTypes::F16_F32)[0].prefetch_stages, 2);
    /// assert_eq!(CoopmatTiling::candidates(GemmTypes::F16_ACC_F16)[0].prefetch_stages, 1);
    /// ```
    pub fn candidates(types: GemmTypes) -> &'static [CoopmatTiling] {
        let first = match (types.input.size_bytes(), types.accumulate) {
            (1, _) => 0,
            (2, DType::F32) => 2,
            _ => 3,
        };
        &Self::ORDERED[first..]
    }

    const fn new(sg_rows: u32, sg_cols: u32, tiles_m: u32, tiles_n: u32, k_steps: u32) -> Self {
        CoopmatTiling {
            sg_rows,
            sg_cols,
            tiles_m,
            tiles_n,
            k_steps,
            prefetch_stages: 1,
        }
    }

    const fn with_prefetch_stages(self, prefetch_stages: u32) -> Self {
        CoopmatTiling {
            prefetch_stages,
            ..self
        }
    }

    /// Every tiling the heuristic and the tuner consider, in one order: each type's list
    /// is a tail of it (see [`Self::candidates`]), so the lists differ only in where they
    /// start.
    const ORDERED: [CoopmatTiling; 8] = [
        // 8-bit inputs start here: 256×128 workgroup tiles.
        CoopmatTiling::new(2, 4, 8, 2, 1).with_prefetch_stages(2),
        CoopmatTiling::new(2, 4, 8, 2, 1),
        // 2-byte inputs summed in f32 start here.
        CoopmatTiling::new(2, 4, 4, 2, 1).with_prefetch_stages(2),
        // f16 sums and 4-byte inputs start here.
        CoopmatTiling::new(2, 4, 4, 2, 1),
        CoopmatTiling::new(2, 2, 4, 4, 1),
        CoopmatTiling::new(2, 2, 2, 4, 2),
        CoopmatTiling::new(2, 2, 2, 2, 2),
        CoopmatTiling::new(2, 2, 1, 1, 2),
    ];
}

/// Everything that fixes one pipeline: shape, subgroup size, tiling and operand layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CoopmatConfig {
    /// The kernel variant (type combination).
    pub variant: KernelVariant,
    /// The cooperative-matrix shape, from the device's list.
    pub shape: CoopmatShape,
    /// Subgroup size the pipeline runs with.
    pub subgroup_size: u32,
    /// Workgroup tiling.
    pub tiling: CoopmatTiling,
}

impl CoopmatConfig {
    /// Rows of C per workgroup.
    pub fn block_m(&self) -> u32 {
        self.tiling.sg_rows * self.tiling.tiles_m * self.shape.m
    }

    /// Columns of C per workgroup.
    pub fn block_n(&self) -> u32 {
        self.tiling.sg_cols * self.tiling.tiles_n * self.shape.n
    }

    /// K depth of one shared-memory stage.
    pub fn block_k(&self) -> u32 {
        self.tiling.k_steps * self.shape.k
    }

    /// Invocations per workgroup.
    pub fn workgroup_size(&self) -> u32 {
        self.subgroup_size * self.tiling.sg_rows * self.tiling.sg_cols
    }

    /// Shared memory the kernel declares for this configuration (the formula in the
    /// kernel's header: two padded stages of A and B tiles, or the epilogue scratch).
    pub fn shared_memory_bytes(&self, a_row_major: bool, b_row_major: bool) -> u32 {
        let element = self.variant.types.input.size_bytes() as u32;
        let accumulator = self.variant.types.accumulate.size_bytes() as u32;
        // Row stride in 16-byte units, rounded up to an odd count.
        let stride = |elements: u32, bytes: u32| {
            let units = (elements * bytes).div_ceil(16);
            units | 1
        };
        let (bm, bn, bk) = (self.block_m(), self.block_n(), self.block_k());
        let (a_rows, a_stride) = if a_row_major {
            (bm, stride(bk, element))
        } else {
            (bk, stride(bm, element))
        };
        let (b_rows, b_stride) = if b_row_major {
            (bk, stride(bn, element))
        } else {
            (bn, stride(bk, element))
        };
        let stages = 2 * (a_rows * a_stride + b_rows * b_stride);
        let scratch = self.tiling.sg_rows
            * self.tiling.sg_cols
            * self.shape.m
            * stride(self.shape.n, accumulator);
        16 * stages.max(scratch)
    }
}

/// A short name for logs and benchmark records:
/// `coopmat-<types>-<shape>-sg<subgroup size>-<subgroups>sg-<tiles>tiles-bk<BK>`, then
/// `-pf2` with two prefetch stages.
impl fmt::Display for CoopmatConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "coopmat-{}-{}x{}x{}-sg{}-{}x{}sg-{}x{}tiles-bk{}{}",
            self.variant.types.short_name(),
            self.shape.m,
            self.shape.n,
            self.shape.k,
            self.subgroup_size,
            self.tiling.sg_rows,
            self.tiling.sg_cols,
            self.tiling.tiles_m,
            self.tiling.tiles_n,
            self.block_k(),
            if self.tiling.prefetch_stages == 2 {
                "-pf2"
            } else {
                ""
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skinny_heuristic_is_the_first_candidate() {
        for variant in KernelVariant::embedded().filter(|v| v.name.starts_with("gemm_skinny")) {
            for m in [1, 2, 3, 4, 7, 16, 27, 32] {
                for n in [1, 8, 100, 4096, 14336] {
                    for b_row_major in [false, true] {
                        for subgroup_size in [8, 32, 64] {
                            let product = SkinnyProduct {
                                batch: 3,
                                ..SkinnyProduct::new(variant, m, n, b_row_major, subgroup_size)
                            };
                            let candidates = SkinnyConfig::candidates(product);
                            assert_eq!(
                                SkinnyConfig::heuristic(product),
                                candidates[0],
                                "{product:?}"
                            );
                            assert!(candidates.len() > 1);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn only_tiles_above_128x256_need_more_workgroups() {
        let tile = |block_m, block_n| {
            CoopmatPlan::WorkgroupScope(WorkgroupScopeConfig {
                variant: WORKGROUP_SCOPE_VARIANTS[0],
                block_m,
                block_n,
                block_k: 32,
                workgroup_size: 256,
                k_unroll: 8,
            })
        };
        assert_eq!(tile(64, 64).min_workgroups(), 128);
        assert_eq!(tile(128, 256).min_workgroups(), 128);
        assert_eq!(tile(256, 128).min_workgroups(), 128);
        assert_eq!(tile(256, 256).min_workgroups(), 256);
    }
}
