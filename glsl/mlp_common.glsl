// mlp_common.glsl -- what the two cooperative-matrix network kernels share
// (mlp_coopmat.comp, mlp_coopmat_rows.comp): the row types, the push constants and
// bindings of their common interface (src/mlp/coopmat.rs), the activations and the input
// reader.
//
// The kernel includes this after declaring the specialization constant ACTIVATIONS (bit c:
// a layer applies the activation of code c; the others' code is left out of the pipeline:
// inlined for every element of every accumulator, it made the kernel several times slower).
//
// Interface:
//   binding 0: input rows, readonly, IN_TYPE (float16_t or float)
//   binding 1: weights, readonly, float16_t: per layer n_padded rows of k_padded (row o =
//              output o's weights, zero-padded), each layer's first element a multiple of 16
//   binding 2: output rows, OUT_TYPE (float16_t or float)
//   binding 3: layer table, readonly, uint: layer l at 8 * l: k_padded, n_padded, n,
//              weights_first, 0 (unused), activation (MlpActivation::code), slope (float
//              bits), bias_tile_first (a multiple of 16: 16 identical rows of n_padded float
//              bits, the bias zero-padded, that the accumulators start from) (of set 0),
//              the header rounded up to 16 words, then the layers' bias tiles in order;
//              with set indices, the run buffer: the table, then the slots (mlp_sets.glsl)
//   push constants (72 bytes, the GEMM kernels' size, so all share one pipeline layout):
//              rows, input_first, input_stride, output_first, output_stride, layers,
//              input_width, output_width, groups_x, indexed, sets, slots_first,
//              order_first (mlp_sets.glsl), weight_set_stride and bias_set_stride (weights
//              and table words from one set to the next), then 3 unused words

#ifndef IN_TYPE
#define IN_TYPE float16_t
#endif
#ifndef OUT_TYPE
#define OUT_TYPE float
#endif
// The type names as numbers for #if, as types.glsl does (1 float, 2 float16_t).
#define float 1
#define float16_t 2
#if IN_TYPE == 2
#define IN_IS_F16 1
#else
#define IN_IS_F16 0
#endif
#if OUT_TYPE == 2
#define OUT_IS_F16 1
#else
#define OUT_IS_F16 0
#endif
#undef float
#undef float16_t

// Elements per 16 bytes of the input and the output.
const uint INPUT_PER_VECTOR = IN_IS_F16 == 1 ? 8 : 4;
const uint OUTPUT_PER_VECTOR = OUT_IS_F16 == 1 ? 8 : 4;

layout(push_constant, std430) uniform Params {
    uint rows;
    uint input_first, input_stride;
    uint output_first, output_stride;
    uint layers;
    uint input_width, output_width;
    uint groups_x;
    uint indexed, sets, slots_first, order_first;
    uint weight_set_stride, bias_set_stride;
    uint unused0, unused1, unused2;
} params;

layout(set = 0, binding = 0, std430) readonly buffer Input { IN_TYPE input_elements[]; };
layout(set = 0, binding = 0, std430) readonly buffer InputVectors { uvec4 input_vectors[]; };
layout(set = 0, binding = 1, std430) readonly buffer Weights { float16_t weights[]; };
layout(set = 0, binding = 1, std430) readonly buffer WeightVectors { uvec4 weight_vectors[]; };
layout(set = 0, binding = 2, std430) buffer Output { OUT_TYPE output_elements[]; };
layout(set = 0, binding = 3, std430) readonly buffer Table { uint table[]; };

bool is_nan_bits(float x) {
    return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u;
}

// Whether the pipeline has the code of activation `code` (ACTIVATIONS).
bool has_activation(uint code) {
    return (ACTIVATIONS & (1u << code)) != 0;
}

// Codes as MlpActivation::code. ReLU keeps NaN (tested on the bits); GELU and SiLU as
// x / (1 + e^-t), whose exponential only overflows where the result is -0.
float activate(float x, uint activation, float slope) {
    if (has_activation(1) && activation == 1) {
        return is_nan_bits(x) ? x : max(x, 0.0);
    }
    if (has_activation(2) && activation == 2) {
        return (x >= 0.0 || is_nan_bits(x)) ? x : x * slope;
    }
    if (has_activation(3) && activation == 3) {
        const float t = 1.5957691216057308 * (x + 0.044715 * x * x * x);
        return x / (1.0 + exp(-t));
    }
    if (has_activation(4) && activation == 4) {
        return x / (1.0 + exp(-x));
    }
    if (has_activation(5) && activation == 5) {
        return 1.0 / (1.0 + exp(-x));
    }
    return x;
}

// Input elements column .. column + 7 of row `row` (of the whole input) as 8 packed f16,
// zero past the rows and the input width; `whole_vectors` says that rows start 16-byte
// aligned and that the chunk lies inside the rows, so it is read with 16-byte loads.
uvec4 read_input_chunk(uint row, uint column, bool whole_vectors) {
    const uint first = params.input_first + row * params.input_stride + column;
    if (whole_vectors) {
        if (column >= params.input_width) {
            return uvec4(0);
        }
#if IN_IS_F16
        return input_vectors[first / 8];
#else
        const vec4 low = uintBitsToFloat(input_vectors[first / 4]);
        const vec4 high = uintBitsToFloat(input_vectors[first / 4 + 1]);
        return uvec4(packFloat2x16(f16vec2(low.xy)), packFloat2x16(f16vec2(low.zw)),
                     packFloat2x16(f16vec2(high.xy)), packFloat2x16(f16vec2(high.zw)));
#endif
    }
    uvec4 chunk = uvec4(0);
    if (row < params.rows) {
        [[unroll]] for (uint pair = 0; pair < 4; ++pair) {
            f16vec2 values = f16vec2(0.0);
            if (column + 2 * pair < params.input_width) {
                values.x = float16_t(input_elements[first + 2 * pair]);
            }
            if (column + 2 * pair + 1 < params.input_width) {
                values.y = float16_t(input_elements[first + 2 * pair + 1]);
            }
            chunk[pair] = packFloat2x16(values);
        }
    }
    return chunk;
}
