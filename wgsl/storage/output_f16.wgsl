// C stored as f16, one element per array entry (wgpu's SHADER_F16: 16-bit storage, so a
// store changes its own two bytes only). The epilogue works in f32; the store rounds.
@group(0) @binding(3) var<storage, read_write> c: array<f16>;

fn load_c(index: u32) -> f32 {
    return f32(c[index]);
}

fn store_c(index: u32, value: f32) {
    c[index] = f16(value);
}
