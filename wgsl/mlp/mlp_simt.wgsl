// mlp_simt.wgsl -- a whole network in one dispatch, one invocation per row (SIMT).
//
// The host puts in front: the input and output snippets (input_*.wgsl, output_*.wgsl:
// bindings 1 and 2, load_input, store_output), `const WIDTH_VECTORS` (the widest layer in
// vec4s) and replaces the layers marker in `main` with one `layer(...)` call per layer (the
// activation array it reads, its shape and activation as literals, so that the driver can
// fold them) and the `store_output` call. Each invocation keeps its row's activations in two
// private arrays of vec4s and reads the weights, which every invocation of a workgroup reads
// at the same addresses, from binding 3.
//
// Weights (binding 3, vec4s of f32 holding f16 values): per layer, `outputs` rows of
// `inputs_vectors` vec4s (row o = the weights of output o, zero-padded to whole vec4s),
// then the bias, zero-padded to whole vec4s; with several weight sets, set k's layers
// `k * set_stride` vec4s after set 0's.
//
// Slots (binding 4, src/mlp/sets.rs): invocation `slot` evaluates row `slot` with set 0, or,
// where the run has set indices, the row and set the pre-pass wrote for it (skipping it
// where the set is out of range).

struct Params {
    rows: u32,
    // Element index (in its binding) of row 0's first element, and the row stride.
    input_first: u32,
    input_stride: u32,
    output_first: u32,
    output_stride: u32,
    // Workgroups along x (rows continue along y: the grid may exceed one dimension's limit).
    groups_x: u32,
    // SlotParams (src/mlp/sets.rs): 1 where the run has set indices, the number of sets,
    // the word of `slot_data` holding slot 0's set, and slot 0's row (NO_ORDER: slot s is
    // row s).
    indexed: u32,
    sets: u32,
    slots_first: u32,
    order_first: u32,
    // Vec4s of `weights` from one set to the next.
    set_stride: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read> weights: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> slot_data: array<u32>;

const NO_ORDER: u32 = 0xffffffffu;

alias Activations = array<vec4<f32>, WIDTH_VECTORS>;

const WORKGROUP_ROWS: u32 = 64u;

// The row's activations: two arrays of vec4s, each layer reading one and writing the other.
// Module-scope, so that no function takes a pointer to an array: naga writes those as
// GLSL `inout` arrays, copied in and out at every call.
var<private> activations: array<Activations, 2>;

// Activation codes as MlpActivation::code. ReLU keeps NaN (tested on the bits: a driver may
// turn compare-and-select into a max() that drops it); GELU and SiLU as x / (1 + e^-t), whose
// exponential only overflows where the result is -0.
fn activate(x: f32, activation: u32, slope: f32) -> f32 {
    let is_nan = (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
    switch activation {
        case 1u: {
            return select(max(x, 0.0), x, is_nan);
        }
        case 2u: {
            return select(x * slope, x, x >= 0.0 || is_nan);
        }
        case 3u: {
            let t = 1.5957691216057308 * (x + 0.044715 * x * x * x);
            return x / (1.0 + exp(-t));
        }
        case 4u: {
            return x / (1.0 + exp(-x));
        }
        case 5u: {
            return 1.0 / (1.0 + exp(-x));
        }
        default: {
            return x;
        }
    }
}

// activations[1 - source] = activation(W activations[source] + bias) for a layer whose
// weights start at vec4 `first`, one output at a time. (Four outputs per pass read each vec4
// of the row once per four outputs and ran mlp64 1.3x faster on lavapipe, but took
// llvmpipe's GL compiler 8x longer: docs/networks.md.)
fn layer(
    source: u32,
    inputs_vectors: u32,
    outputs: u32,
    first: u32,
    activation: u32,
    slope: f32,
) {
    let result = 1u - source;
    let bias_first = first + outputs * inputs_vectors;
    for (var o = 0u; o < outputs; o++) {
        let row = first + o * inputs_vectors;
        var sum = vec4<f32>(0.0);
        for (var i = 0u; i < inputs_vectors; i++) {
            sum = fma(activations[source][i], weights[row + i], sum);
        }
        let value = (sum.x + sum.y) + (sum.z + sum.w) + weights[bias_first + o / 4u][o % 4u];
        activations[result][o / 4u][o % 4u] = activate(value, activation, slope);
    }
    // The next layer reads whole vec4s: clear what an earlier, wider layer left in the last
    // one (its weights there are 0, but 0 * inf is NaN).
    for (var o = outputs; o % 4u != 0u; o++) {
        activations[result][o / 4u][o % 4u] = 0.0;
    }
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let slot = (group.x + group.y * params.groups_x) * WORKGROUP_ROWS + lane;
    if (slot >= params.rows) {
        return;
    }
    var row = slot;
    var set_first = 0u;
    if (params.indexed != 0u) {
        let weight_set = slot_data[params.slots_first + slot];
        if (weight_set >= params.sets) {
            return;
        }
        if (params.order_first != NO_ORDER) {
            row = slot_data[params.order_first + slot];
        }
        set_first = weight_set * params.set_stride;
    }
    load_input(row);
    // @layers
}
