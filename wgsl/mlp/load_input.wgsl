// Row `row`'s input (INPUT_WIDTH values), zero-padded to whole vec4s.
fn load_input(row: u32, x: ptr<function, Activations>) {
    let first = params.input_first + row * params.input_stride;
    for (var i = 0u; i < INPUT_WIDTH; i++) {
        (*x)[i / 4u][i % 4u] = input_element(first + i);
    }
    for (var i = INPUT_WIDTH; i % 4u != 0u; i++) {
        (*x)[i / 4u][i % 4u] = 0.0;
    }
}
