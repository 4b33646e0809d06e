// A and B stored as a 16-bit `Element` (f16 with wgpu's SHADER_F16) and bound as octs: eight
// adjacent elements, 16 bytes, one load. The host puts `alias Element = f16;` in front, and
// picks this snippet only where every oct the kernel loads whole starts at a multiple of 8
// (offsets and strides aligned) and the bound ranges hold whole octs. Element, Quad,
// load_a/load_b, load_a_quad/load_b_quad, quad_of and decode_quad as in
// inputs_native_vec4.wgsl, for the tile loads' edge path.
struct Oct {
    lo: vec4<Element>,
    hi: vec4<Element>,
}

@group(0) @binding(1) var<storage, read> a: array<Oct>;
@group(0) @binding(2) var<storage, read> b: array<Oct>;

alias Quad = vec4<Element>;

// Element `index & 7` of an oct.
fn oct_element(oct: Oct, index: u32) -> Element {
    if ((index & 4u) != 0u) {
        return oct.hi[index & 3u];
    }
    return oct.lo[index & 3u];
}

fn load_a(index: u32) -> Element {
    return oct_element(a[index >> 3u], index);
}

fn load_b(index: u32) -> Element {
    return oct_element(b[index >> 3u], index);
}

// Elements index..index + 7; index is a multiple of 8.
fn load_a_oct(index: u32) -> Oct {
    return a[index >> 3u];
}

fn load_b_oct(index: u32) -> Oct {
    return b[index >> 3u];
}

// Elements index..index + 3; index is a multiple of 4.
fn load_a_quad(index: u32) -> Quad {
    return select(a[index >> 3u].lo, a[index >> 3u].hi, (index & 4u) != 0u);
}

fn load_b_quad(index: u32) -> Quad {
    return select(b[index >> 3u].lo, b[index >> 3u].hi, (index & 4u) != 0u);
}

fn quad_of(e0: Element, e1: Element, e2: Element, e3: Element) -> Quad {
    return Quad(e0, e1, e2, e3);
}

fn decode_quad(quad: Quad) -> Quad {
    return quad;
}
