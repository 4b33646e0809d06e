//! The specialization constants of the four GLSL GEMM kernels, by name: one table per kernel that
//! says which `constant_id` each has, so that the host sets them by name and a unit test
//! holds the tables against the GLSL sources.

use super::config::CoopmatPlan;
use crate::problem::{Order, ResolvedGemm};
use crate::types::DType;
use crate::vulkan::dispatch::PipelineKey;

/// The `constant_id`s of `glsl/gemm_coopmat.comp` (the KHR kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubgroupConstant {
    SubgroupSize = 0,
    CmM = 1,
    CmN = 2,
    CmK = 3,
    SgRows = 4,
    SgCols = 5,
    TilesM = 6,
    TilesN = 7,
    Bk = 8,
    ARowMajor = 9,
    BRowMajor = 10,
    CRowMajor = 11,
    /// `local_size_x_id`.
    WorkgroupSize = 12,
    BPanels = 13,
    PrefetchStages = 14,
}

/// The `constant_id`s of `glsl/gemm_coopmat2.comp` (the coopmat2 kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkgroupScopeConstant {
    Bm = 0,
    Bn = 1,
    Bk = 2,
    /// `local_size_x_id`.
    WorkgroupSize = 3,
    ARowMajor = 4,
    BRowMajor = 5,
    CRowMajor = 6,
    BPanels = 7,
    PlainStore = 8,
    KUnroll = 9,
}

/// The `constant_id`s of `glsl/gemm_skinny.comp` (GEMMs of a few rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkinnyConstant {
    SubgroupSize = 0,
    BlockM = 1,
    BlockN = 2,
    ARowMajor = 3,
    BRowMajor = 4,
    CRowMajor = 5,
    Subgroups = 6,
    /// `local_size_x_id`.
    WorkgroupSize = 7,
    KUnroll = 8,
}

/// The `constant_id`s of `glsl/gemm_decode.comp` (GEMMs of up to 16 rows on cooperative
/// matrices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeConstant {
    SubgroupSize = 0,
    CmM = 1,
    CmN = 2,
    CmK = 3,
    TilesN = 4,
    Subgroups = 5,
    Bk = 6,
    ARowMajor = 7,
    BRowMajor = 8,
    CRowMajor = 9,
    /// `local_size_x_id`.
    WorkgroupSize = 10,
}

/// A kernel's table of specialization constants.
pub(crate) trait SpecConstant: Copy + Into<u32> + 'static {
    /// Every constant, in `constant_id` order, with its name in the GLSL source.
    const ALL: &'static [(Self, &'static str)];

    /// The specialization data (one `u32` per `constant_id`, in order) for `values`, which
    /// must give every constant exactly once.
    fn data(values: &[(Self, u32)]) -> Vec<u32> {
        let mut data = vec![None; Self::ALL.len()];
        for &(constant, value) in values {
            let slot = &mut data[constant.into() as usize];
            assert!(slot.is_none(), "a specialization constant given twice");
            *slot = Some(value);
        }
        data.into_iter()
            .map(|value| value.expect("every specialization constant is given"))
            .collect()
    }
}

impl From<SubgroupConstant> for u32 {
    fn from(constant: SubgroupConstant) -> u32 {
        constant as u32
    }
}

impl From<WorkgroupScopeConstant> for u32 {
    fn from(constant: WorkgroupScopeConstant) -> u32 {
        constant as u32
    }
}

impl From<DecodeConstant> for u32 {
    fn from(constant: DecodeConstant) -> u32 {
        constant as u32
    }
}

impl SpecConstant for DecodeConstant {
    const ALL: &'static [(Self, &'static str)] = &[
        (DecodeConstant::SubgroupSize, "SUBGROUP_SIZE"),
        (DecodeConstant::CmM, "CM_M"),
        (DecodeConstant::CmN, "CM_N"),
        (DecodeConstant::CmK, "CM_K"),
        (DecodeConstant::TilesN, "TILES_N"),
        (DecodeConstant::Subgroups, "SUBGROUPS"),
        (DecodeConstant::Bk, "BK"),
        (DecodeConstant::ARowMajor, "A_ROW_MAJOR"),
        (DecodeConstant::BRowMajor, "B_ROW_MAJOR"),
        (DecodeConstant::CRowMajor, "C_ROW_MAJOR"),
        (DecodeConstant::WorkgroupSize, "WORKGROUP_SIZE"),
    ];
}

impl From<SkinnyConstant> for u32 {
    fn from(constant: SkinnyConstant) -> u32 {
        constant as u32
    }
}

impl SpecConstant for SkinnyConstant {
    const ALL: &'static [(Self, &'static str)] = &[
        (SkinnyConstant::SubgroupSize, "SUBGROUP_SIZE"),
        (SkinnyConstant::BlockM, "BLOCK_M"),
        (SkinnyConstant::BlockN, "BLOCK_N"),
        (SkinnyConstant::ARowMajor, "A_ROW_MAJOR"),
        (SkinnyConstant::BRowMajor, "B_ROW_MAJOR"),
        (SkinnyConstant::CRowMajor, "C_ROW_MAJOR"),
        (SkinnyConstant::Subgroups, "SUBGROUPS"),
        (SkinnyConstant::WorkgroupSize, "WORKGROUP_SIZE"),
        (SkinnyConstant::KUnroll, "K_UNROLL"),
    ];
}

impl SpecConstant for SubgroupConstant {
    const ALL: &'static [(Self, &'static str)] = &[
        (SubgroupConstant::SubgroupSize, "SUBGROUP_SIZE"),
        (SubgroupConstant::CmM, "CM_M"),
        (SubgroupConstant::CmN, "CM_N"),
        (SubgroupConstant::CmK, "CM_K"),
        (SubgroupConstant::SgRows, "SG_ROWS"),
        (SubgroupConstant::SgCols, "SG_COLS"),
        (SubgroupConstant::TilesM, "TILES_M"),
        (SubgroupConstant::TilesN, "TILES_N"),
        (SubgroupConstant::Bk, "BK"),
        (SubgroupConstant::ARowMajor, "A_ROW_MAJOR"),
        (SubgroupConstant::BRowMajor, "B_ROW_MAJOR"),
        (SubgroupConstant::CRowMajor, "C_ROW_MAJOR"),
        (SubgroupConstant::WorkgroupSize, "WORKGROUP_SIZE"),
        (SubgroupConstant::BPanels, "B_PANELS"),
        (SubgroupConstant::PrefetchStages, "PREFETCH_STAGES"),
    ];
}

impl SpecConstant for WorkgroupScopeConstant {
    const ALL: &'static [(Self, &'static str)] = &[
        (WorkgroupScopeConstant::Bm, "BM"),
        (WorkgroupScopeConstant::Bn, "BN"),
        (WorkgroupScopeConstant::Bk, "BK"),
        (WorkgroupScopeConstant::WorkgroupSize, "WORKGROUP_SIZE"),
        (WorkgroupScopeConstant::ARowMajor, "A_ROW_MAJOR"),
        (WorkgroupScopeConstant::BRowMajor, "B_ROW_MAJOR"),
        (WorkgroupScopeConstant::CRowMajor, "C_ROW_MAJOR"),
        (WorkgroupScopeConstant::BPanels, "B_PANELS"),
        (WorkgroupScopeConstant::PlainStore, "PLAIN_STORE"),
        (WorkgroupScopeConstant::KUnroll, "K_UNROLL"),
    ];
}

/// The pipeline of a plan for a GEMM: its module and its constants, set by name.
impl super::CoopmatBackend {
    pub(super) fn pipeline_key(&self, plan: &CoopmatPlan, gemm: &ResolvedGemm) -> PipelineKey {
        // B in column panels is read as one row-major matrix per workgroup.
        let flag = |order: Order| u32::from(order != Order::ColumnMajor);
        let layouts = [flag(gemm.a.order), flag(gemm.b.order), flag(gemm.c.order)];
        let panels = u32::from(gemm.b.order.panel_width().is_some());
        match plan {
            CoopmatPlan::Subgroup(config) => {
                use SubgroupConstant as K;
                PipelineKey {
                    module: config.variant.name,
                    constants: K::data(&[
                        (K::SubgroupSize, config.subgroup_size),
                        (K::CmM, config.shape.m),
                        (K::CmN, config.shape.n),
                        (K::CmK, config.shape.k),
                        (K::SgRows, config.tiling.sg_rows),
                        (K::SgCols, config.tiling.sg_cols),
                        (K::TilesM, config.tiling.tiles_m),
                        (K::TilesN, config.tiling.tiles_n),
                        (K::Bk, config.block_k()),
                        (K::ARowMajor, layouts[0]),
                        (K::BRowMajor, layouts[1]),
                        (K::CRowMajor, layouts[2]),
                        (K::WorkgroupSize, config.workgroup_size()),
                        (K::BPanels, panels),
                        (K::PrefetchStages, config.tiling.prefetch_stages),
                    ]),
                    required_subgroup_size: config.subgroup_size,
                }
            }
            CoopmatPlan::WorkgroupScope(config) => {
                use WorkgroupScopeConstant as K;
                PipelineKey {
                    module: config.variant.name,
                    constants: K::data(&[
                        (K::Bm, config.block_m),
                        (K::Bn, config.block_n),
                        (K::Bk, config.block_k),
                        (K::WorkgroupSize, config.workgroup_size),
                        (K::ARowMajor, layouts[0]),
                        (K::BRowMajor, layouts[1]),
                        (K::CRowMajor, layouts[2]),
                        (K::BPanels, panels),
                        (K::PlainStore, u32::from(plain_store(gemm))),
                        (K::KUnroll, config.k_unroll),
                    ]),
                    required_subgroup_size: 0,
                }
            }
            CoopmatPlan::Skinny(config) => {
                use SkinnyConstant as K;
                PipelineKey {
                    module: config.variant.name,
                    constants: K::data(&[
                        (K::SubgroupSize, config.subgroup_size),
                        (K::BlockM, config.block_m),
                        (K::BlockN, config.block_n),
                        (K::ARowMajor, layouts[0]),
                        (K::BRowMajor, layouts[1]),
                        (K::CRowMajor, layouts[2]),
                        (K::Subgroups, config.subgroups),
                        (K::WorkgroupSize, config.workgroup_size()),
                        (K::KUnroll, config.k_unroll),
                    ]),
                    required_subgroup_size: config.subgroup_size,
                }
            }
            CoopmatPlan::Decode(config) => {
                use DecodeConstant as K;
                PipelineKey {
                    module: config.variant.name,
                    constants: K::data(&[
                        (K::SubgroupSize, config.subgroup_size),
                        (K::CmM, config.shape.m),
                        (K::CmN, config.shape.n),
                        (K::CmK, config.shape.k),
                        (K::TilesN, config.tiles_n),
                        (K::Subgroups, config.subgroups),
                        (K::Bk, config.block_k),
                        (K::ARowMajor, layouts[0]),
                        (K::BRowMajor, layouts[1]),
                        (K::CRowMajor, layouts[2]),
                        (K::WorkgroupSize, config.workgroup_size()),
                    ]),
                    required_subgroup_size: config.subgroup_size,
                }
            }
        }
    }
}

/// Whether C is just the product converted to C's type (alpha 1, beta 0, no bias or
/// activation, no bf16 rounding): the coopmat2 kernel then stores its accumulator directly
/// (`PLAIN_STORE`), without the general epilogue's registers.
fn plain_store(gemm: &ResolvedGemm) -> bool {
    let g = &gemm.gemm;
    g.alpha == 1.0 && g.beta == 0.0 && g.epilogue.is_identity() && g.types.output != DType::BF16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (constant_id, name) of every `layout(constant_id = N) const TYPE NAME` line of a
    /// GLSL source, and `local_size_x_id = N` as WORKGROUP_SIZE.
    fn declared(source: &str) -> Vec<(u32, String)> {
        let mut found = Vec::new();
        for line in source.lines().map(str::trim) {
            if line.starts_with("//") {
                continue;
            }
            if let Some(rest) = line.strip_prefix("layout(constant_id = ") {
                let (id, declaration) = rest.split_once(')').expect("constant_id N)");
                let name = declaration
                    .split_whitespace()
                    .nth(2)
                    .expect("const TYPE NAME");
                found.push((id.parse().unwrap(), name.to_string()));
            }
            if let Some((_, rest)) = line.split_once("local_size_x_id = ") {
                let id = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap();
                found.push((id.parse().unwrap(), "WORKGROUP_SIZE".to_string()));
            }
        }
        found.sort();
        found
    }

    fn table<C: SpecConstant>() -> Vec<(u32, String)> {
        C::ALL
            .iter()
            .map(|&(constant, name)| (constant.into(), name.to_string()))
            .collect()
    }

    #[test]
    fn tables_match_the_glsl_sources() {
        let khr = include_str!("../../../glsl/gemm_coopmat.comp");
        let coopmat2 = include_str!("../../../glsl/gemm_coopmat2.comp");
        let skinny = include_str!("../../../glsl/gemm_skinny.comp");
        let decode = include_str!("../../../glsl/gemm_decode.comp");
        assert_eq!(declared(khr), table::<SubgroupConstant>());
        assert_eq!(declared(decode), table::<DecodeConstant>());
        for (index, (id, _)) in table::<DecodeConstant>().iter().enumerate() {
            assert_eq!(index as u32, *id, "ids are dense and in order");
        }
        assert_eq!(declared(coopmat2), table::<WorkgroupScopeConstant>());
        assert_eq!(declared(skinny), table::<SkinnyConstant>());
        for (index, (id, _)) in table::<SkinnyConstant>().iter().enumerate() {
            assert_eq!(index as u32, *id, "ids are dense and in order");
        }
        for (index, (id, _)) in table::<SubgroupConstant>().iter().enumerate() {
            assert_eq!(index as u32, *id, "ids are dense and in order");
        }
        for (index, (id, _)) in table::<WorkgroupScopeConstant>().iter().enumerate() {
            assert_eq!(index as u32, *id, "ids are dense and in order");
        }
    }

    #[test]
    fn data_places_each_value_at_its_id() {
        use WorkgroupScopeConstant as W;
        let values: Vec<(W, u32)> = W::ALL
            .iter()
            .map(|&(constant, _)| (constant, 100 + constant as u32))
            .rev()
            .collect();
        assert_eq!(W::data(&values), (100..110).collect::<Vec<u32>>());
    }
}
