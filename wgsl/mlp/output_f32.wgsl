// Network output rows of f32.
@group(0) @binding(2) var<storage, read_write> output: array<f32>;

fn store_output(r: u32, row: u32, source: u32) {
    let first = params.output_first + row * params.output_stride;
    for (var o = 0u; o < OUTPUT_WIDTH; o++) {
        output[first + o] = activations[r][source][o];
    }
}
