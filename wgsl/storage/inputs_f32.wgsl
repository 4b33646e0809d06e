// A and B stored as f32, one element per array entry; any offset and stride.
//
// The kernel stages what it loads in registers as stored (`Element`, `Quad`: four
// elements adjacent in memory) and decodes a quad only when it writes it to workgroup
// memory, so that no prefetch waits for its load.
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;

alias Element = f32;
alias Quad = vec4<f32>;

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

fn decode_quad(quad: Quad) -> vec4<f32> {
    return quad;
}
