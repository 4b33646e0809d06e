// mlp_rows_ops.glsl -- the cooperative-matrix operations of mlp_coopmat_rows.comp, in two
// implementations with one interface (as mlp_matrix_ops.glsl is for mlp_coopmat.comp):
//
//   default             GL_KHR_cooperative_matrix, 16x16x16, f16 inputs, f32 sums
//   COOPMAT_EMULATED=1  plain per-invocation arithmetic (no cooperative-matrix extension),
//                       for Vulkan drivers without cooperative matrices (CI's lavapipe)
//
// The default's fragment types and its operations on accumulators alone come from
// mlp_tile_ops.glsl, shared with the other network kernel.
//
// The kernel includes this after declaring `shared uvec4 staging[]` (its subgroups'
// STAGE_SUBGROUP vectors each: rows of STAGE_VECTORS 16-byte vectors of 8 halves),
// `shared uvec4 shared_weights[]`, SUBGROUP_SIZE, STAGE_SUBGROUP, STAGE_VECTORS,
// SCRATCH_VECTORS and mlp_common.glsl. Every function is
// called by a whole subgroup in workgroup-uniform control flow (lavapipe's subgroup barrier
// waits for the whole workgroup).
//
//   A_FRAGMENT  16x16 f16 of a layer's input     load_a_input(a, element, stride): the f16
//                                                input rows from input_elements[element],
//                                                row-major, 16-byte aligned;
//                                                load_a_staged(a, vector): the f16 rows from
//                                                staging[vector], STAGE_VECTORS apart
//   B_FRAGMENT  16x16 f16 of a layer's weights^T load_b(b, vector, stride): B(k, n) = the
//                                                weights row n (of `stride` vectors) from
//                                                shared_weights[vector], element k
//   ACCUMULATOR 16x16 f32                        load_bias(acc, word, stride): acc(r, c) =
//                                                table[word + r * stride + c] as float bits;
//                                                multiply_add(acc, a, b);
//                                                activate_accumulator(acc, activation, slope);
//                                                store_staged(acc, vector): as f16 rows into
//                                                staging[vector], STAGE_VECTORS apart;
//                                                store_output(acc, element, stride): as
//                                                OUT_TYPE rows into output_elements[element]
//                                                (16-byte aligned);
//                                                store_scratch(acc, vector): as f32 rows of
//                                                4 * SCRATCH_VECTORS words into staging
//
// The caller makes a store to staging visible to its subgroup (subgroupMemoryBarrierShared
// + subgroupBarrier) before reading it.

const uint TILE = 16;

#ifndef COOPMAT_EMULATED

#include "mlp_tile_ops.glsl"

void load_a_input(out A_FRAGMENT a, uint element, uint stride) {
#if IN_IS_F16
    coopMatLoad(a, input_elements, element, stride, gl_CooperativeMatrixLayoutRowMajor);
#else
    a = A_FRAGMENT(0.0); // never called: f32 rows are converted through staging
#endif
}

void load_a_staged(out A_FRAGMENT a, uint vector) {
    coopMatLoad(a, staging, vector, STAGE_VECTORS, gl_CooperativeMatrixLayoutRowMajor);
}

void load_b(out B_FRAGMENT b, uint vector, uint stride) {
    coopMatLoad(b, shared_weights, vector, stride, gl_CooperativeMatrixLayoutColumnMajor);
}

void store_staged(ACCUMULATOR accumulator, uint vector) {
    coopMatStore(HALF_ACCUMULATOR(accumulator), staging, vector, STAGE_VECTORS,
                 gl_CooperativeMatrixLayoutRowMajor);
}

void store_scratch(ACCUMULATOR accumulator, uint vector) {
    coopMatStore(accumulator, staging, vector, SCRATCH_VECTORS, gl_CooperativeMatrixLayoutRowMajor);
}

#else

// Every lane holds the whole of an A or B fragment (16 rows of 8 words of two halves; for
// B, row k holds n = 0 .. 15), so that a product needs no other lane and no barrier
// (lavapipe runs subgroup barriers as workgroup barriers, at a coroutine switch each). An
// accumulator is shared out: lane l holds the element pairs p = l, l + SUBGROUP_SIZE, ...
// (PAIRS of them; pair p: row p / 8, columns 2 (p % 8) and 2 (p % 8) + 1).
const uint MAX_PAIRS = 32; // subgroups of 4 invocations or more
const uint PAIRS = TILE * TILE / 2 / SUBGROUP_SIZE;

struct Fragment {
    uint words[TILE * TILE / 2];
};
struct Accumulator {
    vec2 pairs[MAX_PAIRS];
};
#define A_FRAGMENT Fragment
#define B_FRAGMENT Fragment
#define ACCUMULATOR Accumulator

uint pair_of(uint slot) {
    return gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
}

void load_a_input(out A_FRAGMENT a, uint element, uint stride) {
    [[dont_unroll]] for (uint w = 0; w < TILE * TILE / 2; ++w) {
        const uint first = element + (w / 8) * stride + 2 * (w % 8);
        a.words[w] = packFloat2x16(f16vec2(float16_t(input_elements[first]),
                                           float16_t(input_elements[first + 1])));
    }
}

void load_a_staged(out A_FRAGMENT a, uint vector) {
    [[dont_unroll]] for (uint w = 0; w < TILE * TILE / 2; ++w) {
        a.words[w] = staging[vector + (w / 8) * STAGE_VECTORS + (w % 8) / 4][w % 4];
    }
}

float16_t weight_at(uint vector, uint stride, uint k, uint n) {
    const uint word = shared_weights[vector + n * stride + k / 8][(k % 8) / 2];
    return unpackFloat2x16(word)[k % 2];
}

void load_b(out B_FRAGMENT b, uint vector, uint stride) {
    [[dont_unroll]] for (uint w = 0; w < TILE * TILE / 2; ++w) {
        b.words[w] = packFloat2x16(f16vec2(weight_at(vector, stride, w / 8, 2 * (w % 8)),
                                           weight_at(vector, stride, w / 8, 2 * (w % 8) + 1)));
    }
}

void load_bias(out ACCUMULATOR accumulator, uint word, uint stride) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS; ++slot) {
        const uint p = pair_of(slot);
        const uint first = word + (p / 8) * stride + 2 * (p % 8);
        accumulator.pairs[slot] = uintBitsToFloat(uvec2(table[first], table[first + 1]));
    }
}

// Each element is a sum of 16 exact f16 products in f32, added to the accumulator.
void multiply_add(inout ACCUMULATOR accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS; ++slot) {
        const uint p = pair_of(slot);
        const uint row = p / 8;
        vec2 sum = vec2(0.0);
        [[dont_unroll]] for (uint k = 0; k < TILE; ++k) {
            const float x = float(unpackFloat2x16(a.words[row * 8 + k / 2])[k % 2]);
            sum += x * vec2(unpackFloat2x16(b.words[k * 8 + p % 8]));
        }
        accumulator.pairs[slot] += sum;
    }
}

void activate_accumulator(inout ACCUMULATOR accumulator, uint activation, float slope) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS; ++slot) {
        accumulator.pairs[slot] = vec2(activate(accumulator.pairs[slot].x, activation, slope),
                                       activate(accumulator.pairs[slot].y, activation, slope));
    }
}

void store_staged(ACCUMULATOR accumulator, uint vector) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS; ++slot) {
        const uint p = pair_of(slot);
        staging[vector + (p / 8) * STAGE_VECTORS + (p % 8) / 4][p % 4] =
            packFloat2x16(f16vec2(accumulator.pairs[slot]));
    }
}

void store_output(ACCUMULATOR accumulator, uint element, uint stride) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS; ++slot) {
        const uint p = pair_of(slot);
        const uint first = element + (p / 8) * stride + 2 * (p % 8);
        output_elements[first] = OUT_TYPE(accumulator.pairs[slot].x);
        output_elements[first + 1] = OUT_TYPE(accumulator.pairs[slot].y);
    }
}

void store_scratch(ACCUMULATOR accumulator, uint vector) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS; ++slot) {
        const uint p = pair_of(slot);
        const uint word = (p / 8) * 4 * SCRATCH_VECTORS + 2 * (p % 8);
        staging[vector + word / 4][word % 4] = floatBitsToUint(accumulator.pairs[slot].x);
        staging[vector + word / 4][word % 4 + 1] = floatBitsToUint(accumulator.pairs[slot].y);
    }
}

#endif
