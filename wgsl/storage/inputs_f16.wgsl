// A and B stored as f16, one element per array entry (wgpu's SHADER_F16: 16-bit storage);
// any offset and stride. Element, Quad, quad_of and decode_quad as in inputs_f32.wgsl.
@group(0) @binding(1) var<storage, read> a: array<f16>;
@group(0) @binding(2) var<storage, read> b: array<f16>;

alias Element = f16;
alias Quad = vec4<f16>;

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

fn decode_quad(quad: Quad) -> vec4<f16> {
    return quad;
}
