// The 16-bit storage type is bfloat16: the upper half of an f32.
fn decode_16bit(bits: u32) -> f32 {
    return bitcast<f32>(bits << 16u);
}

// Rounds to nearest, ties to even; NaN stays a (quiet) NaN.
fn encode_16bit(value: f32) -> u32 {
    let bits = bitcast<u32>(value);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0u) {
        return (bits >> 16u) | 0x0040u;
    }
    return (bits + 0x7fffu + ((bits >> 16u) & 1u)) >> 16u;
}
