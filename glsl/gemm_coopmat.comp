#version 450
// =====================================================================================
// gemm_coopmat.comp -- batched GEMM on cooperative matrices (GL_KHR_cooperative_matrix)
// =====================================================================================
//
// For every batch index b = gl_WorkGroupID.z this computes
//
//     C[b](i, j) = epilogue(alpha * sum_l A[b](i, l) * B[b](l, j) + beta * C[b](i, j), i, j)
//
// for 0 <= i < m, 0 <= j < n, 0 <= l < k (epilogue: optional bias and activation, see
// epilogue.glsl; integer variants have none). Any m, n, k >= 1, any leading dimensions, any
// offsets and batch strides, and either layout of every operand are supported. When
// beta == 0, C is never read (it may hold NaN or garbage).
//
// -------------------------------------------------------------------------------------
// Element types (preprocessor defines; one source, several SPIR-V variants)
// -------------------------------------------------------------------------------------
//   A_TYPE    element type of A and B in memory and of the A/B cooperative matrices:
//             float16_t, bfloat16_t, int8_t or float
//   ACC_TYPE  accumulator cooperative-matrix element type: float, float16_t or int32_t
//   C_TYPE    element type of C in memory: float, float16_t, bfloat16_t or int32_t
//   COOPMAT_EMULATED  when defined (=1), the matrix operations are computed with plain
//             arithmetic instead of GL_KHR_cooperative_matrix (matrix_ops.glsl), for
//             Vulkan drivers without cooperative matrices; everything else -- interface,
//             tiling, shared memory, epilogue -- is the same. Not for bfloat16_t.
// The variants (name, A_TYPE, ACC_TYPE, C_TYPE, emulated or not) are listed in
// glsl/variants.txt: f16_f32, f16_f16, bf16_f32, i8_i32, f32_f32, f16_f32_f16 and
// bf16_f32_bf16 on cooperative matrices, and gemm_coopmat_emulated_<name> for f32_f32,
// f16_f32, f16_f16, f16_f32_f16 and i8_i32.
// The epilogue always works in 32-bit float: result = alpha * float(acc) + beta * float(C),
// then converted to C_TYPE. For an int32_t accumulator the conversion is GLSL int(),
// i.e. truncation toward zero; the special cases alpha == 1 with beta == 0 or beta == 1
// are computed exactly in integer arithmetic (acc, or acc + C) so no precision is lost
// for |acc| > 2^24.
//
// -------------------------------------------------------------------------------------
// Interface (the host code depends on this exactly)
// -------------------------------------------------------------------------------------
// Descriptor set 0 (std430 storage buffers, no other bindings):
//   binding 0: A, readonly, array of A_TYPE
//   binding 1: B, readonly, array of A_TYPE
//   binding 2: C, read-write, array of C_TYPE
//   binding 3: bias vector, readonly, array of float (bind any buffer when bias_axis == 0)
//   (A and B are additionally viewed as arrays of uvec4 and of same-sized unsigned
//    integers -- aliases of the same binding, used for 128-bit and bit-exact loads.)
// Push constants (std430, 72 bytes, in this order; offsets and strides in elements):
//   uint m, n, k; uint lda, ldb, ldc; uint a_offset, b_offset, c_offset;
//   uint a_batch_stride, b_batch_stride, c_batch_stride; float alpha, beta; uint bias_offset;
//   uint b_panel_stride; uint activation, bias_axis;
// Addressing (b = batch index):
//   A is m x k: A_ROW_MAJOR ? a_offset + b*a_batch_stride + i*lda + l
//                           : a_offset + b*a_batch_stride + i + l*lda
//   B is k x n: B_ROW_MAJOR ? b_offset + b*b_batch_stride + l*ldb + j
//                           : b_offset + b*b_batch_stride + l + j*ldb
//   C is m x n: C_ROW_MAJOR ? c_offset + b*c_batch_stride + i*ldc + j
//                           : c_offset + b*c_batch_stride + i + j*ldc
//   All index arithmetic is 32-bit unsigned.
// Specialization constants (constant_id: name = default):
//   0: SUBGROUP_SIZE = 32   1: CM_M = 16   2: CM_N = 16   3: CM_K = 16
//      (cooperative-matrix shape M x N x K from the device's property list)
//   4: SG_ROWS = 2   (subgroups per workgroup along M)
//   5: SG_COLS = 2   (subgroups per workgroup along N)
//   6: TILES_M = 2   (cooperative-matrix tiles per subgroup along M)
//   7: TILES_N = 4   (cooperative-matrix tiles per subgroup along N)
//   8: BK = 32       (K depth of one shared-memory stage; multiple of CM_K)
//   9: A_ROW_MAJOR = true   10: B_ROW_MAJOR = true   11: C_ROW_MAJOR = true
//  12: WORKGROUP_SIZE = 128 (local_size_x; must equal SUBGROUP_SIZE*SG_ROWS*SG_COLS)
//  13: B_PANELS = false  B is pre-packed in column panels of BN (Order::ColumnPanels):
//      panel p holds columns p*BN.. as a row-major k x BN matrix (zero-padded past n),
//      b_panel_stride elements apart. The host then sets B_ROW_MAJOR = true, ldb = BN;
//      each workgroup reads its own panel as a row-major matrix starting at column 0.
//  14: PREFETCH_STAGES = 1   K stages whose global loads are in flight in registers
//      while a stage is multiplied: 1 or 2 (see the K loop).
// The pipeline must run with subgroup size SUBGROUP_SIZE (requiredSubgroupSize) and full
// subgroups. Requirement on the shape: CM_M, CM_N and CM_K, each times sizeof(A_TYPE),
// must be multiples of 16 bytes (true for f16/bf16 16x16x16, 16x8x16, 16x8x8, 8x8x8;
// f32 8x8x8 and 16x16x8; s8 16x16x32 -- but NOT for s8 16x8x32, whose 8-byte N would
// break the 16-byte granularity of the shared-memory tiles). CM_N * sizeof(ACC_TYPE)
// must be a multiple of 16 bytes as well (always true for the shapes above). The
// emulated variants follow the same rules; their host lists 16x16x16 for f16 inputs,
// 16x16x8 for f32 and 16x16x32 for int8, and they work with any subgroup size.
//
// -------------------------------------------------------------------------------------
// Tiling
// -------------------------------------------------------------------------------------
//   batch               gl_WorkGroupID.z
//   workgroup tile      BM x BN output elements, BM = SG_ROWS*TILES_M*CM_M,
//                       BN = SG_COLS*TILES_N*CM_N. Dispatch grid:
//                       x = ceil(n / BN), y = ceil(m / BM), z = batch count.
//   subgroup tile       (TILES_M*CM_M) x (TILES_N*CM_N); subgroup s sits at subgroup row
//                       s / SG_COLS and subgroup column s % SG_COLS.
//   cooperative tile    CM_M x CM_N accumulator; per CM_K step a subgroup loads TILES_M
//                       A fragments and TILES_N B fragments from shared memory and does
//                       TILES_M*TILES_N multiply-adds (register blocking; matrix_ops.glsl:
//                       coopMatLoad / coopMatMulAdd, or their emulation).
//   K loop              ceil(k / BK) stages. Stage s+1 (PREFETCH_STAGES = 1) or s+2 (2)
//                       is read from global memory into registers (128-bit loads where
//                       possible) while stage s is multiplied out of shared buffer s%2;
//                       then stage s+1 is written from registers to shared buffer
//                       (s+1)%2, followed by ONE barrier.
//
// -------------------------------------------------------------------------------------
// Shared memory layout (one array of uvec4 = 16-byte units)
// -------------------------------------------------------------------------------------
// Every operand tile is copied into shared memory without transposition: it keeps its
// contiguous dimension contiguous and coopMatLoad picks the matching layout.
//   A tile: A_ROW_MAJOR ? BM rows of BK elements : BK rows of BM elements
//   B tile: B_ROW_MAJOR ? BK rows of BN elements : BN rows of BK elements
// A row of R elements takes R*sizeof(A_TYPE)/16 uvec4; the row stride is that count
// rounded up to the next ODD number of uvec4 (i.e. +16 bytes of padding when the count
// is even). Any 8 consecutive rows then start in 8 different 16-byte bank groups, so
// the 128-bit stores of the copy and the 8-row x 16-byte phases of coopMatLoad
// (ldmatrix on NVIDIA) are free of bank conflicts.
//   shared_memory = [ A stage 0 | B stage 0 | A stage 1 | B stage 1 ]
//   bytes = 16 * 2 * (A_TILE_ROWS * A_ROW_STRIDE + B_TILE_ROWS * B_ROW_STRIDE)
// (strides in uvec4. Examples, row-major A and B: BM=64, BN=128, BK=32, f16:
//  16*2*(64*5 + 32*17) = 27648 bytes; BM=BN=128, BK=32, f16: 37888 bytes (worst layout
//  combination, A row-major + B column-major: 40960 bytes); 8x8x8, BM=BN=32,
//  BK=16: f16 5632 bytes, f32 9728 bytes.)
// After the K loop the same memory is reused as a per-subgroup epilogue scratch of
// CM_M rows x CM_N accumulator elements (row stride padded the same way); the array
// size is the maximum of both uses.
//
// Portability notes: the accumulator store is kept in workgroup-uniform control flow (no
// per-tile skip), and the coopMatLoad strides are select-free spec-constant expressions,
// which simple spec-constant evaluators can fold.
//
// Epilogue: each accumulator tile is stored into the subgroup's scratch (coopMatStore, or
// its emulation: row-major, SCRATCH_ROW_STRIDE uvec4 per row), then
// the subgroup's lanes walk it in C's memory order (coalesced), apply alpha/beta, the
// bounds check, bias and activation (epilogue.glsl) and the type conversion, and write C.
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

// Loop hints. The cooperative-matrix kernel unrolls its loops of fixed trip count; the
// emulated one keeps all its loops rolled: unrolled, its per-element arithmetic makes
// lavapipe's LLVM spend 15-30 s on each pipeline instead of 1-2 s.
#ifdef COOPMAT_EMULATED
#define UNROLL_UNLESS_EMULATED [[dont_unroll]]
#define ROLLED_IF_EMULATED [[dont_unroll]]
#else
#define UNROLL_UNLESS_EMULATED [[unroll]]
#define ROLLED_IF_EMULATED
#endif

#include "types.glsl"


// ---- specialization constants ----
layout(constant_id = 0) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 1) const uint CM_M = 16;
layout(constant_id = 2) const uint CM_N = 16;
layout(constant_id = 3) const uint CM_K = 16;
layout(constant_id = 4) const uint SG_ROWS = 2;
layout(constant_id = 5) const uint SG_COLS = 2;
layout(constant_id = 6) const uint TILES_M = 2;
layout(constant_id = 7) const uint TILES_N = 4;
layout(constant_id = 8) const uint BK = 32;
layout(constant_id = 9) const bool A_ROW_MAJOR = true;
layout(constant_id = 10) const bool B_ROW_MAJOR = true;
layout(constant_id = 11) const bool C_ROW_MAJOR = true;
// constant_id 12 = WORKGROUP_SIZE (default 128), the workgroup's x size.
layout(local_size_x_id = 12, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 13) const bool B_PANELS = false;
layout(constant_id = 14) const uint PREFETCH_STAGES = 1;

// ---- derived tile sizes (specialization-constant expressions) ----
const uint SUBGROUP_COUNT = SG_ROWS * SG_COLS;
const uint THREAD_COUNT = SUBGROUP_SIZE * SUBGROUP_COUNT;
const uint BM = SG_ROWS * TILES_M * CM_M;  // workgroup tile rows (M)
const uint BN = SG_COLS * TILES_N * CM_N;  // workgroup tile columns (N)
const uint SUBGROUP_TILE_ROWS = TILES_M * CM_M;
const uint SUBGROUP_TILE_COLS = TILES_N * CM_N;
const uint K_STEPS_PER_STAGE = BK / CM_K;


// Shared-memory tiles: rows x (row length in elements), contiguous dimension last.
const uint A_TILE_ROWS = A_ROW_MAJOR ? BM : BK;
const uint A_TILE_ROW_ELEMENTS = A_ROW_MAJOR ? BK : BM;
const uint B_TILE_ROWS = B_ROW_MAJOR ? BK : BN;
const uint B_TILE_ROW_ELEMENTS = B_ROW_MAJOR ? BN : BK;
const uint A_TILE_ROW_VECTORS = A_TILE_ROW_ELEMENTS / ELEMENTS_PER_VECTOR;
const uint B_TILE_ROW_VECTORS = B_TILE_ROW_ELEMENTS / ELEMENTS_PER_VECTOR;
// Row strides in uvec4, rounded up to an odd count (bank-conflict-free padding).
// The per-layout forms avoid OpSelect, so that simple spec-constant evaluators can
// fold the coopMatLoad strides.
const uint A_ROW_STRIDE_IF_ROW_MAJOR = (BK / ELEMENTS_PER_VECTOR) | 1u;
const uint A_ROW_STRIDE_IF_COLUMN_MAJOR = (BM / ELEMENTS_PER_VECTOR) | 1u;
const uint B_ROW_STRIDE_IF_ROW_MAJOR = (BN / ELEMENTS_PER_VECTOR) | 1u;
const uint B_ROW_STRIDE_IF_COLUMN_MAJOR = (BK / ELEMENTS_PER_VECTOR) | 1u;
const uint A_ROW_STRIDE = A_ROW_MAJOR ? A_ROW_STRIDE_IF_ROW_MAJOR : A_ROW_STRIDE_IF_COLUMN_MAJOR;
const uint B_ROW_STRIDE = B_ROW_MAJOR ? B_ROW_STRIDE_IF_ROW_MAJOR : B_ROW_STRIDE_IF_COLUMN_MAJOR;
const uint A_STAGE_VECTORS = A_TILE_ROWS * A_ROW_STRIDE;
const uint B_STAGE_VECTORS = B_TILE_ROWS * B_ROW_STRIDE;
const uint STAGE_VECTORS = A_STAGE_VECTORS + B_STAGE_VECTORS;

// Per-thread share of one stage copy (in uvec4 chunks).
const uint A_STAGE_CHUNKS = A_TILE_ROWS * A_TILE_ROW_VECTORS;
const uint B_STAGE_CHUNKS = B_TILE_ROWS * B_TILE_ROW_VECTORS;
const uint A_CHUNKS_PER_THREAD = (A_STAGE_CHUNKS + THREAD_COUNT - 1) / THREAD_COUNT;
const uint B_CHUNKS_PER_THREAD = (B_STAGE_CHUNKS + THREAD_COUNT - 1) / THREAD_COUNT;

// Epilogue scratch: CM_M rows of CM_N accumulator elements per subgroup.
const uint SCRATCH_ROW_STRIDE = ((CM_N * ACCUMULATOR_ELEMENT_BYTES) / 16) | 1u;
const uint SCRATCH_VECTORS_PER_SUBGROUP = CM_M * SCRATCH_ROW_STRIDE;
const uint SCRATCH_VECTORS = SUBGROUP_COUNT * SCRATCH_VECTORS_PER_SUBGROUP;

const uint SHARED_VECTORS = 2 * STAGE_VECTORS > SCRATCH_VECTORS ? 2 * STAGE_VECTORS : SCRATCH_VECTORS;

// ---- resources ----
// A and B: the same bindings viewed as 128-bit vectors and as raw element bits.
layout(set = 0, binding = 0, std430) readonly buffer MatrixAVectors { uvec4 a_vectors[]; };
layout(set = 0, binding = 0, std430) readonly buffer MatrixABits { INPUT_BITS_TYPE a_bits[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixBVectors { uvec4 b_vectors[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixBBits { INPUT_BITS_TYPE b_bits[]; };
#include "interface.glsl"

shared uvec4 shared_memory[SHARED_VECTORS];

// ---- global -> register -> shared copy of one K stage ----
#include "chunks.glsl"

// Geometry of the operand copies, fixed per workgroup.
uint a_base, b_base, c_base;
bool a_vector_aligned, b_vector_aligned;

// One register set of the copy: the global loads of a stage into registers, and their
// store into a shared-memory buffer. Two sets, so that with PREFETCH_STAGES = 2 the loads of
// one stage are in flight while the other set's stage is stored (see the K loop).
#define DEFINE_STAGE_COPY(SET)                                                                      \
uvec4 a_prefetch##SET[A_CHUNKS_PER_THREAD];                                                         \
uvec4 b_prefetch##SET[B_CHUNKS_PER_THREAD];                                                         \
void load_stage_into_registers##SET(uint stage) {                                                   \
    const uint k_start = stage * BK;                                                                \
    const uint tile_m_start = gl_WorkGroupID.y * BM;                                                \
    const uint tile_n_start = gl_WorkGroupID.x * BN;                                                \
    /* A: rows/columns of the stored matrix (contiguous dimension = columns). */                    \
    const uint a_row_start = A_ROW_MAJOR ? tile_m_start : k_start;                                  \
    const uint a_column_start = A_ROW_MAJOR ? k_start : tile_m_start;                               \
    const uint a_row_limit = A_ROW_MAJOR ? params.m : params.k;                                     \
    const uint a_column_limit = A_ROW_MAJOR ? params.k : params.m;                                  \
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < A_CHUNKS_PER_THREAD; ++slot) {                \
        const uint chunk = gl_LocalInvocationIndex + slot * THREAD_COUNT;                           \
        if (A_STAGE_CHUNKS % THREAD_COUNT == 0 || chunk < A_STAGE_CHUNKS) {                         \
            const uint row = chunk / A_TILE_ROW_VECTORS;                                            \
            const uint column = (chunk % A_TILE_ROW_VECTORS) * ELEMENTS_PER_VECTOR;                 \
            a_prefetch##SET[slot] = read_a_chunk(a_base, params.lda, a_row_start + row,             \
                                            a_column_start + column, a_row_limit,                   \
                                            a_column_limit, a_vector_aligned, 1u);                  \
        }                                                                                           \
    }                                                                                               \
    /* In panels, b_base already points at this workgroup's panel. */                               \
    const uint b_tile_n_start = B_PANELS ? 0 : tile_n_start;                                        \
    const uint b_row_start = B_ROW_MAJOR ? k_start : b_tile_n_start;                                \
    const uint b_column_start = B_ROW_MAJOR ? b_tile_n_start : k_start;                             \
    const uint b_row_limit = B_ROW_MAJOR ? params.k : params.n;                                     \
    const uint b_column_limit = B_ROW_MAJOR ? params.n : params.k;                                  \
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < B_CHUNKS_PER_THREAD; ++slot) {                \
        const uint chunk = gl_LocalInvocationIndex + slot * THREAD_COUNT;                           \
        if (B_STAGE_CHUNKS % THREAD_COUNT == 0 || chunk < B_STAGE_CHUNKS) {                         \
            const uint row = chunk / B_TILE_ROW_VECTORS;                                            \
            const uint column = (chunk % B_TILE_ROW_VECTORS) * ELEMENTS_PER_VECTOR;                 \
            b_prefetch##SET[slot] = read_b_chunk(b_base, params.ldb, b_row_start + row,             \
                                            b_column_start + column, b_row_limit,                   \
                                            b_column_limit, b_vector_aligned, 1u);                  \
        }                                                                                           \
    }                                                                                               \
}                                                                                                   \
                                                                                                    \
void store_registers_to_shared##SET(uint buffer_index) {                                            \
    const uint a_stage_start = buffer_index * STAGE_VECTORS;                                        \
    const uint b_stage_start = a_stage_start + A_STAGE_VECTORS;                                     \
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < A_CHUNKS_PER_THREAD; ++slot) {                \
        const uint chunk = gl_LocalInvocationIndex + slot * THREAD_COUNT;                           \
        if (A_STAGE_CHUNKS % THREAD_COUNT == 0 || chunk < A_STAGE_CHUNKS) {                         \
            const uint row = chunk / A_TILE_ROW_VECTORS;                                            \
            const uint vector_column = chunk % A_TILE_ROW_VECTORS;                                  \
            shared_memory[a_stage_start + row * A_ROW_STRIDE + vector_column] = a_prefetch##SET[slot];\
        }                                                                                           \
    }                                                                                               \
    UNROLL_UNLESS_EMULATED for (uint slot = 0; slot < B_CHUNKS_PER_THREAD; ++slot) {                \
        const uint chunk = gl_LocalInvocationIndex + slot * THREAD_COUNT;                           \
        if (B_STAGE_CHUNKS % THREAD_COUNT == 0 || chunk < B_STAGE_CHUNKS) {                         \
            const uint row = chunk / B_TILE_ROW_VECTORS;                                            \
            const uint vector_column = chunk % B_TILE_ROW_VECTORS;                                  \
            shared_memory[b_stage_start + row * B_ROW_STRIDE + vector_column] = b_prefetch##SET[slot];\
        }                                                                                           \
    }                                                                                               \
}
DEFINE_STAGE_COPY(0)
DEFINE_STAGE_COPY(1)

// ---- matrix operations: cooperative matrices, or their emulation ----
#include "matrix_ops.glsl"

ACCUMULATOR_FRAGMENT accumulators[TILES_M * TILES_N];

void multiply_stage(uint buffer_index, uint subgroup_row, uint subgroup_column) {
    const uint a_stage_start = buffer_index * STAGE_VECTORS;
    const uint b_stage_start = a_stage_start + A_STAGE_VECTORS;
    const uint subgroup_m_start = subgroup_row * SUBGROUP_TILE_ROWS;     // within BM
    const uint subgroup_n_start = subgroup_column * SUBGROUP_TILE_COLS;  // within BN
    UNROLL_UNLESS_EMULATED for (uint k_step = 0; k_step < K_STEPS_PER_STAGE; ++k_step) {
        const uint k_in_stage = k_step * CM_K;
        A_FRAGMENT a_fragments[TILES_M];
        B_FRAGMENT b_fragments[TILES_N];
        UNROLL_UNLESS_EMULATED for (uint tile_m = 0; tile_m < TILES_M; ++tile_m) {
            load_a_fragment(a_fragments[tile_m], a_stage_start,
                            subgroup_m_start + tile_m * CM_M, k_in_stage);
        }
        UNROLL_UNLESS_EMULATED for (uint tile_n = 0; tile_n < TILES_N; ++tile_n) {
            load_b_fragment(b_fragments[tile_n], b_stage_start, k_in_stage,
                            subgroup_n_start + tile_n * CM_N);
        }
        UNROLL_UNLESS_EMULATED for (uint tile_m = 0; tile_m < TILES_M; ++tile_m) {
            UNROLL_UNLESS_EMULATED for (uint tile_n = 0; tile_n < TILES_N; ++tile_n) {
                multiply_add(accumulators[tile_m * TILES_N + tile_n], a_fragments[tile_m],
                             b_fragments[tile_n]);
            }
        }
    }
}

// ---- epilogue helpers ----
// Accumulator element (row, column) of the tile stored in scratch at `scratch_start`.
#if ACCUMULATOR_TYPE_ID == 2
float read_scratch_float(uint scratch_start, uint row, uint column) {
    const uint vector_index = scratch_start + row * SCRATCH_ROW_STRIDE + column / 8;
    const uint word = shared_memory[vector_index][(column % 8) / 2];
    return float(unpackFloat2x16(word)[column % 2]);
}
#else
uint read_scratch_word(uint scratch_start, uint row, uint column) {
    const uint vector_index = scratch_start + row * SCRATCH_ROW_STRIDE + column / 4;
    return shared_memory[vector_index][column % 4];
}
float read_scratch_float(uint scratch_start, uint row, uint column) {
#if ACCUMULATOR_TYPE_ID == 5
    return float(int(read_scratch_word(scratch_start, row, column)));
#else
    return uintBitsToFloat(read_scratch_word(scratch_start, row, column));
#endif
}
#endif

void main() {
    const uint batch = gl_WorkGroupID.z;
    const uint subgroup_index = gl_SubgroupID;
    const uint lane = gl_SubgroupInvocationID;
    const uint subgroup_row = subgroup_index / SG_COLS;
    const uint subgroup_column = subgroup_index % SG_COLS;

    a_base = params.a_offset + batch * params.a_batch_stride;
    b_base = params.b_offset + batch * params.b_batch_stride;
    if (B_PANELS) {
        b_base += gl_WorkGroupID.x * params.b_panel_stride;
    }
    c_base = params.c_offset + batch * params.c_batch_stride;
    a_vector_aligned = (a_base % ELEMENTS_PER_VECTOR) == 0 && (params.lda % ELEMENTS_PER_VECTOR) == 0;
    b_vector_aligned = (b_base % ELEMENTS_PER_VECTOR) == 0 && (params.ldb % ELEMENTS_PER_VECTOR) == 0;

    UNROLL_UNLESS_EMULATED for (uint tile = 0; tile < TILES_M * TILES_N; ++tile) {
        zero_accumulator(accumulators[tile]);
    }

    // ---- K loop: double-buffered shared memory, register prefetch, one barrier/stage ----
    // Iteration `stage` multiplies shared buffer stage%2 while the global loads of a later
    // stage are in flight in registers, then stores stage+1 into the other buffer.
    // PREFETCH_STAGES = 1: one register set; stage+1 is loaded at the start of the same
    //   iteration that stores it (the loads have one stage's multiplies to arrive).
    // PREFETCH_STAGES = 2: two register sets, used alternately (the loop body is written
    //   twice so that each names its set): stage+2 is loaded while stage+1, loaded one
    //   iteration earlier, is stored (the loads have two stages' multiplies to arrive).
    const uint stage_count = (params.k + BK - 1) / BK;
    load_stage_into_registers0(0);
    store_registers_to_shared0(0);
    barrier();
    if (PREFETCH_STAGES == 1) {
        for (uint stage = 0; stage < stage_count; ++stage) {
            const bool has_next_stage = stage + 1 < stage_count;
            if (has_next_stage) {
                load_stage_into_registers0(stage + 1);
            }
            multiply_stage(stage % 2, subgroup_row, subgroup_column);
            if (has_next_stage) {
                store_registers_to_shared0((stage + 1) % 2);
            }
            // Makes stage+1 visible, and guarantees that nobody still reads buffer stage%2
            // when it is overwritten during the next iteration. After the last stage it
            // frees the whole shared array for the epilogue scratch.
            barrier();
        }
    } else {
        if (stage_count > 1) {
            load_stage_into_registers1(1);
        }
        // Even stages: set 1 holds stage+1, set 0 is free; odd stages the other way round.
        for (uint stage = 0; stage < stage_count; stage += 2) {
            if (stage + 2 < stage_count) {
                load_stage_into_registers0(stage + 2);
            }
            multiply_stage(0, subgroup_row, subgroup_column);
            if (stage + 1 < stage_count) {
                store_registers_to_shared1(1);
            }
            barrier();  // as above
            if (stage + 1 < stage_count) {
                if (stage + 3 < stage_count) {
                    load_stage_into_registers1(stage + 3);
                }
                multiply_stage(1, subgroup_row, subgroup_column);
                if (stage + 2 < stage_count) {
                    store_registers_to_shared0(0);
                }
                barrier();
            }
        }
    }

    // ---- epilogue: accumulator -> scratch -> alpha/beta, bounds, conversion -> C ----
    const uint scratch_start = subgroup_index * SCRATCH_VECTORS_PER_SUBGROUP;
    const uint subgroup_m_start = gl_WorkGroupID.y * BM + subgroup_row * SUBGROUP_TILE_ROWS;
    const uint subgroup_n_start = gl_WorkGroupID.x * BN + subgroup_column * SUBGROUP_TILE_COLS;
    UNROLL_UNLESS_EMULATED for (uint tile_m = 0; tile_m < TILES_M; ++tile_m) {
        UNROLL_UNLESS_EMULATED for (uint tile_n = 0; tile_n < TILES_N; ++tile_n) {
            const uint tile_m_start = subgroup_m_start + tile_m * CM_M;
            const uint tile_n_start = subgroup_n_start + tile_n * CM_N;
            // Every tile goes through the scratch, even one entirely outside C (its lanes
            // then write nothing): the store stays in workgroup-uniform control flow.
            // Costs only at the edges.
            {
                store_accumulator(accumulators[tile_m * TILES_N + tile_n], scratch_start);
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                ROLLED_IF_EMULATED for (uint element = lane; element < CM_M * CM_N; element += SUBGROUP_SIZE) {
                    // Walk the tile in C's memory order so that lanes write consecutive addresses.
                    const uint row = C_ROW_MAJOR ? element / CM_N : element % CM_M;
                    const uint column = C_ROW_MAJOR ? element % CM_N : element / CM_M;
                    const uint i = tile_m_start + row;
                    const uint j = tile_n_start + column;
                    if (i < params.m && j < params.n) {
                        const uint c_index = c_base + (C_ROW_MAJOR ? i * params.ldc + j : i + j * params.ldc);
#if ACCUMULATOR_TYPE_ID == 5
                        store_c_int(c_index, i, j, int(read_scratch_word(scratch_start, row, column)));
#else
                        store_c_float(c_index, i, j, read_scratch_float(scratch_start, row, column));
#endif
                    }
                }
                // Everyone has read the scratch before the next tile overwrites it.
                subgroupBarrier();
            }
        }
    }
}
