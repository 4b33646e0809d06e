// The split-K reduction's finish for 8-bit GEMMs (wgsl/split_k_reduce.wgsl): i32 partials
// summed with wrapping, C of i32, no epilogue (integer C takes none). As in the GEMM kernels
// (glsl/gemm_coopmat2.comp): alpha 1 with beta 0 or 1 is exact, in integer arithmetic;
// any other alpha or beta works in f32 and truncates toward zero.
alias Partial = i32;

@group(0) @binding(3) var<storage, read_write> c: array<i32>;

fn finish(sum: i32, index: u32, row: u32, col: u32) {
    if (params.alpha == 1.0 && (params.beta == 0.0 || params.beta == 1.0)) {
        var exact = sum;
        if (params.beta == 1.0) {
            exact += c[index];
        }
        c[index] = exact;
        return;
    }
    var value = params.alpha * f32(sum);
    if (params.beta != 0.0) {
        value += params.beta * f32(c[index]);
    }
    c[index] = i32(value);
}
