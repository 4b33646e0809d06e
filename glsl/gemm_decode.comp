#version 450
// =====================================================================================
// gemm_decode.comp -- GEMMs of up to 16 rows on subgroup-scope cooperative matrices,
//                     each subgroup streaming its own slice of K (decode products)
// =====================================================================================
//
// Computes the same as gemm_coopmat.comp, for every batch index b = gl_WorkGroupID.z,
//
//     C[b](i, j) = epilogue(alpha * sum_l A[b](i, l) * B[b](l, j) + beta * C[b](i, j), i, j)
//
// with the same interface (interface.glsl: bindings, push constants, addressing), for any
// m, n, k, leading dimensions, offsets and layouts. It is built for decode products: a few
// rows of activations times a weight matrix, bound by reading B once. gemm_coopmat.comp's
// workgroups share one shared-memory stage and wait for each other at every stage; with 16
// rows a workgroup tile has too little work per barrier to keep enough of B in flight. Here
// the subgroups of a workgroup work on the same CM_M x BN block of C but split K between
// them: subgroup s takes the K steps s, s + SUBGROUPS, s + 2 SUBGROUPS, ... (BK of k
// each; all take as many, those past K reading zeros), copies each step through a private shared-memory stage (16-byte loads into
// registers, then stores), synchronizing only with itself, and loads the next step into
// registers before it multiplies the current one. Only after the K loop do the subgroups
// meet: each stores its accumulators, and after one barrier the workgroup sums them in C's
// memory order and stores through store_c_float / store_c_int (the epilogue).
//
// Rows: one CM_M-row block per workgroup row (grid y); rows past m read as zero (a product
// of fewer rows wastes tensor-core work, not memory traffic).
//
// Element types: A_TYPE, ACC_TYPE, C_TYPE as in types.glsl (the variants of
// glsl/variants.txt). The variants sum floating-point inputs in f32 (ACC_TYPE = float,
// also for f16 -> f16 GEMMs: more precise than f16 sums and free here, where the kernel
// waits on memory) and int8 in int32. COOPMAT_EMULATED=1 builds the variants the emulated
// coopmat backend runs (CPU drivers): the matrix operations of matrix_ops.glsl in plain
// arithmetic, loops rolled.
//
// Specialization constants (constant_id: name = default):
//   0: SUBGROUP_SIZE = 32 (the pipeline runs with it: requiredSubgroupSize, full subgroups)
//   1: CM_M = 16   2: CM_N = 16   3: CM_K = 16   the cooperative-matrix shape
//   4: TILES_N = 1     CM_N-column tiles per workgroup: BN = TILES_N * CM_N columns of C
//   5: SUBGROUPS = 8   subgroups per workgroup, each on its own K steps
//   6: BK = 64         K per step (a multiple of CM_K and of ELEMENTS_PER_VECTOR)
//   7: A_ROW_MAJOR = true   8: B_ROW_MAJOR = false   9: C_ROW_MAJOR = true
//  10: WORKGROUP_SIZE = 256 (local_size_x; must equal SUBGROUP_SIZE * SUBGROUPS)
//
// Grid: x = ceil(n / BN), y = ceil(m / CM_M), z = batch count.
//
// Shared memory: SUBGROUPS private stages (A: CM_M x BK, B: BK x BN, laid out as the
// operands are stored, rows padded to an odd number of 16-byte units as in
// gemm_coopmat.comp), reused after the K loop as SUBGROUPS * TILES_N accumulator tiles
// (CM_M rows, SCRATCH_ROW_STRIDE 16-byte units apart).
// =====================================================================================

#ifndef COOPMAT_EMULATED
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_GOOGLE_include_directive : require

// Loop hints, as in gemm_coopmat.comp: unrolled on GPUs, rolled for the emulated build.
#ifdef COOPMAT_EMULATED
#define UNROLL_UNLESS_EMULATED [[dont_unroll]]
#define ROLLED_IF_EMULATED [[dont_unroll]]
#else
#define UNROLL_UNLESS_EMULATED [[unroll]]
#define ROLLED_IF_EMULATED
#endif

#include "types.glsl"

#if ACCUMULATOR_TYPE_ID != 1 && ACCUMULATOR_TYPE_ID != 5
#error "gemm_decode.comp sums in float (floating-point inputs) or int32_t (int8_t)"
#endif

layout(constant_id = 0) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 1) const uint CM_M = 16;
layout(constant_id = 2) const uint CM_N = 16;
layout(constant_id = 3) const uint CM_K = 16;
layout(constant_id = 4) const uint TILES_N = 1;
layout(constant_id = 5) const uint SUBGROUPS = 8;
layout(constant_id = 6) const uint BK = 64;
layout(constant_id = 7) const bool A_ROW_MAJOR = true;
layout(constant_id = 8) const bool B_ROW_MAJOR = false;
layout(constant_id = 9) const bool C_ROW_MAJOR = true;
// constant_id 10 = WORKGROUP_SIZE (default 256), the workgroup's x size.
layout(local_size_x_id = 10, local_size_y = 1, local_size_z = 1) in;

const uint WORKGROUP_SIZE = SUBGROUP_SIZE * SUBGROUPS;
const uint BM = CM_M;
const uint BN = TILES_N * CM_N;
const uint K_STEPS_PER_STAGE = BK / CM_K;

// One subgroup's stage, as the operands are stored (contiguous dimension along a row).
const uint A_TILE_ROWS = A_ROW_MAJOR ? BM : BK;
const uint A_TILE_ROW_ELEMENTS = A_ROW_MAJOR ? BK : BM;
const uint B_TILE_ROWS = B_ROW_MAJOR ? BK : BN;
const uint B_TILE_ROW_ELEMENTS = B_ROW_MAJOR ? BN : BK;
const uint A_TILE_ROW_VECTORS = A_TILE_ROW_ELEMENTS / ELEMENTS_PER_VECTOR;
const uint B_TILE_ROW_VECTORS = B_TILE_ROW_ELEMENTS / ELEMENTS_PER_VECTOR;
// Rows padded to an odd number of 16-byte units (no bank conflicts along a column), in
// the select-free forms matrix_ops.glsl's loads take.
const uint A_ROW_STRIDE_IF_ROW_MAJOR = (BK / ELEMENTS_PER_VECTOR) | 1u;
const uint A_ROW_STRIDE_IF_COLUMN_MAJOR = (BM / ELEMENTS_PER_VECTOR) | 1u;
const uint B_ROW_STRIDE_IF_ROW_MAJOR = (BN / ELEMENTS_PER_VECTOR) | 1u;
const uint B_ROW_STRIDE_IF_COLUMN_MAJOR = (BK / ELEMENTS_PER_VECTOR) | 1u;
const uint A_ROW_STRIDE = A_ROW_MAJOR ? A_ROW_STRIDE_IF_ROW_MAJOR : A_ROW_STRIDE_IF_COLUMN_MAJOR;
const uint B_ROW_STRIDE = B_ROW_MAJOR ? B_ROW_STRIDE_IF_ROW_MAJOR : B_ROW_STRIDE_IF_COLUMN_MAJOR;
const uint A_STAGE_VECTORS = A_TILE_ROWS * A_ROW_STRIDE;
const uint B_STAGE_VECTORS = B_TILE_ROWS * B_ROW_STRIDE;
const uint STAGE_VECTORS = A_STAGE_VECTORS + B_STAGE_VECTORS;
// 16-byte chunks of a stage, and per lane.
const uint A_STAGE_CHUNKS = A_TILE_ROWS * A_TILE_ROW_VECTORS;
const uint B_STAGE_CHUNKS = B_TILE_ROWS * B_TILE_ROW_VECTORS;
const uint A_CHUNKS_PER_LANE = (A_STAGE_CHUNKS + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE;
const uint B_CHUNKS_PER_LANE = (B_STAGE_CHUNKS + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE;
// After the K loop: one accumulator tile per subgroup and column tile.
const uint SCRATCH_ROW_STRIDE = ((CM_N * ACCUMULATOR_ELEMENT_BYTES) / 16) | 1u;
const uint SCRATCH_VECTORS_PER_TILE = CM_M * SCRATCH_ROW_STRIDE;
const uint SCRATCH_VECTORS = SUBGROUPS * TILES_N * SCRATCH_VECTORS_PER_TILE;
const uint SHARED_VECTORS = SUBGROUPS * STAGE_VECTORS > SCRATCH_VECTORS ? SUBGROUPS * STAGE_VECTORS
                                                                          : SCRATCH_VECTORS;

layout(set = 0, binding = 0, std430) readonly buffer MatrixAVectors { uvec4 a_vectors[]; };
layout(set = 0, binding = 0, std430) readonly buffer MatrixABits { INPUT_BITS_TYPE a_bits[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixBVectors { uvec4 b_vectors[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixBBits { INPUT_BITS_TYPE b_bits[]; };
#include "interface.glsl"

shared uvec4 shared_memory[SHARED_VECTORS];

#include "chunks.glsl"

// Geometry of the operand copies, fixed per workgroup.
uint a_base, b_base, c_base;
bool a_vector_aligned, b_vector_aligned;
uint row_start, column_start;

// The next step's chunks, in registers.
uvec4 a_chunks[A_CHUNKS_PER_LANE];
uvec4 b_chunks[B_CHUNKS_PER_LANE];

// Loads K step `step` (k from step * BK) of this subgroup's block into registers: chunk c
// of a stage is read by lane c % SUBGROUP_SIZE. Chunks past m, n or k read as zero.
void load_step_into_registers(uint step) {
    const uint k_start = step * BK;
    const uint lane = gl_SubgroupInvocationID;
    const uint a_row_start = A_ROW_MAJOR ? row_start : k_start;
    const uint a_column_start = A_ROW_MAJOR ? k_start : row_start;
    const uint a_row_limit = A_ROW_MAJOR ? params.m : params.k;
    const uint a_column_limit = A_ROW_MAJOR ? params.k : params.m;
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < A_CHUNKS_PER_LANE; ++slot) {
        const uint chunk = lane + slot * SUBGROUP_SIZE;
        if (A_STAGE_CHUNKS % SUBGROUP_SIZE == 0 || chunk < A_STAGE_CHUNKS) {
            const uint row = chunk / A_TILE_ROW_VECTORS;
            const uint column = (chunk % A_TILE_ROW_VECTORS) * ELEMENTS_PER_VECTOR;
            a_chunks[slot] = read_a_chunk(a_base, params.lda, a_row_start + row,
                                          a_column_start + column, a_row_limit, a_column_limit,
                                          a_vector_aligned, 1u);
        }
    }
    const uint b_row_start = B_ROW_MAJOR ? k_start : column_start;
    const uint b_column_start = B_ROW_MAJOR ? column_start : k_start;
    const uint b_row_limit = B_ROW_MAJOR ? params.k : params.n;
    const uint b_column_limit = B_ROW_MAJOR ? params.n : params.k;
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < B_CHUNKS_PER_LANE; ++slot) {
        const uint chunk = lane + slot * SUBGROUP_SIZE;
        if (B_STAGE_CHUNKS % SUBGROUP_SIZE == 0 || chunk < B_STAGE_CHUNKS) {
            const uint row = chunk / B_TILE_ROW_VECTORS;
            const uint column = (chunk % B_TILE_ROW_VECTORS) * ELEMENTS_PER_VECTOR;
            b_chunks[slot] = read_b_chunk(b_base, params.ldb, b_row_start + row,
                                          b_column_start + column, b_row_limit, b_column_limit,
                                          b_vector_aligned, 1u);
        }
    }
}

// Stores the registers into this subgroup's stage at `stage_start`.
void store_registers_to_stage(uint stage_start) {
    const uint lane = gl_SubgroupInvocationID;
    const uint b_stage_start = stage_start + A_STAGE_VECTORS;
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < A_CHUNKS_PER_LANE; ++slot) {
        const uint chunk = lane + slot * SUBGROUP_SIZE;
        if (A_STAGE_CHUNKS % SUBGROUP_SIZE == 0 || chunk < A_STAGE_CHUNKS) {
            const uint row = chunk / A_TILE_ROW_VECTORS;
            shared_memory[stage_start + row * A_ROW_STRIDE + chunk % A_TILE_ROW_VECTORS] =
                a_chunks[slot];
        }
    }
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < B_CHUNKS_PER_LANE; ++slot) {
        const uint chunk = lane + slot * SUBGROUP_SIZE;
        if (B_STAGE_CHUNKS % SUBGROUP_SIZE == 0 || chunk < B_STAGE_CHUNKS) {
            const uint row = chunk / B_TILE_ROW_VECTORS;
            shared_memory[b_stage_start + row * B_ROW_STRIDE + chunk % B_TILE_ROW_VECTORS] =
                b_chunks[slot];
        }
    }
}

// ---- matrix operations: cooperative matrices, or their emulation ----
#include "matrix_ops.glsl"

ACCUMULATOR_FRAGMENT accumulators[TILES_N];

void multiply_stage(uint stage_start) {
    const uint b_stage_start = stage_start + A_STAGE_VECTORS;
    UNROLL_UNLESS_EMULATED for (uint k_step = 0; k_step < K_STEPS_PER_STAGE; ++k_step) {
        const uint k_in_stage = k_step * CM_K;
        A_FRAGMENT a_fragment;
        load_a_fragment(a_fragment, stage_start, 0, k_in_stage);
        UNROLL_UNLESS_EMULATED for (uint tile_n = 0; tile_n < TILES_N; ++tile_n) {
            B_FRAGMENT b_fragment;
            load_b_fragment(b_fragment, b_stage_start, k_in_stage, tile_n * CM_N);
            multiply_add(accumulators[tile_n], a_fragment, b_fragment);
        }
    }
}

// Accumulator element (row, column) of the tile stored at `scratch_start`, as its bits.
uint read_scratch_word(uint scratch_start, uint row, uint column) {
    return shared_memory[scratch_start + row * SCRATCH_ROW_STRIDE + column / 4][column % 4];
}

void main() {
    const uint batch = gl_WorkGroupID.z;
    const uint subgroup = gl_SubgroupID;
    row_start = gl_WorkGroupID.y * BM;
    column_start = gl_WorkGroupID.x * BN;
    a_base = params.a_offset + batch * params.a_batch_stride;
    b_base = params.b_offset + batch * params.b_batch_stride;
    c_base = params.c_offset + batch * params.c_batch_stride;
    a_vector_aligned = (a_base % ELEMENTS_PER_VECTOR) == 0 && (params.lda % ELEMENTS_PER_VECTOR) == 0;
    b_vector_aligned = (b_base % ELEMENTS_PER_VECTOR) == 0 && (params.ldb % ELEMENTS_PER_VECTOR) == 0;

    UNROLL_UNLESS_EMULATED for (uint tile = 0; tile < TILES_N; ++tile) {
        zero_accumulator(accumulators[tile]);
    }

    // ---- K loop: this subgroup's steps, through its own stage ----
    // Round r takes step r * SUBGROUPS + subgroup in each subgroup; every subgroup runs the
    // same number of rounds (the steps past K read as zero), so that the control flow is
    // uniform in the workgroup, which some drivers need for subgroupBarrier. Each round
    // stores the registers into the stage, issues the loads of the subgroup's next step,
    // and multiplies the stage while they are in flight.
    const uint stage_start = subgroup * STAGE_VECTORS;
    const uint step_count = (params.k + BK - 1) / BK;
    const uint rounds = (step_count + SUBGROUPS - 1) / SUBGROUPS;
    if (rounds > 0) {
        load_step_into_registers(subgroup);
    }
    for (uint round = 0; round < rounds; ++round) {
        // The previous step's fragments have been read before the stage is overwritten
        // (the emulated fragments read the stage during multiply_add).
        subgroupBarrier();
        store_registers_to_stage(stage_start);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        if (round + 1 < rounds) {
            load_step_into_registers((round + 1) * SUBGROUPS + subgroup);
        }
        multiply_stage(stage_start);
    }

    // ---- the subgroups' sums, in C's memory order ----
    barrier();  // every stage has been read: the scratch reuses them
    UNROLL_UNLESS_EMULATED for (uint tile = 0; tile < TILES_N; ++tile) {
        store_accumulator(accumulators[tile], (subgroup * TILES_N + tile) * SCRATCH_VECTORS_PER_TILE);
    }
    memoryBarrierShared();
    barrier();
    for (uint o = gl_LocalInvocationIndex; o < BM * BN; o += WORKGROUP_SIZE) {
        const uint r = C_ROW_MAJOR ? o / BN : o % BM;
        const uint c = C_ROW_MAJOR ? o % BN : o / BM;
        const uint i = row_start + r;
        const uint j = column_start + c;
        if (i < params.m && j < params.n) {
            const uint tile = c / CM_N;
            const uint column = c % CM_N;
#if ACCUMULATOR_TYPE_ID == 5
            int sum = 0;
            ROLLED_IF_EMULATED for (uint s = 0; s < SUBGROUPS; ++s) {
                sum += int(read_scratch_word((s * TILES_N + tile) * SCRATCH_VECTORS_PER_TILE, r, column));
            }
#else
            float sum = 0.0;
            ROLLED_IF_EMULATED for (uint s = 0; s < SUBGROUPS; ++s) {
                sum += uintBitsToFloat(read_scratch_word((s * TILES_N + tile) * SCRATCH_VECTORS_PER_TILE, r, column));
            }
#endif
            const uint c_index = c_base + (C_ROW_MAJOR ? i * params.ldc + j : i + j * params.ldc);
#if ACCUMULATOR_TYPE_ID == 5
            store_c_int(c_index, i, j, sum);
#else
            store_c_float(c_index, i, j, sum);
#endif
        }
    }
}
