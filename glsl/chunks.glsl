// chunks.glsl -- 16-byte chunks of A and B, shared by gemm_coopmat.comp and gemm_skinny.comp.
//
// In:  types.glsl (ELEMENTS_PER_VECTOR and friends, INPUT_TYPE_ID), and the bindings
//      `a_vectors`/`b_vectors` (uvec4 views) and `a_bits`/`b_bits` (element-sized unsigned
//      views) of A and B; ROLLED_IF_EMULATED (a loop hint, may be empty).
// Out: read_a_chunk and
//      read_b_chunk; chunk_element (one element of a chunk as a number).

// Reads one 16-byte chunk: ELEMENTS_PER_VECTOR consecutive elements of row `row` of a
// matrix stored as rows of `leading_dimension` elements, from column `column` on, the
// columns `element_stride` elements apart (1: the contiguous dimension). Out-of-range
// elements (row >= row_limit, column >= column_limit) read as zero bits (= 0 for every
// element type). `vector_aligned` says that base and leading dimension are multiples of
// ELEMENTS_PER_VECTOR and element_stride is 1, so whole in-range chunks can be read with
// one 128-bit load.
#define DEFINE_CHUNK_READER(FUNCTION_NAME, VECTORS, BITS)                                   \
uvec4 FUNCTION_NAME(uint base, uint leading_dimension, uint row, uint column,               \
                    uint row_limit, uint column_limit, bool vector_aligned,                 \
                    uint element_stride) {                                                   \
    if (row >= row_limit) {                                                                  \
        return uvec4(0);                                                                     \
    }                                                                                        \
    const uint first_element = base + row * leading_dimension + column * element_stride;    \
    if (vector_aligned && column + ELEMENTS_PER_VECTOR <= column_limit) {                    \
        return VECTORS[first_element / ELEMENTS_PER_VECTOR];                                 \
    }                                                                                        \
    uvec4 chunk = uvec4(0);                                                                  \
    ROLLED_IF_EMULATED for (uint element = 0; element < ELEMENTS_PER_VECTOR; ++element) {    \
        if (column + element < column_limit) {                                               \
            const uint bits = uint(BITS[first_element + element * element_stride]);         \
            chunk[element / ELEMENTS_PER_WORD] |=                                            \
                bits << (BITS_PER_ELEMENT * (element % ELEMENTS_PER_WORD));                  \
        }                                                                                    \
    }                                                                                        \
    return chunk;                                                                            \
}
DEFINE_CHUNK_READER(read_a_chunk, a_vectors, a_bits)
DEFINE_CHUNK_READER(read_b_chunk, b_vectors, b_bits)

// Element `element` of a chunk as a float (int8: as an int), decoded from its bits:
// no arithmetic type of the input is needed (bf16 is the upper half of an f32).
#if INPUT_TYPE_ID == 4
int chunk_element(uvec4 chunk, uint element) {
    const uint word = chunk[element / ELEMENTS_PER_WORD];
    return bitfieldExtract(int(word), int(BITS_PER_ELEMENT * (element % ELEMENTS_PER_WORD)), 8);
}
#else
float chunk_element(uvec4 chunk, uint element) {
    const uint word = chunk[element / ELEMENTS_PER_WORD];
#if INPUT_TYPE_ID == 1
    return uintBitsToFloat(word);
#else
    const uint half_bits = (word >> (16 * (element % 2))) & 0xffffu;
#if INPUT_TYPE_ID == 2
    return unpackHalf2x16(half_bits).x;
#else
    return uintBitsToFloat(half_bits << 16);
#endif
#endif
}
#endif
