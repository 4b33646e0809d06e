// A and B stored as f16, one element per array entry (wgpu's SHADER_F16: 16-bit storage).
@group(0) @binding(1) var<storage, read> a: array<f16>;
@group(0) @binding(2) var<storage, read> b: array<f16>;

fn load_a(index: u32) -> f16 {
    return a[index];
}

fn load_b(index: u32) -> f16 {
    return b[index];
}
