//! [`SimtConfig`]: the SIMT kernel's tile configurations.

use std::fmt;
use std::str::FromStr;

/// One tile configuration of the SIMT kernel.
///
/// ```
/// use coopgemm::config::SimtConfig;
/// let large = SimtConfig::by_name("128x128x8-t8x8").unwrap();
/// assert_eq!(large.workgroup_size(), 256);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SimtConfig {
    /// Short name, `TILE_MxTILE_NxTILE_K-tTHREAD_MxTHREAD_N`.
    pub name: &'static str,
    /// Rows of C per workgroup.
    pub tile_m: u32,
    /// Columns of C per workgroup.
    pub tile_n: u32,
    /// K depth of one workgroup-memory stage.
    pub tile_k: u32,
    /// Rows of C per invocation (4 or 8).
    pub thread_m: u32,
    /// Columns of C per invocation (4 or 8).
    pub thread_n: u32,
}

impl SimtConfig {
    /// Every named configuration.
    pub const ALL: [SimtConfig; 10] = [
        SimtConfig {
            name: "128x128x8-t8x8",
            tile_m: 128,
            tile_n: 128,
            tile_k: 8,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "128x64x8-t8x4",
            tile_m: 128,
            tile_n: 64,
            tile_k: 8,
            thread_m: 8,
            thread_n: 4,
        },
        SimtConfig {
            name: "128x64x16-t8x4",
            tile_m: 128,
            tile_n: 64,
            tile_k: 16,
            thread_m: 8,
            thread_n: 4,
        },
        SimtConfig {
            name: "64x128x16-t4x4",
            tile_m: 64,
            tile_n: 128,
            tile_k: 16,
            thread_m: 4,
            thread_n: 4,
        },
        SimtConfig {
            name: "64x64x16-t4x4",
            tile_m: 64,
            tile_n: 64,
            tile_k: 16,
            thread_m: 4,
            thread_n: 4,
        },
        SimtConfig {
            name: "128x64x16-t8x8",
            tile_m: 128,
            tile_n: 64,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "64x128x16-t8x8",
            tile_m: 64,
            tile_n: 128,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "64x64x16-t8x8",
            tile_m: 64,
            tile_n: 64,
            tile_k: 16,
            thread_m: 8,
            thread_n: 8,
        },
        SimtConfig {
            name: "64x64x8-t4x4",
            tile_m: 64,
            tile_n: 64,
            tile_k: 8,
            thread_m: 4,
            thread_n: 4,
        },
        SimtConfig {
            name: "32x32x16-t4x4",
            tile_m: 32,
            tile_n: 32,
            tile_k: 16,
            thread_m: 4,
            thread_n: 4,
        },
    ];

    /// Finds a configuration by name.
    pub fn by_name(name: &str) -> Option<SimtConfig> {
        SimtConfig::ALL
            .into_iter()
            .find(|config| config.name == name)
    }

    /// The configuration named `name`, for tables in the code: evaluated in a constant, an
    /// unknown name fails the build instead of being skipped at run time.
    pub(crate) const fn named(name: &str) -> SimtConfig {
        let mut index = 0;
        while index < SimtConfig::ALL.len() {
            if str_eq(SimtConfig::ALL[index].name, name) {
                return SimtConfig::ALL[index];
            }
            index += 1;
        }
        panic!("no SIMT configuration has this name")
    }

    /// Invocations per workgroup.
    pub const fn workgroup_size(&self) -> u32 {
        (self.tile_m / self.thread_m) * (self.tile_n / self.thread_n)
    }

    /// Bytes of workgroup memory the configuration uses (two stages of A and B, padded)
    /// when it computes in f32, the most any arithmetic needs (f16 stages take half).
    pub const fn workgroup_memory_bytes(&self) -> u32 {
        2 * self.tile_k * ((self.tile_m / 4 + 1) + (self.tile_n / 4 + 1)) * 16
    }

    /// Checks the constraints the kernel relies on; `Err` says which one fails.
    pub fn check(&self, limits: &wgpu::Limits) -> std::result::Result<(), String> {
        let size = self.workgroup_size();
        if ![4, 8].contains(&self.thread_m) || ![4, 8].contains(&self.thread_n) {
            return Err("thread tile must be 4 or 8 each way".into());
        }
        if !self.tile_m.is_multiple_of(self.thread_m) || !self.tile_n.is_multiple_of(self.thread_n)
        {
            return Err("tile must hold whole invocation blocks".into());
        }
        if !self.tile_k.is_multiple_of(4) {
            return Err("tile depth must be a multiple of 4 (loads move quads)".into());
        }
        for elements in [self.tile_m * self.tile_k, self.tile_n * self.tile_k] {
            if elements / 4 > 4 * size {
                return Err("each invocation must load at most 4 quads per operand".into());
            }
        }
        if size > limits.max_compute_invocations_per_workgroup
            || size > limits.max_compute_workgroup_size_x
        {
            return Err(format!("{size} invocations exceed the device limit"));
        }
        if self.workgroup_memory_bytes() > limits.max_compute_workgroup_storage_size {
            return Err(format!(
                "{} bytes of workgroup memory exceed the device's {}",
                self.workgroup_memory_bytes(),
                limits.max_compute_workgroup_storage_size
            ));
        }
        Ok(())
    }

    /// The pipeline-overridable constants for this configuration and operand layout
    /// (`None`: the layout is read from the uniform block at run time), with the main loop
    /// in the order `block_by_block` says (see `BLOCK_BY_BLOCK` in the kernel).
    pub fn constants(
        &self,
        layout: Option<(bool, bool)>,
        block_by_block: bool,
    ) -> Vec<(&'static str, f64)> {
        let (a_k_contiguous, b_k_contiguous) = layout.unwrap_or((true, false));
        vec![
            ("TILE_M", self.tile_m as f64),
            ("TILE_N", self.tile_n as f64),
            ("TILE_K", self.tile_k as f64),
            ("THREAD_M", self.thread_m as f64),
            ("THREAD_N", self.thread_n as f64),
            ("WORKGROUP_SIZE", self.workgroup_size() as f64),
            ("A_K_CONTIGUOUS", if a_k_contiguous { 1.0 } else { 0.0 }),
            ("B_K_CONTIGUOUS", if b_k_contiguous { 1.0 } else { 0.0 }),
            (
                "LAYOUT_AT_RUNTIME",
                if layout.is_none() { 1.0 } else { 0.0 },
            ),
            ("BLOCK_BY_BLOCK", if block_by_block { 1.0 } else { 0.0 }),
        ]
    }
}

/// `a == b` in a constant.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

impl fmt::Display for SimtConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl FromStr for SimtConfig {
    type Err = crate::Error;

    /// One of [`SimtConfig::ALL`] by name, else an
    /// [`Error::InvalidOption`](crate::Error::InvalidOption) that lists them.
    fn from_str(name: &str) -> crate::Result<SimtConfig> {
        SimtConfig::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = SimtConfig::ALL.iter().map(|config| config.name).collect();
            crate::Error::invalid_option(
                "SIMT configuration",
                name,
                format!("one of {}", names.join(", ")),
            )
        })
    }
}
