// The kernel multiplies and sums in f32.
alias Scalar = f32;
