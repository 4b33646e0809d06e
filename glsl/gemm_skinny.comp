#version 450
// =====================================================================================
// gemm_skinny.comp -- GEMMs with few rows (decode: a few activations times a weight matrix)
// =====================================================================================
//
// Computes the same as gemm_coopmat.comp, for every batch index b = gl_WorkGroupID.z,
//
//     C[b](i, j) = epilogue(alpha * sum_l A[b](i, l) * B[b](l, j) + beta * C[b](i, j), i, j)
//
// with the same interface (interface.glsl: bindings, push constants, addressing), for any
// m, n, k and layouts, but is built for m of a few rows, where the product is bound by
// reading B once: no cooperative matrices and no shared-memory tiles, every B element is
// loaded once per workgroup row block with 128-bit loads, and the sums over k are split
// across the workgroup's invocations and reduced with subgroup shuffles and one barrier.
//
// Element types: A_TYPE, ACC_TYPE, C_TYPE as in types.glsl (the variants of
// glsl/variants.txt). Floating-point inputs are summed in f32 whatever ACC_TYPE says
// (more precise than f16 sums, and free here: the kernel waits on memory); int8 in int32.
// Elements are decoded from their bits (chunks.glsl), so bf16 needs no bf16 arithmetic.
// COOPMAT_EMULATED=1 builds the variants the emulated coopmat backend runs (CPU drivers):
// the same kernel with its loops rolled (see the loop hints below).
//
// Specialization constants (constant_id: name = default):
//   0: SUBGROUP_SIZE = 32 (the pipeline runs with it: requiredSubgroupSize, full subgroups)
//   1: BLOCK_M = 1      rows of C per workgroup (at most 8; 16 accumulators per row)
//   2: BLOCK_N = 2      columns of C per workgroup
//   3: A_ROW_MAJOR = true   4: B_ROW_MAJOR = false   5: C_ROW_MAJOR = true
//   6: SUBGROUPS = 4    subgroups per workgroup
//   7: WORKGROUP_SIZE = 128 (local_size_x; must equal SUBGROUP_SIZE * SUBGROUPS)
//   8: K_UNROLL = 2     chunks of k (K lanes), or rows of B (N lanes with BLOCK_M <= 2),
//                       whose loads each invocation issues before it sums them
//
// Grid: x = ceil(m / BLOCK_M) (row blocks fastest, so that the workgroups that read the same
// columns of B run together and the second reads them from L2), y = ceil(n / BLOCK_N),
// z = batch count.
//
// Two ways to walk B, fixed by its layout (VEC = ELEMENTS_PER_VECTOR: 8 f16, 4 f32, 16 i8):
//   K lanes (B column-major, K contiguous: torch.nn.Linear's weights): invocation t reads
//     chunks t, t + WORKGROUP_SIZE, ... of VEC elements along k of each of the BLOCK_N
//     columns, and the matching chunks of the BLOCK_M rows of A; it keeps BLOCK_M x BLOCK_N
//     partial sums, reduced over the whole workgroup.
//   N lanes (B row-major, N contiguous): LANES_N = BLOCK_N / VEC invocations side by side
//     cover the block's columns (one chunk each), K_GROUPS = WORKGROUP_SIZE / LANES_N
//     groups of them split the rows of B. With BLOCK_M <= 2, group g reads rows g,
//     g + K_GROUPS, ... (K_UNROLL per step) and A's elements as scalars; with more rows,
//     rows VEC*g .. VEC*g + VEC-1, then K_GROUPS*VEC rows on, and the matching 16-byte
//     chunk of each row of A (A's loads would otherwise outnumber B's). An invocation keeps
//     BLOCK_M x VEC partial sums, reduced over the invocations of the same lane (the host
//     makes BLOCK_N a multiple of VEC and LANES_N a power of two no larger than
//     SUBGROUP_SIZE).
// Both then reduce inside each subgroup (butterfly shuffles), put one partial per subgroup
// in shared memory, and after one barrier the workgroup sums those in C's memory order
// and stores through store_c_float / store_c_int (coalesced where C's order allows).
// Chunks past m, n or k read as zero; loads are 128-bit where base and leading dimension
// are multiples of VEC (chunks.glsl), element by element otherwise.
// =====================================================================================

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_GOOGLE_include_directive : require

// Loop hints: the GPU build unrolls every loop of fixed trip count (the chunks must stay in
// registers); the build for the emulated backend (COOPMAT_EMULATED, run on CPU drivers)
// keeps them rolled: unrolled, lavapipe's LLVM spends seconds to minutes per pipeline.
#ifdef COOPMAT_EMULATED
#define UNROLL_UNLESS_EMULATED [[dont_unroll]]
#define ROLLED_IF_EMULATED [[dont_unroll]]
#else
#define UNROLL_UNLESS_EMULATED [[unroll]]
#define ROLLED_IF_EMULATED
#endif
#include "types.glsl"

layout(constant_id = 0) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 1) const uint BLOCK_M = 1;
layout(constant_id = 2) const uint BLOCK_N = 2;
layout(constant_id = 3) const bool A_ROW_MAJOR = true;
layout(constant_id = 4) const bool B_ROW_MAJOR = false;
layout(constant_id = 5) const bool C_ROW_MAJOR = true;
layout(constant_id = 6) const uint SUBGROUPS = 4;
// constant_id 7 = WORKGROUP_SIZE (default 128), the workgroup's x size.
layout(local_size_x_id = 7, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 8) const uint K_UNROLL = 2;

const uint WORKGROUP_SIZE = SUBGROUP_SIZE * SUBGROUPS;
const uint OUTPUTS = BLOCK_M * BLOCK_N;
// N lanes: invocations side by side along a row of B, and rows of B at a time.
const uint LANES_N = BLOCK_N / ELEMENTS_PER_VECTOR;
const uint K_GROUPS = WORKGROUP_SIZE / (LANES_N == 0 ? 1 : LANES_N);

#if INPUT_TYPE_ID == 4
#define SUM_TYPE int
#else
#define SUM_TYPE float
#endif

layout(set = 0, binding = 0, std430) readonly buffer MatrixAVectors { uvec4 a_vectors[]; };
layout(set = 0, binding = 0, std430) readonly buffer MatrixABits { INPUT_BITS_TYPE a_bits[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixBVectors { uvec4 b_vectors[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixBBits { INPUT_BITS_TYPE b_bits[]; };
#include "interface.glsl"
#include "chunks.glsl"

// One partial sum per subgroup and output of the block.
shared SUM_TYPE subgroup_sums[SUBGROUPS * OUTPUTS];

// The sum of `value` over the lanes of this subgroup whose indices differ only in the bits
// from `first_offset` up (a butterfly: every such lane ends with the sum).
SUM_TYPE sum_over_lanes(SUM_TYPE value, uint first_offset) {
    UNROLL_UNLESS_EMULATED for (uint offset = first_offset; offset < SUBGROUP_SIZE; offset *= 2) {
        value += subgroupShuffleXor(value, offset);
    }
    return value;
}

// Element (i, l) of A as a number (0 past m or k).
SUM_TYPE a_element(uint a_base, uint i, uint l) {
    if (i >= params.m || l >= params.k) {
        return SUM_TYPE(0);
    }
    const uint index = a_base + (A_ROW_MAJOR ? i * params.lda + l : i + l * params.lda);
    return chunk_element(uvec4(uint(a_bits[index]), 0u, 0u, 0u), 0);
}

void main() {
    const uint batch = gl_WorkGroupID.z;
    const uint row_start = gl_WorkGroupID.x * BLOCK_M;
    const uint column_start = gl_WorkGroupID.y * BLOCK_N;
    const uint invocation = gl_LocalInvocationIndex;
    const uint lane = gl_SubgroupInvocationID;
    const uint a_base = params.a_offset + batch * params.a_batch_stride;
    const uint b_base = params.b_offset + batch * params.b_batch_stride;
    const uint c_base = params.c_offset + batch * params.c_batch_stride;
    // 128-bit loads where every chunk of a row (of the stored matrix) starts aligned.
    const bool a_vector_aligned = A_ROW_MAJOR && (a_base % ELEMENTS_PER_VECTOR) == 0
                                  && (params.lda % ELEMENTS_PER_VECTOR) == 0;
    const bool b_vector_aligned = (b_base % ELEMENTS_PER_VECTOR) == 0
                                  && (params.ldb % ELEMENTS_PER_VECTOR) == 0;

    SUM_TYPE sums[OUTPUTS];
    UNROLL_UNLESS_EMULATED for (uint o = 0; o < OUTPUTS; ++o) {
        sums[o] = SUM_TYPE(0);
    }

    if (!B_ROW_MAJOR) {
        // ---- K lanes ----
        const uint chunk_step = WORKGROUP_SIZE * ELEMENTS_PER_VECTOR;
        // A as stored: row i of a row-major A is contiguous along k; a column-major A is
        // read element by element (stride lda along k).
        const uint a_leading = A_ROW_MAJOR ? params.lda : 1u;
        const uint a_stride = A_ROW_MAJOR ? 1u : params.lda;
        for (uint k_start = invocation * ELEMENTS_PER_VECTOR; k_start < params.k;
             k_start += K_UNROLL * chunk_step) {
            uvec4 b_chunks[K_UNROLL * BLOCK_N];
            uvec4 a_chunks[K_UNROLL * BLOCK_M];
            UNROLL_UNLESS_EMULATED for (uint u = 0; u < K_UNROLL; ++u) {
                const uint l = k_start + u * chunk_step;
                UNROLL_UNLESS_EMULATED for (uint c = 0; c < BLOCK_N; ++c) {
                    b_chunks[u * BLOCK_N + c] = read_b_chunk(b_base, params.ldb, column_start + c, l,
                                                             params.n, params.k, b_vector_aligned, 1u);
                }
                UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                    a_chunks[u * BLOCK_M + r] = read_a_chunk(a_base, a_leading, row_start + r, l,
                                                             params.m, params.k, a_vector_aligned, a_stride);
                }
            }
            UNROLL_UNLESS_EMULATED for (uint u = 0; u < K_UNROLL; ++u) {
                UNROLL_UNLESS_EMULATED for (uint e = 0; e < ELEMENTS_PER_VECTOR; ++e) {
                    UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                        const SUM_TYPE a = chunk_element(a_chunks[u * BLOCK_M + r], e);
                        UNROLL_UNLESS_EMULATED for (uint c = 0; c < BLOCK_N; ++c) {
                            sums[r * BLOCK_N + c] += a * chunk_element(b_chunks[u * BLOCK_N + c], e);
                        }
                    }
                }
            }
        }
        UNROLL_UNLESS_EMULATED for (uint o = 0; o < OUTPUTS; ++o) {
            sums[o] = sum_over_lanes(sums[o], 1u);
        }
        if (lane == 0) {
            UNROLL_UNLESS_EMULATED for (uint o = 0; o < OUTPUTS; ++o) {
                subgroup_sums[gl_SubgroupID * OUTPUTS + o] = sums[o];
            }
        }
    } else {
        // ---- N lanes ----
        const uint lane_n = invocation % LANES_N;
        const uint k_group = invocation / LANES_N;
        const uint chunk_column = column_start + lane_n * ELEMENTS_PER_VECTOR;
        if (BLOCK_M <= 2) {
            // Rows k_group, k_group + K_GROUPS, ...: K_UNROLL rows of B per step, A's
            // elements as scalars (one or two per row of B).
            for (uint k_first = k_group; k_first < params.k; k_first += K_UNROLL * K_GROUPS) {
                uvec4 b_chunks[K_UNROLL];
                SUM_TYPE a_values[K_UNROLL * BLOCK_M];
                UNROLL_UNLESS_EMULATED for (uint u = 0; u < K_UNROLL; ++u) {
                    const uint l = k_first + u * K_GROUPS;
                    b_chunks[u] = read_b_chunk(b_base, params.ldb, l, chunk_column, params.k,
                                               params.n, b_vector_aligned, 1u);
                    UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                        a_values[u * BLOCK_M + r] = a_element(a_base, row_start + r, l);
                    }
                }
                UNROLL_UNLESS_EMULATED for (uint u = 0; u < K_UNROLL; ++u) {
                    UNROLL_UNLESS_EMULATED for (uint e = 0; e < ELEMENTS_PER_VECTOR; ++e) {
                        const SUM_TYPE b = chunk_element(b_chunks[u], e);
                        UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                            sums[r * ELEMENTS_PER_VECTOR + e] += a_values[u * BLOCK_M + r] * b;
                        }
                    }
                }
            }
        } else {
            // Rows VEC*k_group .. VEC*k_group + VEC-1, then K_GROUPS*VEC rows on: VEC rows of
            // B per step (VEC independent 128-bit loads in flight) and the matching chunk
            // along k of each row of A (one 128-bit load per row where A is row-major), so
            // that A costs one load per row of B however many rows there are.
            const uint a_leading = A_ROW_MAJOR ? params.lda : 1u;
            const uint a_stride = A_ROW_MAJOR ? 1u : params.lda;
            for (uint k_start = k_group * ELEMENTS_PER_VECTOR; k_start < params.k;
                 k_start += K_GROUPS * ELEMENTS_PER_VECTOR) {
                uvec4 b_rows[ELEMENTS_PER_VECTOR];
                uvec4 a_chunks[BLOCK_M];
                UNROLL_UNLESS_EMULATED for (uint e = 0; e < ELEMENTS_PER_VECTOR; ++e) {
                    b_rows[e] = read_b_chunk(b_base, params.ldb, k_start + e, chunk_column,
                                             params.k, params.n, b_vector_aligned, 1u);
                }
                UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                    a_chunks[r] = read_a_chunk(a_base, a_leading, row_start + r, k_start,
                                               params.m, params.k, a_vector_aligned, a_stride);
                }
                UNROLL_UNLESS_EMULATED for (uint e = 0; e < ELEMENTS_PER_VECTOR; ++e) {
                    UNROLL_UNLESS_EMULATED for (uint v = 0; v < ELEMENTS_PER_VECTOR; ++v) {
                        const SUM_TYPE b = chunk_element(b_rows[e], v);
                        UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                            sums[r * ELEMENTS_PER_VECTOR + v] += chunk_element(a_chunks[r], e) * b;
                        }
                    }
                }
            }
        }
        UNROLL_UNLESS_EMULATED for (uint o = 0; o < BLOCK_M * ELEMENTS_PER_VECTOR; ++o) {
            sums[o] = sum_over_lanes(sums[o], LANES_N);
        }
        if (lane < LANES_N) {
            UNROLL_UNLESS_EMULATED for (uint r = 0; r < BLOCK_M; ++r) {
                UNROLL_UNLESS_EMULATED for (uint e = 0; e < ELEMENTS_PER_VECTOR; ++e) {
                    subgroup_sums[gl_SubgroupID * OUTPUTS + r * BLOCK_N + lane_n * ELEMENTS_PER_VECTOR + e] =
                        sums[r * ELEMENTS_PER_VECTOR + e];
                }
            }
        }
    }
    barrier();

    // ---- the block's outputs, in C's memory order ----
    for (uint o = invocation; o < OUTPUTS; o += WORKGROUP_SIZE) {
        const uint r = C_ROW_MAJOR ? o / BLOCK_N : o % BLOCK_M;
        const uint c = C_ROW_MAJOR ? o % BLOCK_N : o / BLOCK_M;
        const uint i = row_start + r;
        const uint j = column_start + c;
        if (i < params.m && j < params.n) {
            SUM_TYPE sum = SUM_TYPE(0);
            UNROLL_UNLESS_EMULATED for (uint s = 0; s < SUBGROUPS; ++s) {
                sum += subgroup_sums[s * OUTPUTS + r * BLOCK_N + c];
            }
            const uint c_index = c_base + (C_ROW_MAJOR ? i * params.ldc + j : i + j * params.ldc);
#if INPUT_TYPE_ID == 4
            store_c_int(c_index, i, j, sum);
#else
            store_c_float(c_index, i, j, sum);
#endif
        }
    }
}
