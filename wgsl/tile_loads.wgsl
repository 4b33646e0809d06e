// Operand tile loads shared by the WGSL GEMM kernels (gemm_simt.wgsl, gemm_coopmat.wgsl): the
// uniform block both kernels read, and the load side of bringing a slice of A or B into workgroup memory (global
// memory -> registers, in quads, zero outside the matrix). The host prepends it, after the
// storage snippets (Element, Quad, load_a, load_b, load_a_quad, load_b_quad, quad_of), to
// the kernel body, which declares the override constants used here: TILE_M, TILE_N, TILE_K,
// WORKGROUP_SIZE, A_K_CONTIGUOUS, B_K_CONTIGUOUS, LAYOUT_AT_RUNTIME. Each kernel writes
// the loaded quads to workgroup memory in its own layout.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    // Elements between the B tiles of neighbouring workgroups along n: TILE_N columns, or
    // one panel when B is stored in column panels of TILE_N (Order::ColumnPanels).
    b_tile_stride: u32,
    a_first: u32,
    a_outer_stride: u32,
    a_k_stride: u32,
    a_batch_stride: u32,
    b_first: u32,
    b_outer_stride: u32,
    b_k_stride: u32,
    b_batch_stride: u32,
    c_first: u32,
    c_row_stride: u32,
    c_col_stride: u32,
    c_batch_stride: u32,
    alpha: f32,
    beta: f32,
    bias_first: u32,
    // The epilogue: Activation::shader_code and BiasAxis::shader_code on the host. Uniform
    // values rather than override constants: the branch is taken once per stored element,
    // and every combination would otherwise be one more pipeline to compile.
    activation: u32,
    bias_axis: u32,
    // The walking directions when LAYOUT_AT_RUNTIME (1 = k-contiguous), else unused.
    a_k_contiguous: u32,
    b_k_contiguous: u32,
    _padding: u32,
}

@group(0) @binding(0) var<uniform> params: Params;

// A and B are loaded the same way, each seen as an "outer" dimension (rows of A, columns
// of B) times k. `is_a` picks the operand; every call passes a literal, so it folds away.
//
// An invocation moves its share of a slice in quads: four elements adjacent along the
// operand's contiguous direction (k for a k-contiguous operand, else the outer dimension),
// read with one vector load where the storage snippet binds vectors (load_a_quad).

// Whether consecutive k of the operand are adjacent in memory.
fn is_k_contiguous(is_a: bool) -> bool {
    if (LAYOUT_AT_RUNTIME) {
        return select(params.b_k_contiguous, params.a_k_contiguous, is_a) != 0u;
    }
    return select(B_K_CONTIGUOUS, A_K_CONTIGUOUS, is_a);
}

// Quads in one outer x TILE_K slice of the operand.
fn slice_quads(is_a: bool) -> u32 {
    return select(TILE_N, TILE_M, is_a) * TILE_K / 4u;
}

// Where, in an outer x TILE_K slice, the first element of the invocation's `p`-th quad lies:
// (outer, k). Neighbouring invocations take neighbouring quads along the contiguous
// direction, so their global reads coalesce.
fn quad_position(is_a: bool, local_index: u32, p: u32) -> vec2<u32> {
    let quad = local_index + p * WORKGROUP_SIZE;
    if (is_k_contiguous(is_a)) {
        let quads_per_row = TILE_K / 4u;
        return vec2<u32>(quad / quads_per_row, (quad % quads_per_row) * 4u);
    }
    let quads_per_row = select(TILE_N, TILE_M, is_a) / 4u;
    return vec2<u32>((quad % quads_per_row) * 4u, quad / quads_per_row);
}

// An invocation's loaded quads of one operand and slice (at most four: SimtConfig::check and
// WgslCoopConfig::check make sure), as stored in memory: decoding waits for the load, so it
// happens only when the quads are written to workgroup memory, after the stage in flight is
// multiplied.
// Named members, not an array: the driver keeps an indexed register array in local memory,
// where writing a loaded value waits for the load, which would stall every prefetch too
// (NVIDIA: 192 bytes of local memory per invocation with an array).
struct Loaded {
    part0: Quad,
    part1: Quad,
    part2: Quad,
    part3: Quad,
}

// The invocation's `p`-th quad of the slice of A (rows outer0.., k0..) or of B (columns
// outer0.., k0..); zero outside the matrix and for quads past the slice. `tile_first` is
// the element index of (outer0, k = 0). Every caller passes a constant p.
fn load_quad(is_a: bool, tile_first: u32, outer0: u32, k0: u32, local_index: u32, p: u32) -> Quad {
    if (local_index + p * WORKGROUP_SIZE >= slice_quads(is_a)) {
        return Quad();
    }
    let position = quad_position(is_a, local_index, p);
    let outer = outer0 + position.x;
    let k = k0 + position.y;
    let outer_count = select(params.n, params.m, is_a);
    if (outer >= outer_count || k >= params.k) {
        return Quad();
    }
    let outer_stride = select(params.b_outer_stride, params.a_outer_stride, is_a);
    let k_stride = select(params.b_k_stride, params.a_k_stride, is_a);
    let index = tile_first + position.x * outer_stride + k * k_stride;
    // Elements of the quad inside the matrix (1..=4), and the stride between them.
    var valid = min(outer_count - outer, 4u);
    var step = outer_stride;
    if (is_k_contiguous(is_a)) {
        valid = min(params.k - k, 4u);
        step = k_stride;
    }
    if (valid == 4u && step == 1u) {
        if (is_a) {
            return load_a_quad(index);
        }
        return load_b_quad(index);
    }
    return quad_of(
        load_element(is_a, index, 0u, valid, step),
        load_element(is_a, index, 1u, valid, step),
        load_element(is_a, index, 2u, valid, step),
        load_element(is_a, index, 3u, valid, step),
    );
}

// Element `lane` of a quad that starts at `index` with `step` between elements, or zero
// past its `valid` elements. Every caller passes a constant lane.
fn load_element(is_a: bool, index: u32, lane: u32, valid: u32, step: u32) -> Element {
    if (lane >= valid) {
        return Element();
    }
    if (is_a) {
        return load_a(index + lane * step);
    }
    return load_b(index + lane * step);
}

// Loads this invocation's share of a slice into registers (see load_quad).
fn load_slice(is_a: bool, tile_first: u32, outer0: u32, k0: u32, local_index: u32) -> Loaded {
    return Loaded(
        load_quad(is_a, tile_first, outer0, k0, local_index, 0u),
        load_quad(is_a, tile_first, outer0, k0, local_index, 1u),
        load_quad(is_a, tile_first, outer0, k0, local_index, 2u),
        load_quad(is_a, tile_first, outer0, k0, local_index, 3u),
    );
}
