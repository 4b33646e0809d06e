//! The coopmat backend's planning: which kernel and configuration runs a GEMM. The decode
//! kernel for 4 to 16 rows of 8-bit weights (`DecodeConfig::takes_by_default`), the few-row tiles of the
//! coopmat2 kernel for 9 to 64 rows of 16-bit inputs (5 to 64 with B row-major) and 16 to
//! 32 of 8-bit ones, the skinny kernel for fewer,
//! then the coopmat2 kernel's workgroup-scope tiles or the KHR kernel's subgroup tilings,
//! each filtered by what the device's shapes, shared memory and grid limits allow.

use super::*;
use crate::device_info::FlexibleShape;

impl CoopmatBackend {
    /// The kernel and configuration used for a description: the skinny kernel for GEMMs of
    /// at most [`KernelOverrides::skinny_rows`](crate::KernelOverrides::skinny_rows) rows
    /// (unless a tile or tiling is forced); otherwise the `VK_NV_cooperative_matrix2`
    /// kernel where the device has it for these types (it is the faster on NVIDIA, see
    /// `docs/benchmarks.md`; `COOPGEMM_COOPMAT2=0` turns it off), the
    /// `VK_KHR_cooperative_matrix` kernel otherwise.
    pub fn plan(&self, gemm: &ResolvedGemm) -> std::result::Result<CoopmatPlan, String> {
        // GEMMs of 4 to 16 rows of 8-bit weights on the decode kernel (where it pays), 9
        // (or 5) to 64 rows on the coopmat2 kernel's few-row tiles, fewer rows streaming B
        // once on the skinny kernel.
        if let Some(decode) = self.decode_plan(gemm) {
            return Ok(decode);
        }
        if let Some(few_rows) = self.few_rows_plan(gemm) {
            return Ok(few_rows);
        }
        if let Some(skinny) = self.skinny_plan(gemm) {
            return Ok(skinny);
        }
        let plans = self.preferred_plans(gemm)?;
        // A tile or tiling forced by the environment, wherever it fits (so that tests run it
        // on every edge case); otherwise the largest tile that still gives the GPU enough
        // workgroups to fill it, and for small problems the smallest tile (candidates are
        // listed largest first).
        if let Some(forced) = plans.iter().find(|plan| self.overrides.forces(plan)) {
            return Ok(*forced);
        }
        let (m, n) = (gemm.gemm.m as u64, gemm.gemm.n as u64);
        let workgroups = |plan: &CoopmatPlan| {
            m.div_ceil(plan.block_m() as u64)
                * n.div_ceil(plan.block_n() as u64)
                * gemm.gemm.batch as u64
        };
        plans
            .iter()
            .find(|plan| workgroups(plan) >= plan.min_workgroups())
            .or(plans.last())
            .copied()
            .ok_or_else(|| "no configuration fits".to_string())
    }

    /// Every configuration that can run `gemm` on the kernel `plan` would use (coopmat2
    /// where usable, else the KHR kernel), largest tile first.
    fn preferred_plans(
        &self,
        gemm: &ResolvedGemm,
    ) -> std::result::Result<Vec<CoopmatPlan>, String> {
        if self.uses_coopmat2() {
            let plans = self.workgroup_scope_configs(gemm);
            if !plans.is_empty() {
                return Ok(plans.into_iter().map(CoopmatPlan::WorkgroupScope).collect());
            }
        }
        self.subgroup_plans(gemm)
    }

    /// Whether the coopmat2 kernel may run: the device has it and the caller did not turn
    /// it off (`KernelOverrides::coopmat2`).
    fn uses_coopmat2(&self) -> bool {
        self.enabled.cooperative_matrix2 && !self.overrides.without_coopmat2
    }

    fn subgroup_plans(&self, gemm: &ResolvedGemm) -> std::result::Result<Vec<CoopmatPlan>, String> {
        Ok(self
            .subgroup_configs(gemm)?
            .into_iter()
            .map(CoopmatPlan::Subgroup)
            .collect())
    }

    /// Every configuration that can run `gemm`: the preferred kernel's (as [`Self::plan`]
    /// picks from), then, where that is the coopmat2 kernel, the KHR kernel's too, so that
    /// tuning chooses between the two kernels by measurement.
    pub fn plans(&self, gemm: &ResolvedGemm) -> std::result::Result<Vec<CoopmatPlan>, String> {
        let decode = self.decode_plans(gemm);
        let skinny = self.skinny_plans(gemm);
        let mut plans = match self.preferred_plans(gemm) {
            Ok(plans) => plans,
            Err(_) if !skinny.is_empty() || !decode.is_empty() => Vec::new(),
            Err(reason) => return Err(reason),
        };
        if matches!(plans.first(), Some(CoopmatPlan::WorkgroupScope(_))) {
            // The other K unroll of each coopmat2 tile (unless one is forced), then the KHR
            // kernel's configurations.
            if self.overrides.k_unroll.is_none() {
                let other_unrolls: Vec<CoopmatPlan> = plans
                    .iter()
                    .filter_map(|plan| match plan {
                        CoopmatPlan::WorkgroupScope(config) => Some(config),
                        _ => None,
                    })
                    .flat_map(|config| {
                        WorkgroupScopeConfig::K_UNROLLS
                            .into_iter()
                            .filter(|unroll| *unroll != config.k_unroll)
                            .map(|k_unroll| {
                                CoopmatPlan::WorkgroupScope(WorkgroupScopeConfig {
                                    k_unroll,
                                    ..*config
                                })
                            })
                    })
                    .collect();
                plans.extend(other_unrolls);
            }
            plans.extend(self.subgroup_plans(gemm).unwrap_or_default());
        }
        Ok(decode.into_iter().chain(skinny).chain(plans).collect())
    }

    /// The decode kernel's configuration for `gemm` without tuning: the forced one
    /// ([`KernelOverrides::decode_config`](crate::KernelOverrides::decode_config)) where it
    /// is valid and fits, else the heuristic's where it fits, else the first candidate that
    /// does. Computed without listing every candidate: planning runs on every GEMM.
    fn decode_plan(&self, gemm: &ResolvedGemm) -> Option<CoopmatPlan> {
        let heuristic = self.decode_heuristic(gemm)?;
        let forced = self
            .overrides
            .decode
            .and_then(|tile| heuristic.with_tile(tile));
        if let Some(forced) = forced.filter(|config| self.decode_fits(gemm, config)) {
            return Some(CoopmatPlan::Decode(forced));
        }
        if self.decode_fits(gemm, &heuristic) {
            return Some(CoopmatPlan::Decode(heuristic));
        }
        self.decode_plans(gemm).into_iter().next()
    }

    /// The decode kernel's configurations for `gemm`, the heuristic's first; none where it
    /// does not take the GEMM (see [`Self::decode_heuristic`]).
    fn decode_plans(&self, gemm: &ResolvedGemm) -> Vec<CoopmatPlan> {
        let Some(heuristic) = self.decode_heuristic(gemm) else {
            return Vec::new();
        };
        DecodeConfig::candidates(heuristic.variant, heuristic.shape, heuristic.subgroup_size)
            .into_iter()
            .filter(|config| self.decode_fits(gemm, config))
            .map(CoopmatPlan::Decode)
            .collect()
    }

    /// The heuristic's decode configuration, where the decode kernel takes `gemm`: the
    /// planner sends it there ([`DecodeConfig::takes_by_default`], or 1 to
    /// [`KernelOverrides::decode_rows`](crate::KernelOverrides::decode_rows) rows of any
    /// type), its rows are within one cooperative matrix's rows, no skinny row count, tile
    /// or tiling is forced, B is not in column panels, and the device has a variant and a
    /// shape for the types (f16 sums are taken as f32 sums: the kernel sums floating point
    /// in f32).
    fn decode_heuristic(&self, gemm: &ResolvedGemm) -> Option<DecodeConfig> {
        let g = &gemm.gemm;
        let b_row_major = gemm.b.order == Order::RowMajor;
        let taken = match self.overrides.decode_rows {
            Some(max) => (1..=max).contains(&g.m),
            None => DecodeConfig::takes_by_default(
                g.m,
                u64::from(g.n) * u64::from(g.k),
                g.batch,
                g.types,
                b_row_major,
                self.has_few_row_tile(gemm),
            ),
        };
        if !taken
            || self.overrides.skinny_rows.is_some()
            || self.overrides.forces_a_tile()
            || gemm.b.order.panel_width().is_some()
        {
            return None;
        }
        let variants = if self.is_emulated() {
            DECODE_EMULATED_VARIANTS
        } else {
            DECODE_VARIANTS
        };
        let summed_in_f32 = GemmTypes {
            accumulate: DType::F32,
            ..g.types
        };
        let variant = variants.iter().find(|v| {
            v.types == g.types || (g.types.accumulate == DType::F16 && v.types == summed_in_f32)
        })?;
        let shape = self.shape_for(variant.types).ok()?;
        (g.m <= shape.m).then(|| DecodeConfig::heuristic(*variant, shape, self.subgroup_size()))
    }

    /// Whether the device runs `config` on `gemm`: a valid configuration, workgroup size,
    /// subgroups of the required size per workgroup, shared memory, grid.
    fn decode_fits(&self, gemm: &ResolvedGemm, config: &DecodeConfig) -> bool {
        let a_row_major = gemm.a.order == Order::RowMajor;
        let b_row_major = gemm.b.order != Order::ColumnMajor;
        config.is_valid()
            && self.workgroup_fits(
                config.subgroup_size,
                config.subgroups,
                config.shared_memory_bytes(a_row_major, b_row_major),
            )
            && tile_grid(
                gemm,
                (config.block_m(), config.block_n()),
                self.grid_limits(),
            )
            .is_ok()
    }

    /// The coopmat2 kernel on a few-row tile
    /// ([`WorkgroupScopeConfig::few_rows_tile`](crate::config::WorkgroupScopeConfig::few_rows_tile)),
    /// where one takes `gemm`, no skinny row count, tile or tiling is forced, and the
    /// device's coopmat2 shape fits the tile (it is then the last of the coopmat2
    /// candidates). The planner splits it along K (`AutoSplit::few_rows`).
    fn few_rows_plan(&self, gemm: &ResolvedGemm) -> Option<CoopmatPlan> {
        if !self.has_few_row_tile(gemm)
            || self.overrides.skinny_rows.is_some()
            || self.overrides.forces_a_tile()
        {
            return None;
        }
        self.workgroup_scope_configs(gemm)
            .into_iter()
            .find(WorkgroupScopeConfig::is_few_rows_tile)
            .map(CoopmatPlan::WorkgroupScope)
    }

    /// Whether the coopmat2 kernel has a few-row tile for GEMMs of `gemm`'s rows and types
    /// ([`WorkgroupScopeConfig::few_rows_tile`]) and runs it on this device: one of the
    /// device's coopmat2 shapes divides the tile (a device whose 8-bit shapes all have an M
    /// granularity of 32 has no 16-row i8 tile, and the decode kernel keeps those GEMMs).
    fn has_few_row_tile(&self, gemm: &ResolvedGemm) -> bool {
        let g = &gemm.gemm;
        if !self.uses_coopmat2() {
            return false;
        }
        let Some(tile) = WorkgroupScopeConfig::few_rows_tile(g.m, g.n, g.types, gemm.b.order)
        else {
            return false;
        };
        self.workgroup_scope_shapes(g.types)
            .is_some_and(|(shapes, max_dimension)| {
                shape_for_tile(&shapes, max_dimension, tile).is_some()
            })
    }

    /// The skinny kernel's configuration for `gemm` without tuning: the forced one
    /// ([`KernelOverrides::skinny_config`](crate::KernelOverrides::skinny_config)) where it
    /// is valid and fits, else the heuristic's where it fits the device, else the first
    /// candidate that does (see [`Self::skinny_plans`]).
    /// Computed without listing every candidate: planning runs on every GEMM.
    fn skinny_plan(&self, gemm: &ResolvedGemm) -> Option<CoopmatPlan> {
        let product = self.skinny_product(gemm)?;
        let forced = self.overrides.skinny.and_then(|tile| product.config(tile));
        if let Some(forced) = forced.filter(|config| self.skinny_fits(gemm, config)) {
            return Some(CoopmatPlan::Skinny(forced));
        }
        let heuristic = SkinnyConfig::heuristic(product);
        if self.skinny_fits(gemm, &heuristic) {
            return Some(CoopmatPlan::Skinny(heuristic));
        }
        self.skinny_plans(gemm).into_iter().next()
    }

    /// The skinny kernel's configurations for `gemm`, the heuristic's first; none where
    /// it does not take the GEMM: more rows than
    /// [`KernelOverrides::skinny_rows`](crate::KernelOverrides::skinny_rows), a forced tile
    /// or tiling of the other kernels, B in column panels, types without a variant or a
    /// feature, or a grid the device cannot launch.
    fn skinny_plans(&self, gemm: &ResolvedGemm) -> Vec<CoopmatPlan> {
        let Some(product) = self.skinny_product(gemm) else {
            return Vec::new();
        };
        SkinnyConfig::candidates(product)
            .into_iter()
            .filter(|config| self.skinny_fits(gemm, config))
            .map(CoopmatPlan::Skinny)
            .collect()
    }

    /// `gemm` as the skinny kernel sees it (its variant for the types, whether B is
    /// row-major, the subgroup size), where the kernel takes the GEMM (see
    /// [`Self::skinny_plans`]).
    fn skinny_product(&self, gemm: &ResolvedGemm) -> Option<SkinnyProduct> {
        let g = &gemm.gemm;
        let variants = if self.is_emulated() {
            SKINNY_EMULATED_VARIANTS
        } else {
            SKINNY_VARIANTS
        };
        let variant = variants.iter().find(|v| v.types == g.types)?;
        let max_rows = self
            .overrides
            .skinny_rows
            .unwrap_or(SkinnyConfig::DEFAULT_MAX_ROWS);
        if g.m > max_rows
            || self.overrides.forces_a_tile()
            || gemm.b.order.panel_width().is_some()
            || self.missing_input_feature(g.types.input).is_some()
        {
            return None;
        }
        Some(SkinnyProduct {
            batch: g.batch,
            ..SkinnyProduct::new(
                *variant,
                g.m,
                g.n,
                gemm.b.order == Order::RowMajor,
                self.subgroup_size(),
            )
        })
    }

    /// Whether the device runs `config` on `gemm`: workgroup size, subgroups of the
    /// required size per workgroup, shared memory, grid.
    fn skinny_fits(&self, gemm: &ResolvedGemm, config: &SkinnyConfig) -> bool {
        self.workgroup_fits(
            config.subgroup_size,
            config.subgroups,
            config.shared_memory_bytes(),
        ) && row_block_grid(gemm, (config.block_m, config.block_n), self.grid_limits()).is_ok()
    }

    /// Whether the device runs workgroups of `subgroups` subgroups of `subgroup_size`
    /// invocations that declare `shared_bytes` of shared memory.
    fn workgroup_fits(&self, subgroup_size: u32, subgroups: u32, shared_bytes: u32) -> bool {
        subgroup_size * subgroups <= self.info.max_workgroup_invocations
            && subgroups <= self.info.max_workgroup_subgroups
            && shared_bytes <= self.info.shared_memory_bytes
    }

    /// The most workgroups a dispatch may have along each dimension.
    pub(super) fn grid_limits(&self) -> [u32; 3] {
        self.info
            .max_workgroup_count
            .map(|count| count.min(self.max_workgroups))
    }

    fn workgroup_scope_configs(&self, gemm: &ResolvedGemm) -> Vec<WorkgroupScopeConfig> {
        self.workgroup_scope_configs_or_none(gemm)
            .unwrap_or_default()
    }

    fn workgroup_scope_configs_or_none(
        &self,
        gemm: &ResolvedGemm,
    ) -> Option<Vec<WorkgroupScopeConfig>> {
        let types = gemm.gemm.types;
        let variant = WORKGROUP_SCOPE_VARIANTS
            .iter()
            .copied()
            .find(|v| v.types == types)?;
        let (shapes, max_dimension) = self.workgroup_scope_shapes(types)?;
        let forced = self.overrides.workgroup_tile;
        let fitting: Vec<WorkgroupScopeConfig> = forced
            .into_iter()
            .chain(
                WorkgroupScopeConfig::candidates(types, gemm.b.order == Order::ColumnMajor)
                    .iter()
                    .copied()
                    .chain(WorkgroupScopeConfig::few_rows_tile(
                        gemm.gemm.m,
                        gemm.gemm.n,
                        types,
                        gemm.b.order,
                    ))
                    .filter(|tile| Some(*tile) != forced),
            )
            .filter(|&(_, bn, _)| gemm.b.order.panel_width().is_none_or(|w| bn == w))
            .filter_map(|(block_m, block_n, block_k)| {
                let shape = shape_for_tile(&shapes, max_dimension, (block_m, block_n, block_k))?;
                Some(WorkgroupScopeConfig {
                    variant,
                    block_m,
                    block_n,
                    block_k,
                    workgroup_size: shape.workgroup_invocations,
                    k_unroll: self.overrides.k_unroll.unwrap_or(
                        WorkgroupScopeConfig::default_k_unroll(
                            (block_m, block_n, block_k),
                            gemm.gemm.k,
                            types.input,
                        ),
                    ),
                })
            })
            .collect();
        Some(fitting)
    }

    /// The device's workgroup-scope coopmat2 shapes the kernel may use for `types` (the
    /// one of the forced workgroup size where one is named and listed), and the largest
    /// tile dimension it allows; none where the types lack a shape or an input feature.
    fn workgroup_scope_shapes(&self, types: GemmTypes) -> Option<(Vec<&FlexibleShape>, u32)> {
        if self.missing_input_feature(types.input).is_some() {
            return None;
        }
        let want = [
            Some(types.input),
            Some(types.input),
            Some(types.accumulate),
            Some(types.accumulate),
        ];
        let max_invocations = match self.info.workgroup_scope_max_invocations {
            0 => self.info.max_workgroup_invocations,
            limit => limit.min(self.info.max_workgroup_invocations),
        };
        // Per tile, the largest workgroup the device offers for these types whose
        // granularity divides the tile (more subgroups per tile; a 16-row tile takes a
        // shape of fewer invocations), unless the forced tile names another.
        let offered: Vec<_> = self
            .info
            .flexible_shapes
            .iter()
            .filter(|s| {
                s.workgroup_scope && s.types == want && s.workgroup_invocations <= max_invocations
            })
            .collect();
        let named = self.overrides.workgroup_size.and_then(|invocations| {
            let shape = offered
                .iter()
                .find(|s| s.workgroup_invocations == invocations);
            if shape.is_none() {
                log::warn!("no coopmat2 shape for {invocations} invocations; choosing per tile");
            }
            shape.copied()
        });
        let shapes = match named {
            Some(shape) => vec![shape],
            None => offered,
        };
        if shapes.is_empty() {
            return None;
        }
        let max_dimension = if self.info.flexible_max_dimension == 0 {
            u32::MAX
        } else {
            self.info.flexible_max_dimension
        };
        Some((shapes, max_dimension))
    }

    fn subgroup_configs(
        &self,
        gemm: &ResolvedGemm,
    ) -> std::result::Result<Vec<CoopmatConfig>, String> {
        let types = gemm.gemm.types;
        let variant = self.variant(types)?;
        let shape = self.shape_for(types)?;
        let subgroup_size = self.subgroup_size();
        let a_row_major = gemm.a.order == Order::RowMajor;
        let b_row_major = gemm.b.order != Order::ColumnMajor;
        let panel_width = gemm.b.order.panel_width();
        let fits = |config: &CoopmatConfig| {
            self.workgroup_fits(
                config.subgroup_size,
                config.tiling.sg_rows * config.tiling.sg_cols,
                config.shared_memory_bytes(a_row_major, b_row_major),
            )
        };
        let forced = self.overrides.tiling;
        let fitting: Vec<CoopmatConfig> = forced
            .into_iter()
            .chain(
                CoopmatTiling::candidates(types)
                    .iter()
                    .copied()
                    .filter(|tiling| Some(*tiling) != forced),
            )
            .map(|tiling| CoopmatConfig {
                variant,
                shape,
                subgroup_size,
                tiling,
            })
            .filter(fits)
            .filter(|config| panel_width.is_none_or(|w| config.block_n() == w))
            .collect();
        if fitting.is_empty() {
            return Err(match panel_width {
                Some(w) => format!("no cooperative-matrix tiling is {w} columns wide (B's panels)"),
                None => format!(
                    "no tiling fits the device's workgroups ({} bytes of shared memory, {} invocations, {} subgroups)",
                    self.info.shared_memory_bytes,
                    self.info.max_workgroup_invocations,
                    self.info.max_workgroup_subgroups
                ),
            });
        }
        Ok(fitting)
    }
}

/// The shape `tile` (block_m, block_n, block_k) runs on: the one [`largest_shape_for`]
/// gives, where no dimension of the tile exceeds the device's `max_dimension`.
fn shape_for_tile<'a>(
    shapes: &[&'a FlexibleShape],
    max_dimension: u32,
    tile: (u32, u32, u32),
) -> Option<&'a FlexibleShape> {
    if tile.0.max(tile.1).max(tile.2) > max_dimension {
        return None;
    }
    largest_shape_for(shapes, tile)
}

/// The shape of `shapes` with the most invocations whose granularities divide `tile`
/// (block_m, block_n, block_k): on NVIDIA, 256 invocations for tiles of 32 rows and columns,
/// 64 for a 16-row tile.
fn largest_shape_for<'a>(
    shapes: &[&'a FlexibleShape],
    (block_m, block_n, block_k): (u32, u32, u32),
) -> Option<&'a FlexibleShape> {
    shapes
        .iter()
        .copied()
        .filter(|shape| {
            block_m % shape.m_granularity.max(1) == 0
                && block_n % shape.n_granularity.max(1) == 0
                && block_k % shape.k_granularity.max(1) == 0
        })
        .max_by_key(|shape| shape.workgroup_invocations)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVIDIA's workgroup-scope f16 shapes (as the H100 and H200 list them).
    fn nvidia_shapes() -> Vec<FlexibleShape> {
        [(16, 16, 32), (16, 16, 64), (32, 16, 128), (32, 32, 256)]
            .into_iter()
            .map(|(m, n, invocations)| FlexibleShape {
                m_granularity: m,
                n_granularity: n,
                k_granularity: 16,
                types: [
                    Some(DType::F16),
                    Some(DType::F16),
                    Some(DType::F32),
                    Some(DType::F32),
                ],
                workgroup_scope: true,
                workgroup_invocations: invocations,
            })
            .collect()
    }

    #[test]
    fn each_tile_takes_the_largest_workgroup_that_divides_it() {
        let shapes = nvidia_shapes();
        let shapes: Vec<&FlexibleShape> = shapes.iter().collect();
        let invocations =
            |tile| largest_shape_for(&shapes, tile).map(|shape| shape.workgroup_invocations);
        assert_eq!(invocations((128, 256, 32)), Some(256));
        assert_eq!(invocations((32, 64, 64)), Some(256));
        assert_eq!(invocations((16, 64, 64)), Some(64));
        assert_eq!(invocations((32, 16, 64)), Some(128));
        assert_eq!(invocations((16, 16, 16)), Some(64));
        assert_eq!(invocations((8, 64, 64)), None);
        assert_eq!(invocations((32, 64, 8)), None);
        assert_eq!(largest_shape_for(&[], (32, 32, 32)), None);
    }
}
