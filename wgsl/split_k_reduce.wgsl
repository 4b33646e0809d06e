// coopgemm split-K reduction: C = epilogue(alpha * sum_s partial[s] + beta * C).
//
// A split-K GEMM first computes `slices` partial products over disjoint ranges of k into a
// scratch buffer (slice s, row i, column j at s * slice_stride + i * n + j), with any
// backend's GEMM kernel; this pass sums them in slice order and hands the sum to
// `finish`, which applies alpha, beta (and the epilogue) and stores C in its layout and
// type. The host prepends one of the two finishing snippets beside this file, which also
// say what a partial is (`alias Partial`): split_k_finish_float.wgsl (f32 partials; with the
// output storage snippet, binding 3, and the epilogue snippet, binding 4, of wgsl/storage/)
// or split_k_finish_i32.wgsl (i32 partials of 8-bit GEMMs, i32 C at binding 3). One
// invocation per element of C; the grid is 2-D (x, y) so that large outputs fit the
// per-dimension workgroup limit.

struct Params {
    m: u32,
    n: u32,
    slices: u32,
    slice_stride: u32,
    c_first: u32,
    c_row_stride: u32,
    c_col_stride: u32,
    alpha: f32,
    beta: f32,
    bias_first: u32,
    activation: u32,
    bias_axis: u32,
}

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partials: array<Partial>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let element = id.x + id.y * groups.x * WORKGROUP_SIZE;
    if (element >= params.m * params.n) {
        return;
    }
    let row = element / params.n;
    let col = element % params.n;
    var sum = Partial();
    for (var slice = 0u; slice < params.slices; slice++) {
        sum += partials[slice * params.slice_stride + element];
    }
    let index = params.c_first + row * params.c_row_stride + col * params.c_col_stride;
    finish(sum, index, row, col);
}
