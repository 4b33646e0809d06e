//! The WGSL storage snippets (`wgsl/storage/`) the two WGSL kernels and split-K's reduction
//! are assembled from: how A and B are loaded, how C is stored, the 16-bit formats, the
//! arithmetic type and the epilogue. Snippets written once for several element types take
//! the type from an alias the host puts in front (`Element`, `CElement`).

use crate::types::DType;

const COMPUTE_F32: &str = include_str!("../../wgsl/storage/compute_f32.wgsl");
const COMPUTE_F16: &str = include_str!("../../wgsl/storage/compute_f16.wgsl");
const INPUTS_NATIVE: &str = include_str!("../../wgsl/storage/inputs_native.wgsl");
const INPUTS_NATIVE_VEC4: &str = include_str!("../../wgsl/storage/inputs_native_vec4.wgsl");
const INPUTS_NATIVE_OCT: &str = include_str!("../../wgsl/storage/inputs_native_oct.wgsl");
const INPUTS_16BIT: &str = include_str!("../../wgsl/storage/inputs_16bit.wgsl");
const INPUTS_16BIT_VEC4: &str = include_str!("../../wgsl/storage/inputs_16bit_vec4.wgsl");
const OUTPUT_NATIVE: &str = include_str!("../../wgsl/storage/output_native.wgsl");
const OUTPUT_16BIT: &str = include_str!("../../wgsl/storage/output_16bit.wgsl");
const FORMAT_F16: &str = include_str!("../../wgsl/storage/format_f16.wgsl");
const FORMAT_BF16: &str = include_str!("../../wgsl/storage/format_bf16.wgsl");
/// Bias and activation, applied as C is written.
pub(crate) const EPILOGUE: &str = include_str!("../../wgsl/storage/epilogue.wgsl");

/// The arithmetic snippet: `alias Scalar` (and `enable f16` for f16, which must come
/// first in the module).
pub(crate) fn compute(scalar: DType) -> &'static str {
    if scalar == DType::F16 {
        COMPUTE_F16
    } else {
        COMPUTE_F32
    }
}

/// A and B stored as WGSL's own `element` type (f32, or f16 with `SHADER_F16`), bound as
/// scalars or, with `vector_loads`, as vec4s.
pub(crate) fn native_inputs(element: DType, vector_loads: bool) -> String {
    let snippet = if vector_loads {
        INPUTS_NATIVE_VEC4
    } else {
        INPUTS_NATIVE
    };
    format!("alias Element = {element};\n{snippet}")
}

/// A and B stored as WGSL's 16-bit `element` type (f16 with `SHADER_F16`), bound as octs of
/// eight elements (one 16-byte load each); `None` for other types.
pub(crate) fn native_oct_inputs(element: DType) -> Option<String> {
    (element == DType::F16).then(|| format!("alias Element = {element};\n{INPUTS_NATIVE_OCT}"))
}

/// A and B stored as a 16-bit format packed two to a `u32` (f16 or bf16 on any device; the
/// format snippet decodes), bound as words or, with `vector_loads`, as vec4s of words.
pub(crate) fn packed_16bit_inputs(vector_loads: bool) -> &'static str {
    if vector_loads {
        INPUTS_16BIT_VEC4
    } else {
        INPUTS_16BIT
    }
}

/// C stored as WGSL's own `element` type (f32, or f16 with `SHADER_F16`).
pub(crate) fn native_output(element: DType) -> String {
    format!("alias CElement = {element};\n{OUTPUT_NATIVE}")
}

/// What a kernel that writes C of type `output` with f32 arithmetic needs after the
/// arithmetic snippet: the 16-bit format of `output` or of the inputs `input` (if any),
/// the C binding (f32 natively, 16-bit formats packed into words), and the epilogue.
pub(crate) fn output_side(input: DType, output: DType) -> String {
    let format = [input, output]
        .into_iter()
        .find_map(|t| match t {
            DType::F16 => Some(FORMAT_F16),
            DType::BF16 => Some(FORMAT_BF16),
            _ => None,
        })
        .unwrap_or("");
    let output = if output == DType::F32 {
        native_output(DType::F32)
    } else {
        OUTPUT_16BIT.to_string()
    };
    [format, &output, EPILOGUE].join("\n")
}
