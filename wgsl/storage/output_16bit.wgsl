// C stored as a 16-bit type (f16 or bf16, see encode_16bit / decode_16bit), two elements
// per u32 word. Neighbouring elements of one word may belong to different invocations (odd
// leading dimensions or offsets), or lie outside C altogether, so a store changes only its
// own half, atomically: it XORs the difference between the old and the new bits into the
// word. Only this invocation ever writes that half, so the old half it reads stays valid
// while the other half may change under it.
@group(0) @binding(3) var<storage, read_write> c: array<atomic<u32>>;

fn load_c(index: u32) -> f32 {
    let word = atomicLoad(&c[index >> 1u]);
    return decode_16bit((word >> ((index & 1u) * 16u)) & 0xffffu);
}

fn store_c(index: u32, value: f32) {
    let shift = (index & 1u) * 16u;
    let old_bits = (atomicLoad(&c[index >> 1u]) >> shift) & 0xffffu;
    atomicXor(&c[index >> 1u], (old_bits ^ encode_16bit(value)) << shift);
}
