// matrix_ops.glsl -- the cooperative-matrix operations of gemm_coopmat.comp (and of
// gemm_decode.comp, which declares the same stage constants for its per-subgroup stages), in two
// implementations with one interface:
//
//   default             GL_KHR_cooperative_matrix (coopMatLoad / coopMatMulAdd / coopMatStore)
//   COOPMAT_EMULATED=1  plain per-invocation arithmetic on shared memory: no cooperative-matrix
//                       extension and no GL_KHR_memory_scope_semantics, for Vulkan drivers
//                       without cooperative matrices (CI's lavapipe). f32, f16 and int8
//                       inputs; bfloat16_t is not emulated.
//
// The kernel includes this file after it has declared `shared uvec4 shared_memory[]` and the
// tile constants (CM_M, CM_N, CM_K, SUBGROUP_SIZE, A_ROW_MAJOR, B_ROW_MAJOR, A_ROW_STRIDE,
// B_ROW_STRIDE and their _IF_ROW_MAJOR / _IF_COLUMN_MAJOR forms, ELEMENTS_PER_VECTOR,
// ELEMENTS_PER_WORD, BITS_PER_ELEMENT, SCRATCH_ROW_STRIDE, INPUT_TYPE_ID,
// ACCUMULATOR_TYPE_ID, ACCUMULATOR_ELEMENT_BYTES). The #extension directives of the
// cooperative-matrix implementation are in gemm_coopmat.comp's header (extensions are
// enabled before any declaration), under the same #ifndef COOPMAT_EMULATED.
//
// Interface (every function is called by all invocations of a subgroup together, in
// subgroup-uniform control flow):
//
//   A_FRAGMENT            a CM_M x CM_K tile of A (element type A_TYPE)
//   B_FRAGMENT            a CM_K x CM_N tile of B (element type A_TYPE)
//   ACCUMULATOR_FRAGMENT  a CM_M x CM_N accumulator tile (element type ACC_TYPE)
//
//   void zero_accumulator(out ACCUMULATOR_FRAGMENT accumulator)
//   void load_a_fragment(out A_FRAGMENT fragment, uint a_stage_start, uint m_in_tile,
//                        uint k_in_stage)
//       The A tile whose top-left element is row m_in_tile (within BM), column k_in_stage
//       (within BK) of the shared-memory A stage that starts at uvec4 a_stage_start.
//   void load_b_fragment(out B_FRAGMENT fragment, uint b_stage_start, uint k_in_stage,
//                        uint n_in_tile)
//       The B tile at row k_in_stage (within BK), column n_in_tile (within BN) of the stage
//       at b_stage_start.
//   void multiply_add(inout ACCUMULATOR_FRAGMENT accumulator, A_FRAGMENT a, B_FRAGMENT b)
//       accumulator += a * b.
//   void store_accumulator(ACCUMULATOR_FRAGMENT accumulator, uint scratch_start)
//       Writes the tile row-major to shared memory: row r at uvec4 scratch_start +
//       r * SCRATCH_ROW_STRIDE, CM_N elements of ACC_TYPE (the layout the epilogue reads).
//       The caller makes the writes visible to its subgroup (subgroupMemoryBarrierShared +
//       subgroupBarrier) before reading them.
//
// The shared-memory stage must not change between loading a fragment and its last
// multiply_add: the emulated fragments are views of shared memory, not copies.
//
// Shared-memory tiles (see gemm_coopmat.comp): A row-major = BM rows of BK elements,
// column-major = BK rows of BM elements; B row-major = BK rows of BN elements,
// column-major = BN rows of BK elements; rows A_ROW_STRIDE / B_ROW_STRIDE uvec4 apart.
// A fragment's position is the uvec4 index of its first element; its rows (row-major) or
// columns (column-major) are then the tile's rows, one stride apart.

// uvec4 index of an A fragment's first element, and of a B fragment's.
uint a_fragment_position(uint a_stage_start, uint m_in_tile, uint k_in_stage) {
    if (A_ROW_MAJOR) {
        return a_stage_start + m_in_tile * A_ROW_STRIDE + k_in_stage / ELEMENTS_PER_VECTOR;
    }
    return a_stage_start + k_in_stage * A_ROW_STRIDE + m_in_tile / ELEMENTS_PER_VECTOR;
}

uint b_fragment_position(uint b_stage_start, uint k_in_stage, uint n_in_tile) {
    if (B_ROW_MAJOR) {
        return b_stage_start + k_in_stage * B_ROW_STRIDE + n_in_tile / ELEMENTS_PER_VECTOR;
    }
    return b_stage_start + n_in_tile * B_ROW_STRIDE + k_in_stage / ELEMENTS_PER_VECTOR;
}

#ifndef COOPMAT_EMULATED
// =====================================================================================
// Cooperative matrices (GL_KHR_cooperative_matrix)
// =====================================================================================

#define A_FRAGMENT coopmat<A_TYPE, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA>
#define B_FRAGMENT coopmat<A_TYPE, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB>
#define ACCUMULATOR_FRAGMENT coopmat<ACC_TYPE, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>

void zero_accumulator(out ACCUMULATOR_FRAGMENT accumulator) {
    accumulator = ACCUMULATOR_FRAGMENT(ACC_TYPE(0));
}

// The strides are the select-free spec-constant expressions (one per layout), so that
// simple spec-constant evaluators can fold them.
void load_a_fragment(out A_FRAGMENT fragment, uint a_stage_start, uint m_in_tile, uint k_in_stage) {
    const uint position = a_fragment_position(a_stage_start, m_in_tile, k_in_stage);
    if (A_ROW_MAJOR) {
        coopMatLoad(fragment, shared_memory, position, A_ROW_STRIDE_IF_ROW_MAJOR,
                    gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatLoad(fragment, shared_memory, position, A_ROW_STRIDE_IF_COLUMN_MAJOR,
                    gl_CooperativeMatrixLayoutColumnMajor);
    }
}

void load_b_fragment(out B_FRAGMENT fragment, uint b_stage_start, uint k_in_stage, uint n_in_tile) {
    const uint position = b_fragment_position(b_stage_start, k_in_stage, n_in_tile);
    if (B_ROW_MAJOR) {
        coopMatLoad(fragment, shared_memory, position, B_ROW_STRIDE_IF_ROW_MAJOR,
                    gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatLoad(fragment, shared_memory, position, B_ROW_STRIDE_IF_COLUMN_MAJOR,
                    gl_CooperativeMatrixLayoutColumnMajor);
    }
}

void multiply_add(inout ACCUMULATOR_FRAGMENT accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    accumulator = coopMatMulAdd(a, b, accumulator);
}

void store_accumulator(ACCUMULATOR_FRAGMENT accumulator, uint scratch_start) {
    coopMatStore(accumulator, shared_memory, scratch_start, SCRATCH_ROW_STRIDE,
                 gl_CooperativeMatrixLayoutRowMajor);
}

#else
// =====================================================================================
// Emulation: plain arithmetic, exact up to the accumulator's own rounding
// =====================================================================================
//
// A and B fragments are positions in shared memory (a_fragment_position /
// b_fragment_position); multiply_add reads their elements from there:
//   A[r][kk] = element kk of the row at uvec4 a + r * A_ROW_STRIDE    (A_ROW_MAJOR)
//            = element r  of the row at uvec4 a + kk * A_ROW_STRIDE   (column-major)
//   B[kk][c] = element c  of the row at uvec4 b + kk * B_ROW_STRIDE   (B_ROW_MAJOR)
//            = element kk of the row at uvec4 b + c * B_ROW_STRIDE    (column-major)
// where element e of a row starting at uvec4 p is bits BITS_PER_ELEMENT * (e %
// ELEMENTS_PER_WORD) and up of word (e % ELEMENTS_PER_VECTOR) / ELEMENTS_PER_WORD of
// shared_memory[p + e / ELEMENTS_PER_VECTOR] (the little-endian order of the copy).
//
// The accumulator tile is CM_M rows of CM_N * ACCUMULATOR_ELEMENT_BYTES / 4 32-bit words,
// numbered row by row; lane l of the subgroup owns the words l + j * SUBGROUP_SIZE (j =
// 0, 1, ...), i.e. one element per word for float and int32_t, two adjacent elements (the
// even column in the low half) for float16_t. Each lane computes its own elements, so no
// lane depends on another and store_accumulator writes whole words without races.
//
// Arithmetic: for every owned element (r, c), multiply_add forms
// sum = sum over kk < CM_K of A[r][kk] * B[kk][c] in 32-bit float (f16 and f32 inputs;
// an f16 input converts exactly) or in int32_t (int8 inputs; wrapping), then adds it to
// the element: a float or int32_t accumulator in its own type, a float16_t accumulator as
// float16(float(old) + sum), rounded to nearest even. Products and partial sums are never
// rounded to 16 bits. The loops stay rolled ([[dont_unroll]]): unrolled, they multiply
// lavapipe's pipeline compile time (see the loop hints in gemm_coopmat.comp).

#if INPUT_TYPE_ID == 3
#error "bfloat16_t inputs are not emulated (COOPMAT_EMULATED)"
#endif

// An A or B fragment: the uvec4 index of its first element in shared_memory.
#define A_FRAGMENT uint
#define B_FRAGMENT uint

const uint ACCUMULATOR_ELEMENTS_PER_WORD = 4 / ACCUMULATOR_ELEMENT_BYTES;
const uint ACCUMULATOR_ROW_WORDS = CM_N / ACCUMULATOR_ELEMENTS_PER_WORD;
const uint ACCUMULATOR_WORDS = CM_M * ACCUMULATOR_ROW_WORDS;
// Whole for the 16x16 tiles and any subgroup size 4..64; the bounds checks below keep
// other sizes correct.
const uint ACCUMULATOR_WORDS_PER_LANE = (ACCUMULATOR_WORDS + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE;

// This lane's words of an accumulator tile: words[j] is tile word
// gl_SubgroupInvocationID + j * SUBGROUP_SIZE, holding float / int32_t bits or two
// float16_t.
struct AccumulatorFragment {
    uint words[ACCUMULATOR_WORDS_PER_LANE];
};
#define ACCUMULATOR_FRAGMENT AccumulatorFragment

#if INPUT_TYPE_ID == 2 || ACCUMULATOR_TYPE_ID == 2
// float16 bits (low 16 bits of `bits`) -> float, exactly, with integer operations only
// (independent of how the driver treats 16-bit denormals).
float decode_float16(uint bits) {
    const uint exponent = (bits >> 10) & 0x1fu;
    const uint mantissa = bits & 0x3ffu;
    float magnitude;
    if (exponent == 0u) {
        magnitude = float(mantissa) * 5.9604644775390625e-8;  // zero or subnormal: m * 2^-24
    } else if (exponent == 0x1fu) {
        magnitude = uintBitsToFloat(0x7f800000u | (mantissa << 13));  // infinity or NaN
    } else {
        magnitude = uintBitsToFloat(((exponent + 112u) << 23) | (mantissa << 13));
    }
    return (bits & 0x8000u) != 0u ? -magnitude : magnitude;
}
#endif

#if ACCUMULATOR_TYPE_ID == 2
// float -> float16 bits, rounded to nearest, ties to even (overflow to infinity), with
// integer operations only.
uint encode_float16(float value) {
    const uint bits = floatBitsToUint(value);
    const uint sign = (bits >> 16) & 0x8000u;
    const uint magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) {
        return sign | 0x7e00u;  // NaN
    }
    if (magnitude >= 0x47800000u) {
        return sign | 0x7c00u;  // |value| >= 2^16 or infinite
    }
    if (magnitude >= 0x38800000u) {
        // Normal float16 (|value| >= 2^-14): rebias the exponent by 127 - 15 and round off
        // 13 mantissa bits; a carry into the exponent is right (up to infinity at 65520).
        const uint truncated = (magnitude - 0x38000000u) >> 13;
        const uint rest = magnitude & 0x1fffu;
        const bool round_up = rest > 0x1000u || (rest == 0x1000u && (truncated & 1u) != 0u);
        return sign | (truncated + (round_up ? 1u : 0u));
    }
    if (magnitude <= 0x33000000u) {
        return sign;  // |value| <= 2^-25 rounds to zero
    }
    // Subnormal float16: |value| / 2^-24 = significand * 2^(exponent - 126), rounded to an
    // integer (2^-25 < |value| < 2^-14, so 14 <= shift <= 24).
    const uint exponent = magnitude >> 23;
    const uint significand = (magnitude & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - exponent;
    const uint truncated = significand >> shift;
    const uint rest = significand & ((1u << shift) - 1u);
    const uint halfway = 1u << (shift - 1u);
    const bool round_up = rest > halfway || (rest == halfway && (truncated & 1u) != 0u);
    return sign | (truncated + (round_up ? 1u : 0u));
}
#endif

#if INPUT_TYPE_ID == 4
#define INPUT_VALUE int
#else
#define INPUT_VALUE float
#endif

// Element `index` of the shared-memory row that starts at uvec4 `row_start`, converted
// exactly to float (int for int8).
INPUT_VALUE read_input(uint row_start, uint index) {
    const uint word = shared_memory[row_start + index / ELEMENTS_PER_VECTOR]
                                   [(index % ELEMENTS_PER_VECTOR) / ELEMENTS_PER_WORD];
#if INPUT_TYPE_ID == 1
    return uintBitsToFloat(word);
#elif INPUT_TYPE_ID == 2
    return decode_float16(word >> (16u * (index % 2u)));
#else
    return bitfieldExtract(int(word), int(8u * (index % 4u)), 8);
#endif
}

INPUT_VALUE a_element(A_FRAGMENT a, uint row, uint kk) {
    if (A_ROW_MAJOR) {
        return read_input(a + row * A_ROW_STRIDE, kk);
    }
    return read_input(a + kk * A_ROW_STRIDE, row);
}

INPUT_VALUE b_element(B_FRAGMENT b, uint kk, uint column) {
    if (B_ROW_MAJOR) {
        return read_input(b + kk * B_ROW_STRIDE, column);
    }
    return read_input(b + column * B_ROW_STRIDE, kk);
}

void zero_accumulator(out ACCUMULATOR_FRAGMENT accumulator) {
    [[dont_unroll]] for (uint slot = 0; slot < ACCUMULATOR_WORDS_PER_LANE; ++slot) {
        accumulator.words[slot] = 0u;  // 0.0, 0.0h or 0 in every element
    }
}

void load_a_fragment(out A_FRAGMENT fragment, uint a_stage_start, uint m_in_tile, uint k_in_stage) {
    fragment = a_fragment_position(a_stage_start, m_in_tile, k_in_stage);
}

void load_b_fragment(out B_FRAGMENT fragment, uint b_stage_start, uint k_in_stage, uint n_in_tile) {
    fragment = b_fragment_position(b_stage_start, k_in_stage, n_in_tile);
}

void multiply_add(inout ACCUMULATOR_FRAGMENT accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    [[dont_unroll]] for (uint slot = 0; slot < ACCUMULATOR_WORDS_PER_LANE; ++slot) {
        const uint word_index = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
        if (ACCUMULATOR_WORDS % SUBGROUP_SIZE == 0 || word_index < ACCUMULATOR_WORDS) {
            const uint row = word_index / ACCUMULATOR_ROW_WORDS;
            const uint column = (word_index % ACCUMULATOR_ROW_WORDS) * ACCUMULATOR_ELEMENTS_PER_WORD;
#if ACCUMULATOR_TYPE_ID == 2
            // Two elements: (row, column) in the low half, (row, column + 1) in the high half.
            float sum_low = 0.0;
            float sum_high = 0.0;
            [[dont_unroll]] for (uint kk = 0; kk < CM_K; ++kk) {
                const float a_value = a_element(a, row, kk);
                sum_low += a_value * b_element(b, kk, column);
                sum_high += a_value * b_element(b, kk, column + 1u);
            }
            const uint old_word = accumulator.words[slot];
            const uint low = encode_float16(decode_float16(old_word) + sum_low);
            const uint high = encode_float16(decode_float16(old_word >> 16) + sum_high);
            accumulator.words[slot] = low | (high << 16);
#elif ACCUMULATOR_TYPE_ID == 5
            int sum = 0;
            [[dont_unroll]] for (uint kk = 0; kk < CM_K; ++kk) {
                sum += a_element(a, row, kk) * b_element(b, kk, column);
            }
            accumulator.words[slot] = uint(int(accumulator.words[slot]) + sum);
#else
            float sum = 0.0;
            [[dont_unroll]] for (uint kk = 0; kk < CM_K; ++kk) {
                sum += a_element(a, row, kk) * b_element(b, kk, column);
            }
            accumulator.words[slot] = floatBitsToUint(uintBitsToFloat(accumulator.words[slot]) + sum);
#endif
        }
    }
}

void store_accumulator(ACCUMULATOR_FRAGMENT accumulator, uint scratch_start) {
    [[dont_unroll]] for (uint slot = 0; slot < ACCUMULATOR_WORDS_PER_LANE; ++slot) {
        const uint word_index = gl_SubgroupInvocationID + slot * SUBGROUP_SIZE;
        if (ACCUMULATOR_WORDS % SUBGROUP_SIZE == 0 || word_index < ACCUMULATOR_WORDS) {
            const uint row = word_index / ACCUMULATOR_ROW_WORDS;
            const uint word_in_row = word_index % ACCUMULATOR_ROW_WORDS;
            shared_memory[scratch_start + row * SCRATCH_ROW_STRIDE + word_in_row / 4u]
                         [word_in_row % 4u] = accumulator.words[slot];
        }
    }
}

#endif
