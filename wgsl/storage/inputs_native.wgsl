// A and B stored as `Element` (f32, or f16 with wgpu's SHADER_F16: 16-bit storage), one
// element per array entry; any offset and stride. The host puts `alias Element = f32;` (or
// f16) in front of this snippet.
//
// The kernel stages what it loads in registers as stored (`Element`, `Quad`: four
// elements adjacent in memory) and decodes a quad only when it writes it to workgroup
// memory, so that no prefetch waits for its load.
@group(0) @binding(1) var<storage, read> a: array<Element>;
@group(0) @binding(2) var<storage, read> b: array<Element>;

alias Quad = vec4<Element>;

fn load_a(index: u32) -> Element {
    return a[index];
}

fn load_b(index: u32) -> Element {
    return b[index];
}

// Elements index..index + 3.
fn load_a_quad(index: u32) -> Quad {
    return Quad(a[index], a[index + 1u], a[index + 2u], a[index + 3u]);
}

fn load_b_quad(index: u32) -> Quad {
    return Quad(b[index], b[index + 1u], b[index + 2u], b[index + 3u]);
}

fn quad_of(e0: Element, e1: Element, e2: Element, e3: Element) -> Quad {
    return Quad(e0, e1, e2, e3);
}

fn decode_quad(quad: Quad) -> Quad {
    return quad;
}
