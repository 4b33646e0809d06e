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
//
// `k_contiguous` writes the same packed form for width 1 (column-major, each column
// `panel_rows` long), which is a transpose of row-major B: element by element, neighbouring
// invocations would read elements a row apart. It goes through workgroup memory instead, a
// TILE_ROWS x TILE_COLS block of B per workgroup: read with neighbouring invocations on
// neighbouring source elements, written as whole packed words along K.
// Grid: x = block of rows (K), y = block of columns (N), z = batch.

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

// Bits of source element (row, col) of `batch`, or 0 outside the matrix.
fn source_element(batch: u32, row: u32, col: u32) -> u32 {
    if (row >= params.rows || col >= params.cols) {
        return 0u;
    }
    let elements_per_word = 32u / params.element_bits;
    let mask = select((1u << params.element_bits) - 1u, 0xffffffffu, params.element_bits == 32u);
    let index = params.source_first + batch * params.source_batch_stride
        + row * params.source_row_stride + col * params.source_col_stride;
    let shift = (index % elements_per_word) * params.element_bits;
    return (source[index / elements_per_word] >> shift) & mask;
}

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
    let panel_elements = params.panel_rows * params.width;
    var bits = 0u;
    for (var slot = 0u; slot < elements_per_word; slot++) {
        let element = word * elements_per_word + slot;
        let panel = element / panel_elements;
        let row = (element % panel_elements) / params.width;
        let col = panel * params.width + element % params.width;
        bits |= source_element(batch, row, col) << (slot * params.element_bits);
    }
    packed[batch * params.words_per_batch + word] = bits;
}

const TILE_ROWS: u32 = 64u;
const TILE_COLS: u32 = 32u;
// One padding column, so that a column of the tile spreads over the memory banks.
const TILE_STRIDE: u32 = TILE_COLS + 1u;
var<workgroup> tile: array<u32, TILE_ROWS * TILE_STRIDE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn k_contiguous(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let row0 = group.x * TILE_ROWS;
    let col0 = group.y * TILE_COLS;
    let batch = group.z;
    // Read along whichever of B's dimensions is contiguous in the source.
    let along_cols = params.source_col_stride <= params.source_row_stride;
    for (var i = 0u; i < TILE_ROWS * TILE_COLS / WORKGROUP_SIZE; i++) {
        let flat = i * WORKGROUP_SIZE + thread;
        let r = select(flat % TILE_ROWS, flat / TILE_COLS, along_cols);
        let c = select(flat / TILE_ROWS, flat % TILE_COLS, along_cols);
        tile[r * TILE_STRIDE + c] = source_element(batch, row0 + r, col0 + c);
    }
    workgroupBarrier();
    // Packed words of the tile: TILE_COLS columns of TILE_ROWS / elements_per_word words,
    // neighbouring invocations on neighbouring words of a column.
    let elements_per_word = 32u / params.element_bits;
    let words_per_column = TILE_ROWS / elements_per_word;
    let column_words = params.panel_rows / elements_per_word;
    for (var flat = thread; flat < TILE_COLS * words_per_column; flat += WORKGROUP_SIZE) {
        let c = flat / words_per_column;
        let w = flat % words_per_column;
        let col = col0 + c;
        let column_word = (row0 / elements_per_word) + w;
        if (col < params.cols && column_word < column_words) {
            var bits = 0u;
            for (var slot = 0u; slot < elements_per_word; slot++) {
                let r = w * elements_per_word + slot;
                bits |= tile[r * TILE_STRIDE + c] << (slot * params.element_bits);
            }
            packed[batch * params.words_per_batch + col * column_words + column_word] = bits;
        }
    }
}

// `k_contiguous` for 8-bit B stored row-major with every row starting a whole word: the
// tile holds source words as read (four columns each), WORD_TILE_ROWS x WORD_TILE_COLS
// bytes, tall so that each column's packed run is 128 bytes long. A word that straddles the
// last column lies inside the row's leading dimension (a whole number of words); columns
// past the last are never written out. Word x of tile row r is kept at x ^ ((r / 4) % 16),
// so that neither the row-wise writes nor the column-wise reads of four consecutive rows
// meet in a memory bank.
const WORD_TILE_ROWS: u32 = 128u;
const WORD_TILE_COLS: u32 = 64u;
const TILE_ROW_WORDS: u32 = WORD_TILE_COLS / 4u;
var<workgroup> word_tile: array<u32, WORD_TILE_ROWS * TILE_ROW_WORDS>;

fn word_slot(r: u32, x: u32) -> u32 {
    return r * TILE_ROW_WORDS + (x ^ ((r / 4u) % TILE_ROW_WORDS));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn k_contiguous_bytes(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) thread: u32,
) {
    let row0 = group.x * WORD_TILE_ROWS;
    let col0 = group.y * WORD_TILE_COLS;
    let batch = group.z;
    let first_word = (params.source_first + batch * params.source_batch_stride) / 4u;
    let row_words = params.source_row_stride / 4u;
    for (var i = 0u; i < WORD_TILE_ROWS * TILE_ROW_WORDS / WORKGROUP_SIZE; i++) {
        let flat = i * WORKGROUP_SIZE + thread;
        let r = flat / TILE_ROW_WORDS;
        let x = flat % TILE_ROW_WORDS;
        var word = 0u;
        if (row0 + r < params.rows && col0 + 4u * x < params.cols) {
            word = source[first_word + (row0 + r) * row_words + col0 / 4u + x];
        }
        word_tile[word_slot(r, x)] = word;
    }
    workgroupBarrier();
    let words_per_column = WORD_TILE_ROWS / 4u;
    let column_words = params.panel_rows / 4u;
    for (var flat = thread; flat < WORD_TILE_COLS * words_per_column; flat += WORKGROUP_SIZE) {
        let c = flat / words_per_column;
        let w = flat % words_per_column;
        let col = col0 + c;
        let column_word = row0 / 4u + w;
        if (col < params.cols && column_word < column_words) {
            let shift = 8u * (c % 4u);
            var bits = 0u;
            for (var slot = 0u; slot < 4u; slot++) {
                let byte = (word_tile[word_slot(4u * w + slot, c / 4u)] >> shift) & 0xffu;
                bits |= byte << (8u * slot);
            }
            packed[batch * params.words_per_batch + col * column_words + column_word] = bits;
        }
    }
}
