// group_sets.wgsl -- the per-run pre-pass of a network with several weight sets: where the
// rows carry a set index each (binding 1), it writes the run buffer (binding 2) the network
// kernels read their rows' slots from.
//
// Run buffer (u32 words): the cooperative-matrix kernels' layer table first (copied by the
// host, not touched here; none for the cooperative-vector kernel), a count per bin at
// `counts_first` and as many cursors after them (cleared by the host), then per slot s: its
// row's set at `slots_first + s` (`sets` for a row whose index is out of range) and, where
// the rows are grouped here, its row at `order_first + s`.
//
// Rows are grouped by set within windows of `groups_per_window` workgroups' rows, not across
// the whole run: bin `window * (sets + 1) + set`. The slots of a window are its rows, set by
// set, so that the rows a subgroup evaluates lie within one window of the input and output.
//
// Entry points, in order, with barriers between them (one compute pass):
//   count    per workgroup of ROWS_PER_GROUP rows a histogram of their sets in workgroup
//            memory, then one global atomic add per (workgroup, set) present
//   scan     one workgroup: cursors = exclusive prefix sums of the counts, window after
//            window (in each, bin `sets`, the out-of-range rows, last)
//   scatter  per workgroup the histogram again, with each row's rank within its set; one
//            global atomic add per (workgroup, set) reserves the workgroup's slots of that
//            set in its window; every row writes its slot's row and set. A window's rows of
//            a set end up contiguous (in no particular order among themselves).
//   copy     where the caller grouped the rows: slot s is row s, its set copied.

struct Params {
    rows: u32,
    sets: u32,
    // Element index (in binding 1) of row 0's set index.
    indices_first: u32,
    counts_first: u32,
    slots_first: u32,
    order_first: u32,
    // Workgroups along x (the grid may exceed one dimension's limit).
    groups_x: u32,
    // Workgroups (of ROWS_PER_GROUP rows) per window.
    groups_per_window: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> run: array<atomic<u32>>;

const THREADS: u32 = 256u;
const ROWS_PER_THREAD: u32 = 4u;
const ROWS_PER_GROUP: u32 = 1024u;
// The most bins (sets + 1) a histogram holds: 8 KiB of workgroup memory, half of what every
// device has. MAX_MLP_SETS in src/mlp/desc.rs is one less.
const MAX_BINS: u32 = 2048u;

var<workgroup> histogram: array<atomic<u32>, MAX_BINS>;
var<workgroup> partial: array<u32, THREADS>;

// The bin of row `row`: its set, or `sets` where the index is out of range.
fn bin_of(row: u32) -> u32 {
    return min(indices[params.indices_first + row], params.sets);
}

fn group_index(group: vec3<u32>) -> u32 {
    return group.x + group.y * params.groups_x;
}

fn first_row(group: vec3<u32>) -> u32 {
    return group_index(group) * ROWS_PER_GROUP;
}

// Bins of the whole run: sets + 1 per window.
fn total_bins() -> u32 {
    let groups = (params.rows + ROWS_PER_GROUP - 1u) / ROWS_PER_GROUP;
    let windows = (groups + params.groups_per_window - 1u) / params.groups_per_window;
    return windows * (params.sets + 1u);
}

// The first bin of the window of workgroup `group`.
fn window_bins(group: vec3<u32>) -> u32 {
    return group_index(group) / params.groups_per_window * (params.sets + 1u);
}

fn clear_histogram(lane: u32) {
    for (var b = lane; b <= params.sets; b += THREADS) {
        atomicStore(&histogram[b], 0u);
    }
}

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    clear_histogram(lane);
    workgroupBarrier();
    let first = first_row(group);
    for (var i = 0u; i < ROWS_PER_THREAD; i++) {
        let row = first + i * THREADS + lane;
        if (row < params.rows) {
            atomicAdd(&histogram[bin_of(row)], 1u);
        }
    }
    workgroupBarrier();
    let counts = params.counts_first + window_bins(group);
    for (var b = lane; b <= params.sets; b += THREADS) {
        let n = atomicLoad(&histogram[b]);
        if (n != 0u) {
            atomicAdd(&run[counts + b], n);
        }
    }
}

@compute @workgroup_size(256)
fn scan(@builtin(local_invocation_index) lane: u32) {
    let bins = total_bins();
    let cursors = params.counts_first + bins;
    // Each invocation sums a contiguous chunk of bins; the chunks' sums are scanned in
    // workgroup memory; each invocation then writes its chunk's exclusive prefix sums.
    let chunk = (bins + THREADS - 1u) / THREADS;
    let begin = min(lane * chunk, bins);
    let end = min(begin + chunk, bins);
    var sum = 0u;
    for (var b = begin; b < end; b++) {
        sum += atomicLoad(&run[params.counts_first + b]);
    }
    partial[lane] = sum;
    workgroupBarrier();
    for (var step = 1u; step < THREADS; step *= 2u) {
        var value = partial[lane];
        if (lane >= step) {
            value += partial[lane - step];
        }
        workgroupBarrier();
        partial[lane] = value;
        workgroupBarrier();
    }
    var prefix = partial[lane] - sum;
    for (var b = begin; b < end; b++) {
        atomicStore(&run[cursors + b], prefix);
        prefix += atomicLoad(&run[params.counts_first + b]);
    }
}

@compute @workgroup_size(256)
fn scatter(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    clear_histogram(lane);
    workgroupBarrier();
    let first = first_row(group);
    var bins: array<u32, ROWS_PER_THREAD>;
    var ranks: array<u32, ROWS_PER_THREAD>;
    for (var i = 0u; i < ROWS_PER_THREAD; i++) {
        let row = first + i * THREADS + lane;
        if (row < params.rows) {
            bins[i] = bin_of(row);
            ranks[i] = atomicAdd(&histogram[bins[i]], 1u);
        }
    }
    workgroupBarrier();
    // Each bin's count becomes the first slot this workgroup has in it.
    let cursors = params.counts_first + total_bins() + window_bins(group);
    for (var b = lane; b <= params.sets; b += THREADS) {
        let n = atomicLoad(&histogram[b]);
        if (n != 0u) {
            atomicStore(&histogram[b], atomicAdd(&run[cursors + b], n));
        }
    }
    workgroupBarrier();
    for (var i = 0u; i < ROWS_PER_THREAD; i++) {
        let row = first + i * THREADS + lane;
        if (row < params.rows) {
            let slot = atomicLoad(&histogram[bins[i]]) + ranks[i];
            atomicStore(&run[params.order_first + slot], row);
            atomicStore(&run[params.slots_first + slot], bins[i]);
        }
    }
}

@compute @workgroup_size(256)
fn copy(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let first = first_row(group);
    for (var i = 0u; i < ROWS_PER_THREAD; i++) {
        let row = first + i * THREADS + lane;
        if (row < params.rows) {
            atomicStore(&run[params.slots_first + row], bin_of(row));
        }
    }
}
