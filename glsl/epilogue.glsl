// epilogue.glsl -- the fused epilogue shared by gemm_coopmat.comp and gemm_coopmat2.comp.
//
// After alpha * (A * B) + beta * C has been formed in 32-bit float, the kernels call
// apply_epilogue(value, row, column) for every output element (row < m, column < n):
//
//     value + bias            bias = bias_values[params.bias_offset + row]     (bias_axis 1)
//                                  = bias_values[params.bias_offset + column]  (bias_axis 2)
//     then the activation     activation 0 identity, 1 ReLU, 2 GELU (tanh form), 3 SiLU
//
// The including kernel declares, before including this file: `params` (push constants)
// with members `uint bias_offset, activation, bias_axis`, and the binding
// `bias_values[]` (float, read-only). The numbers are the host's
// Activation::shader_code and BiasAxis::shader_code. They are push constants, not
// specialization constants: the branches run once per stored element, and every
// combination would otherwise be one more pipeline to compile.
//
// GELU and SiLU are written as x / (1 + e^-t): for any finite x the exponential only
// overflows to +Inf where the exact result is -0, so no Inf/Inf NaN appears.
// ReLU keeps NaN, like the host reference; NaN is tested on the bits, because compilers
// may turn a comparison-and-select into a max() that drops it (NVIDIA does).
//
// round_to_bfloat16 rounds a float to the nearest bfloat16 value (ties to even) before the
// kernels convert to a bfloat16 C: some drivers convert by truncation (NVIDIA's does),
// and converting an already representable value is exact everywhere.

const uint ACTIVATION_IDENTITY = 0;
const uint ACTIVATION_RELU = 1;
const uint ACTIVATION_GELU = 2;
const uint ACTIVATION_SILU = 3;
const uint BIAS_NONE = 0;
const uint BIAS_PER_ROW = 1;
const uint BIAS_PER_COLUMN = 2;

bool epilogue_is_identity() {
    return params.activation == ACTIVATION_IDENTITY && params.bias_axis == BIAS_NONE;
}

bool is_nan_bits(float x) {
    return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u;
}

float activate(float x) {
    if (params.activation == ACTIVATION_RELU) {
        return is_nan_bits(x) ? x : max(x, 0.0);
    }
    if (params.activation == ACTIVATION_GELU) {
        // 0.5 x (1 + tanh(t / 2)) = x / (1 + e^-t), t = 2 sqrt(2/pi) (x + 0.044715 x^3)
        const float t = 1.5957691216057308 * (x + 0.044715 * x * x * x);
        return x / (1.0 + exp(-t));
    }
    if (params.activation == ACTIVATION_SILU) {
        return x / (1.0 + exp(-x));
    }
    return x;
}

float apply_epilogue(float value, uint row, uint column) {
    if (params.bias_axis == BIAS_PER_ROW) {
        value += bias_values[params.bias_offset + row];
    } else if (params.bias_axis == BIAS_PER_COLUMN) {
        value += bias_values[params.bias_offset + column];
    }
    return activate(value);
}

float round_to_bfloat16(float value) {
    if (is_nan_bits(value)) {
        return value;
    }
    const uint bits = floatBitsToUint(value);
    return uintBitsToFloat((bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u);
}
