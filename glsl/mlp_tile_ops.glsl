// mlp_tile_ops.glsl -- what the two cooperative-matrix network kernels' tile operations
// share (mlp_matrix_ops.glsl for mlp_coopmat.comp, mlp_rows_ops.glsl for
// mlp_coopmat_rows.comp): the fragment types of GL_KHR_cooperative_matrix 16x16x16 (f16
// inputs, f32 sums) and the operations on accumulators that do not depend on where a
// kernel keeps its activations. Included by both, outside COOPMAT_EMULATED, after the
// kernel has declared its layer table `table[]` (uint), its output binding
// `output_elements[]` (OUT_TYPE, OUT_IS_F16) and `float activate(float x, uint activation,
// float slope)`.
//
//   load_bias(acc, word, stride)  acc(r, c) = table[word + r * stride + c] as float bits
//   multiply_add(acc, a, b)       acc += a * b
//   activate_accumulator(acc, activation, slope)
//   store_output(acc, element, stride)  as OUT_TYPE rows into output_elements[element]
//                                       (element and stride 16-byte aligned)

#define A_FRAGMENT coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseA>
#define B_FRAGMENT coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseB>
#define ACCUMULATOR coopmat<float, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator>
#define HALF_ACCUMULATOR coopmat<float16_t, gl_ScopeSubgroup, TILE, TILE, gl_MatrixUseAccumulator>

void load_bias(out ACCUMULATOR accumulator, uint word, uint stride) {
    coopMatLoad(accumulator, table, word, stride, gl_CooperativeMatrixLayoutRowMajor);
}

void multiply_add(inout ACCUMULATOR accumulator, A_FRAGMENT a, B_FRAGMENT b) {
    accumulator = coopMatMulAdd(a, b, accumulator);
}

void activate_accumulator(inout ACCUMULATOR accumulator, uint activation, float slope) {
    if (activation == 0) {
        return;
    }
    for (int i = 0; i < accumulator.length(); ++i) {
        accumulator[i] = activate(accumulator[i], activation, slope);
    }
}

void store_output(ACCUMULATOR accumulator, uint element, uint stride) {
#if OUT_IS_F16
    coopMatStore(HALF_ACCUMULATOR(accumulator), output_elements, element, stride,
                 gl_CooperativeMatrixLayoutRowMajor);
#else
    coopMatStore(accumulator, output_elements, element, stride, gl_CooperativeMatrixLayoutRowMajor);
#endif
}
