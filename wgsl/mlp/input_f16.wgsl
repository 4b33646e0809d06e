// Network input rows of f16, two to a word (element 2w in the low half of word w); any
// offset and stride, no SHADER_F16 needed.
@group(0) @binding(1) var<storage, read> input: array<u32>;

fn input_element(index: u32) -> f32 {
    return unpack2x16float(input[index / 2u])[index % 2u];
}
