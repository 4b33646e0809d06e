#version 450
// =====================================================================================
// mlp_coopmat.comp -- a whole small network in one dispatch on cooperative matrices
// =====================================================================================
//
// For every row r < rows: h0 = input row r, h(l+1) = act_l(W_l h_l + b_l), output row r =
// h(layers). A workgroup owns a block of BLOCK_ROWS = 16 * ROW_TILES rows and keeps their
// activations in shared memory (f16) through every layer: only the input is read from and
// the output written to memory (tiny-cuda-nn's fully fused MLP, on Vulkan).
//
// Per layer (k inputs, n outputs, both padded to multiples of 16):
//   1. subgroup s owns output-column tile s (16 columns) for all row tiles, or, when the
//      layer has fewer column tiles than subgroups, a share of the row tiles of column tile
//      s % column_tiles; it streams the layer's weights for its columns (16x16 B fragments,
//      from the weights buffer, L1-resident) once per 16 inputs and multiplies every row
//      tile it owns by them, accumulating in f32 registers;
//   2. barrier (every subgroup has read the layer's input activations);
//   3. the accumulators, which started as the bias, get the activation in registers; a
//      hidden layer stores them as f16 into the activations, the last layer through the
//      subgroup's scratch tile into the output (rows and columns bounds-checked);
//   4. barrier.
//
// Interface (src/mlp/coopmat.rs depends on it exactly):
//   binding 0: input rows, readonly, IN_TYPE (float16_t or float)
//   binding 1: weights, readonly, float16_t: per layer n_padded rows of k_padded (row o =
//              output o's weights, zero-padded), each layer's first element a multiple of 16
//   binding 2: output rows, OUT_TYPE (float16_t or float)
//   binding 3: layer table, readonly, uint: layer l at 8 * l: k_padded, n_padded, n,
//              weights_first, 0 (unused),
//              activation (MlpActivation::code), slope (float bits), bias_tile_first (a
//              multiple of 16: 16 identical rows of n_padded float bits, the bias
//              zero-padded, that the accumulators start from)
//   push constants (72 bytes, the GEMM kernels' size, so both share one pipeline layout):
//              rows, input_first, input_stride, output_first, output_stride, layers,
//              input_width, output_width, groups_x, then 9 unused words
// Specialization constants: 0 SUBGROUP_SIZE, 1 SUBGROUPS, 2 ROW_TILES, 3 MAX_WIDTH (the
// widest padded layer, a multiple of 16, at most 16 * SUBGROUPS), 4 WORKGROUP_SIZE (=
// SUBGROUP_SIZE * SUBGROUPS, local_size_x). Pipelines run with full subgroups of
// SUBGROUP_SIZE.
// =====================================================================================

#ifndef COOPMAT_EMULATED
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require

#ifndef IN_TYPE
#define IN_TYPE float16_t
#endif
#ifndef OUT_TYPE
#define OUT_TYPE float
#endif

layout(constant_id = 0) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 1) const uint SUBGROUPS = 4;
layout(constant_id = 2) const uint ROW_TILES = 8;
layout(constant_id = 3) const uint MAX_WIDTH = 64;
layout(local_size_x_id = 4, local_size_y = 1, local_size_z = 1) in;

const uint BLOCK_ROWS = 16 * ROW_TILES;
// 8 halves (16 bytes) of skew: consecutive rows start in different bank groups.
const uint ACTIVATION_STRIDE = MAX_WIDTH + 8;
const uint SCRATCH_STRIDE = 20;
const uint SCRATCH_TILE = 16 * SCRATCH_STRIDE;

layout(push_constant, std430) uniform Params {
    uint rows;
    uint input_first, input_stride;
    uint output_first, output_stride;
    uint layers;
    uint input_width, output_width;
    uint groups_x;
    uint unused0, unused1, unused2, unused3, unused4, unused5, unused6, unused7, unused8;
} params;

layout(set = 0, binding = 0, std430) readonly buffer Input { IN_TYPE input_elements[]; };
layout(set = 0, binding = 1, std430) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 2, std430) buffer Output { OUT_TYPE output_elements[]; };
layout(set = 0, binding = 3, std430) readonly buffer Table { uint table[]; };

shared float16_t activations[BLOCK_ROWS * ACTIVATION_STRIDE];
shared float scratch[SUBGROUPS * SCRATCH_TILE];

bool is_nan_bits(float x) {
    return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u;
}

// Codes as MlpActivation::code. ReLU keeps NaN (tested on the bits); GELU and SiLU as
// x / (1 + e^-t), whose exponential only overflows where the result is -0.
float activate(float x, uint activation, float slope) {
    if (activation == 1) {
        return is_nan_bits(x) ? x : max(x, 0.0);
    }
    if (activation == 2) {
        return (x >= 0.0 || is_nan_bits(x)) ? x : x * slope;
    }
    if (activation == 3) {
        const float t = 1.5957691216057308 * (x + 0.044715 * x * x * x);
        return x / (1.0 + exp(-t));
    }
    if (activation == 4) {
        return x / (1.0 + exp(-x));
    }
    if (activation == 5) {
        return 1.0 / (1.0 + exp(-x));
    }
    return x;
}

#include "mlp_matrix_ops.glsl"

void main() {
    const uint subgroup = gl_SubgroupID;
    const uint lane = gl_SubgroupInvocationID;
    const uint block_first_row =
        (gl_WorkGroupID.x + gl_WorkGroupID.y * params.groups_x) * BLOCK_ROWS;

    // The block's input rows, zero-padded to the first layer's k_padded columns and to
    // BLOCK_ROWS rows.
    const uint input_columns = table[0];
    [[dont_unroll]] for (uint e = gl_LocalInvocationIndex; e < BLOCK_ROWS * input_columns;
                         e += SUBGROUP_SIZE * SUBGROUPS) {
        const uint row = e / input_columns;
        const uint column = e % input_columns;
        const uint global_row = block_first_row + row;
        float value = 0.0;
        if (global_row < params.rows && column < params.input_width) {
            value = float(input_elements[params.input_first + global_row * params.input_stride + column]);
        }
        activations[row * ACTIVATION_STRIDE + column] = float16_t(value);
    }
    barrier();

    [[dont_unroll]] for (uint layer = 0; layer < params.layers; ++layer) {
        const uint k_padded = table[8 * layer];
        const uint n_padded = table[8 * layer + 1];
        const uint n = table[8 * layer + 2];
        const uint weights_first = table[8 * layer + 3];
        const uint activation = table[8 * layer + 5];
        const float slope = uintBitsToFloat(table[8 * layer + 6]);
        const uint bias_tile_first = table[8 * layer + 7];
        const bool last = layer + 1 == params.layers;

        // Which tiles this subgroup owns: column tile `column_tile`, row tiles
        // first_row_tile, first_row_tile + row_tile_step, ... (`owned` of them).
        const uint column_tiles = n_padded / 16;
        const uint sharing = max(SUBGROUPS / column_tiles, 1);
        const uint column_tile = subgroup % column_tiles;
        const uint first_row_tile = subgroup / column_tiles;
        const uint row_tile_step = sharing;
        const uint owned = first_row_tile < sharing
            ? (ROW_TILES - first_row_tile + sharing - 1) / sharing : 0;

        // Each accumulator starts as the bias of its 16 columns (16 identical rows).
        ACCUMULATOR accumulators[ROW_TILES];
        [[unroll]] for (uint i = 0; i < ROW_TILES; ++i) {
            load_bias(accumulators[i], bias_tile_first + column_tile * 16, n_padded);
        }
        if (owned > 0) {
            const uint b_first = weights_first + column_tile * 16 * k_padded;
            [[dont_unroll]] for (uint k = 0; k < k_padded; k += 16) {
                B_FRAGMENT b;
                load_b(b, b_first + k, k_padded);
                [[unroll]] for (uint i = 0; i < ROW_TILES; ++i) {
                    if (i < owned) {
                        const uint row_tile = first_row_tile + i * row_tile_step;
                        A_FRAGMENT a;
                        load_a(a, row_tile * 16 * ACTIVATION_STRIDE + k);
                        multiply_add(accumulators[i], a, b);
                    }
                }
            }
        }
        barrier();

        // Activation in registers; a hidden layer's result goes straight back into the
        // activations as f16 (its padding columns hold act(0) against zero weights of the
        // next layer). The last layer's goes through the subgroup's scratch tile to the
        // output, bounds-checked. Every subgroup runs ROW_TILES rounds, working in those it
        // owns a tile for: the subgroup barriers stay in workgroup-uniform control flow,
        // which some drivers need (lavapipe's subgroup barrier waits for the whole
        // workgroup).
        const uint scratch_first = subgroup * SCRATCH_TILE;
        [[unroll]] for (uint i = 0; i < ROW_TILES; ++i) {
            const uint row_tile = first_row_tile + i * row_tile_step;
            if (i < owned) {
                activate_accumulator(accumulators[i], activation, slope);
                if (!last) {
                    store_activations(accumulators[i], row_tile * 16 * ACTIVATION_STRIDE + column_tile * 16);
                } else {
                    store_accumulator(accumulators[i], scratch_first);
                }
            }
            if (last) {
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                if (i < owned) {
                    [[dont_unroll]] for (uint e = lane; e < 256; e += SUBGROUP_SIZE) {
                        const uint row = block_first_row + row_tile * 16 + e / 16;
                        const uint column = column_tile * 16 + e % 16;
                        if (column < n && row < params.rows) {
                            output_elements[params.output_first + row * params.output_stride + column] =
                                OUT_TYPE(scratch[scratch_first + (e / 16) * SCRATCH_STRIDE + e % 16]);
                        }
                    }
                }
                subgroupBarrier();
            }
        }
        barrier();
    }
}
