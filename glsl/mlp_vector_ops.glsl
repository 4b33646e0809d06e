// mlp_vector_ops.glsl -- the cooperative-vector operations of mlp_coopvec.comp, in two
// implementations with one interface (as mlp_matrix_ops.glsl is for mlp_coopmat.comp):
//
//   default             GL_NV_cooperative_vector: coopvecNV values, coopVecMatMulAddNV on
//                       matrices in the driver's inferencing-optimal layout
//                       (vkConvertCooperativeVectorMatrixNV), coopVecLoadNV / coopVecStoreNV
//   COOPVEC_EMULATED=1  plain arrays and loops (no cooperative-vector extension), reading the
//                       matrices in the stand-in layout the host writes instead
//                       (src/mlp/coopvec.rs, standin_matrix: row-major, rows padded to
//                       16 bytes), for Vulkan drivers without cooperative vectors (CI's
//                       lavapipe)
//
// The kernel includes this after declaring the parameters binding `parameters[]`
// (float16_t). Every macro is a statement; N, M and K are constant expressions
// (specialization constants), T a scalar type.
//
//   VECTOR(T, N, name)                 declares a vector of N values of T
//   CONVERT(dst, T, N, src)            dst = src converted to T (dst may be src)
//   APPLY(v, T, N, F)                  v = F(v, zero, one), F a macro of vector built-ins
//                                      and arithmetic (max, min, exp, +, -, *, /), zero
//                                      and one vectors of T: the same formula runs on
//                                      cooperative vectors and, element by element, on
//                                      scalars in the emulation
//   MATMUL_ADD(z, x, M, K, matrix, bias)
//                                      z (M values of float16_t) = W x + b, summed
//                                      in the implementation's precision and rounded to
//                                      f16: W is M x K at byte offset `matrix` of
//                                      parameters[] (64-byte aligned), b M float16_t at
//                                      byte offset `bias` (16-byte aligned)
//   LOAD(v, N, buffer, element, BYTES) v = buffer[element ..][..N] (BYTES per element;
//                                      element * BYTES 16-byte aligned)
//   STORE(v, N, buffer, element, BYTES) buffer[element ..][..N] = v (aligned likewise)
//
// Elements are read and written as v[i] in both implementations.

#ifndef COOPVEC_EMULATED

#define VECTOR(T, N, name) coopvecNV<T, N> name
#define CONVERT(dst, T, N, src) dst = coopvecNV<T, N>(src)
#define APPLY(v, T, N, F)                                                                      \
    {                                                                                          \
        coopvecNV<T, N> zero_ = coopvecNV<T, N>(T(0));                                         \
        coopvecNV<T, N> one_ = coopvecNV<T, N>(T(1));                                          \
        v = F(v, zero_, one_);                                                                 \
    }
#define MATMUL_ADD(z, x, M, K, matrix, bias)                                                   \
    coopVecMatMulAddNV(z, x, gl_ComponentTypeFloat16NV, parameters, matrix,                    \
                       gl_ComponentTypeFloat16NV, parameters, bias, gl_ComponentTypeFloat16NV, \
                       M, K, gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0)
#define LOAD(v, N, buffer, element, BYTES) coopVecLoadNV(v, buffer, (element) * (BYTES))
#define STORE(v, N, buffer, element, BYTES) coopVecStoreNV(v, buffer, (element) * (BYTES))

#else

#define VECTOR(T, N, name) T name[N]
#define CONVERT(dst, T, N, src)                                                                \
    [[dont_unroll]] for (uint i_ = 0; i_ < (N); ++i_) { dst[i_] = T(src[i_]); }
#define APPLY(v, T, N, F)                                                                      \
    [[dont_unroll]] for (uint i_ = 0; i_ < (N); ++i_) { v[i_] = F(v[i_], T(0), T(1)); }
// Row o of W starts at element matrix / 2 + o * round_up(K, 8): the stand-in layout.
#define MATMUL_ADD(z, x, M, K, matrix, bias)                                                   \
    [[dont_unroll]] for (uint o_ = 0; o_ < (M); ++o_) {                                        \
        const uint row_ = (matrix) / 2 + o_ * (((K) + 7) / 8 * 8);                             \
        float sum_ = float(parameters[(bias) / 2 + o_]);                                       \
        [[dont_unroll]] for (uint k_ = 0; k_ < (K); ++k_) {                                    \
            sum_ += float(parameters[row_ + k_]) * float(x[k_]);                               \
        }                                                                                      \
        z[o_] = float16_t(sum_);                                                               \
    }
#define LOAD(v, N, buffer, element, BYTES)                                                     \
    [[dont_unroll]] for (uint i_ = 0; i_ < (N); ++i_) { v[i_] = buffer[(element) + i_]; }
#define STORE(v, N, buffer, element, BYTES)                                                    \
    [[dont_unroll]] for (uint i_ = 0; i_ < (N); ++i_) { buffer[(element) + i_] = v[i_]; }

#endif
