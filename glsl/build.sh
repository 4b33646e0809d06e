#!/usr/bin/env bash
# Regenerates every SPIR-V variant of gemm_coopmat.comp (GL_KHR_cooperative_matrix) and of
# gemm_coopmat2.comp (GL_NV_cooperative_matrix2) into spirv/ and validates it.
# Compiler: $GLSLANG_VALIDATOR, default ../../shared/tools/glslang/bin/glslangValidator
# (the pinned build in the shared folder beside the repository checkout). spirv-val is
# taken from $SPIRV_VAL, default the same bin folder; $SPIRV_OUTPUT_DIR redirects the
# output. No debug info is emitted, so the
# outputs are reproducible byte for byte.
set -euo pipefail

script_dir="$(cd "$(dirname "$0")" && pwd)"
glslang="${GLSLANG_VALIDATOR:-$script_dir/../../shared/tools/glslang/bin/glslangValidator}"
spirv_val="${SPIRV_VAL:-$(dirname "$glslang")/spirv-val}"
# SPIRV_OUTPUT_DIR lets the tests rebuild into a scratch folder and compare.
output_dir="${SPIRV_OUTPUT_DIR:-$script_dir/spirv}"

echo "glslangValidator: $glslang"
echo "  $("$glslang" --version | head -n 1)"
echo "spirv-val: $spirv_val"
echo "  $("$spirv_val" --version | head -n 1)"

mkdir -p "$output_dir"

# variant name, A_TYPE (A/B element), ACC_TYPE (accumulator), C_TYPE (C element)
variants=(
    "f16_f32  float16_t  float     float"
    "f16_f16  float16_t  float16_t float16_t"
    "bf16_f32 bfloat16_t float     float"
    "s8_s32   int8_t     int32_t   int32_t"
    "f32_f32  float      float     float"
    "f16_f32_f16   float16_t  float  float16_t"
    "bf16_f32_bf16 bfloat16_t float  bfloat16_t"
)

# Variants of gemm_coopmat2.comp (workgroup-scope matrices; 2-byte A/B types only).
coopmat2_variants=(
    "f16_f32  float16_t  float     float"
    "f16_f16  float16_t  float16_t float16_t"
    "bf16_f32 bfloat16_t float     float"
    "f16_f32_f16   float16_t  float  float16_t"
    "bf16_f32_bf16 bfloat16_t float  bfloat16_t"
)

# build_variants SOURCE_BASENAME VARIANT...: compiles SOURCE_BASENAME.comp once per
# variant line into spirv/SOURCE_BASENAME_<name>.spv and validates the result.
build_variants() {
    local source_name="$1"
    shift
    local variant name a_type acc_type c_type output log
    for variant in "$@"; do
        read -r name a_type acc_type c_type <<<"$variant"
        output="$output_dir/${source_name}_${name}.spv"
        if ! log="$("$glslang" -V --target-env vulkan1.3 -S comp \
                -DA_TYPE="$a_type" -DACC_TYPE="$acc_type" -DC_TYPE="$c_type" \
                -o "$output" "$script_dir/${source_name}.comp" 2>&1)"; then
            echo "$log" >&2
            echo "compilation of $source_name variant $name failed" >&2
            exit 1
        fi
        "$spirv_val" --target-env vulkan1.3 "$output"
        echo "built and validated $output"
    done
}

build_variants gemm_coopmat "${variants[@]}"
build_variants gemm_coopmat2 "${coopmat2_variants[@]}"
