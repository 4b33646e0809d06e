// coopgemm SIMT GEMM: C[b] = epilogue(alpha * A[b] * B[b] + beta * C[b]).
//
// This file is the kernel's body. The host prepends the storage snippets of wgsl/storage/
// for the GEMM's element types: they define `Scalar`, the type products are summed in
// (f32; f16 where the GEMM asks for f16 sums and the device has SHADER_F16), declare
// bindings 1..3 (A, B, C) and define
//   Element, Quad: one element and four elements adjacent in memory, as stored;
//   load_a(index), load_b(index) -> Element; load_a_quad(index), load_b_quad(index) ->
//   Quad (elements index..index + 3); quad_of(four Elements) -> Quad;
//   decode_quad(Quad) (convertible to vec4<Scalar>); load_c(index) -> f32;
//   store_c(index, f32)
// (f32 or f16 arrays, or 16-bit f16/bf16 elements packed two per u32 word; A and B bound
// as vectors, one load per quad, where the host knows every quad is aligned), and the
// epilogue (binding 4, apply_epilogue), which works in f32.
//
// Tiling (batch -> workgroup tile -> invocation tile):
//   * grid z = batch index, grid y = block of TILE_M rows of C, grid x = block of TILE_N columns.
//   * a workgroup computes a TILE_M x TILE_N block of C, walking K in steps of TILE_K. Each
//     step stages a TILE_M x TILE_K slice of A and a TILE_K x TILE_N slice of B in workgroup
//     memory; the two stages alternate (double buffering): while the invocations multiply
//     out of one stage, the next slice is already loaded from global memory into registers,
//     and it is written to the other stage before the single barrier of the step.
//   * each invocation owns a THREAD_M x THREAD_N block of C in registers (up to four 4x4
//     blocks held as mat4x4, so no register array is ever indexed) and accumulates outer
//     products: per k it reads THREAD_M values of A and THREAD_N of B as vec4s. Its rows
//     are THREAD_M / 4 groups of 4, TILE_M / 2 rows apart (likewise columns), so the vec4
//     reads of neighbouring invocations are consecutive.
//
// Workgroup memory holds both slices "k-major": one row of TILE_M (or TILE_N) values per k,
// as vec4s, padded by one vec4 per row. The padding moves each k-row by four banks (two
// with f16 arithmetic, where two halves of one word share a bank without conflict), so the
// transposing scalar stores of a K-contiguous operand hit different banks, while the vec4
// reads stay aligned.
//
// Operands are addressed through strides (in elements) relative to their bound range:
//   A(row, k) = a_first + batch * a_batch_stride + row * a_outer_stride + k * a_k_stride
//   B(k, col) = b_first + batch * b_batch_stride + col * b_outer_stride + k * b_k_stride
//     (as b_first + batch * b_batch_stride + workgroup.x * b_tile_stride
//      + (col - col0) * b_outer_stride + k * b_k_stride, which also reads B stored in
//      column panels of TILE_N: b_tile_stride = one panel, b_outer_stride = 1,
//      b_k_stride = TILE_N)
//   C(row, col) = c_first + batch * c_batch_stride + row * c_row_stride + col * c_col_stride
// so every layout is correct; A_K_CONTIGUOUS / B_K_CONTIGUOUS only choose which direction
// neighbouring invocations walk when loading, so that global reads coalesce.
// Out-of-range elements load as zero and are never stored, so any m, n, k works.
//
// Epilogue (store_block): value = alpha * sum + beta * C (C not read when beta == 0), then
// + bias[row or column] (bias_axis 1 / 2; binding 4, f32, from bias_first), then the
// activation (activation 0 identity, 1 ReLU, 2 GELU tanh form, 3 SiLU), then store_c.

// Rows and columns of C per workgroup, and K depth per stage.
override TILE_M: u32 = 128u;
override TILE_N: u32 = 128u;
override TILE_K: u32 = 8u;
// Rows and columns of C per invocation: 4 or 8 each.
override THREAD_M: u32 = 8u;
override THREAD_N: u32 = 8u;
// Must equal (TILE_M / THREAD_M) * (TILE_N / THREAD_N); the host sets both.
override WORKGROUP_SIZE: u32 = 256u;
// Whether consecutive k of A (row-major A) or of B (column-major B) are adjacent in memory.
override A_K_CONTIGUOUS: bool = true;
override B_K_CONTIGUOUS: bool = false;
// Take the two flags above from `params` instead: one pipeline for every layout. Used on
// CPU drivers, where compiling a pipeline costs seconds and the branch costs nothing.
override LAYOUT_AT_RUNTIME: bool = false;
// The order of the main loop: four k-rows at a time, one accumulator block after the other
// (add_four_k_rows), or one k-row at a time over every block. Which one the driver compiles
// better depends on it and on the arithmetic; the host picks (SimtBackend::block_by_block).
override BLOCK_BY_BLOCK: bool = false;

// `Params`, binding 0 (`params`) and the load side of the tile loads (load_slice) come from
// wgsl/tile_loads.wgsl; bindings 1..3 (A, B, C) from the storage snippets, binding 4 (the bias
// vector) and apply_epilogue from wgsl/storage/epilogue.wgsl.

// One k-row of a stage, in vec4s, including one vec4 of padding.
override A_ROW_VEC4S: u32 = TILE_M / 4u + 1u;
override B_ROW_VEC4S: u32 = TILE_N / 4u + 1u;
var<workgroup> a_stages: array<vec4<Scalar>, 2u * TILE_K * A_ROW_VEC4S>;
var<workgroup> b_stages: array<vec4<Scalar>, 2u * TILE_K * B_ROW_VEC4S>;

// Writes the invocation's `p`-th quad into stage `stage` of workgroup memory, k-major:
// one vec4 when the quad runs along the outer dimension, four elements when along k
// (nothing for quads past the slice).
fn store_quad(is_a: bool, stage: u32, local_index: u32, p: u32, stored: Quad) {
    if (local_index + p * WORKGROUP_SIZE >= slice_quads(is_a)) {
        return;
    }
    let quad = vec4<Scalar>(decode_quad(stored));
    let position = quad_position(is_a, local_index, p);
    let outer = position.x;
    let k_row = stage * TILE_K + position.y;
    let row_vec4s = select(B_ROW_VEC4S, A_ROW_VEC4S, is_a);
    if (!is_k_contiguous(is_a)) {
        if (is_a) {
            a_stages[k_row * row_vec4s + outer / 4u] = quad;
        } else {
            b_stages[k_row * row_vec4s + outer / 4u] = quad;
        }
        return;
    }
    store_element(is_a, k_row * row_vec4s + outer / 4u, outer % 4u, quad.x);
    store_element(is_a, (k_row + 1u) * row_vec4s + outer / 4u, outer % 4u, quad.y);
    store_element(is_a, (k_row + 2u) * row_vec4s + outer / 4u, outer % 4u, quad.z);
    store_element(is_a, (k_row + 3u) * row_vec4s + outer / 4u, outer % 4u, quad.w);
}

fn store_element(is_a: bool, at: u32, component: u32, value: Scalar) {
    if (is_a) {
        a_stages[at][component] = value;
    } else {
        b_stages[at][component] = value;
    }
}

// Writes the registers of load_slice into stage `stage` of workgroup memory.
fn store_slice(is_a: bool, stage: u32, local_index: u32, loaded: Loaded) {
    store_quad(is_a, stage, local_index, 0u, loaded.part0);
    store_quad(is_a, stage, local_index, 1u, loaded.part1);
    store_quad(is_a, stage, local_index, 2u, loaded.part2);
    store_quad(is_a, stage, local_index, 3u, loaded.part3);
}

// block + a ⊗ b, a 4x4 block of C (column r holds row r) plus an outer product, as fused
// multiply-adds on 4-vectors (packed 2-wide for f16).
fn add_outer_product(block: mat4x4<Scalar>, a_values: vec4<Scalar>, b_values: vec4<Scalar>) -> mat4x4<Scalar> {
    return mat4x4<Scalar>(
        fma(vec4<Scalar>(a_values.x), b_values, block[0]),
        fma(vec4<Scalar>(a_values.y), b_values, block[1]),
        fma(vec4<Scalar>(a_values.z), b_values, block[2]),
        fma(vec4<Scalar>(a_values.w), b_values, block[3]),
    );
}

// block + the outer products of k-rows first_k_row..first_k_row + 3 of the stages (both
// stages counted), A's values from vec4 `a_at` of each k-row, B's from vec4 `b_at`.
fn add_four_k_rows(block: mat4x4<Scalar>, first_k_row: u32, a_at: u32, b_at: u32) -> mat4x4<Scalar> {
    var sum = block;
    for (var k_row = first_k_row; k_row < first_k_row + 4u; k_row++) {
        sum = add_outer_product(sum, a_stages[k_row * A_ROW_VEC4S + a_at], b_stages[k_row * B_ROW_VEC4S + b_at]);
    }
    return sum;
}

// Writes one 4x4 accumulator block (column r = row r of C) with alpha/beta, the epilogue and
// bounds checks.
fn store_block(block: mat4x4<Scalar>, batch: u32, first_row: u32, first_col: u32) {
    let c_base = params.c_first + batch * params.c_batch_stride;
    for (var r = 0u; r < 4u; r++) {
        let row = first_row + r;
        for (var col_in_block = 0u; col_in_block < 4u; col_in_block++) {
            let col = first_col + col_in_block;
            if (row < params.m && col < params.n) {
                let index = c_base + row * params.c_row_stride + col * params.c_col_stride;
                var value = params.alpha * f32(block[r][col_in_block]);
                if (params.beta != 0.0) {
                    value += params.beta * load_c(index);
                }
                store_c(index, apply_epilogue(value, row, col));
            }
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) workgroup: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let batch = workgroup.z;
    let row0 = workgroup.y * TILE_M;
    let col0 = workgroup.x * TILE_N;
    let threads_along_n = TILE_N / THREAD_N;
    let thread_row = local_index / threads_along_n;
    let thread_col = local_index % threads_along_n;
    // An invocation's THREAD_M x THREAD_N block of C is 1 or 2 groups of 4 rows times 1 or 2
    // groups of 4 columns; group g starts g * TILE_M / 2 rows (g * TILE_N / 2 columns) in.
    let two_row_groups = THREAD_M == 8u;
    let two_col_groups = THREAD_N == 8u;
    let row_group_stride = TILE_M / THREAD_M;
    let col_group_stride = TILE_N / THREAD_N;

    // Accumulator blocks, named by (row group, column group); unused ones fold away.
    var block00 = mat4x4<Scalar>();
    var block01 = mat4x4<Scalar>();
    var block10 = mat4x4<Scalar>();
    var block11 = mat4x4<Scalar>();

    let a_tile_first = params.a_first + batch * params.a_batch_stride + row0 * params.a_outer_stride;
    let b_tile_first = params.b_first + batch * params.b_batch_stride + workgroup.x * params.b_tile_stride;
    let k_slices = (params.k + TILE_K - 1u) / TILE_K;
    if (k_slices > 0u) {
        store_slice(true, 0u, local_index, load_slice(true, a_tile_first, row0, 0u, local_index));
        store_slice(false, 0u, local_index, load_slice(false, b_tile_first, col0, 0u, local_index));
    }
    workgroupBarrier();

    for (var slice = 0u; slice < k_slices; slice++) {
        let stage = slice % 2u;
        let has_next = slice + 1u < k_slices;
        // The next slice (past K on the last one, where every element reads as zero without
        // touching memory): assigned once, unconditionally, so it stays in registers.
        let loaded_a = load_slice(true, a_tile_first, row0, (slice + 1u) * TILE_K, local_index);
        let loaded_b = load_slice(false, b_tile_first, col0, (slice + 1u) * TILE_K, local_index);
        if (BLOCK_BY_BLOCK) {
            // Four k-rows at a time (TILE_K is a multiple of 4), one accumulator block after
            // the other.
            for (var kk = 0u; kk < TILE_K; kk += 4u) {
                let k_row = stage * TILE_K + kk;
                block00 = add_four_k_rows(block00, k_row, thread_row, thread_col);
                if (two_col_groups) {
                    block01 = add_four_k_rows(block01, k_row, thread_row, thread_col + col_group_stride);
                }
                if (two_row_groups) {
                    block10 = add_four_k_rows(block10, k_row, thread_row + row_group_stride, thread_col);
                    if (two_col_groups) {
                        block11 = add_four_k_rows(
                            block11,
                            k_row,
                            thread_row + row_group_stride,
                            thread_col + col_group_stride,
                        );
                    }
                }
            }
        } else {
            // One k-row at a time, every accumulator block.
            for (var kk = 0u; kk < TILE_K; kk++) {
                let a_row = (stage * TILE_K + kk) * A_ROW_VEC4S + thread_row;
                let b_row = (stage * TILE_K + kk) * B_ROW_VEC4S + thread_col;
                let a0 = a_stages[a_row];
                let b0 = b_stages[b_row];
                block00 = add_outer_product(block00, a0, b0);
                if (two_col_groups) {
                    let b1 = b_stages[b_row + col_group_stride];
                    block01 = add_outer_product(block01, a0, b1);
                    if (two_row_groups) {
                        let a1 = a_stages[a_row + row_group_stride];
                        block10 = add_outer_product(block10, a1, b0);
                        block11 = add_outer_product(block11, a1, b1);
                    }
                } else if (two_row_groups) {
                    let a1 = a_stages[a_row + row_group_stride];
                    block10 = add_outer_product(block10, a1, b0);
                }
            }
        }
        if (has_next) {
            store_slice(true, 1u - stage, local_index, loaded_a);
            store_slice(false, 1u - stage, local_index, loaded_b);
        }
        workgroupBarrier();
    }

    let first_row = row0 + thread_row * 4u;
    let first_col = col0 + thread_col * 4u;
    let second_row = first_row + row_group_stride * 4u;
    let second_col = first_col + col_group_stride * 4u;
    store_block(block00, batch, first_row, first_col);
    if (two_col_groups) {
        store_block(block01, batch, first_row, second_col);
    }
    if (two_row_groups) {
        store_block(block10, batch, second_row, first_col);
        if (two_col_groups) {
            store_block(block11, batch, second_row, second_col);
        }
    }
}
