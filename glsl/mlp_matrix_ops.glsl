// mlp_matrix_ops.glsl -- the cooperative-matrix operations of mlp_coopmat.comp, in two
// implementations with one interface (as matrix_ops.glsl is for the GEMM kernel):
//
//   default             GL_KHR_cooperative_matrix, 16x16x16, f16 inputs, f32 sums
//   COOPMAT_EMULATED=1  plain per-invocation arithmetic (no cooperative-matrix extension),
//                       for Vulkan drivers without cooperative matrices (CI's lavapipe)
//
// The kernel includes this after declaring `shared float16_t activations[]` (row-major,
// ACTIVATION_STRIDE elements per row), `shared float scratch[]`, the weights binding
// `weights[]` (float16_t), the layer table `table[]` (uint), SUBGROUP_SIZE and
// `float activate(float x, uint activation, float slope)`. Every function is called by a whole subgroup in
// subgroup-uniform control flow.
//
//   A_FRAGMENT  16x16 of the activations       load_a(out a, element): the tile whose
//                                               top-left is activations[element]
//   B_FRAGMENT  16x16 of a layer's weights^T    load_b(out b, element, stride): B(k, n) =
//                                               weights[element + n * stride + k]
//   ACCUMULATOR 16x16 f32                       load_bias(acc, first, stride): acc(r, c) =
//                                               table[first + r * stride + c] as float bits;
//                                               multiply_add(acc, a, b);
//                                               activate_accumulator(acc, activation, slope);
//                                               store_accumulator(acc, first): row-major into
//                                               scratch[first + r * SCRATCH_STRIDE + c];
//                                               store_activations(acc, element): as f16 into
//                                               activations[element + r * ACTIVATION_STRIDE + c]
//
// The caller makes a store visible to its subgroup (subgroupMemoryBarrierShared +
// subgroupBarrier) before reading scratch. Emulated A fragments are views of shared memory:
// the activations must not change between load_a and the multiply_add that uses it.

const uint TILE = 16;

#ifndef COOPMAT_EMULATED

#define A_FRAGMENT coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseA>
#define B_FRAGMENT coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseB>
#define ACCUMULATOR coopmat<float, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator>

void load_bias(out ACCUMULATOR accumulator, uint first, uint stride) {
    coopMatLoad(accumulator, table, first, stride, gl_CooperativeMatrixLayoutRowMajor);
}

void activate_accumulator(inout ACCUMULATOR accumulator, uint activation, float slope) {
    for (int i = 0; i < accumulator.length(); ++i) {
        accumulator[i] = activate(accumulator[i], activation, slope);
    }
}

void store_activations(ACCUMULATOR accumulator, uint element) {
    coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator> halves =
        coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator>(accumulator);
    coopMatStore(halves, activations, element, ACTIVATION_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
}

void load_a(out A_FRAGMENT fragment, uint element) {
    coopMatLoad(fragment, activations, element, ACTIVATION_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
}

void load_b(out B_FRAGMENT fragment, uint element, uint stride) {
    coopMatLoad(fragment, weights, element, stride, gl_CooperativeMatrixLayoutColumnMajor);
}

void multiply_add(inout ACCUMULATOR accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    accumulator = coopMatMulAdd(a, b, accumulator);
}

void store_accumulator(ACCUMULATOR accumulator, uint first) {
    coopMatStore(accumulator, scratch, first, SCRATCH_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
}

#else

// Lane l owns the tile's elements l, l + SUBGROUP_SIZE, ... (row-major numbering) and
// computes each as a sum of 16 exact f16 products in f32.
const uint ELEMENTS_PER_LANE = (TILE * TILE + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE;

#define A_FRAGMENT uint
struct BFragment {
    uint first;
    uint stride;
};
#define B_FRAGMENT BFragment
struct Accumulator {
    float elements[ELEMENTS_PER_LANE];
};
#define ACCUMULATOR Accumulator

void load_bias(out ACCUMULATOR accumulator, uint first, uint stride) {
    [[dont_unroll]] for (uint slot = 0; slot < ELEMENTS_PER_LANE; ++slot) {
        const uint element = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
        accumulator.elements[slot] = element < TILE * TILE
            ? uintBitsToFloat(table[first + (element / TILE) * stride + element % TILE]) : 0.0;
    }
}

void activate_accumulator(inout ACCUMULATOR accumulator, uint activation, float slope) {
    [[dont_unroll]] for (uint slot = 0; slot < ELEMENTS_PER_LANE; ++slot) {
        accumulator.elements[slot] = activate(accumulator.elements[slot], activation, slope);
    }
}

void store_activations(ACCUMULATOR accumulator, uint element) {
    [[dont_unroll]] for (uint slot = 0; slot < ELEMENTS_PER_LANE; ++slot) {
        const uint tile_element = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
        if (tile_element < TILE * TILE) {
            activations[element + (tile_element / TILE) * ACTIVATION_STRIDE + tile_element % TILE] =
                float16_t(accumulator.elements[slot]);
        }
    }
}

void load_a(out A_FRAGMENT fragment, uint element) {
    fragment = element;
}

void load_b(out B_FRAGMENT fragment, uint element, uint stride) {
    fragment = BFragment(element, stride);
}

void multiply_add(inout ACCUMULATOR accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    [[dont_unroll]] for (uint slot = 0; slot < ELEMENTS_PER_LANE; ++slot) {
        const uint element = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
        if (element < TILE * TILE) {
            const uint row = element / TILE;
            const uint column = element % TILE;
            float sum = 0.0;
            [[dont_unroll]] for (uint k = 0; k < TILE; ++k) {
                sum += float(activations[a + row * ACTIVATION_STRIDE + k])
                     * float(weights[b.first + column * b.stride + k]);
            }
            accumulator.elements[slot] += sum;
        }
    }
}

void store_accumulator(ACCUMULATOR accumulator, uint first) {
    [[dont_unroll]] for (uint slot = 0; slot < ELEMENTS_PER_LANE; ++slot) {
        const uint element = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
        if (element < TILE * TILE) {
            scratch[first + (element / TILE) * SCRATCH_STRIDE + element % TILE] =
                accumulator.elements[slot];
        }
    }
}

#endif
