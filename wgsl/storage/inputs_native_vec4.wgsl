// A and B stored as `Element` (f32, or f16 with wgpu's SHADER_F16) and bound as vec4s: a
// quad of four adjacent elements is one 16-byte (f16: 8-byte) load. The host puts
// `alias Element = f32;` (or f16) in front, and picks this snippet only where every quad the
// kernel loads whole starts at a multiple of 4 (offsets and strides aligned) and the bound
// ranges hold whole vec4s. Element, Quad, quad_of and decode_quad as in inputs_native.wgsl.
@group(0) @binding(1) var<storage, read> a: array<vec4<Element>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<Element>>;

alias Quad = vec4<Element>;

fn load_a(index: u32) -> Element {
    return a[index >> 2u][index & 3u];
}

fn load_b(index: u32) -> Element {
    return b[index >> 2u][index & 3u];
}

// Elements index..index + 3; index is a multiple of 4.
fn load_a_quad(index: u32) -> Quad {
    return a[index >> 2u];
}

fn load_b_quad(index: u32) -> Quad {
    return b[index >> 2u];
}

fn quad_of(e0: Element, e1: Element, e2: Element, e3: Element) -> Quad {
    return Quad(e0, e1, e2, e3);
}

fn decode_quad(quad: Quad) -> Quad {
    return quad;
}
