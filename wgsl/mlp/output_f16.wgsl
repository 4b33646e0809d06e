// Network output rows of f16, two to a word. A word whose two halves are both this row's is
// stored whole; a word shared with another row or with elements outside every row (gaps,
// the ends) gets only this row's half, with atomic and/or, so that the other half, written
// by another invocation or by nobody, is never touched.
@group(0) @binding(2) var<storage, read_write> output: array<atomic<u32>>;

fn store_output(r: u32, row: u32, source: u32) {
    let first = params.output_first + row * params.output_stride;
    var o = 0u;
    if (first % 2u == 1u) {
        store_half(first, activations[r][source][0]);
        o = 1u;
    }
    for (; o + 1u < OUTPUT_WIDTH; o += 2u) {
        let pair = vec2<f32>(
            activations[r][source][o],
            activations[r][source][o + 1u],
        );
        atomicStore(&output[(first + o) / 2u], pack2x16float(pair));
    }
    if (o < OUTPUT_WIDTH) {
        store_half(first + o, activations[r][source][o]);
    }
}

// Element `index` alone.
fn store_half(index: u32, value: f32) {
    let shift = (index % 2u) * 16u;
    let bits = (pack2x16float(vec2<f32>(value, 0.0)) & 0xffffu) << shift;
    atomicAnd(&output[index / 2u], ~(0xffffu << shift));
    atomicOr(&output[index / 2u], bits);
}
