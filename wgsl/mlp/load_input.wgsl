// activations[r][0] = row `row`'s input (INPUT_WIDTH values).
fn load_input(r: u32, row: u32) {
    let first = params.input_first + row * params.input_stride;
    for (var i = 0u; i < INPUT_WIDTH; i++) {
        activations[r][0][i] = input_element(first + i);
    }
}
