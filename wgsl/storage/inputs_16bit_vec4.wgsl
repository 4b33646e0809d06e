// A and B stored as a 16-bit type (f16 or bf16, see decode_16bit) and bound as pairs of
// u32 words: a quad of four adjacent elements is one 8-byte load. The host picks this
// snippet only where every quad the kernel loads whole starts at a multiple of 4 and the
// bound ranges hold whole pairs. Element, Quad, quad_of and decode_quad as in
// inputs_16bit.wgsl.
@group(0) @binding(1) var<storage, read> a: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> b: array<vec2<u32>>;

alias Element = u32;
alias Quad = vec2<u32>;

fn load_a(index: u32) -> Element {
    let word = a[index >> 2u][(index >> 1u) & 1u];
    return (word >> ((index & 1u) * 16u)) & 0xffffu;
}

fn load_b(index: u32) -> Element {
    let word = b[index >> 2u][(index >> 1u) & 1u];
    return (word >> ((index & 1u) * 16u)) & 0xffffu;
}

// Elements index..index + 3; index is a multiple of 4.
fn load_a_quad(index: u32) -> Quad {
    return a[index >> 2u];
}

fn load_b_quad(index: u32) -> Quad {
    return b[index >> 2u];
}

fn quad_of(e0: Element, e1: Element, e2: Element, e3: Element) -> Quad {
    return Quad(e0 | (e1 << 16u), e2 | (e3 << 16u));
}

fn decode_quad(quad: Quad) -> vec4<f32> {
    return vec4<f32>(
        decode_16bit(quad.x & 0xffffu),
        decode_16bit(quad.x >> 16u),
        decode_16bit(quad.y & 0xffffu),
        decode_16bit(quad.y >> 16u),
    );
}
