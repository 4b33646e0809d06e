// mlp_simt.wgsl -- a whole network in one dispatch, two rows per invocation (SIMT).
//
// The host puts in front: the input and output snippets (input_*.wgsl, output_*.wgsl:
// bindings 1 and 2, load_input, store_output) and the constants LAYERS, WIDTH (the widest
// layer, rounded up to whole blocks of four outputs), INPUT_WIDTH and OUTPUT_WIDTH, and
// replaces the layers marker in `main` with one `layer(...)` call per layer (the activation
// array it reads and its activation as literals, so that the driver can fold them) and the
// `store_output` calls. Each invocation keeps its two rows' activations in private arrays of
// scalars and sums four outputs of both rows at a time in registers: every weight it reads
// serves both rows, every input four outputs. The weights are read at the same addresses by
// every invocation of a workgroup.
//
// Weights (binding 3, vec4s of f32 holding f16 values): per layer, input-major: for each
// input, its weights to every output (one vec4 per block of four outputs, zero-padded), then
// the bias in the same blocks; with several weight sets, set k's layers `k * set_stride`
// vec4s after set 0's.
//
// Slots (binding 4, src/mlp/sets.rs): the invocation's rows are slots `lane` and `lane + 64`
// of its workgroup's 128; slot `s` is row `s` with set 0, or, where the run has set indices,
// the row and set the pre-pass wrote for it (not stored where the set is out of range).
//
// Why this shape (lavapipe, docs/networks.md): with no invocation returning early the layers
// run in uniform control flow, where lavapipe loads a weight once for eight invocations; two
// rows per invocation halve the weight loads. mlp64 went from 1.0x to 2.7x the layer-by-layer
// path there.

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
    // Per layer: its first vec4 in a weight set, its inputs, its blocks of four outputs.
    // Uniform values rather than literals: with literal loop bounds lavapipe unrolled the
    // loops over inputs and ran mlp64 and mlp32 1.3-1.6x slower.
    layers: array<vec4<u32>, LAYERS>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read> weights: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> slot_data: array<u32>;

const NO_ORDER: u32 = 0xffffffffu;

const WORKGROUP_ROWS: u32 = 128u;

// Each invocation's two rows' activations: per row two arrays of scalars, each layer reading
// one and writing the other. Module-scope, so that no function takes a pointer to an array:
// naga writes those as GLSL `inout` arrays, copied in and out at every call.
var<private> activations: array<array<array<f32, WIDTH>, 2>, 2>;

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

// For both rows: activations[r][1 - source] = activation(W activations[r][source] + bias)
// for a layer of `shape` (params.layers: its first vec4, inputs, blocks of four outputs) in
// the weight set starting at vec4 `first_set` (`second_set` for row 1), four outputs at a
// time: each weight is read once for both rows, each input once per four
// outputs, and the sums stay in registers (started at the bias).
fn layer(
    source: u32,
    shape: vec4<u32>,
    first_set: u32,
    second_set: u32,
    activation: u32,
    slope: f32,
) {
    let first = first_set + shape.x;
    let second = second_set + shape.x;
    let inputs = shape.y;
    let blocks = shape.z;
    let bias = inputs * blocks;
    for (var b = 0u; b < blocks; b++) {
        var sum0 = weights[first + bias + b];
        var sum1 = weights[second + bias + b];
        var w = b;
        for (var i = 0u; i < inputs; i++) {
            sum0 = fma(vec4<f32>(activations[0][source][i]), weights[first + w], sum0);
            sum1 = fma(vec4<f32>(activations[1][source][i]), weights[second + w], sum1);
            w += blocks;
        }
        store4(0u, source, 4u * b, sum0, activation, slope);
        store4(1u, source, 4u * b, sum1, activation, slope);
    }
}

fn store4(r: u32, source: u32, o: u32, sums: vec4<f32>, activation: u32, slope: f32) {
    let result = 1u - source;
    activations[r][result][o] = activate(sums.x, activation, slope);
    activations[r][result][o + 1u] = activate(sums.y, activation, slope);
    activations[r][result][o + 2u] = activate(sums.z, activation, slope);
    activations[r][result][o + 3u] = activate(sums.w, activation, slope);
}

// Slot `slot`: the row it evaluates, its weight set's first vec4, and whether its result
// is stored. Spare invocations (past the last row, or whose set is out of range)
// evaluate a row too and store nothing: none returns early, so that the layers run in
// uniform control flow. The host records nothing for 0 rows.
struct Slot {
    row: u32,
    set_first: u32,
    stores: bool,
}

fn slot_of(slot: u32) -> Slot {
    let clamped = min(slot, params.rows - 1u);
    var result = Slot(clamped, 0u, slot < params.rows);
    if (params.indexed != 0u) {
        let weight_set = slot_data[params.slots_first + clamped];
        result.stores = result.stores && weight_set < params.sets;
        if (params.order_first != NO_ORDER) {
            result.row = slot_data[params.order_first + clamped];
        }
        result.set_first = min(weight_set, params.sets - 1u) * params.set_stride;
    }
    return result;
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    // Rows `lane` and `lane + 64` of the workgroup's 128.
    let first_slot = (group.x + group.y * params.groups_x) * WORKGROUP_ROWS + lane;
    let slot0 = slot_of(first_slot);
    let slot1 = slot_of(first_slot + 64u);
    load_input(0u, slot0.row);
    load_input(1u, slot1.row);
    // @layers
}
