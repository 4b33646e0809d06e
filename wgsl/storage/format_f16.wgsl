// The 16-bit storage type is IEEE binary16.
fn decode_16bit(bits: u32) -> f32 {
    return unpack2x16float(bits).x;
}

fn encode_16bit(value: f32) -> u32 {
    return pack2x16float(vec2<f32>(value, 0.0)) & 0xffffu;
}
