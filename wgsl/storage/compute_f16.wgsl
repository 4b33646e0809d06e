// The kernel multiplies and sums in f16 (wgpu's SHADER_F16): packed 2-wide f16 arithmetic,
// twice the rate of f32 on most GPUs, and half the workgroup memory and registers. Only
// for GEMMs that ask for f16 sums. This snippet comes first: `enable` must.
enable f16;
alias Scalar = f16;
