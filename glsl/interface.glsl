// The host interface both GEMM kernels share (src/vulkan/dispatch.rs: PushConstants and
// the descriptor set layout depend on it exactly): the push constants, C (binding 2) and
// the bias vector (binding 3), and the epilogue that uses them. Each kernel binds A and B
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
