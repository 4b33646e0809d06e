// C stored as `CElement` (f32, or f16 with wgpu's SHADER_F16: 16-bit storage, so a store
// changes its own two bytes only), one element per array entry. The host puts
// `alias CElement = f32;` (or f16) in front of this snippet. The epilogue works in f32; an
// f16 store rounds.
@group(0) @binding(3) var<storage, read_write> c: array<CElement>;

fn load_c(index: u32) -> f32 {
    return f32(c[index]);
}

fn store_c(index: u32, value: f32) {
    c[index] = CElement(value);
}
