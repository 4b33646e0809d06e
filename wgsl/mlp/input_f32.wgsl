// Network input rows of f32.
@group(0) @binding(1) var<storage, read> input: array<f32>;

fn input_element(index: u32) -> f32 {
    return input[index];
}
