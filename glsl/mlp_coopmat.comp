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
// The input block is read first, with 16-byte loads where its rows are 16-byte aligned (all
// loads of an invocation in flight before it stores any), element by element elsewhere.
// Then per layer (k inputs, n outputs, both padded to multiples of 16):
//   1. subgroup s owns output-column tile s (16 columns) for all row tiles, or, when the
//      layer has fewer column tiles than subgroups, a share of the row tiles of column tile
//      s % column_tiles. Its accumulators start as the bias tile (loaded once); per 16
//      inputs it loads one 16x16 fragment of the layer's weights for its columns (from the
//      weights buffer, L1-resident) and multiplies every row tile it owns by it, summing
//      in f32 registers;
//   2. barrier (every subgroup has read the layer's input activations);
//   3. the activation in registers; a hidden layer stores the tiles as f16 into the
//      activations, the last layer into the output: a whole 16x16 tile straight from the
//      registers where it lies inside the rows and the output is 16-byte aligned,
//      otherwise through the subgroup's scratch tile (rows and columns bounds-checked);
//   4. barrier.
//
// Measured on the H100 (mlp64, 2^20 rows, docs/networks.md): code for every activation
// inlined into every accumulator's loop made the kernel 1.7x slower (ACTIVATIONS leaves out
// the unused ones); subgroups that each own rows instead of columns (no workgroup barrier,
// but every subgroup reads every weight fragment) were 1.8x slower.
//
// Interface: mlp_common.glsl (src/mlp/coopmat.rs depends on it exactly).
// Specialization constants: 0 SUBGROUP_SIZE, 1 SUBGROUPS, 2 ROW_TILES, 3 MAX_WIDTH (the
// widest padded layer, a multiple of 16, at most 16 * SUBGROUPS), 4 WORKGROUP_SIZE (=
// SUBGROUP_SIZE * SUBGROUPS, local_size_x), 5 ACTIVATIONS (bit c: a layer applies the
// activation of code c), 6 INDEXED (rows with set indices). Pipelines run with full
// subgroups of SUBGROUP_SIZE.
//
// Several weight sets (INDEXED): a workgroup's rows are slots (mlp_sets.glsl), whose rows
// and sets it looks up first. It evaluates the block once per set present among them, in
// increasing order, with that set's weights and biases, and stores only the rows of that
// set (element by element: the rows of a block need not be consecutive). Rows grouped by
// set (the library's pre-pass sorts them) put one set in almost every block.
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
layout(constant_id = 2) const uint ROW_TILES = 4;
layout(constant_id = 3) const uint MAX_WIDTH = 64;
layout(constant_id = 4) const uint WORKGROUP_SIZE = 128;
// Bit c set: some layer applies the activation of code c (mlp_common.glsl).
layout(constant_id = 5) const uint ACTIVATIONS = 0x3f;
// Whether the run has set indices; without, the block is evaluated once with set 0 and its
// rows are consecutive, as constants.
layout(constant_id = 6) const bool INDEXED = false;
layout(local_size_x_id = 4, local_size_y = 1, local_size_z = 1) in;

const uint BLOCK_ROWS = 16 * ROW_TILES;
// Activation rows in 16-byte vectors of 8 halves, with one vector of skew: consecutive
// rows start in different bank groups.
const uint ACTIVATION_VECTORS = MAX_WIDTH / 8 + 1;
// 16-column tiles of the widest layer: the weight fragments a subgroup holds per layer.
const uint K_TILES = MAX_WIDTH / 16;
const uint SCRATCH_STRIDE = 20;
const uint SCRATCH_TILE = 16 * SCRATCH_STRIDE;
// Input chunks (8 elements each) an invocation loads before it stores any.
const uint CHUNKS_IN_FLIGHT = 8;


#include "mlp_common.glsl"

shared uvec4 activations[BLOCK_ROWS * ACTIVATION_VECTORS];
shared float scratch[SUBGROUPS * SCRATCH_TILE];

// A block row that stores nothing (past the last slot, or its set out of range).
const uint NO_SET = 0xffffffffu;
// With set indices: per row of the block, the row it evaluates and its set (NO_SET: none);
// and the next set to evaluate (in word 0). Every shared variable takes a multiple of 16
// bytes, so that the matrix loads and stores from `activations` and `scratch` stay 16-byte
// aligned wherever the compiler places the variables: with `next_set` a single word the
// H200's results were wrong (the emulated kernel, without that alignment need, was right).
shared uint block_rows[INDEXED ? BLOCK_ROWS : 4];
shared uint block_sets[INDEXED ? BLOCK_ROWS : 4];
shared uint next_set[4];

#include "mlp_matrix_ops.glsl"
#include "mlp_sets.glsl"

// Row `r` of the block starting at slot `block_first`: the row it evaluates.
uint block_row(uint block_first, uint r) {
    return INDEXED ? block_rows[r] : block_first + r;
}

// Whether row `r` of the block (evaluated with `set`) stores its result.
bool block_row_stores(uint block_first, uint r, uint set) {
    return INDEXED ? block_sets[r] == set : block_first + r < params.rows;
}

// The smallest set above `above` (NO_SET: none; all ones: the smallest) among the block's
// rows, for every invocation. Starts and ends with a barrier.
uint next_block_set(uint above) {
    barrier();
    if (gl_LocalInvocationIndex == 0) {
        next_set[0] = NO_SET;
    }
    barrier();
    for (uint r = gl_LocalInvocationIndex; r < BLOCK_ROWS; r += WORKGROUP_SIZE) {
        const uint set = block_sets[r];
        if (set != NO_SET && (set > above || above == NO_SET)) {
            atomicMin(next_set[0], set);
        }
    }
    barrier();
    return next_set[0];
}

// The network on the block of BLOCK_ROWS slots starting at `block_first` with the weights
// of `set`, storing the rows of that set.
void evaluate_block(uint block_first, uint set) {
    const uint subgroup = gl_SubgroupID;
    const uint lane = gl_SubgroupInvocationID;

    // The block's input rows, zero-padded to the first layer's k_padded columns and to
    // BLOCK_ROWS rows, CHUNKS_IN_FLIGHT chunks of 8 columns per invocation at a time.
    const uint row_chunks = table[0] / 8;
    const uint block_chunks = BLOCK_ROWS * row_chunks;
    const bool whole_vectors = params.input_first % INPUT_PER_VECTOR == 0
        && params.input_stride % INPUT_PER_VECTOR == 0 && params.input_width % 8 == 0
        && block_first + BLOCK_ROWS <= params.rows;
    [[dont_unroll]] for (uint first = gl_LocalInvocationIndex; first < block_chunks;
                         first += CHUNKS_IN_FLIGHT * WORKGROUP_SIZE) {
        uvec4 loaded[CHUNKS_IN_FLIGHT];
        [[unroll]] for (uint i = 0; i < CHUNKS_IN_FLIGHT; ++i) {
            const uint chunk = min(first + i * WORKGROUP_SIZE, block_chunks - 1);
            loaded[i] = read_input_chunk(block_row(block_first, chunk / row_chunks),
                                         8 * (chunk % row_chunks), whole_vectors);
        }
        [[unroll]] for (uint i = 0; i < CHUNKS_IN_FLIGHT; ++i) {
            const uint chunk = first + i * WORKGROUP_SIZE;
            if (chunk < block_chunks) {
                activations[(chunk / row_chunks) * ACTIVATION_VECTORS + chunk % row_chunks] = loaded[i];
            }
        }
    }
    barrier();

    const bool output_aligned = params.output_first % OUTPUT_PER_VECTOR == 0
        && params.output_stride % OUTPUT_PER_VECTOR == 0;
    const uint scratch_first = subgroup * SCRATCH_TILE;
    [[dont_unroll]] for (uint layer = 0; layer < params.layers; ++layer) {
        const uint k_padded = table[8 * layer];
        const uint k_tiles = k_padded / 16;
        const uint n_padded = table[8 * layer + 1];
        const uint n = table[8 * layer + 2];
        const uint weights_first = table[8 * layer + 3] + set * params.weight_set_stride;
        const uint activation = table[8 * layer + 5];
        const float slope = uintBitsToFloat(table[8 * layer + 6]);
        const uint bias_tile_first = table[8 * layer + 7] + set * params.bias_set_stride;
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

        // 1. The accumulators start as the bias of their 16 columns (16 identical rows).
        ACCUMULATOR bias;
        load_bias(bias, bias_tile_first + column_tile * 16, n_padded);
        ACCUMULATOR accumulators[ROW_TILES];
        [[unroll]] for (uint i = 0; i < ROW_TILES; ++i) {
            copy_accumulator(accumulators[i], bias);
        }
        if (owned > 0) {
            const uint b_first = weights_first + column_tile * 16 * k_padded;
            [[unroll]] for (uint k = 0; k < K_TILES; ++k) {
                if (k < k_tiles) {
                    B_FRAGMENT b;
                    load_b(b, b_first + 16 * k, k_padded);
                    [[unroll]] for (uint i = 0; i < ROW_TILES; ++i) {
                        if (i < owned) {
                            const uint row_tile = first_row_tile + i * row_tile_step;
                            A_FRAGMENT a;
                            load_a(a, row_tile * 16 * ACTIVATION_VECTORS + 2 * k);
                            multiply_add(accumulators[i], a, b);
                        }
                    }
                }
            }
        }
        // 2.
        barrier();

        // 3. Activation in registers; a hidden layer's result goes straight back into the
        // activations as f16 (its padding columns hold act(0) against zero weights of the
        // next layer), the last layer's to the output. Every subgroup runs ROW_TILES rounds,
        // working in those it owns a tile for: the scratch path's subgroup barriers stay in
        // workgroup-uniform control flow, which some drivers need (lavapipe's subgroup
        // barrier waits for the whole workgroup).
        [[unroll]] for (uint i = 0; i < ROW_TILES; ++i) {
            const uint row_tile = first_row_tile + i * row_tile_step;
            const uint tile_first_row = block_first + row_tile * 16;
            const bool direct = !INDEXED && output_aligned && n == n_padded
                && tile_first_row + 16 <= params.rows;
            if (i < owned) {
                activate_accumulator(accumulators[i], activation, slope);
                if (!last) {
                    store_activations(accumulators[i], row_tile * 16 * ACTIVATION_VECTORS + 2 * column_tile);
                } else if (direct) {
                    store_output(accumulators[i],
                                 params.output_first + tile_first_row * params.output_stride + column_tile * 16,
                                 params.output_stride);
                } else {
                    store_accumulator(accumulators[i], scratch_first);
                }
            }
            if (last) {
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                if (i < owned && !direct) {
                    [[dont_unroll]] for (uint e = lane; e < 256; e += SUBGROUP_SIZE) {
                        const uint r = row_tile * 16 + e / 16;
                        const uint row = block_row(block_first, r);
                        const uint column = column_tile * 16 + e % 16;
                        if (column < n && block_row_stores(block_first, r, set)) {
                            output_elements[params.output_first + row * params.output_stride + column] =
                                OUT_TYPE(scratch[scratch_first + (e / 16) * SCRATCH_STRIDE + e % 16]);
                        }
                    }
                }
                subgroupBarrier();
            }
        }
        // 4.
        barrier();
    }
}

void main() {
    const uint block_first =
        (gl_WorkGroupID.x + gl_WorkGroupID.y * params.groups_x) * BLOCK_ROWS;
    uint set = 0;
    if (INDEXED) {
        // The block's slots: their rows (params.rows past the last slot: read as zeros)
        // and sets; then the block once per set present.
        for (uint r = gl_LocalInvocationIndex; r < BLOCK_ROWS; r += WORKGROUP_SIZE) {
            uint row = params.rows;
            uint slot_set = NO_SET;
            if (block_first + r < params.rows && !slot_row(block_first + r, row, slot_set)) {
                slot_set = NO_SET;
            }
            block_rows[r] = row;
            block_sets[r] = slot_set;
        }
        set = next_block_set(NO_SET);
    }
    // One round without set indices; with, one per set present (at most one per row: a
    // bound that holds whatever the shared words say).
    const uint rounds = INDEXED ? BLOCK_ROWS : 1;
    for (uint round = 0; round < rounds && set != NO_SET; ++round) {
        evaluate_block(block_first, set);
        if (INDEXED) {
            set = next_block_set(set);
        }
    }
}
