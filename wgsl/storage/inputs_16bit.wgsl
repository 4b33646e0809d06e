// A and B stored as a 16-bit type (f16 or bf16, see decode_16bit): two elements per u32
// word, element 2w in the low half of word w; any offset and stride. Works on every wgpu
// backend (no SHADER_F16).
//
// Loaded as stored (see inputs_native.wgsl): an Element is the 16 bits of one element, a Quad
// the 64 bits of four, element i in half i % 2 of word i / 2, decoded when written to
// workgroup memory.
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;

alias Element = u32;
alias Quad = vec2<u32>;

// The 16 bits of element `index` of an array of words.
fn half_of(word: u32, index: u32) -> u32 {
    return (word >> ((index & 1u) * 16u)) & 0xffffu;
}

fn load_a(index: u32) -> Element {
    return half_of(a[index >> 1u], index);
}

fn load_b(index: u32) -> Element {
    return half_of(b[index >> 1u], index);
}

fn quad_of(e0: Element, e1: Element, e2: Element, e3: Element) -> Quad {
    return Quad(e0 | (e1 << 16u), e2 | (e3 << 16u));
}

// Elements index..index + 3.
fn load_a_quad(index: u32) -> Quad {
    return quad_of(load_a(index), load_a(index + 1u), load_a(index + 2u), load_a(index + 3u));
}

fn load_b_quad(index: u32) -> Quad {
    return quad_of(load_b(index), load_b(index + 1u), load_b(index + 2u), load_b(index + 3u));
}

fn decode_quad(quad: Quad) -> vec4<f32> {
    return vec4<f32>(
        decode_16bit(quad.x & 0xffffu),
        decode_16bit(quad.x >> 16u),
        decode_16bit(quad.y & 0xffffu),
        decode_16bit(quad.y >> 16u),
    );
}
