// How gemm_coopmat.wgsl brings a slice of A or B into workgroup memory, in octs: eight
// elements adjacent in memory, one 16-byte load each (wgsl/storage/inputs_native_oct.wgsl),
// half as many loads and checks as quads; each oct is written as two quads (the staging
// snippet). The host picks it where it measured faster (OperandLoads::for_gemm), for f16
// operands with unit steps along their contiguous direction and every oct aligned. An
// invocation holds at most two octs of a slice (WgslCoopConfig::check allows four quads).
// Its position and bounds code repeats tile_loads.wgsl's for quads on purpose: one helper
// for both made the quad path 3.3x slower on the H200
// (examples/results/h200-2026-11-28-load-helpers/).
struct SliceLoad {
    part0: Oct,
    part1: Oct,
}

// Octs in one outer x TILE_K slice of the operand.
fn slice_octs(is_a: bool) -> u32 {
    return slice_quads(is_a) / 2u;
}

// Where, in an outer x TILE_K slice, the first element of the invocation's `p`-th oct lies:
// (outer, k); neighbouring invocations take neighbouring octs along the contiguous direction.
fn oct_position(is_a: bool, local_index: u32, p: u32) -> vec2<u32> {
    let oct = local_index + p * WORKGROUP_SIZE;
    if (is_k_contiguous(is_a)) {
        let octs_per_row = TILE_K / 8u;
        return vec2<u32>(oct / octs_per_row, (oct % octs_per_row) * 8u);
    }
    let octs_per_row = select(TILE_N, TILE_M, is_a) / 8u;
    return vec2<u32>((oct % octs_per_row) * 8u, oct / octs_per_row);
}

// The invocation's `p`-th oct of the slice of A (rows outer0.., k0..) or of B (columns
// outer0.., k0..); zero outside the matrix and for octs past the slice.
fn load_oct(is_a: bool, tile_first: u32, outer0: u32, k0: u32, local_index: u32, p: u32) -> Oct {
    if (local_index + p * WORKGROUP_SIZE >= slice_octs(is_a)) {
        return Oct();
    }
    let position = oct_position(is_a, local_index, p);
    let outer = outer0 + position.x;
    let k = k0 + position.y;
    let outer_count = select(params.n, params.m, is_a);
    if (outer >= outer_count || k >= params.k) {
        return Oct();
    }
    let outer_stride = select(params.b_outer_stride, params.a_outer_stride, is_a);
    let k_stride = select(params.b_k_stride, params.a_k_stride, is_a);
    let index = tile_first + position.x * outer_stride + k * k_stride;
    // Elements of the oct inside the matrix (1..=8), one step apart.
    var valid = min(outer_count - outer, 8u);
    if (is_k_contiguous(is_a)) {
        valid = min(params.k - k, 8u);
    }
    if (valid == 8u) {
        if (is_a) {
            return load_a_oct(index);
        }
        return load_b_oct(index);
    }
    return Oct(
        quad_of(
            load_element(is_a, index, 0u, valid, 1u),
            load_element(is_a, index, 1u, valid, 1u),
            load_element(is_a, index, 2u, valid, 1u),
            load_element(is_a, index, 3u, valid, 1u),
        ),
        quad_of(
            load_element(is_a, index, 4u, valid, 1u),
            load_element(is_a, index, 5u, valid, 1u),
            load_element(is_a, index, 6u, valid, 1u),
            load_element(is_a, index, 7u, valid, 1u),
        ),
    );
}

fn load_stage(is_a: bool, tile_first: u32, outer0: u32, k0: u32, local_index: u32) -> SliceLoad {
    return SliceLoad(
        load_oct(is_a, tile_first, outer0, k0, local_index, 0u),
        load_oct(is_a, tile_first, outer0, k0, local_index, 1u),
    );
}

// Writes the invocation's `p`-th oct into stage `stage`: eight adjacent elements of one
// workgroup-memory row, as two quads (nothing for octs past the slice). (Odd invocations
// writing their high quad first would spread each store over whole 16-byte bank groups,
// but the run-time offsets that takes made the kernel twice as slow on the H200.)
fn store_oct(is_a: bool, stage: u32, local_index: u32, p: u32, oct: Oct) {
    if (local_index + p * WORKGROUP_SIZE >= slice_octs(is_a)) {
        return;
    }
    let at = stage_index(is_a, stage, oct_position(is_a, local_index, p));
    write_quad(is_a, at, vec4<AB>(oct.lo));
    write_quad(is_a, at + 4u, vec4<AB>(oct.hi));
}

// Writes the registers of load_stage into stage `stage` of workgroup memory.
fn store_stage(is_a: bool, stage: u32, local_index: u32, loaded: SliceLoad) {
    store_oct(is_a, stage, local_index, 0u, loaded.part0);
    store_oct(is_a, stage, local_index, 1u, loaded.part1);
}
