// coopgemm WGSL cooperative-matrix GEMM: C[b] = epilogue(alpha * A[b] * B[b] + beta * C[b]),
// on wgpu's own cooperative matrices (`enable wgpu_cooperative_matrix;`): naga turns the
// coop* calls into OpCooperativeMatrix*KHR on Vulkan and simdgroup_matrix on Metal.
//
// This file is the kernel's body. The host (src/backend/wgsl_coopmat/mod.rs) puts in front of it:
//   * a header with the `enable` directives and the coop shape: `AB` (element type of A and
//     B, as stored and as multiplied: f16 or f32), `Acc` (the accumulators' type), CoopA,
//     CoopB, CoopC (coop_mat8x8 or coop_mat16x16 of them), COOP (8 or 16) and STAGE_PAD
//     (elements in 16 bytes);
//   * a staging snippet of wgsl/coopmat_staging/: how a quad is written to workgroup memory
//     (`Staged`, STAGE_VECTOR, write_quad): one vector store where the platform's coop loads
//     read vectors (vector.wgsl, Vulkan), else four element stores (scalar.wgsl);
//   * the storage snippets of wgsl/storage/ (the SIMT kernel's, and inputs_native_oct.wgsl):
//     A and B (bindings 1, 2: load_a, load_a_quad, quad_of, decode_quad -> vec4<AB>, ...), C
//     (binding 3: load_c, store_c) and the epilogue (binding 4: apply_epilogue);
//   * wgsl/tile_loads.wgsl: `Params` (binding 0, the SIMT kernel's uniform block) and the load
//     side of the tile loads (load_slice: an invocation's quads of a slice, zero outside the matrix);
//   * a loads snippet of wgsl/coopmat_loads/: load_stage (global memory -> registers) and
//     store_stage (registers -> workgroup memory, through write_quad and stage_index) of one
//     slice, in quads (quads.wgsl, any storage) or in 16-byte octs (octs.wgsl, aligned f16).
//
// Tiling (batch -> workgroup tile -> subgroup tile -> coop tile):
//   * grid z = batch index, y = block of TILE_M rows of C, x = block of TILE_N columns.
//   * WORKGROUP_SIZE / SUBGROUP_SIZE subgroups, SUBGROUPS_N of them side by side along n;
//     each owns TILES_M x TILES_N coop tiles (COOP x COOP each) of the workgroup tile, held in
//     up to 4 x 4 named accumulators (unused ones fold away; no register array is indexed).
//     SUBGROUP_SIZE is the device's largest subgroup size: WGSL cannot ask for a subgroup
//     size, and where the driver picks smaller subgroups, several of them share one logical
//     subgroup's tiles and compute the same values (wasted work, never wrong results).
//   * K in slices of TILE_K: each slice of A (TILE_M x TILE_K) and B (TILE_K x TILE_N) is
//     held in workgroup memory, two stages alternating (double buffering): while the
//     subgroups multiply out of one stage, the next slice is already loaded into registers
//     (load_stage), and it is written to the other stage before the single barrier of the
//     step. The tile loads zero-fill everything outside the matrices, so the coop operations only
//     ever see whole tiles and any m, n, k works.
//   * Each operand is held in workgroup memory in its own layout, so that a quad (four elements adjacent
//     in global memory) stays four adjacent elements of one workgroup-memory row: a k-contiguous
//     operand (row-major A, column-major B) as one row of TILE_K elements per row of A or
//     column of B, the other as one row of TILE_M (A) or TILE_N (B) elements per k. Rows are
//     padded by 16 bytes: coop loads from workgroup memory need 16-byte aligned rows, and
//     with an odd number of 16-byte units per row the 8 rows of a matrix load's phase fall
//     in 8 different bank groups. A tile is loaded with the layout of its stage (coopLoadT
//     for rows along m of A or along n of B, coopLoad for rows along k). (k-major rows in workgroup memory
//     whatever the layout, a quad of row-major A went to four rows: four 16-bit stores, each
//     4-way bank-conflicted, that the driver cannot merge; adjacent, they are one vector
//     store, or four stores the driver can merge where the indices are not clamped, see
//     COOPGEMM_WGSL_COOPMAT_CHECKS.)
//   * The K steps of a stage (TILE_K / COOP: 1, 2 or 4) are written out, not looped over, so
//     every coop load of a stage has a constant offset and the driver can schedule the
//     loads of one step under the multiplies of the previous one.

// Epilogue: each subgroup writes one accumulator at a time into its own COOP x COOP scratch
// in workgroup memory (coopStoreT), and its lanes walk the scratch: value = alpha * sum +
// beta * C (C not read when beta == 0), + bias, activation (apply_epilogue), then store_c,
// with bounds checks, in any layout of C (c_row_stride / c_col_stride).

// Rows and columns of C per workgroup, and K depth per stage (COOP, 2 * COOP or 4 * COOP, and a
// multiple of 4).
override TILE_M: u32 = 64u;
override TILE_N: u32 = 64u;
override TILE_K: u32 = 32u;
// The device's largest subgroup size, and subgroups along n.
override SUBGROUP_SIZE: u32 = 32u;
override SUBGROUPS_N: u32 = 2u;
// Coop tiles per subgroup along m and along n: 1, 2 or 4 each.
override TILES_M: u32 = 2u;
override TILES_N: u32 = 2u;
// Must equal SUBGROUP_SIZE * (TILE_M / (TILES_M * COOP)) * (TILE_N / (TILES_N * COOP)).
override WORKGROUP_SIZE: u32 = 128u;
// Whether consecutive k of A (row-major A) or of B (column-major B) are adjacent in memory
// (they choose how invocations walk when loading, so that global reads coalesce).
override A_K_CONTIGUOUS: bool = true;
override B_K_CONTIGUOUS: bool = false;
// Read by wgsl/tile_loads.wgsl; this kernel always compiles the layout in.
override LAYOUT_AT_RUNTIME: bool = false;

// Elements of one workgroup-memory row (padded by STAGE_PAD), and of one stage (the larger of the two
// layouts, so that the host computes the workgroup memory without knowing the layout).
override A_ROW: u32 = select(TILE_M, TILE_K, A_K_CONTIGUOUS) + STAGE_PAD;
override B_ROW: u32 = select(TILE_N, TILE_K, B_K_CONTIGUOUS) + STAGE_PAD;
override A_STAGE: u32 = max(TILE_M * (TILE_K + STAGE_PAD), TILE_K * (TILE_M + STAGE_PAD));
override B_STAGE: u32 = max(TILE_N * (TILE_K + STAGE_PAD), TILE_K * (TILE_N + STAGE_PAD));
// Held as `Staged` values of STAGE_VECTOR elements each (the staging snippet: wgsl/coopmat_staging/);
// every index and row length below counts elements and is divided by STAGE_VECTOR where it
// addresses the arrays (rows and stages are multiples of four elements).
override A_STAGES_STAGED: u32 = 2u * A_STAGE / STAGE_VECTOR;
override B_STAGES_STAGED: u32 = 2u * B_STAGE / STAGE_VECTOR;
var<workgroup> a_stages: array<Staged, A_STAGES_STAGED>;
var<workgroup> b_stages: array<Staged, B_STAGES_STAGED>;
// One COOP x COOP accumulator per subgroup, for the epilogue.
var<workgroup> scratch: array<Acc, WORKGROUP_SIZE / SUBGROUP_SIZE * COOP * COOP>;

// Element index, in the A or B stages, of stage `stage`'s element (outer, k) = `position`: the
// row of the workgroup-memory layout (outer for a k-contiguous operand, else k) times the
// row length, plus the element in the row.
fn stage_index(is_a: bool, stage: u32, position: vec2<u32>) -> u32 {
    var row = position.y;
    var first = position.x;
    if (is_k_contiguous(is_a)) {
        row = position.x;
        first = position.y;
    }
    return stage * select(B_STAGE, A_STAGE, is_a) + row * select(B_ROW, A_ROW, is_a) + first;
}

// The A tile of rows tile_row.. (in the workgroup tile) and k = kk.. of stage `stage`.
fn load_a_tile(stage: u32, kk: u32, tile_row: u32) -> CoopA {
    let base = stage * A_STAGE;
    let stride = A_ROW / STAGE_VECTOR;
    if (A_K_CONTIGUOUS) {
        return coopLoadT<CoopA>(&a_stages[(base + tile_row * A_ROW + kk) / STAGE_VECTOR], stride);
    }
    return coopLoad<CoopA>(&a_stages[(base + kk * A_ROW + tile_row) / STAGE_VECTOR], stride);
}

// The B tile of k = kk.. and columns tile_col.. (in the workgroup tile) of stage `stage`.
fn load_b_tile(stage: u32, kk: u32, tile_col: u32) -> CoopB {
    let base = stage * B_STAGE;
    let stride = B_ROW / STAGE_VECTOR;
    if (B_K_CONTIGUOUS) {
        return coopLoad<CoopB>(&b_stages[(base + tile_col * B_ROW + kk) / STAGE_VECTOR], stride);
    }
    return coopLoadT<CoopB>(&b_stages[(base + kk * B_ROW + tile_col) / STAGE_VECTOR], stride);
}

// Writes one accumulator tile, whose first element is (first_row, first_col) of C, through
// the subgroup's scratch. Every invocation of the workgroup calls it (it has barriers).
fn store_tile(tile: CoopC, subgroup: u32, lane: u32, batch: u32, first_row: u32, first_col: u32) {
    let base = subgroup * COOP * COOP;
    coopStoreT(tile, &scratch[base], COOP);
    workgroupBarrier();
    let c_base = params.c_first + batch * params.c_batch_stride;
    for (var e = lane; e < COOP * COOP; e += SUBGROUP_SIZE) {
        let row = first_row + e / COOP;
        let col = first_col + e % COOP;
        if (row < params.m && col < params.n) {
            let index = c_base + row * params.c_row_stride + col * params.c_col_stride;
            var value = params.alpha * f32(scratch[base + e]);
            if (params.beta != 0.0) {
                value += params.beta * load_c(index);
            }
            store_c(index, apply_epilogue(value, row, col));
        }
    }
    // The scratch is rewritten by the next tile.
    workgroupBarrier();
}

// Accumulators, named by (tile row, tile column); those past TILES_M x TILES_N fold away.
// Module-scope so that multiply_step can reach them by name (no register array is indexed);
// private variables start at zero.
var<private> acc00: CoopC;
var<private> acc01: CoopC;
var<private> acc02: CoopC;
var<private> acc03: CoopC;
var<private> acc10: CoopC;
var<private> acc11: CoopC;
var<private> acc12: CoopC;
var<private> acc13: CoopC;
var<private> acc20: CoopC;
var<private> acc21: CoopC;
var<private> acc22: CoopC;
var<private> acc23: CoopC;
var<private> acc30: CoopC;
var<private> acc31: CoopC;
var<private> acc32: CoopC;
var<private> acc33: CoopC;

// One K step (k = kk.. of stage `stage`) of the subgroup whose tiles start at (sub_row,
// sub_col) of the workgroup tile: TILES_N B tiles, TILES_M A tiles, TILES_M x TILES_N
// multiply-adds.
fn multiply_step(stage: u32, kk: u32, sub_row: u32, sub_col: u32) {
    // Every branch below depends on override constants only: uniform everywhere.
    let b0 = load_b_tile(stage, kk, sub_col);
    var b1 = CoopB();
    var b2 = CoopB();
    var b3 = CoopB();
    if (TILES_N > 1u) {
        b1 = load_b_tile(stage, kk, sub_col + COOP);
    }
    if (TILES_N > 2u) {
        b2 = load_b_tile(stage, kk, sub_col + 2u * COOP);
        b3 = load_b_tile(stage, kk, sub_col + 3u * COOP);
    }
    let a0 = load_a_tile(stage, kk, sub_row);
    acc00 = coopMultiplyAdd(a0, b0, acc00);
    if (TILES_N > 1u) {
        acc01 = coopMultiplyAdd(a0, b1, acc01);
    }
    if (TILES_N > 2u) {
        acc02 = coopMultiplyAdd(a0, b2, acc02);
        acc03 = coopMultiplyAdd(a0, b3, acc03);
    }
    if (TILES_M > 1u) {
        let a1 = load_a_tile(stage, kk, sub_row + COOP);
        acc10 = coopMultiplyAdd(a1, b0, acc10);
        if (TILES_N > 1u) {
            acc11 = coopMultiplyAdd(a1, b1, acc11);
        }
        if (TILES_N > 2u) {
            acc12 = coopMultiplyAdd(a1, b2, acc12);
            acc13 = coopMultiplyAdd(a1, b3, acc13);
        }
    }
    if (TILES_M > 2u) {
        let a2 = load_a_tile(stage, kk, sub_row + 2u * COOP);
        acc20 = coopMultiplyAdd(a2, b0, acc20);
        if (TILES_N > 1u) {
            acc21 = coopMultiplyAdd(a2, b1, acc21);
        }
        if (TILES_N > 2u) {
            acc22 = coopMultiplyAdd(a2, b2, acc22);
            acc23 = coopMultiplyAdd(a2, b3, acc23);
        }
        let a3 = load_a_tile(stage, kk, sub_row + 3u * COOP);
        acc30 = coopMultiplyAdd(a3, b0, acc30);
        if (TILES_N > 1u) {
            acc31 = coopMultiplyAdd(a3, b1, acc31);
        }
        if (TILES_N > 2u) {
            acc32 = coopMultiplyAdd(a3, b2, acc32);
            acc33 = coopMultiplyAdd(a3, b3, acc33);
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
    let subgroup = local_index / SUBGROUP_SIZE;
    let lane = local_index % SUBGROUP_SIZE;
    // The subgroup's first row and column inside the workgroup tile.
    let sub_row = (subgroup / SUBGROUPS_N) * TILES_M * COOP;
    let sub_col = (subgroup % SUBGROUPS_N) * TILES_N * COOP;

    let a_tile_first = params.a_first + batch * params.a_batch_stride + row0 * params.a_outer_stride;
    let b_tile_first = params.b_first + batch * params.b_batch_stride + workgroup.x * params.b_tile_stride;
    let k_slices = (params.k + TILE_K - 1u) / TILE_K;
    if (k_slices > 0u) {
        store_stage(true, 0u, local_index, load_stage(true, a_tile_first, row0, 0u, local_index));
        store_stage(false, 0u, local_index, load_stage(false, b_tile_first, col0, 0u, local_index));
    }
    workgroupBarrier();

    for (var slice = 0u; slice < k_slices; slice++) {
        let stage = slice % 2u;
        let has_next = slice + 1u < k_slices;
        // The next slice (past K on the last one, where every element reads as zero without
        // touching memory), held in registers while this one is multiplied.
        let loaded_a = load_stage(true, a_tile_first, row0, (slice + 1u) * TILE_K, local_index);
        let loaded_b = load_stage(false, b_tile_first, col0, (slice + 1u) * TILE_K, local_index);
        // The K steps of the stage, written out (TILE_K / COOP is 1, 2 or 4).
        multiply_step(stage, 0u, sub_row, sub_col);
        if (TILE_K > COOP) {
            multiply_step(stage, COOP, sub_row, sub_col);
        }
        if (TILE_K > 2u * COOP) {
            multiply_step(stage, 2u * COOP, sub_row, sub_col);
            multiply_step(stage, 3u * COOP, sub_row, sub_col);
        }
        if (has_next) {
            store_stage(true, 1u - stage, local_index, loaded_a);
            store_stage(false, 1u - stage, local_index, loaded_b);
        }
        workgroupBarrier();
    }

    // Tile (i, j) of the subgroup starts at row first_row + i * COOP, column first_col + j * COOP.
    let first_row = row0 + sub_row;
    let first_col = col0 + sub_col;
    store_tile(acc00, subgroup, lane, batch, first_row, first_col);
    if (TILES_N > 1u) {
        store_tile(acc01, subgroup, lane, batch, first_row, first_col + COOP);
    }
    if (TILES_N > 2u) {
        store_tile(acc02, subgroup, lane, batch, first_row, first_col + 2u * COOP);
        store_tile(acc03, subgroup, lane, batch, first_row, first_col + 3u * COOP);
    }
    if (TILES_M > 1u) {
        let row = first_row + COOP;
        store_tile(acc10, subgroup, lane, batch, row, first_col);
        if (TILES_N > 1u) {
            store_tile(acc11, subgroup, lane, batch, row, first_col + COOP);
        }
        if (TILES_N > 2u) {
            store_tile(acc12, subgroup, lane, batch, row, first_col + 2u * COOP);
            store_tile(acc13, subgroup, lane, batch, row, first_col + 3u * COOP);
        }
    }
    if (TILES_M > 2u) {
        let row2 = first_row + 2u * COOP;
        let row3 = first_row + 3u * COOP;
        store_tile(acc20, subgroup, lane, batch, row2, first_col);
        store_tile(acc30, subgroup, lane, batch, row3, first_col);
        if (TILES_N > 1u) {
            store_tile(acc21, subgroup, lane, batch, row2, first_col + COOP);
            store_tile(acc31, subgroup, lane, batch, row3, first_col + COOP);
        }
        if (TILES_N > 2u) {
            store_tile(acc22, subgroup, lane, batch, row2, first_col + 2u * COOP);
            store_tile(acc23, subgroup, lane, batch, row2, first_col + 3u * COOP);
            store_tile(acc32, subgroup, lane, batch, row3, first_col + 2u * COOP);
            store_tile(acc33, subgroup, lane, batch, row3, first_col + 3u * COOP);
        }
    }
}
