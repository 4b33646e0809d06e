// The kernel multiplies and sums in f16 (wgpu's SHADER_F16): packed 2-wide f16 arithmetic,
// twice the rate of f32 on most GPUs, and half the workgroup memory and registers. Only
// for GEMMs that ask for f16 sums. This snippet comes first: `enable` must.
enable f16;
alias Scalar = f16;

// One k-row at a time over every accumulator block (see compute_f32.wgsl): with f16
// arithmetic, every block-by-block form measured on the H100 ran 3 to 10 times slower
// (64x128x16-t4x4 at 4096³: 43.7 TFLOP/s one k-row at a time, 4.1 block by block).
const BLOCK_BY_BLOCK: bool = false;
