// coopgemm B packing: copies B (k x n, any layout, 4-, 2- or 1-byte elements) into column
// panels (Order::ColumnPanels): panel p holds columns p*width .. p*width+width-1 as a
// row-major k x width matrix, `panel_rows` rows long; columns past n are zero.
//
// One invocation writes one u32 word of the packed buffer, i.e. ELEMENTS_PER_WORD packed
// elements, so no two invocations write the same word. Source elements are read out of
// their u32 words, so any offset, leading dimension and element size works.
//   packed element e (of batch b):  panel = e / (panel_rows * width)
//                                   row = (e % (panel_rows * width)) / width
//                                   col = panel * width + e % width
//   source element:  source_first + b * source_batch_stride + row * source_row_stride
//                    + col * source_col_stride
// Grid: x * WORKGROUP_SIZE + y * (x count * WORKGROUP_SIZE) = word within a batch; z = batch.

struct Params {
    rows: u32,
    cols: u32,
    width: u32,
    panel_rows: u32,
    source_first: u32,
    source_row_stride: u32,
    source_col_stride: u32,
    source_batch_stride: u32,
    words_per_batch: u32,
    // Bits per element: 32, 16 or 8.
    element_bits: u32,
    _padding0: u32,
    _padding1: u32,
}

const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> source: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let word = id.x + id.y * groups.x * WORKGROUP_SIZE;
    if (word >= params.words_per_batch) {
        return;
    }
    let batch = id.z;
    let elements_per_word = 32u / params.element_bits;
    let mask = select((1u << params.element_bits) - 1u, 0xffffffffu, params.element_bits == 32u);
    let panel_elements = params.panel_rows * params.width;
    var bits = 0u;
    for (var slot = 0u; slot < elements_per_word; slot++) {
        let element = word * elements_per_word + slot;
        let panel = element / panel_elements;
        let row = (element % panel_elements) / params.width;
        let col = panel * params.width + element % params.width;
        if (row < params.rows && col < params.cols) {
            let index = params.source_first + batch * params.source_batch_stride
                + row * params.source_row_stride + col * params.source_col_stride;
            let shift = (index % elements_per_word) * params.element_bits;
            let value = (source[index / elements_per_word] >> shift) & mask;
            bits |= value << (slot * params.element_bits);
        }
    }
    packed[batch * params.words_per_batch + word] = bits;
}
