// C stored as f32.
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

fn load_c(index: u32) -> f32 {
    return c[index];
}

fn store_c(index: u32, value: f32) {
    c[index] = value;
}
