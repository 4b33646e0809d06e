// The host interface the GEMM kernels share (src/vulkan/dispatch.rs: PushConstants and
// the descriptor set layout depend on it exactly): the push constants, C (binding 2) and
// the bias vector (binding 3), the epilogue that uses them, and store_c_float /
// store_c_int, which write one element of C through it. Each kernel binds A and B
// (bindings 0 and 1) in its own view before including this.

layout(push_constant, std430) uniform PushConstants {
    uint m, n, k;
    uint lda, ldb, ldc;
    uint a_offset, b_offset, c_offset;
    uint a_batch_stride, b_batch_stride, c_batch_stride;
    float alpha, beta;
    uint bias_offset;
    uint b_panel_stride;
    uint activation, bias_axis;  // the epilogue (epilogue.glsl)
} params;

layout(set = 0, binding = 2, std430) buffer MatrixC { C_TYPE c_elements[]; };
layout(set = 0, binding = 3, std430) readonly buffer BiasVector { float bias_values[]; };

#include "epilogue.glsl"

// Stores C(i, j), at c_index, from its sum over k: alpha * sum + beta * C (C is read only
// where beta != 0, so it may hold NaN otherwise), the epilogue, bf16 rounding where C is
// bf16, then C's type.
void store_c_float(uint c_index, uint i, uint j, float sum) {
    float value = params.alpha * sum;
    if (params.beta != 0.0) {
        value += params.beta * float(c_elements[c_index]);
    }
    if (!epilogue_is_identity()) {
        value = apply_epilogue(value, i, j);
    }
#if OUTPUT_TYPE_ID == 3
    value = round_to_bfloat16(value);
#endif
    c_elements[c_index] = C_TYPE(value);
}

#if ACCUMULATOR_TYPE_ID == 5
// The same for int32 sums: exact in integer arithmetic (sum, or sum + C) where alpha is 1
// and beta 0 or 1, so no precision is lost for |sum| > 2^24; through float otherwise.
void store_c_int(uint c_index, uint i, uint j, int sum) {
    if (params.alpha == 1.0 && (params.beta == 0.0 || params.beta == 1.0)) {
        int value = sum;
        if (params.beta != 0.0) {
            value += int(c_elements[c_index]);
        }
        c_elements[c_index] = C_TYPE(value);
    } else {
        store_c_float(c_index, i, j, float(sum));
    }
}
#endif
