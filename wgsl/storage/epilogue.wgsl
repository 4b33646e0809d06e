// The fused epilogue, shared by the SIMT GEMM and the split-K reduction. The including
// kernel's `params` has `bias_first`, `activation` and `bias_axis` (Activation::shader_code
// and BiasAxis::shader_code on the host).
//   apply_epilogue(value, row, col) = activate(value + bias[bias_first + row or col])
// Without a bias, the host binds any valid range at binding 4; it is never read.
@group(0) @binding(4) var<storage, read> bias: array<f32>;

// GELU and SiLU as x / (1 + e^-t): the exponential only overflows where the result is -0,
// so no Inf/Inf NaN. ReLU keeps NaN, tested on the bits: drivers may turn a comparison and
// select into a max() that drops it (NVIDIA does).
fn activate(x: f32) -> f32 {
    switch params.activation {
        case 1u: {
            let is_nan = (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
            return select(max(x, 0.0), x, is_nan);
        }
        case 2u: {
            // 0.5 x (1 + tanh(t / 2)) = x / (1 + e^-t), t = 2 sqrt(2/pi) (x + 0.044715 x^3)
            let t = 1.5957691216057308 * (x + 0.044715 * x * x * x);
            return x / (1.0 + exp(-t));
        }
        case 3u: {
            return x / (1.0 + exp(-x));
        }
        default: {
            return x;
        }
    }
}

fn apply_epilogue(value: f32, row: u32, col: u32) -> f32 {
    var x = value;
    if (params.bias_axis == 1u) {
        x += bias[params.bias_first + row];
    } else if (params.bias_axis == 2u) {
        x += bias[params.bias_first + col];
    }
    return activate(x);
}

