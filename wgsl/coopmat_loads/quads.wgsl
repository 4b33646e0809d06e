// How gemm_coopmat.wgsl brings a slice of A or B into workgroup memory, in quads: the tile
// loads' load_slice (wgsl/tile_loads.wgsl, any storage snippet), then one write_quad per
// quad (the staging snippet).
alias SliceLoad = Loaded;

fn load_stage(is_a: bool, tile_first: u32, outer0: u32, k0: u32, local_index: u32) -> SliceLoad {
    return load_slice(is_a, tile_first, outer0, k0, local_index);
}

// Writes the invocation's `p`-th quad into stage `stage`: four adjacent elements of one
// workgroup-memory row (nothing for quads past the slice).
fn store_quad(is_a: bool, stage: u32, local_index: u32, p: u32, stored: Quad) {
    if (local_index + p * WORKGROUP_SIZE >= slice_quads(is_a)) {
        return;
    }
    let position = quad_position(is_a, local_index, p);
    write_quad(is_a, stage_index(is_a, stage, position), vec4<AB>(decode_quad(stored)));
}

// Writes the registers of load_stage into stage `stage` of workgroup memory.
fn store_stage(is_a: bool, stage: u32, local_index: u32, loaded: SliceLoad) {
    store_quad(is_a, stage, local_index, 0u, loaded.part0);
    store_quad(is_a, stage, local_index, 1u, loaded.part1);
    store_quad(is_a, stage, local_index, 2u, loaded.part2);
    store_quad(is_a, stage, local_index, 3u, loaded.part3);
}
