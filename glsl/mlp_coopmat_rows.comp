#version 450
// =====================================================================================
// mlp_coopmat_rows.comp -- a whole small network in one dispatch on cooperative matrices,
// every subgroup running it on rows of its own
// =====================================================================================
//
// For every row r < rows: h0 = input row r, h(l+1) = act_l(W_l h_l + b_l), output row r =
// h(layers). A workgroup first copies every layer's weights into shared memory, then loops
// over blocks of SUBGROUPS * ROW_ROWS rows (ROW_ROWS = 16 * ROW_TILES per subgroup; blocks
// group, group + groups, ...). Each subgroup evaluates the network on its rows alone, with
// no workgroup barrier:
//   1. its input rows as A fragments (ROW_TILES x W0/16) in registers: whole 16x16 tiles
//      from the input where every row of the block is inside and 16-byte aligned f16 of
//      width W0 (loaded one block ahead, while the block before is evaluated), otherwise
//      converted and zero-padded through the subgroup's staging rows;
//   2. per layer: accumulators (ROW_TILES x N/16, f32) start as the bias tile; per 16
//      inputs and 16 outputs one weight fragment from shared memory multiplies every row
//      tile; the activation in registers; the accumulators go back through the staging
//      rows (f16) as the next layer's A fragments, one row tile at a time;
//   3. the last layer's tiles straight to the output where the block's rows are inside and
//      aligned and the output width is a multiple of 16, otherwise through a scratch tile in
//      the staging rows, element by element.
//
// On the H100 (mlp64, 2^20 rows) this ran in 0.32 ms against 0.69 for mlp_coopmat.comp,
// whose subgroups each own output columns of a shared block of activations; an earlier
// form with the weights read from the weights buffer instead of shared memory took 0.6-1.4
// ms: every subgroup reads every weight once per ROW_ROWS rows.
//
// The widths and activations are specialization constants (fragment arrays need constant
// sizes), so a pipeline per network shape; layers are stamped out to MAX_LAYERS (8). Runs
// without set indices only: shared memory holds one set's weights.
//
// Interface: mlp_common.glsl (src/mlp/coopmat.rs depends on it exactly). Specialization
// constants: 0 SUBGROUP_SIZE, 1 SUBGROUPS, 2 ROW_TILES, 3 MAX_WIDTH (the widest padded
// layer), 4 WORKGROUP_SIZE (= SUBGROUP_SIZE * SUBGROUPS, local_size_x), 5 ACTIVATIONS
// (mlp_common.glsl), 6 LAYERS (1 to 8), 7 + l W_l (l = 0 ..= 8: the padded widths, 16 past
// the last layer), 16 + l ACT_l (MlpActivation::code of layer l). Pipelines run with full
// subgroups of SUBGROUP_SIZE.
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

layout(constant_id = 0) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 1) const uint SUBGROUPS = 4;
layout(constant_id = 2) const uint ROW_TILES = 2;
layout(constant_id = 3) const uint MAX_WIDTH = 64;
layout(constant_id = 4) const uint WORKGROUP_SIZE = 128;
layout(constant_id = 5) const uint ACTIVATIONS = 0x3f;
layout(constant_id = 6) const uint LAYERS = 1;
layout(constant_id = 7) const uint W0 = 16;
layout(constant_id = 8) const uint W1 = 16;
layout(constant_id = 9) const uint W2 = 16;
layout(constant_id = 10) const uint W3 = 16;
layout(constant_id = 11) const uint W4 = 16;
layout(constant_id = 12) const uint W5 = 16;
layout(constant_id = 13) const uint W6 = 16;
layout(constant_id = 14) const uint W7 = 16;
layout(constant_id = 15) const uint W8 = 16;
layout(constant_id = 16) const uint ACT0 = 0;
layout(constant_id = 17) const uint ACT1 = 0;
layout(constant_id = 18) const uint ACT2 = 0;
layout(constant_id = 19) const uint ACT3 = 0;
layout(constant_id = 20) const uint ACT4 = 0;
layout(constant_id = 21) const uint ACT5 = 0;
layout(constant_id = 22) const uint ACT6 = 0;
layout(constant_id = 23) const uint ACT7 = 0;
layout(local_size_x_id = 4, local_size_y = 1, local_size_z = 1) in;

#include "mlp_common.glsl"

const uint SUBGROUP_ROWS = 16 * ROW_TILES;
const uint BLOCK_ROWS = SUBGROUPS * SUBGROUP_ROWS;
// A subgroup's staging rows: 16 rows of 16-byte vectors of 8 halves, one vector of skew
// (consecutive rows start in different bank groups); the same words serve as a 16 x 20
// float scratch tile for the output.
const uint STAGE_VECTORS = MAX_WIDTH / 8 + 1;
const uint SCRATCH_VECTORS = 5;
const uint STAGE_SUBGROUP = 16 * (STAGE_VECTORS > SCRATCH_VECTORS ? STAGE_VECTORS : SCRATCH_VECTORS);
// Layer l's weights in shared memory: W_(l+1) rows (one per output) of W_l / 8 + 1 vectors
// (one of skew, against bank conflicts of the column-major fragment loads), from vector S_l.
#define ROW_VECTORS(K) ((K) / 8 + 1)
const uint S0 = 0;
const uint S1 = S0 + W1 * ROW_VECTORS(W0);
const uint S2 = S1 + (LAYERS > 1 ? W2 * ROW_VECTORS(W1) : 0);
const uint S3 = S2 + (LAYERS > 2 ? W3 * ROW_VECTORS(W2) : 0);
const uint S4 = S3 + (LAYERS > 3 ? W4 * ROW_VECTORS(W3) : 0);
const uint S5 = S4 + (LAYERS > 4 ? W5 * ROW_VECTORS(W4) : 0);
const uint S6 = S5 + (LAYERS > 5 ? W6 * ROW_VECTORS(W5) : 0);
const uint S7 = S6 + (LAYERS > 6 ? W7 * ROW_VECTORS(W6) : 0);
const uint S8 = S7 + (LAYERS > 7 ? W8 * ROW_VECTORS(W7) : 0);
// Layer l's bias tile in the table (mlp_common.glsl): after the header, the layers' tiles
// of 16 rows of W_(l+1) words in order.
const uint B0 = ((8 * LAYERS + 15) / 16) * 16;
const uint B1 = B0 + 16 * W1;
const uint B2 = B1 + 16 * W2;
const uint B3 = B2 + 16 * W3;
const uint B4 = B3 + 16 * W4;
const uint B5 = B4 + 16 * W5;
const uint B6 = B5 + 16 * W6;
const uint B7 = B6 + 16 * W7;

shared uvec4 staging[SUBGROUPS * STAGE_SUBGROUP];
shared uvec4 shared_weights[S8];

#include "mlp_rows_ops.glsl"

// Whether the block of rows from `first` is read with whole-tile loads.
bool direct_input(uint first) {
    return IN_IS_F16 == 1 && params.input_width == W0 && params.input_first % 8 == 0
        && params.input_stride % 8 == 0 && first + BLOCK_ROWS <= params.rows;
}

// x (ROW_TILES x W0/16 A fragments) = the subgroup's rows from `first` (direct_input of its
// block).
#define LOAD_DIRECT(x, first)                                                                  \
    [[unroll]] for (uint r = 0; r < ROW_TILES; ++r) {                                          \
        [[unroll]] for (uint k = 0; k < W0 / 16; ++k) {                                        \
            load_a_input(x[r * (W0 / 16) + k],                                                 \
                         params.input_first + ((first) + r * 16) * params.input_stride + k * 16, \
                         params.input_stride);                                                 \
        }                                                                                      \
    }

// The same for any rows, through the staging rows (converted, zero-padded, zero past the
// last row).
#define LOAD_STAGED(x, first)                                                                  \
    [[unroll]] for (uint r = 0; r < ROW_TILES; ++r) {                                          \
        for (uint c = lane; c < 16 * (W0 / 8); c += SUBGROUP_SIZE) {                           \
            staging[stage_first + (c / (W0 / 8)) * STAGE_VECTORS + c % (W0 / 8)] =             \
                read_input_chunk((first) + r * 16 + c / (W0 / 8), 8 * (c % (W0 / 8)), false);  \
        }                                                                                      \
        subgroupMemoryBarrierShared();                                                         \
        subgroupBarrier();                                                                     \
        [[unroll]] for (uint k = 0; k < W0 / 16; ++k) {                                        \
            load_a_staged(x[r * (W0 / 16) + k], stage_first + 2 * k);                          \
        }                                                                                      \
        subgroupBarrier();                                                                     \
    }

// The last layer's accumulators (N columns) into the output rows.
#define STORE_OUTPUT(acc, N)                                                                   \
    {                                                                                          \
        const bool direct = params.output_width == (N)                                         \
            && params.output_first % OUTPUT_PER_VECTOR == 0                                    \
            && params.output_stride % OUTPUT_PER_VECTOR == 0                                   \
            && block_first + BLOCK_ROWS <= params.rows;                                        \
        [[unroll]] for (uint r = 0; r < ROW_TILES; ++r) {                                      \
            [[unroll]] for (uint n = 0; n < (N) / 16; ++n) {                                   \
                if (direct) {                                                                  \
                    store_output(acc[r * ((N) / 16) + n],                                      \
                                 params.output_first + (first_row + r * 16) * params.output_stride \
                                     + n * 16,                                                 \
                                 params.output_stride);                                        \
                } else {                                                                       \
                    store_scratch(acc[r * ((N) / 16) + n], stage_first);                       \
                    subgroupMemoryBarrierShared();                                             \
                    subgroupBarrier();                                                         \
                    for (uint e = lane; e < 256; e += SUBGROUP_SIZE) {                         \
                        const uint row = first_row + r * 16 + e / 16;                          \
                        const uint column = n * 16 + e % 16;                                   \
                        const uint word = (e / 16) * 4 * SCRATCH_VECTORS + e % 16;             \
                        if (row < params.rows && column < params.output_width) {               \
                            output_elements[params.output_first + row * params.output_stride   \
                                            + column] =                                        \
                                OUT_TYPE(uintBitsToFloat(staging[stage_first + word / 4][word % 4])); \
                        }                                                                      \
                    }                                                                          \
                    subgroupBarrier();                                                         \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

// Layer l: z (A fragments of N columns) = act(W_l x + b_l) from x (K columns), W_l from
// shared_weights[S], the bias tile from table[BIAS], activation ACT. After the last layer
// the result is stored and the evaluation breaks out of its do-while.
#define LAYER(l, x, z, K, N, S, BIAS, ACT)                                                     \
    A_FRAGMENT z[ROW_TILES * ((N) / 16)];                                                      \
    {                                                                                          \
        const float slope = (ACT) == 2 ? uintBitsToFloat(table[8 * (l) + 6]) : 0.0;            \
        ACCUMULATOR acc[ROW_TILES * ((N) / 16)];                                               \
        [[unroll]] for (uint n = 0; n < (N) / 16; ++n) {                                       \
            ACCUMULATOR bias;                                                                  \
            load_bias(bias, (BIAS) + n * 16, (N));                                             \
            [[unroll]] for (uint r = 0; r < ROW_TILES; ++r) {                                  \
                acc[r * ((N) / 16) + n] = bias;                                                \
            }                                                                                  \
        }                                                                                      \
        [[unroll]] for (uint k = 0; k < (K) / 16; ++k) {                                       \
            [[unroll]] for (uint n = 0; n < (N) / 16; ++n) {                                   \
                B_FRAGMENT b;                                                                  \
                load_b(b, (S) + n * 16 * ROW_VECTORS(K) + 2 * k, ROW_VECTORS(K));              \
                [[unroll]] for (uint r = 0; r < ROW_TILES; ++r) {                              \
                    multiply_add(acc[r * ((N) / 16) + n], x[r * ((K) / 16) + k], b);           \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        if ((ACT) != 0) {                                                                      \
            [[unroll]] for (uint i = 0; i < ROW_TILES * ((N) / 16); ++i) {                     \
                activate_accumulator(acc[i], (ACT), slope);                                    \
            }                                                                                  \
        }                                                                                      \
        if (LAYERS == (l) + 1) {                                                               \
            STORE_OUTPUT(acc, N);                                                              \
            break;                                                                             \
        }                                                                                      \
        [[unroll]] for (uint r = 0; r < ROW_TILES; ++r) {                                      \
            [[unroll]] for (uint n = 0; n < (N) / 16; ++n) {                                   \
                store_staged(acc[r * ((N) / 16) + n], stage_first + 2 * n);                    \
            }                                                                                  \
            subgroupMemoryBarrierShared();                                                     \
            subgroupBarrier();                                                                 \
            [[unroll]] for (uint n = 0; n < (N) / 16; ++n) {                                   \
                load_a_staged(z[r * ((N) / 16) + n], stage_first + 2 * n);                     \
            }                                                                                  \
            subgroupBarrier();                                                                 \
        }                                                                                      \
    }

// W_l for a layer index that is not a constant.
uint width(uint l) {
    switch (l) {
    case 0: return W0;
    case 1: return W1;
    case 2: return W2;
    case 3: return W3;
    case 4: return W4;
    case 5: return W5;
    case 6: return W6;
    case 7: return W7;
    default: return W8;
    }
}

void main() {
    // Every layer's weights into shared memory, rows skewed by one vector.
    uint first_vector = 0;
    for (uint l = 0; l < LAYERS; ++l) {
        const uint k_vectors = width(l) / 8;
        const uint vectors = width(l + 1) * k_vectors;
        const uint source = table[8 * l + 3] / 8;
        for (uint v = gl_LocalInvocationIndex; v < vectors; v += WORKGROUP_SIZE) {
            shared_weights[first_vector + (v / k_vectors) * (k_vectors + 1) + v % k_vectors] =
                weight_vectors[source + v];
        }
        first_vector += width(l + 1) * (k_vectors + 1);
    }
    barrier();

    const uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * params.groups_x;
    const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    const uint lane = gl_SubgroupInvocationID;
    const uint stage_first = gl_SubgroupID * STAGE_SUBGROUP;
    const uint blocks = (params.rows + BLOCK_ROWS - 1) / BLOCK_ROWS;
    // Every subgroup runs every block of its workgroup, past the last row too (reading
    // zeros, storing nothing), so that the subgroup barriers stay in workgroup-uniform
    // control flow.
    A_FRAGMENT next[ROW_TILES * (W0 / 16)];
    bool prefetched = direct_input(group * BLOCK_ROWS);
    if (prefetched) {
        LOAD_DIRECT(next, group * BLOCK_ROWS + gl_SubgroupID * SUBGROUP_ROWS)
    }
    for (uint block = group; block < blocks; block += groups) {
        const uint block_first = block * BLOCK_ROWS;
        const uint first_row = block_first + gl_SubgroupID * SUBGROUP_ROWS;
        A_FRAGMENT h0[ROW_TILES * (W0 / 16)];
        if (prefetched) {
            [[unroll]] for (uint i = 0; i < ROW_TILES * (W0 / 16); ++i) {
                h0[i] = next[i];
            }
        } else {
            LOAD_STAGED(h0, first_row)
        }
        // The next block's input, in flight while this one is evaluated.
        prefetched = block + groups < blocks && direct_input(block_first + groups * BLOCK_ROWS);
        if (prefetched) {
            LOAD_DIRECT(next, first_row + groups * BLOCK_ROWS)
        }
        do {
            LAYER(0, h0, h1, W0, W1, S0, B0, ACT0)
            LAYER(1, h1, h2, W1, W2, S1, B1, ACT1)
            LAYER(2, h2, h3, W2, W3, S2, B2, ACT2)
            LAYER(3, h3, h4, W3, W4, S3, B3, ACT3)
            LAYER(4, h4, h5, W4, W5, S4, B4, ACT4)
            LAYER(5, h5, h6, W5, W6, S5, B5, ACT5)
            LAYER(6, h6, h7, W6, W7, S6, B6, ACT6)
            LAYER(7, h7, h8, W7, W8, S7, B7, ACT7)
        } while (false);
    }
}
