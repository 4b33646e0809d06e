// Workgroup-memory staging of gemm_coopmat.wgsl in vectors of four elements (on Vulkan: SPIR-V
// lets a cooperative-matrix load read through a pointer to a vector, with the stride in
// vectors). A quad goes to workgroup memory in one 8-byte (f16) or 16-byte (f32) store
// instead of four narrow ones, which the driver may or may not merge.
alias Staged = vec4<AB>;
// Elements per staged value: indices and strides of the stages are divided by it.
const STAGE_VECTOR: u32 = 4u;

// Writes a quad whose first element is element `at` of the A or the B stages (`at` is a
// multiple of four: rows and quads are).
fn write_quad(is_a: bool, at: u32, quad: vec4<AB>) {
    if (is_a) {
        a_stages[at / 4u] = quad;
    } else {
        b_stages[at / 4u] = quad;
    }
}
