//! The bench's JSON records: one [`BenchRecord`] per measured case, written by
//! `examples/bench.rs` (`--json`) and read by `examples/plot.rs`, through serde so that every
//! string (an adapter's or a configuration's name) is escaped as JSON requires.
//!
//! A file is a JSON array with one record per line (so that results diff line by line).
//! The field names are those of the records committed under `examples/results/` and read by
//! the scripts there; fields a script added to a record (`sweep_label`, `override`) are kept
//! in [`BenchRecord::extra`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One measured case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// `simt`, `coopmat`, `wgsl-coopmat`, or `cpu-matrixmultiply` for the CPU baseline.
    pub backend: String,
    /// The types' short name (`f32`, `f16`, `f16acc16`, `bf16`, `i8`, ...).
    pub dtype: String,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub batch: u32,
    /// How B was stored: `row`, `column` or `packed`.
    pub b_layout: String,
    /// The kernel configuration that ran.
    pub config: String,
    /// `gpu-timestamps` or `wall-clock`.
    pub timing: String,
    /// Median time of one GEMM (`null` if it was not a finite number).
    pub median_ms: Option<f64>,
    /// Wall-clock records: the median time one `Context::run` held the calling thread.
    /// Absent from records written before it existed.
    #[serde(default)]
    pub host_submit_ms: Option<f64>,
    pub gflops: Option<f64>,
    pub max_rel_error: Option<f64>,
    /// Whether the result matched the CPU reference.
    pub verified: bool,
    /// The reference table's TFLOP/s for this case (`--reference`), if it has one.
    pub reference_tflops: Option<f64>,
    /// GFLOP/s over the reference's.
    pub ratio: Option<f64>,
    /// GFLOP/s over the CPU baseline's at this shape (f32 GPU records on a CPU adapter).
    pub ratio_to_cpu: Option<f64>,
    /// The adapter's name as the driver gives it.
    pub adapter: String,
    /// Fields a script added (e.g. `sweep_label`, `override`), kept as they were.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// `value` if it is finite: JSON has no NaN or infinity.
pub fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// `records` as a JSON array, one record per line.
pub fn to_json(records: &[BenchRecord]) -> Result<String, serde_json::Error> {
    let lines = records
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(if lines.is_empty() {
        "[]\n".to_string()
    } else {
        format!("[\n  {}\n]\n", lines.join(",\n  "))
    })
}

/// Parses a records file's text.
pub fn from_json(text: &str) -> Result<Vec<BenchRecord>, serde_json::Error> {
    serde_json::from_str(text)
}

/// Reads a records file.
pub fn read(path: &Path) -> Result<Vec<BenchRecord>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes a records file.
pub fn write(path: &Path, records: &[BenchRecord]) -> Result<(), String> {
    let text = to_json(records).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
