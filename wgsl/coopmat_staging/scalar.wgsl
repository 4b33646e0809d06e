// Workgroup-memory staging of gemm_coopmat.wgsl element by element: where a cooperative-matrix
// load takes a pointer to the element type only (naga's Metal output), or as a fallback.
alias Staged = AB;
// Elements per staged value.
const STAGE_VECTOR: u32 = 1u;

// Writes a quad whose first element is element `at` of the A or the B stages.
fn write_quad(is_a: bool, at: u32, quad: vec4<AB>) {
    if (is_a) {
        a_stages[at] = quad.x;
        a_stages[at + 1u] = quad.y;
        a_stages[at + 2u] = quad.z;
        a_stages[at + 3u] = quad.w;
    } else {
        b_stages[at] = quad.x;
        b_stages[at + 1u] = quad.y;
        b_stages[at + 2u] = quad.z;
        b_stages[at + 3u] = quad.w;
    }
}
