#version 450
// =====================================================================================
// mlp_coopvec.comp -- a whole small network in one dispatch on cooperative vectors
// =====================================================================================
//
// For every row r < rows: h0 = input row r, h(l+1) = act_l(W_l h_l + b_l), output row r =
// h(layers). One invocation per row: the row's activations are cooperative vectors
// (coopvecNV<float16_t, width>) held by the invocation through every layer; each layer is
// one coopVecMatMulAddNV with the bias fused, whose result is f16 (the only float result
// type the H100 lists), so the activations between layers are f16.
//
// The widths and activations are specialization constants (a pipeline per network shape):
// cooperative-vector dimensions must be constant expressions. Layers are stamped out to
// MAX_LAYERS below; the specialized pipeline keeps the first LAYERS. Hidden widths are
// padded to multiples of 16 by the host (zero weights and biases); the input and output
// widths are the rows' own, since the vectors are loaded from and stored to the rows.
//
// Every invocation of the last workgroup runs the whole network (its row clamped to the
// last row) and only those of real rows store: the subgroups stay full, which the driver's
// fast path for cooperative vectors wants, and every offset is uniform.
//
// Several weight sets (mlp_sets.glsl): invocation `slot` evaluates the row and set its slot
// names, with every matrix and bias offset moved by set * set_stride bytes. The offsets are
// then uniform only where a subgroup's rows share a set (rows grouped by set); elsewhere the
// driver runs each set present separately.
//
// Interface (src/mlp/coopvec.rs depends on it exactly):
//   binding 0: input rows, readonly, IN_TYPE (float16_t or float)
//   binding 1: parameters, readonly, float16_t: per layer its matrix (W_l, M x K, in the
//              inferencing-optimal layout, or the stand-in layout when emulated) at a
//              64-byte aligned byte offset and its bias (M float16_t) at a 64-byte aligned
//              byte offset
//   binding 2: output rows, OUT_TYPE (float16_t or float)
//   binding 3: with set indices, the run buffer of the sets' pre-pass (mlp_sets.glsl);
//              without, read by nothing (the host binds the parameters again)
//   push constants (72 bytes, the GEMM kernels' size, so that all share one pipeline
//              layout): rows, input_first, input_stride, output_first, output_stride,
//              groups_x, 2 unused words, indexed, sets, slots_first, order_first
//              (mlp_sets.glsl), set_stride (parameter bytes from one set to the next),
//              then 5 unused words
// Specialization constants: 0 WORKGROUP_SIZE (local_size_x), 1 LAYERS (1 to MAX_LAYERS),
// 2 + l W_l (l = 0 ..= 8: the input width, the padded hidden widths, the output width;
// 16 past the last layer), 11 + l ACT_l (MlpActivation::code of layer l), 19 INDEXED (rows
// with set indices), 20 + l MATRIX_l and 28 + l BIAS_l (set 0's byte offsets of layer l's
// matrix and bias in the parameters), 36 + l SLOPE_l (layer l's leaky-ReLU slope), 44
// VECTOR_INPUT (every input row starts 16-byte aligned and is loaded with coopVecLoadNV;
// otherwise element by element), 45 VECTOR_OUTPUT (the same for the output rows and
// coopVecStoreNV).
//
// Whatever the driver can know when it builds the pipeline is a constant: with every
// matrix offset a constant instead of a load from a table the H100's driver runs the
// network in two thirds of the time (examples/results/h100-2026-11-28-coopvec-constants/).
// =====================================================================================

#ifndef COOPVEC_EMULATED
#extension GL_NV_cooperative_vector : require
#endif
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require

#ifndef IN_TYPE
#define IN_TYPE float16_t
#endif
#ifndef OUT_TYPE
#define OUT_TYPE float
#endif

// Bytes per element of the row types.
#define float16_t_BYTES 2
#define float_BYTES 4
#define BYTES_(T) T##_BYTES
#define BYTES(T) BYTES_(T)

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint LAYERS = 1;
layout(constant_id = 2) const uint W0 = 16;
layout(constant_id = 3) const uint W1 = 16;
layout(constant_id = 4) const uint W2 = 16;
layout(constant_id = 5) const uint W3 = 16;
layout(constant_id = 6) const uint W4 = 16;
layout(constant_id = 7) const uint W5 = 16;
layout(constant_id = 8) const uint W6 = 16;
layout(constant_id = 9) const uint W7 = 16;
layout(constant_id = 10) const uint W8 = 16;
layout(constant_id = 11) const uint ACT0 = 0;
layout(constant_id = 12) const uint ACT1 = 0;
layout(constant_id = 13) const uint ACT2 = 0;
layout(constant_id = 14) const uint ACT3 = 0;
layout(constant_id = 15) const uint ACT4 = 0;
layout(constant_id = 16) const uint ACT5 = 0;
layout(constant_id = 17) const uint ACT6 = 0;
layout(constant_id = 18) const uint ACT7 = 0;
// Whether the pipeline runs rows with set indices (mlp_sets.glsl); without, every row's
// set is 0 as a constant, so that every matrix offset is uniform where the compiler can
// see it.
layout(constant_id = 19) const bool INDEXED = false;
layout(constant_id = 20) const uint MATRIX0 = 0;
layout(constant_id = 21) const uint MATRIX1 = 0;
layout(constant_id = 22) const uint MATRIX2 = 0;
layout(constant_id = 23) const uint MATRIX3 = 0;
layout(constant_id = 24) const uint MATRIX4 = 0;
layout(constant_id = 25) const uint MATRIX5 = 0;
layout(constant_id = 26) const uint MATRIX6 = 0;
layout(constant_id = 27) const uint MATRIX7 = 0;
layout(constant_id = 28) const uint BIAS0 = 0;
layout(constant_id = 29) const uint BIAS1 = 0;
layout(constant_id = 30) const uint BIAS2 = 0;
layout(constant_id = 31) const uint BIAS3 = 0;
layout(constant_id = 32) const uint BIAS4 = 0;
layout(constant_id = 33) const uint BIAS5 = 0;
layout(constant_id = 34) const uint BIAS6 = 0;
layout(constant_id = 35) const uint BIAS7 = 0;
layout(constant_id = 36) const float SLOPE0 = 0.0;
layout(constant_id = 37) const float SLOPE1 = 0.0;
layout(constant_id = 38) const float SLOPE2 = 0.0;
layout(constant_id = 39) const float SLOPE3 = 0.0;
layout(constant_id = 40) const float SLOPE4 = 0.0;
layout(constant_id = 41) const float SLOPE5 = 0.0;
layout(constant_id = 42) const float SLOPE6 = 0.0;
layout(constant_id = 43) const float SLOPE7 = 0.0;
layout(constant_id = 44) const bool VECTOR_INPUT = false;
layout(constant_id = 45) const bool VECTOR_OUTPUT = false;

layout(push_constant, std430) uniform Params {
    uint rows;
    uint input_first, input_stride;
    uint output_first, output_stride;
    uint groups_x;
    uint unused5, unused6;
    uint indexed, sets, slots_first, order_first;
    uint set_stride;
    uint unused0, unused1, unused2, unused3, unused4;
} params;

layout(set = 0, binding = 0, std430) readonly buffer Input { IN_TYPE input_elements[]; };
layout(set = 0, binding = 1, std430) readonly restrict buffer Parameters { float16_t parameters[]; };
layout(set = 0, binding = 2, std430) buffer Output { OUT_TYPE output_elements[]; };
layout(set = 0, binding = 3, std430) readonly restrict buffer Table { uint table[]; };

#include "mlp_vector_ops.glsl"
#include "mlp_sets.glsl"

// The activations as vector built-ins and arithmetic (cooperative vectors have no
// comparisons), codes as MlpActivation::code. ReLU is x - min(x, 0): exact, and NaN stays
// NaN whatever min does with it; leaky ReLU adds slope * min(x, 0) to that (one rounding).
// GELU (tanh form) and SiLU as x / (1 + e^-t), whose exponential only overflows where the
// result is -0; sigmoid 1 / (1 + e^-x). ReLU runs on the f16 vector, the others in f32.
#define RELU(x, zero, one) ((x) - min((x), (zero)))
#define LEAKY_RELU(x, zero, one) (((x) - min((x), (zero))) + min((x), (zero)) * slope_)
#define GELU(x, zero, one)                                                                     \
    ((x) / ((one) + exp(-1.5957691216057308 * ((x) + 0.044715 * (x) * (x) * (x)))))
#define SILU(x, zero, one) ((x) / ((one) + exp(-(x))))
#define SIGMOID(x, zero, one) ((one) / ((one) + exp(-(x))))

// dst (N values of T) = act(z), z N values of float16_t, act the code ACT and the slope
// SLOPE (constants).
#define ACTIVATE(dst, T, z, N, ACT, SLOPE)                                                     \
    if ((ACT) == 0) {                                                                          \
        CONVERT(dst, T, N, z);                                                                 \
    } else if ((ACT) == 1) {                                                                   \
        VECTOR(float16_t, N, relu_);                                                           \
        CONVERT(relu_, float16_t, N, z);                                                       \
        APPLY(relu_, float16_t, N, RELU);                                                      \
        CONVERT(dst, T, N, relu_);                                                             \
    } else {                                                                                   \
        const float slope_ = (SLOPE);                                                          \
        VECTOR(float, N, wide_);                                                               \
        CONVERT(wide_, float, N, z);                                                           \
        if ((ACT) == 2) {                                                                      \
            APPLY(wide_, float, N, LEAKY_RELU);                                                \
        } else if ((ACT) == 3) {                                                               \
            APPLY(wide_, float, N, GELU);                                                      \
        } else if ((ACT) == 4) {                                                               \
            APPLY(wide_, float, N, SILU);                                                      \
        } else {                                                                               \
            APPLY(wide_, float, N, SIGMOID);                                                   \
        }                                                                                      \
        CONVERT(dst, T, N, wide_);                                                             \
    }

// Layer l: z (M values) = act(W_l x + b_l) from x (K values), W_l at byte MATRIX and b_l
// at byte BIAS of set 0 (constants), moved by set_offset; after the last layer the result
// is stored (real rows only) and the invocation ends.
#define LAYER(l, x, z, K, M, ACT, MATRIX, BIAS, SLOPE)                                         \
    VECTOR(float16_t, M, z);                                                                   \
    {                                                                                          \
        MATMUL_ADD(z, x, M, K, (MATRIX) + set_offset, (BIAS) + set_offset);                    \
        if (LAYERS == (l) + 1) {                                                               \
            VECTOR(OUT_TYPE, M, y_);                                                           \
            ACTIVATE(y_, OUT_TYPE, z, M, ACT, SLOPE);                                          \
            if (stores) {                                                                      \
                const uint first = params.output_first + row * params.output_stride;           \
                if (VECTOR_OUTPUT) {                                                           \
                    STORE(y_, M, output_elements, first, BYTES(OUT_TYPE));                     \
                } else {                                                                       \
                    [[dont_unroll]] for (uint i = 0; i < (M); ++i) {                           \
                        output_elements[first + i] = y_[i];                                    \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        ACTIVATE(z, float16_t, z, M, ACT, SLOPE);                                              \
    }

// The whole network on h0, every layer's parameters moved by set_offset bytes.
#define NETWORK()                                                                              \
    LAYER(0, h0, h1, W0, W1, ACT0, MATRIX0, BIAS0, SLOPE0)                                     \
    LAYER(1, h1, h2, W1, W2, ACT1, MATRIX1, BIAS1, SLOPE1)                                     \
    LAYER(2, h2, h3, W2, W3, ACT2, MATRIX2, BIAS2, SLOPE2)                                     \
    LAYER(3, h3, h4, W3, W4, ACT3, MATRIX3, BIAS3, SLOPE3)                                     \
    LAYER(4, h4, h5, W4, W5, ACT4, MATRIX4, BIAS4, SLOPE4)                                     \
    LAYER(5, h5, h6, W5, W6, ACT5, MATRIX5, BIAS5, SLOPE5)                                     \
    LAYER(6, h6, h7, W6, W7, ACT6, MATRIX6, BIAS6, SLOPE6)                                     \
    LAYER(7, h7, h8, W7, W8, ACT7, MATRIX7, BIAS7, SLOPE7)

void main() {
    const uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * params.groups_x;
    const uint unclamped = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint row, set;
    const bool stores = slot_row(min(unclamped, params.rows - 1), row, set) && unclamped < params.rows;

    VECTOR(float16_t, W0, h0);
    {
        const uint first = params.input_first + row * params.input_stride;
        if (VECTOR_INPUT) {
            VECTOR(IN_TYPE, W0, raw);
            LOAD(raw, W0, input_elements, first, BYTES(IN_TYPE));
            CONVERT(h0, float16_t, W0, raw);
        } else {
            [[dont_unroll]] for (uint i = 0; i < W0; ++i) {
                h0[i] = float16_t(input_elements[first + i]);
            }
        }
    }
    if (!INDEXED || subgroupAllEqual(set)) {
        // One set in the whole subgroup (always, without set indices): the bytes from set
        // 0's parameters to its own as a subgroup-uniform value.
        const uint set_offset = INDEXED ? subgroupBroadcastFirst(set) * params.set_stride : 0;
        NETWORK()
    } else {
        // Rows of several sets (where the sets change, or the rows were not grouped).
        const uint set_offset = set * params.set_stride;
        NETWORK()
    }
}
