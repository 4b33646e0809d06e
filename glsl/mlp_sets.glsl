// mlp_sets.glsl -- the slot lookup of the network kernels for networks with several weight
// sets (src/mlp/sets.rs, wgsl/mlp/group_sets.wgsl; mlp_simt.wgsl does the same in WGSL).
//
// The kernel includes this after declaring binding 3 as `table[]` (uint), its push
// constants `params` with `sets, slots_first, order_first` (SlotParams; its `indexed` is
// for the WGSL kernel, which has no specialization constant) and the specialization
// constant `INDEXED` (whether the run has set indices; false: every set 0 as a constant).
// Where the run has set indices, binding 3 is the run buffer: the kernel's layer table (if
// it has one) in its first words, then per slot its row's set at `slots_first + slot` and its row at
// `order_first + slot` (NO_ORDER: slot s is row s).

const uint NO_ORDER = 0xffffffffu;

// The row slot `slot` evaluates and its weight set (set 0 without set indices); false where
// the row's set is out of range: it is not evaluated, and `set` is 0, so that whatever the
// kernel does before it checks reads set 0's weights.
bool slot_row(uint slot, out uint row, out uint set) {
    row = slot;
    set = 0;
    if (!INDEXED) {
        return true;
    }
    const uint index = table[params.slots_first + slot];
    if (params.order_first != NO_ORDER) {
        row = table[params.order_first + slot];
    }
    if (index >= params.sets) {
        return false;
    }
    set = index;
    return true;
}
