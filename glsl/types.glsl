// The element types of a kernel variant as numbers the preprocessor can compare, and their
// sizes; shared by both GEMM kernels (each rejects the combinations it cannot compute).
//
// In:  A_TYPE (A and B), ACC_TYPE (sums), C_TYPE (C), preprocessor defines set per variant
//      by glsl/variants.txt; defaults float16_t, float, float.
// Out: INPUT_TYPE_ID, ACCUMULATOR_TYPE_ID, OUTPUT_TYPE_ID: 1 float, 2 float16_t,
//      3 bfloat16_t, 4 int8_t, 5 int32_t, 0 anything else;
//      INPUT_ELEMENT_BYTES, INPUT_BITS_TYPE (an unsigned type of A's size),
//      ELEMENTS_PER_VECTOR, ELEMENTS_PER_WORD (input elements per uvec4, per uint),
//      BITS_PER_ELEMENT,
//      ACCUMULATOR_ELEMENT_BYTES, OUTPUT_ELEMENT_BYTES;
//      GL_EXT_bfloat16 enabled where A is bfloat16_t.
// Include right after the #extension directives: it may add one.

#ifndef A_TYPE
#define A_TYPE float16_t
#endif
#ifndef ACC_TYPE
#define ACC_TYPE float
#endif
#ifndef C_TYPE
#define C_TYPE float
#endif

// ---- compile-time type identification ----
// The type names are temporarily defined as numbers so that #if can compare them.
#define float 1
#define float16_t 2
#define bfloat16_t 3
#define int8_t 4
#define int32_t 5
#if A_TYPE == 1
#define INPUT_TYPE_ID 1
#elif A_TYPE == 2
#define INPUT_TYPE_ID 2
#elif A_TYPE == 3
#define INPUT_TYPE_ID 3
#elif A_TYPE == 4
#define INPUT_TYPE_ID 4
#else
#define INPUT_TYPE_ID 0
#endif
#if ACC_TYPE == 1
#define ACCUMULATOR_TYPE_ID 1
#elif ACC_TYPE == 2
#define ACCUMULATOR_TYPE_ID 2
#elif ACC_TYPE == 5
#define ACCUMULATOR_TYPE_ID 5
#else
#define ACCUMULATOR_TYPE_ID 0
#endif
#if C_TYPE == 1
#define OUTPUT_TYPE_ID 1
#elif C_TYPE == 2
#define OUTPUT_TYPE_ID 2
#elif C_TYPE == 3
#define OUTPUT_TYPE_ID 3
#elif C_TYPE == 5
#define OUTPUT_TYPE_ID 5
#else
#define OUTPUT_TYPE_ID 0
#endif
#undef float
#undef float16_t
#undef bfloat16_t
#undef int8_t
#undef int32_t

#if INPUT_TYPE_ID == 1
#define INPUT_ELEMENT_BYTES 4
#define INPUT_BITS_TYPE uint
#elif INPUT_TYPE_ID == 2
#define INPUT_ELEMENT_BYTES 2
#define INPUT_BITS_TYPE uint16_t
#elif INPUT_TYPE_ID == 3
#extension GL_EXT_bfloat16 : require
#define INPUT_ELEMENT_BYTES 2
#define INPUT_BITS_TYPE uint16_t
#elif INPUT_TYPE_ID == 4
#define INPUT_ELEMENT_BYTES 1
#define INPUT_BITS_TYPE uint8_t
#else
#error "A_TYPE must be float, float16_t, bfloat16_t or int8_t"
#endif

const uint ELEMENTS_PER_VECTOR = 16 / INPUT_ELEMENT_BYTES;
const uint ELEMENTS_PER_WORD = 4 / INPUT_ELEMENT_BYTES;
const uint BITS_PER_ELEMENT = 8 * INPUT_ELEMENT_BYTES;

#if ACCUMULATOR_TYPE_ID == 1 || ACCUMULATOR_TYPE_ID == 5
#define ACCUMULATOR_ELEMENT_BYTES 4
#elif ACCUMULATOR_TYPE_ID == 2
#define ACCUMULATOR_ELEMENT_BYTES 2
#else
#error "ACC_TYPE must be float, float16_t or int32_t"
#endif

#if OUTPUT_TYPE_ID == 1 || OUTPUT_TYPE_ID == 5
#define OUTPUT_ELEMENT_BYTES 4
#elif OUTPUT_TYPE_ID == 2 || OUTPUT_TYPE_ID == 3
#define OUTPUT_ELEMENT_BYTES 2
#else
#error "C_TYPE must be float, float16_t, bfloat16_t or int32_t"
#endif
#if OUTPUT_TYPE_ID == 3 && INPUT_TYPE_ID != 3
#error "a bfloat16_t C needs bfloat16_t inputs (the extension is enabled with them)"
#endif
