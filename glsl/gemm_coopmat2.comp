#version 450
// =====================================================================================
// gemm_coopmat2.comp -- batched GEMM on workgroup-scope cooperative matrices
//                       (GL_NV_cooperative_matrix2 tensor addressing)
// =====================================================================================
//
// For every batch index b = gl_WorkGroupID.z this computes
//
//     C[b](i, j) = epilogue(alpha * sum_l A[b](i, l) * B[b](l, j) + beta * C[b](i, j), i, j)
//
// (epilogue: optional bias and activation, see epilogue.glsl)
// for 0 <= i < m, 0 <= j < n, 0 <= l < k. Any m, n, k (k = 0 gives beta * C), any
// leading dimensions, offsets and batch strides, and either layout of every operand are
// supported. When beta == 0, C is never read (it may hold NaN or garbage).
//
// Unlike gemm_coopmat.comp (subgroup-scope KHR matrices, hand-written shared-memory
// staging), every matrix here is one workgroup-scope cooperative matrix covering the
// whole workgroup tile (A: BM x BK, B: BK x BN, accumulator: BM x BN). The loads go
// straight from global memory through tensor layouts (coopMatLoadTensorNV); the driver
// stages them through shared memory and splits the multiply over the subgroups itself.
//
// -------------------------------------------------------------------------------------
// Element types (preprocessor defines; the same ones as gemm_coopmat's, see variants.txt)
// -------------------------------------------------------------------------------------
//   A_TYPE    element type of A and B in memory and of the A/B matrices:
//             float16_t, bfloat16_t or int8_t
//   ACC_TYPE  accumulator element type: float or float16_t (int32_t for int8_t inputs)
//   C_TYPE    element type of C in memory: float, float16_t or int32_t (int32_t
//             accumulators only)
// Variants (glsl/variants.txt; output glsl/spirv/gemm_coopmat2_<name>.spv): f16_f32,
// f16_f16, bf16_f32, f16_f32_f16 and i8_i32.
// The K loop accumulates in ACC_TYPE (so f16_f16 accumulates in f16, i8_i32 in int32,
// wrapping). The epilogue works in 32-bit float: result = alpha * float(acc)
// [+ beta * float(C)], then converted to C_TYPE (for int32_t: truncation toward zero, as
// GLSL int()). With an int32_t accumulator, alpha == 1 and beta == 0 or 1 are computed in
// integer arithmetic (acc, or acc + C), exactly, like gemm_coopmat.comp.
//
// -------------------------------------------------------------------------------------
// Interface (the host code depends on this exactly)
// -------------------------------------------------------------------------------------
// Descriptor set 0 (std430 storage buffers, no other bindings):
//   binding 0: A, readonly, array of A_TYPE
//   binding 1: B, readonly, array of A_TYPE
//   binding 2: C, read-write, array of C_TYPE
//   binding 3: bias vector, readonly, array of float (bind any buffer when bias_axis == 0)
// Push constants (std430, 72 bytes, in this order; offsets and strides in elements):
//   uint m, n, k; uint lda, ldb, ldc; uint a_offset, b_offset, c_offset;
//   uint a_batch_stride, b_batch_stride, c_batch_stride; float alpha, beta; uint bias_offset;
//   uint b_panel_stride; uint activation, bias_axis;
// Addressing (b = batch index):
//   A is m x k: A_ROW_MAJOR ? a_offset + b*a_batch_stride + i*lda + l
//                           : a_offset + b*a_batch_stride + i + l*lda
//   B is k x n: B_ROW_MAJOR ? b_offset + b*b_batch_stride + l*ldb + j
//                           : b_offset + b*b_batch_stride + l + j*ldb
//   C is m x n: C_ROW_MAJOR ? c_offset + b*c_batch_stride + i*ldc + j
//                           : c_offset + b*c_batch_stride + i + j*ldc
//   All index arithmetic is 32-bit unsigned.
// Specialization constants (constant_id: name = default):
//   0: BM = 128   rows of C per workgroup (M extent of the A and accumulator matrices)
//   1: BN = 128   columns of C per workgroup
//   2: BK = 32    K depth of one multiply step
//   3: WORKGROUP_SIZE = 256   local_size_x (local_size_y = local_size_z = 1)
//   4: A_ROW_MAJOR = true   5: B_ROW_MAJOR = true   6: C_ROW_MAJOR = true
//   7: B_PANELS = false  B is pre-packed in column panels of BN (Order::ColumnPanels):
//      panel p holds columns p*BN.. as a row-major k x BN matrix (zero-padded past n),
//      b_panel_stride elements apart. The host sets B_ROW_MAJOR = true and ldb = BN; each
//      workgroup reads its own panel at column 0, never needs N bounds for B, and
//      takes the unclamped path whenever its A rows are inside A.
//   8: PLAIN_STORE = false  the host promises alpha == 1, beta == 0, no bias, no
//      activation and a C_TYPE that needs no extra rounding: the accumulator is converted
//      to C_TYPE and stored as it is. The general epilogue's f32 copy of the BM x BN
//      accumulator (and C's tile) is compiled out, which frees registers.
//   9: K_UNROLL = 8  full K blocks issued back to back per iteration of the main loop.
// Dispatch grid: x = ceil(n / BN), y = ceil(m / BM), z = batch count.
//
// -------------------------------------------------------------------------------------
// Device requirements
// -------------------------------------------------------------------------------------
//   VK_NV_cooperative_matrix2 features: cooperativeMatrixWorkgroupScope,
//     cooperativeMatrixFlexibleDimensions, cooperativeMatrixTensorAddressing,
//     cooperativeMatrixPerElementOperations (the epilogue's bias and activation).
//     (No reductions, conversions of use, or block loads are used; component-type
//     conversions of accumulators are plain KHR conversions.)
//   VK_KHR_cooperative_matrix (cooperativeMatrix), Vulkan memory model
//     (vulkanMemoryModel; the SPIR-V uses the Vulkan memory model), shaderFloat16,
//     storageBuffer16BitAccess; for bf16_f32 also VK_KHR_shader_bfloat16
//     (shaderBFloat16Type and shaderBFloat16CooperativeMatrix); for i8_i32 shaderInt8 and
//     storageBuffer8BitAccess.
//   maintenance4 (core in Vulkan 1.3; the workgroup size is given as LocalSizeId).
//   SPIR-V capabilities declared: Shader, Float16, StorageBuffer16BitAccess (f16
//     variants only), VulkanMemoryModel, CooperativeMatrixKHR,
//     CooperativeMatrixTensorAddressingNV, TensorAddressingNV, and for bf16_f32
//     BFloat16TypeKHR + BFloat16CooperativeMatrixKHR (glslang also declares Float16
//     there, so enable shaderFloat16 for every variant). Workgroup scope and flexible
//     dimensions have no SPIR-V capability; they are Vulkan-side validity rules.
//   Shape rules (query vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV
//   and pick an entry with scope = WORKGROUP, AType = BType = A_TYPE, CType = ResultType =
//   ACC_TYPE):
//     BM % MGranularity == 0, BN % NGranularity == 0, BK % KGranularity == 0,
//     WORKGROUP_SIZE == that entry's workgroupInvocations (NVIDIA lists 32, 64, 128 and
//     256; the shapes of 128 and 256 have an M granularity of 32, those of 32 and 64 take
//     16, which the 16-row few-row tiles use),
//     WORKGROUP_SIZE <= cooperativeMatrixWorkgroupScopeMaxWorkgroupSize, and
//     BM, BN, BK <= cooperativeMatrixFlexibleDimensionsMaxDimension.
//   Granularities on NVIDIA are 16 or 32, so multiples of 32 for BM/BN and of 16 (better
//   32 or 64) for BK are the safe choices. The entry for (f16, f16 -> f16) must exist for
//   f16_f16, (bf16, bf16 -> f32) for bf16_f32, (s8, s8 -> s32) for i8_i32 (NVIDIA lists
//   it with K granularity 32).
//   The epilogue also uses accumulator matrices of type float (and C_TYPE) with shape
//   BM x BN; they only take part in loads, stores, conversions and element-wise
//   arithmetic, never in a multiply.
//
// -------------------------------------------------------------------------------------
// Tensor layouts
// -------------------------------------------------------------------------------------
// Every operand is described by a 2-D tensor layout whose dimension 0 is the strided
// (outer) dimension and dimension 1 the contiguous one, stride (ld, 1):
//   A row-major:    dims (m, k)  slice (tile_row, BM, k_block, BK)      no view
//   A column-major: dims (k, m)  slice (k_block, BK, tile_row, BM)      transpose view
//   B row-major:    dims (k, n)  slice (k_block, BK, tile_column, BN)   no view
//   B column-major: dims (n, k)  slice (tile_column, BN, k_block, BK)   transpose view
//   C row-major:    dims (m, n)  slice (tile_row, BM, tile_column, BN)  no view
//   C column-major: dims (n, m)  slice (tile_column, BN, tile_row, BM)  transpose view
// The transpose view is createTensorViewNV(2, false, 1, 0): matrix element (r, c) is
// read from slice coordinate (c, r).
//
// Alignment: the element offset passed to coopMatLoad/StoreTensorNV must be a multiple
// of 16 bytes. The operand's start (offset + b * batch_stride) is therefore split into
// a 16-byte-aligned part, passed as the element offset, and a remainder of
// 0..(16 / element size - 1) elements, which is added to the slice offset of the
// contiguous dimension and to that dimension's extent (so bounds checks stay exact:
// coordinates below the remainder are never produced). When the remainder is not zero
// this makes the layout's contiguous extent (inner size + remainder) possibly exceed
// the leading dimension, which the extension's rule "stride0 >= dimension1" does not
// allow on paper; the addressing formula is still exact. Hosts that care can keep
// offsets and batch strides multiples of 8 (f16/bf16 A/B, f16 C) or 4 (f32 C) elements.
//
// Bounds: the layouts used on edge tiles have clamp mode Constant (clamp value 0):
// out-of-range elements of A, B and C load as 0 and out-of-range stores are dropped,
// so there is no edge code. Workgroups whose A and B starts are 16-byte aligned, whose
// lda and ldb are multiples of 8 elements and whose BN columns lie inside B read B through
// an unclamped layout with a stride whose low bits are visibly zero (lets the driver use
// wide loads) for all full K blocks, and A likewise where their BM rows lie inside A (a
// GEMM of fewer rows than BM, as in decode, clamps only A); the clamped layouts serve the
// other workgroups and a final partial K block. C is always stored through the clamped
// layout.
//
// K loop: full K blocks in groups of K_UNROLL (unrolled), then the
// remaining full blocks one at a time, then the partial block (if k % BK != 0).
// =====================================================================================

#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require

#include "types.glsl"

#if INPUT_TYPE_ID == 4
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_EXT_shader_8bit_storage : require
#if ACCUMULATOR_TYPE_ID != 5 || OUTPUT_TYPE_ID != 5
#error "int8_t inputs need an int32_t accumulator and C"
#endif
#define INTEGER_SUMS 1
#elif INPUT_TYPE_ID != 2 && INPUT_TYPE_ID != 3
#error "A_TYPE must be float16_t, bfloat16_t or int8_t"
#elif ACCUMULATOR_TYPE_ID != 1 && ACCUMULATOR_TYPE_ID != 2
#error "ACC_TYPE must be float or float16_t for 2-byte inputs"
#endif
#if OUTPUT_TYPE_ID == 3
#define OUTPUT_IS_BFLOAT16 1
#elif OUTPUT_TYPE_ID != 1 && OUTPUT_TYPE_ID != 2 && OUTPUT_TYPE_ID != 5
#error "C_TYPE must be float, float16_t, int32_t, or bfloat16_t with bfloat16_t inputs"
#endif

// ---- specialization constants ----
layout(constant_id = 0) const uint BM = 128;
layout(constant_id = 1) const uint BN = 128;
layout(constant_id = 2) const uint BK = 32;
// constant_id 3 = WORKGROUP_SIZE (default 256): invocations per workgroup (local_size_x).
layout(local_size_x = 256, local_size_x_id = 3, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 4) const bool A_ROW_MAJOR = true;
layout(constant_id = 5) const bool B_ROW_MAJOR = true;
layout(constant_id = 6) const bool C_ROW_MAJOR = true;
layout(constant_id = 7) const bool B_PANELS = false;
layout(constant_id = 8) const bool PLAIN_STORE = false;
layout(constant_id = 9) const uint K_UNROLL = 8;

// Elements per 16 bytes: the alignment unit of a tensor load/store's element offset.
const uint INPUT_ELEMENTS_PER_16_BYTES = 16 / INPUT_ELEMENT_BYTES;
const uint OUTPUT_ELEMENTS_PER_16_BYTES = 16 / OUTPUT_ELEMENT_BYTES;

// ---- resources ----
layout(set = 0, binding = 0, std430) readonly buffer MatrixA { A_TYPE a_elements[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixB { A_TYPE b_elements[]; };
#include "interface.glsl"

// ---- per-workgroup state (uniform over the workgroup) ----
uint tile_row;        // first row of C handled by this workgroup
uint tile_column;     // first column of C handled by this workgroup
uint a_aligned_start; // 16-byte aligned element offset of A[b] (passed to the loads)
uint a_misalignment;  // elements between a_aligned_start and A[b](0, 0)
uint b_aligned_start;
uint b_misalignment;
uint b_tile_column;   // first column of this workgroup's tile inside B's layout (0 in panels)

// The transpose view, createTensorViewNV(2, false, 1, 0): matrix element (r, c) <->
// tensor slice coordinate (c, r). It is a compile-time-shaped opaque value that cannot be
// a global constant, so each function that needs it creates it locally.

// ---- the multiply step: one BK-deep block of A and B into the accumulator ----
// One body, three overloads: each layout is the unclamped one (inside the operand, aligned)
// or the clamped one with constant-0 padding (edges, misaligned operands); A may be
// clamped while B is not (tiles with rows past m), not the other way round.
#define DEFINE_MULTIPLY_K_BLOCK(A_LAYOUT_TYPE, B_LAYOUT_TYPE)                                  \
void multiplyAccumulateKBlock(                                                                 \
        inout coopmat<ACC_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> accumulator, \
        A_LAYOUT_TYPE a_layout, B_LAYOUT_TYPE b_layout, uint k_block, uint a_shift,           \
        uint b_shift) {                                                                        \
    coopmat<A_TYPE, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a_tile;                         \
    coopmat<A_TYPE, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b_tile;                         \
    const tensorViewNV<2, false, 1, 0> transpose_view = createTensorViewNV(2, false, 1, 0);  \
    if (A_ROW_MAJOR) {                                                                         \
        coopMatLoadTensorNV(a_tile, a_elements, a_aligned_start,                               \
            sliceTensorLayoutNV(a_layout, tile_row, BM, a_shift + k_block, BK));              \
    } else {                                                                                   \
        coopMatLoadTensorNV(a_tile, a_elements, a_aligned_start,                               \
            sliceTensorLayoutNV(a_layout, k_block, BK, a_shift + tile_row, BM),               \
            transpose_view);                                                                   \
    }                                                                                          \
    if (B_ROW_MAJOR) {                                                                         \
        coopMatLoadTensorNV(b_tile, b_elements, b_aligned_start,                               \
            sliceTensorLayoutNV(b_layout, k_block, BK, b_shift + b_tile_column, BN));         \
    } else {                                                                                   \
        coopMatLoadTensorNV(b_tile, b_elements, b_aligned_start,                               \
            sliceTensorLayoutNV(b_layout, b_tile_column, BN, b_shift + k_block, BK),          \
            transpose_view);                                                                   \
    }                                                                                          \
    accumulator = coopMatMulAdd(a_tile, b_tile, accumulator);                                  \
}
#define UNCLAMPED_LAYOUT tensorLayoutNV<2>
#define CLAMPED_LAYOUT tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>
DEFINE_MULTIPLY_K_BLOCK(UNCLAMPED_LAYOUT, UNCLAMPED_LAYOUT)
DEFINE_MULTIPLY_K_BLOCK(CLAMPED_LAYOUT, UNCLAMPED_LAYOUT)
DEFINE_MULTIPLY_K_BLOCK(CLAMPED_LAYOUT, CLAMPED_LAYOUT)

#ifdef OUTPUT_IS_BFLOAT16
const bool ROUND_OUTPUT = true;   // see round_to_bfloat16 in epilogue.glsl
#else
const bool ROUND_OUTPUT = false;
#endif

// coopMatPerElementNV callback: (row, column) are coordinates inside the BM x BN tile.
// Elements outside C are never stored; their bias index is clamped so every read stays
// inside the bound vector.
float epilogue_element(const in uint row, const in uint column, const in float value) {
    const uint i = min(tile_row + row, params.m - 1);
    const uint j = min(tile_column + column, params.n - 1);
    const float result = apply_epilogue(value, i, j);
#ifdef OUTPUT_IS_BFLOAT16
    return round_to_bfloat16(result);
#else
    return result;
#endif
}

void main() {
    const uint batch = gl_WorkGroupID.z;
    tile_row = gl_WorkGroupID.y * BM;
    tile_column = gl_WorkGroupID.x * BN;

    const uint a_start = params.a_offset + batch * params.a_batch_stride;
    const uint b_start = params.b_offset + batch * params.b_batch_stride +
                         (B_PANELS ? gl_WorkGroupID.x * params.b_panel_stride : 0);
    b_tile_column = B_PANELS ? 0 : tile_column;
    const uint c_start = params.c_offset + batch * params.c_batch_stride;
    a_misalignment = a_start % INPUT_ELEMENTS_PER_16_BYTES;
    b_misalignment = b_start % INPUT_ELEMENTS_PER_16_BYTES;
    a_aligned_start = a_start - a_misalignment;
    b_aligned_start = b_start - b_misalignment;
    const uint c_misalignment = c_start % OUTPUT_ELEMENTS_PER_16_BYTES;
    const uint c_aligned_start = c_start - c_misalignment;

    // Extents of each operand's (outer, contiguous) dimensions; the contiguous extent
    // includes the misalignment (see "Alignment" above).
    const uint a_outer_extent = A_ROW_MAJOR ? params.m : params.k;
    const uint a_inner_extent = (A_ROW_MAJOR ? params.k : params.m) + a_misalignment;
    const uint b_outer_extent = B_ROW_MAJOR ? params.k : params.n;
    const uint b_inner_extent = (B_PANELS ? BN : (B_ROW_MAJOR ? params.n : params.k)) + b_misalignment;
    const uint c_outer_extent = C_ROW_MAJOR ? params.m : params.n;
    const uint c_inner_extent = (C_ROW_MAJOR ? params.n : params.m) + c_misalignment;

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> a_layout_clamped =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    a_layout_clamped = setTensorLayoutDimensionNV(a_layout_clamped, a_outer_extent, a_inner_extent);
    a_layout_clamped = setTensorLayoutStrideNV(a_layout_clamped, params.lda, 1);

    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> b_layout_clamped =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    b_layout_clamped = setTensorLayoutDimensionNV(b_layout_clamped, b_outer_extent, b_inner_extent);
    b_layout_clamped = setTensorLayoutStrideNV(b_layout_clamped, params.ldb, 1);

    coopmat<ACC_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> accumulator =
        coopmat<ACC_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(ACC_TYPE(0));

    const uint full_k_blocks = params.k / BK;
    const uint unrolled_groups = full_k_blocks / K_UNROLL;
    uint k_block = 0;

    // Every full K block: groups of K_UNROLL back to back, then the rest one at a time.
#define MULTIPLY_FULL_K_BLOCKS(A_LAYOUT, B_LAYOUT, A_SHIFT, B_SHIFT)                            \
    [[dont_unroll]]                                                                             \
    for (uint group = 0; group < unrolled_groups; ++group) {                                    \
        [[unroll]]                                                                              \
        for (uint step = 0; step < K_UNROLL; ++step) {                                          \
            multiplyAccumulateKBlock(accumulator, A_LAYOUT, B_LAYOUT, k_block, A_SHIFT, B_SHIFT); \
            k_block += BK;                                                                      \
        }                                                                                       \
    }                                                                                           \
    [[dont_unroll]]                                                                             \
    for (; k_block + BK <= params.k; k_block += BK) {                                           \
        multiplyAccumulateKBlock(accumulator, A_LAYOUT, B_LAYOUT, k_block, A_SHIFT, B_SHIFT);   \
    }

    const bool rows_inside = tile_row + BM <= params.m;
    const bool columns_inside = B_PANELS || tile_column + BN <= params.n;
    const bool inputs_aligned = a_misalignment == 0 && b_misalignment == 0 &&
                                params.lda % INPUT_ELEMENTS_PER_16_BYTES == 0 &&
                                params.ldb % INPUT_ELEMENTS_PER_16_BYTES == 0;

    if (columns_inside && inputs_aligned) {
        // Every full K block lies inside B (and, with rows_inside, inside A): no bounds
        // checks there. The masked strides equal lda/ldb here; the mask only tells the
        // compiler their alignment.
        const uint alignment_mask = ~(INPUT_ELEMENTS_PER_16_BYTES - 1);
        tensorLayoutNV<2> b_layout = createTensorLayoutNV(2);
        b_layout = setTensorLayoutDimensionNV(b_layout, b_outer_extent, b_inner_extent);
        b_layout = setTensorLayoutStrideNV(b_layout, params.ldb & alignment_mask, 1);
        if (rows_inside) {
            tensorLayoutNV<2> a_layout = createTensorLayoutNV(2);
            a_layout = setTensorLayoutDimensionNV(a_layout, a_outer_extent, a_inner_extent);
            a_layout = setTensorLayoutStrideNV(a_layout, params.lda & alignment_mask, 1);
            MULTIPLY_FULL_K_BLOCKS(a_layout, b_layout, 0u, 0u);
        } else {
            MULTIPLY_FULL_K_BLOCKS(a_layout_clamped, b_layout, 0u, 0u);
        }
    } else {
        MULTIPLY_FULL_K_BLOCKS(a_layout_clamped, b_layout_clamped, a_misalignment, b_misalignment);
    }
    // Partial last K block: the clamped layouts pad it with zeros.
    if (k_block < params.k) {
        multiplyAccumulateKBlock(accumulator, a_layout_clamped, b_layout_clamped, k_block,
                                         a_misalignment, b_misalignment);
    }

    // ---- epilogue ----
    const tensorViewNV<2, false, 1, 0> transpose_view = createTensorViewNV(2, false, 1, 0);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> c_layout =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    c_layout = setTensorLayoutDimensionNV(c_layout, c_outer_extent, c_inner_extent);
    c_layout = setTensorLayoutStrideNV(c_layout, params.ldc, 1);
    if (C_ROW_MAJOR) {
        c_layout = sliceTensorLayoutNV(c_layout, tile_row, BM, c_misalignment + tile_column, BN);
    } else {
        c_layout = sliceTensorLayoutNV(c_layout, tile_column, BN, c_misalignment + tile_row, BM);
    }

    if (PLAIN_STORE) {
        const coopmat<C_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> plain =
            coopmat<C_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(accumulator);
        if (C_ROW_MAJOR) {
            coopMatStoreTensorNV(plain, c_elements, c_aligned_start, c_layout);
        } else {
            coopMatStoreTensorNV(plain, c_elements, c_aligned_start, c_layout, transpose_view);
        }
        return;
    }

#ifdef INTEGER_SUMS
    // alpha 1 with beta 0 or 1: exact, in integer arithmetic (C_TYPE is ACC_TYPE here).
    if (params.alpha == 1.0 && (params.beta == 0.0 || params.beta == 1.0)) {
        coopmat<ACC_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> sum = accumulator;
        if (params.beta != 0.0) {
            coopmat<ACC_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> c_tile;
            if (C_ROW_MAJOR) {
                coopMatLoadTensorNV(c_tile, c_elements, c_aligned_start, c_layout);
            } else {
                coopMatLoadTensorNV(c_tile, c_elements, c_aligned_start, c_layout, transpose_view);
            }
            sum += c_tile;
        }
        if (C_ROW_MAJOR) {
            coopMatStoreTensorNV(sum, c_elements, c_aligned_start, c_layout);
        } else {
            coopMatStoreTensorNV(sum, c_elements, c_aligned_start, c_layout, transpose_view);
        }
        return;
    }
#endif

    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> result =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(accumulator) * params.alpha;

    if (params.beta != 0.0) {
        coopmat<C_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> c_tile;
        if (C_ROW_MAJOR) {
            coopMatLoadTensorNV(c_tile, c_elements, c_aligned_start, c_layout);
        } else {
            coopMatLoadTensorNV(c_tile, c_elements, c_aligned_start, c_layout, transpose_view);
        }
        result += coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(c_tile) * params.beta;
    }
    if (!epilogue_is_identity() || ROUND_OUTPUT) {
        coopMatPerElementNV(result, result, epilogue_element);
    }

    const coopmat<C_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> c_result =
        coopmat<C_TYPE, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(result);
    if (C_ROW_MAJOR) {
        coopMatStoreTensorNV(c_result, c_elements, c_aligned_start, c_layout);
    } else {
        coopMatStoreTensorNV(c_result, c_elements, c_aligned_start, c_layout, transpose_view);
    }
}
