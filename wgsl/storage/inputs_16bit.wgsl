// A and B stored as a 16-bit type (f16 or bf16, see decode_16bit): two elements per u32
// word, element 2w in the low half of word w. Works on every wgpu backend (no SHADER_F16).
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;

// The 16 bits of element `index` of an array of words.
fn half_of(word: u32, index: u32) -> u32 {
    return (word >> ((index & 1u) * 16u)) & 0xffffu;
}

fn load_a(index: u32) -> f32 {
    return decode_16bit(half_of(a[index >> 1u], index));
}

fn load_b(index: u32) -> f32 {
    return decode_16bit(half_of(b[index >> 1u], index));
}
