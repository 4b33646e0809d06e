// activations[0] = row `row`'s input (INPUT_WIDTH values), zero-padded to whole vec4s.
fn load_input(row: u32) {
    let first = params.input_first + row * params.input_stride;
    for (var v = 0u; v < (INPUT_WIDTH + 3u) / 4u; v++) {
        activations[0][v] = vec4<f32>(
            input_or_zero(first, 4u * v),
            input_or_zero(first, 4u * v + 1u),
            input_or_zero(first, 4u * v + 2u),
            input_or_zero(first, 4u * v + 3u),
        );
    }
}

// Element `i` of the row starting at `first`, 0 past its INPUT_WIDTH (read in bounds).
fn input_or_zero(first: u32, i: u32) -> f32 {
    return select(0.0, input_element(first + min(i, INPUT_WIDTH - 1u)), i < INPUT_WIDTH);
}
