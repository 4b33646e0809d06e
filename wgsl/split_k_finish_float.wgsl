// The split-K reduction's finish for floating-point GEMMs (wgsl/split_k_reduce.wgsl): f32
// partials; C = epilogue(alpha * sum + beta * C), stored through the output storage
// snippet (load_c / store_c) with the epilogue snippet's apply_epilogue.
alias Partial = f32;

fn finish(sum: f32, index: u32, row: u32, col: u32) {
    var value = params.alpha * sum;
    if (params.beta != 0.0) {
        value += params.beta * load_c(index);
    }
    store_c(index, apply_epilogue(value, row, col));
}
