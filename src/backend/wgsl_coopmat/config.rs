//! The WGSL cooperative-matrix kernel's configurations: the coop shapes a device lists
//! ([`CoopShape`]) and the workgroup tilings ([`WgslCoopConfig`]).

use std::fmt;
use std::str::FromStr;

use crate::types::{CoopShape, DType, GemmTypes};

fn float_type(scalar: wgpu::CooperativeScalarType) -> Option<DType> {
    match scalar {
        wgpu::CooperativeScalarType::F32 => Some(DType::F32),
        wgpu::CooperativeScalarType::F16 => Some(DType::F16),
        _ => None,
    }
}

impl CoopShape {
    /// The shapes among `properties` that WGSL can express and the kernel uses: square 8×8×8
    /// or 16×16×16 (WGSL has only `coop_mat8x8` and `coop_mat16x16`), f16 or f32 A/B, f16 or
    /// f32 accumulators, no saturation. Larger sizes first.
    pub fn usable(properties: &[wgpu::CooperativeMatrixProperties]) -> Vec<CoopShape> {
        let mut shapes: Vec<CoopShape> = properties
            .iter()
            .filter(|p| {
                matches!(p.m_size, 8 | 16)
                    && p.m_size == p.n_size
                    && p.m_size == p.k_size
                    && !p.saturating_accumulation
            })
            .filter_map(|p| {
                Some(CoopShape {
                    size: p.m_size,
                    input: float_type(p.ab_type)?,
                    accumulate: float_type(p.cr_type)?,
                })
            })
            .collect();
        shapes.sort_by_key(|shape| std::cmp::Reverse(shape.size));
        shapes.dedup();
        shapes
    }
}
/// One tiling of the cooperative-matrix kernel: a `tile_m` × `tile_n` workgroup tile of C,
/// cut among `subgroups_m` × `subgroups_n` subgroups, each holding
/// [`tiles_m`](Self::tiles_m) × [`tiles_n`](Self::tiles_n) accumulators of `coop` × `coop`;
/// K walks in stages of `tile_k`.
///
/// Written `c{coop}-{tile_m}x{tile_n}x{tile_k}-w{subgroups_m}x{subgroups_n}`:
///
/// ```
/// use coopgemm::config::WgslCoopConfig;
/// let config: WgslCoopConfig = "c16-128x64x32-w4x2".parse().unwrap();
/// assert_eq!((config.tiles_m(), config.tiles_n()), (2, 2));
/// assert_eq!(config.to_string(), "c16-128x64x32-w4x2");
/// assert!("c16-128x64x32-w1x1".parse::<WgslCoopConfig>().is_err()); // 8 x 4 tiles each
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WgslCoopConfig {
    /// Coop tile size: 8 or 16.
    pub coop: u32,
    /// Rows of C per workgroup.
    pub tile_m: u32,
    /// Columns of C per workgroup.
    pub tile_n: u32,
    /// K depth of one workgroup-memory stage.
    pub tile_k: u32,
    /// Subgroups along m.
    pub subgroups_m: u32,
    /// Subgroups along n.
    pub subgroups_n: u32,
}

pub(super) const fn config(
    coop: u32,
    tile_m: u32,
    tile_n: u32,
    tile_k: u32,
    subgroups_m: u32,
    subgroups_n: u32,
) -> WgslCoopConfig {
    WgslCoopConfig {
        coop,
        tile_m,
        tile_n,
        tile_k,
        subgroups_m,
        subgroups_n,
    }
}

impl WgslCoopConfig {
    /// The candidates the heuristic and the autotuner pick from, for both coop sizes.
    pub const CANDIDATES: [WgslCoopConfig; 14] = [
        config(16, 128, 128, 32, 4, 2),
        config(16, 128, 128, 16, 2, 2),
        config(16, 128, 64, 32, 4, 2),
        config(16, 128, 64, 16, 2, 2),
        config(16, 64, 128, 16, 2, 2),
        config(16, 64, 128, 32, 2, 4),
        config(16, 64, 64, 32, 2, 2),
        config(16, 32, 32, 32, 2, 2),
        config(8, 64, 64, 32, 2, 2),
        config(8, 64, 64, 16, 2, 2),
        config(8, 64, 32, 16, 2, 2),
        config(8, 32, 64, 16, 2, 2),
        config(8, 32, 32, 16, 2, 2),
        config(8, 16, 16, 16, 1, 1),
    ];

    /// Accumulator tiles per subgroup along m.
    pub const fn tiles_m(&self) -> u32 {
        self.tile_m / (self.subgroups_m * self.coop)
    }

    /// Accumulator tiles per subgroup along n.
    pub const fn tiles_n(&self) -> u32 {
        self.tile_n / (self.subgroups_n * self.coop)
    }

    /// Subgroups per workgroup.
    pub const fn subgroups(&self) -> u32 {
        self.subgroups_m * self.subgroups_n
    }

    /// Invocations per workgroup with subgroups of `subgroup_size`.
    pub const fn workgroup_size(&self, subgroup_size: u32) -> u32 {
        self.subgroups() * subgroup_size
    }

    /// Bytes of workgroup memory for `types`: two padded stages of A and B (each the larger
    /// of its two layouts: rows of `tile_k` or rows along m or n, plus 16 bytes each), and
    /// one accumulator of scratch per subgroup.
    pub fn workgroup_memory_bytes(&self, types: GemmTypes) -> u32 {
        let input = types.input.size_bytes() as u32;
        let pad = 16 / input;
        let k = self.tile_k;
        let stage = |outer: u32| (outer * (k + pad)).max(k * (outer + pad));
        let stages = 2 * (stage(self.tile_m) + stage(self.tile_n)) * input;
        let scratch =
            self.subgroups() * self.coop * self.coop * types.accumulate.size_bytes() as u32;
        stages + scratch
    }

    /// The constraints of the kernel that do not depend on a device: `Err` says which fails.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if !matches!(self.coop, 8 | 16) {
            return Err(format!("coop size {} is not 8 or 16", self.coop));
        }
        if self.subgroups_m == 0 || self.subgroups_n == 0 {
            return Err("no subgroups".into());
        }
        for (tile, subgroups, axis) in [
            (self.tile_m, self.subgroups_m, "m"),
            (self.tile_n, self.subgroups_n, "n"),
        ] {
            let per_subgroup = subgroups * self.coop;
            if tile == 0 || !tile.is_multiple_of(per_subgroup) {
                return Err(format!(
                    "the tile's {tile} along {axis} is not a multiple of {subgroups} subgroups of {} ",
                    self.coop
                ));
            }
            if !matches!(tile / per_subgroup, 1 | 2 | 4) {
                return Err(format!(
                    "{} accumulator tiles per subgroup along {axis}; the kernel holds 1, 2 or 4",
                    tile / per_subgroup
                ));
            }
        }
        // The kernel writes out the K steps of a stage: 1, 2 or 4 of them.
        if ![1, 2, 4]
            .map(|steps| steps * self.coop)
            .contains(&self.tile_k)
            || !self.tile_k.is_multiple_of(4)
        {
            return Err(format!(
                "the stage depth {} is not 1, 2 or 4 times {} and a multiple of 4",
                self.tile_k, self.coop
            ));
        }
        Ok(())
    }

    /// Whether the configuration runs `types` on a device with these limits and subgroups of
    /// at most `subgroup_size` invocations; `Err` says why not.
    pub fn check(
        &self,
        limits: &wgpu::Limits,
        subgroup_size: u32,
        types: GemmTypes,
    ) -> std::result::Result<(), String> {
        self.validate()?;
        let size = self.workgroup_size(subgroup_size);
        if size > limits.max_compute_invocations_per_workgroup
            || size > limits.max_compute_workgroup_size_x
        {
            return Err(format!("{size} invocations exceed the device limit"));
        }
        for (outer, operand) in [(self.tile_m, "A"), (self.tile_n, "B")] {
            if outer * self.tile_k / 4 > 4 * size {
                return Err(format!(
                    "each invocation would stage more than 4 quads of {operand} (subgroups of {subgroup_size})"
                ));
            }
        }
        let bytes = self.workgroup_memory_bytes(types);
        if bytes > limits.max_compute_workgroup_storage_size {
            return Err(format!(
                "{bytes} bytes of workgroup memory exceed the device's {}",
                limits.max_compute_workgroup_storage_size
            ));
        }
        Ok(())
    }

    /// The pipeline-overridable constants for subgroups of `subgroup_size` and the operand
    /// layout (A k-contiguous, B k-contiguous).
    pub fn constants(&self, subgroup_size: u32, layout: (bool, bool)) -> Vec<(&'static str, f64)> {
        let flag = |value: bool| if value { 1.0 } else { 0.0 };
        vec![
            ("TILE_M", self.tile_m as f64),
            ("TILE_N", self.tile_n as f64),
            ("TILE_K", self.tile_k as f64),
            ("SUBGROUP_SIZE", subgroup_size as f64),
            ("SUBGROUPS_N", self.subgroups_n as f64),
            ("TILES_M", self.tiles_m() as f64),
            ("TILES_N", self.tiles_n() as f64),
            ("WORKGROUP_SIZE", self.workgroup_size(subgroup_size) as f64),
            ("A_K_CONTIGUOUS", flag(layout.0)),
            ("B_K_CONTIGUOUS", flag(layout.1)),
            ("LAYOUT_AT_RUNTIME", 0.0),
        ]
    }
}

impl fmt::Display for WgslCoopConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "c{}-{}x{}x{}-w{}x{}",
            self.coop, self.tile_m, self.tile_n, self.tile_k, self.subgroups_m, self.subgroups_n
        )
    }
}

impl FromStr for WgslCoopConfig {
    type Err = crate::Error;

    /// Parses [`Display`](fmt::Display)'s form and checks it with
    /// [`WgslCoopConfig::validate`]; an [`Error::InvalidOption`](crate::Error::InvalidOption)
    /// says why not.
    fn from_str(text: &str) -> crate::Result<WgslCoopConfig> {
        parse(text)
            .map_err(|why| crate::Error::invalid_option("wgsl-coopmat configuration", text, why))
    }
}

/// [`WgslCoopConfig::from_str`], with what is wrong as text.
fn parse(text: &str) -> std::result::Result<WgslCoopConfig, String> {
    let bad = || "of the form c<8|16>-<M>x<N>x<K>-w<SM>x<SN>".to_string();
    let numbers = |part: &str, count: usize| -> std::result::Result<Vec<u32>, String> {
        let values: Vec<u32> = part
            .split('x')
            .map(|v| v.parse::<u32>().map_err(|_| bad()))
            .collect::<std::result::Result<_, _>>()?;
        if values.len() == count {
            Ok(values)
        } else {
            Err(bad())
        }
    };
    let mut parts = text.split('-');
    let (Some(coop), Some(tile), Some(subgroups), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let coop = coop
        .strip_prefix('c')
        .and_then(|c| c.parse::<u32>().ok())
        .ok_or_else(bad)?;
    let tile = numbers(tile, 3)?;
    let subgroups = numbers(subgroups.strip_prefix('w').ok_or_else(bad)?, 2)?;
    let parsed = config(coop, tile[0], tile[1], tile[2], subgroups[0], subgroups[1]);
    parsed
        .validate()
        .map_err(|why| format!("a valid configuration ({why})"))?;
    Ok(parsed)
}
