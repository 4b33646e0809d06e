// A and B stored as f32: one element per array entry.
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;

fn load_a(index: u32) -> f32 {
    return a[index];
}

fn load_b(index: u32) -> f32 {
    return b[index];
}
