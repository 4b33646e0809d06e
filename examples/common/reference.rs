//! Reference throughputs (e.g. cuBLAS measured in the same call) from a text file of lines
//! like `cublas fp16->fp16(fp32acc)  4096x4096x4096:    652.3 TFLOP/s`: the bench's
//! `--reference` and the plot's reference bars.

use std::path::Path;

use coopgemm::{DType, GemmTypes};

/// One reference figure.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceEntry {
    /// The line's label, e.g. `cublas fp16->fp16(fp32acc)`.
    pub label: String,
    pub shape: (u32, u32, u32),
    pub tflops: f64,
}

/// The entries of a reference file's text; lines of another form are skipped.
pub fn parse(text: &str) -> Vec<ReferenceEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<ReferenceEntry> {
    let (head, rest) = line.split_once(':')?;
    let (label, shape) = head.trim().rsplit_once(char::is_whitespace)?;
    let shape = super::cli::parse_shape(shape).ok()?;
    let tflops = rest.split_whitespace().next()?.parse::<f64>().ok()?;
    Some(ReferenceEntry {
        label: label.trim().to_string(),
        shape,
        tflops,
    })
}

/// Reads a reference file.
pub fn read(path: &Path) -> Result<Vec<ReferenceEntry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(parse(&text))
}

/// Which reference line a dtype compares with: the part of its label that names the types.
pub fn label_for(types: GemmTypes) -> &'static str {
    match types.input {
        DType::F32 => "fp32 strict",
        DType::F16 => "fp16",
        DType::BF16 => "bf16",
        DType::I8 | DType::I32 => "int8",
    }
}

/// The first entry for `types` at `shape`.
pub fn find(
    entries: &[ReferenceEntry],
    types: GemmTypes,
    shape: (u32, u32, u32),
) -> Option<&ReferenceEntry> {
    entries
        .iter()
        .find(|entry| entry.label.contains(label_for(types)) && entry.shape == shape)
}
