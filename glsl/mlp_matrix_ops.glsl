// mlp_matrix_ops.glsl -- the cooperative-matrix operations of mlp_coopmat.comp, in two
// implementations with one interface (as matrix_ops.glsl is for the GEMM kernel):
//
//   default             GL_KHR_cooperative_matrix, 16x16x16, f16 inputs, f32 sums
//   COOPMAT_EMULATED=1  plain per-invocation arithmetic (no cooperative-matrix extension),
//                       for Vulkan drivers without cooperative matrices (CI's lavapipe)
//
// The default's fragment types and its operations on accumulators alone come from
// mlp_tile_ops.glsl, shared with the other network kernel.
//
// The kernel includes this after declaring `shared uvec4 activations[]` (f16 rows of
// ACTIVATION_VECTORS 16-byte vectors each; element e of a row starting at vector p is half
// e % 2 of word (e % 8) / 2 of activations[p + e / 8]), `shared float scratch[]`, the
// weights binding `weights[]` (float16_t), the output binding `output_elements[]`
// (OUT_TYPE), the layer table `table[]` (uint), SUBGROUP_SIZE and `float activate(float x,
// uint activation, float slope)`. Every function is called by a whole subgroup in
// subgroup-uniform control flow.
//
//   A_FRAGMENT  16x16 of the activations       load_a(out a, vector): the tile whose
//                                               top-left element starts activations[vector]
//   B_FRAGMENT  16x16 of a layer's weights^T    load_b(out b, element, stride): B(k, n) =
//                                               weights[element + n * stride + k]
//   ACCUMULATOR 16x16 f32                       load_bias(acc, first, stride): acc(r, c) =
//                                               table[first + r * stride + c] as float bits;
//                                               copy_accumulator(to, from);
//                                               multiply_add(acc, a, b);
//                                               activate_accumulator(acc, activation, slope);
//                                               store_accumulator(acc, first): row-major into
//                                               scratch[first + r * SCRATCH_STRIDE + c];
//                                               store_activations(acc, vector): as f16 into
//                                               the tile whose top-left starts
//                                               activations[vector];
//                                               store_output(acc, element, stride): as
//                                               OUT_TYPE into output_elements[element + r *
//                                               stride + c] (element and stride 16-byte
//                                               aligned)
//
// The caller makes a store visible to its subgroup (subgroupMemoryBarrierShared +
// subgroupBarrier) before reading scratch. Emulated A fragments are views of shared memory:
// the activations must not change between load_a and the multiply_add that uses it.

const uint TILE = 16;

#ifndef COOPMAT_EMULATED

#include "mlp_tile_ops.glsl"

void copy_accumulator(out ACCUMULATOR to, ACCUMULATOR from) {
    to = from;
}

void store_activations(ACCUMULATOR accumulator, uint vector) {
    coopMatStore(HALF_ACCUMULATOR(accumulator), activations, vector, ACTIVATION_VECTORS,
                 gl_CooperativeMatrixLayoutRowMajor);
}

void load_a(out A_FRAGMENT fragment, uint vector) {
    coopMatLoad(fragment, activations, vector, ACTIVATION_VECTORS, gl_CooperativeMatrixLayoutRowMajor);
}

void load_b(out B_FRAGMENT fragment, uint element, uint stride) {
    coopMatLoad(fragment, weights, element, stride, gl_CooperativeMatrixLayoutColumnMajor);
}

void store_accumulator(ACCUMULATOR accumulator, uint first) {
    coopMatStore(accumulator, scratch, first, SCRATCH_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
}

#else

// Lane l owns the tile's element pairs p = l, l + SUBGROUP_SIZE, ... (pair p: row p / 8,
// columns 2 (p % 8) and 2 (p % 8) + 1), so that it writes whole 32-bit words of the
// activations; each element is a sum of 16 exact f16 products in f32.
const uint PAIRS_PER_LANE = (TILE * TILE / 2 + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE;

#define A_FRAGMENT uint
struct BFragment {
    uint first;
    uint stride;
};
#define B_FRAGMENT BFragment
struct Accumulator {
    vec2 pairs[PAIRS_PER_LANE];
};
#define ACCUMULATOR Accumulator

// The tile element (row, column) of the lane's pair slot, or false where the slot is past
// the tile.
bool pair_position(uint slot, out uint row, out uint column) {
    const uint pair = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
    row = pair / (TILE / 2);
    column = 2 * (pair % (TILE / 2));
    return pair < TILE * TILE / 2;
}

float activation_at(uint vector, uint row, uint column) {
    const uint word = activations[vector + row * ACTIVATION_VECTORS + column / 8][(column % 8) / 2];
    return unpackHalf2x16(word >> (16 * (column % 2))).x;
}

void load_bias(out ACCUMULATOR accumulator, uint first, uint stride) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        uint row, column;
        accumulator.pairs[slot] = pair_position(slot, row, column)
            ? uintBitsToFloat(uvec2(table[first + row * stride + column],
                                    table[first + row * stride + column + 1]))
            : vec2(0.0);
    }
}

// (Structs holding arrays sized by a specialization constant cannot be assigned.)
void copy_accumulator(out ACCUMULATOR to, ACCUMULATOR from) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        to.pairs[slot] = from.pairs[slot];
    }
}

void activate_accumulator(inout ACCUMULATOR accumulator, uint activation, float slope) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        accumulator.pairs[slot] = vec2(activate(accumulator.pairs[slot].x, activation, slope),
                                       activate(accumulator.pairs[slot].y, activation, slope));
    }
}

void store_activations(ACCUMULATOR accumulator, uint vector) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        uint row, column;
        if (pair_position(slot, row, column)) {
            activations[vector + row * ACTIVATION_VECTORS + column / 8][(column % 8) / 2] =
                packFloat2x16(f16vec2(accumulator.pairs[slot]));
        }
    }
}

void load_a(out A_FRAGMENT fragment, uint vector) {
    fragment = vector;
}

void load_b(out B_FRAGMENT fragment, uint element, uint stride) {
    fragment = BFragment(element, stride);
}

void multiply_add(inout ACCUMULATOR accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        uint row, column;
        if (pair_position(slot, row, column)) {
            vec2 sum = vec2(0.0);
            [[dont_unroll]] for (uint k = 0; k < TILE; ++k) {
                const float x = activation_at(a, row, k);
                sum += x * vec2(float(weights[b.first + column * b.stride + k]),
                                float(weights[b.first + (column + 1) * b.stride + k]));
            }
            accumulator.pairs[slot] += sum;
        }
    }
}

void store_accumulator(ACCUMULATOR accumulator, uint first) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        uint row, column;
        if (pair_position(slot, row, column)) {
            scratch[first + row * SCRATCH_STRIDE + column] = accumulator.pairs[slot].x;
            scratch[first + row * SCRATCH_STRIDE + column + 1] = accumulator.pairs[slot].y;
        }
    }
}

void store_output(ACCUMULATOR accumulator, uint element, uint stride) {
    [[dont_unroll]] for (uint slot = 0; slot < PAIRS_PER_LANE; ++slot) {
        uint row, column;
        if (pair_position(slot, row, column)) {
            output_elements[element + row * stride + column] = OUT_TYPE(accumulator.pairs[slot].x);
            output_elements[element + row * stride + column + 1] = OUT_TYPE(accumulator.pairs[slot].y);
        }
    }
}

#endif
