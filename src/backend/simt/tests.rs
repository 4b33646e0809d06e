//! Unit tests of the SIMT backend's kernel assembly and configurations (no device needed).

use super::*;

/// The kernel for every storable type combination parses and validates with naga; every
/// named configuration, with every operand layout, specialises, and fits the default
/// limits where it claims to.
#[test]
fn every_configuration_validates_with_naga() {
    let limits = wgpu::Limits {
        // What discrete GPUs offer; devices below skip the configs that exceed it
        // (lavapipe: 32 KiB of workgroup memory; WebGPU's minimum: 256 invocations).
        max_compute_workgroup_storage_size: 49152,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..wgpu::Limits::default()
    };
    let storable: Vec<GemmTypes> = GemmTypes::ALL
        .into_iter()
        .filter(|t| simt_source(*t, false, false).is_some())
        .collect();
    assert_eq!(
        storable.len(),
        8,
        "every float combination but i8: {storable:?}"
    );
    for (types, shader_f16, vector_loads) in storable.into_iter().flat_map(|types| {
        [false, true]
            .into_iter()
            .flat_map(move |f16| [(types, f16, false), (types, f16, true)])
    }) {
        let source = simt_source(types, shader_f16, vector_loads).unwrap();
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{types}: {}", e.emit_to_string(&source)));
        // What wgpu grants with DownlevelFlags::SHADER_F16_IN_F32 (f16 pack/unpack), and
        // with SHADER_F16 where the kernel is built for it.
        let mut capabilities = naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32;
        capabilities.set(naga::valid::Capabilities::SHADER_FLOAT16, shader_f16);
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
            .validate(&module)
            .unwrap_or_else(|e| panic!("{types}: {}", e.emit_to_string(&source)));
        let scalar_bytes = compute_type(types, shader_f16).size_bytes() as u32;
        for config in SimtConfig::ALL {
            config
                .check(&limits)
                .unwrap_or_else(|e| panic!("{}: {e}", config.name));
            for layout in [
                Some((false, false)),
                Some((false, true)),
                Some((true, false)),
                Some((true, true)),
                None,
            ] {
                let mut constants = naga::back::PipelineConstants::default();
                for (name, value) in config.constants(layout, layout.is_some()) {
                    constants.insert(name.to_string(), value);
                }
                let (specialised, _) = naga::back::pipeline_constants::process_overrides(
                    &module,
                    &info,
                    Some((naga::ShaderStage::Compute, "main")),
                    &constants,
                )
                .unwrap_or_else(|e| panic!("{} {types}: {e:?}", config.name));
                let workgroup_bytes: u32 = specialised
                    .global_variables
                    .iter()
                    .filter(|(_, var)| var.space == naga::AddressSpace::WorkGroup)
                    .map(|(_, var)| specialised.types[var.ty].inner.size(specialised.to_ctx()))
                    .sum();
                assert_eq!(
                    workgroup_bytes,
                    config.workgroup_memory_bytes() * scalar_bytes / 4,
                    "{} {types}",
                    config.name
                );
                let entry = &specialised.entry_points[0];
                assert_eq!(
                    entry.workgroup_size,
                    [config.workgroup_size(), 1, 1],
                    "{}",
                    config.name
                );
            }
        }
    }
}

/// Vector loads exactly where every quad is aligned: the contiguous direction has stride
/// 1, and offsets, the other strides and the operand's end are multiples of 4.
#[test]
fn vector_loads_need_aligned_quads() {
    use crate::{Gemm, MatrixLayout};
    let quads = |gemm: Gemm| {
        let gemm = gemm.resolve().unwrap();
        let config = SimtConfig::by_name("128x64x8-t8x4").unwrap();
        let b_tile_stride = GemmParams::b_tile_stride(&gemm, config.tile_n);
        (
            loads_whole_quads(&gemm.a, true, 0),
            loads_whole_quads(&gemm.b, false, b_tile_stride),
        )
    };
    assert_eq!(quads(Gemm::new(64, 64, 64)), (true, true));
    assert_eq!(
        quads(Gemm::new(64, 64, 64).a(MatrixLayout::column_major())),
        (true, true)
    );
    // K = 30: A's rows end off a quad; B (n = 64, row-major) is aligned.
    assert_eq!(quads(Gemm::new(64, 64, 30)), (false, true));
    // Offsets and leading dimensions.
    assert_eq!(
        quads(Gemm::new(8, 8, 8).a(MatrixLayout::row_major().offset(2))),
        (false, true)
    );
    assert_eq!(
        quads(Gemm::new(8, 8, 8).b(MatrixLayout::row_major().leading_dimension(10))),
        (true, false)
    );
    // A batch stride off a quad (the end, 2 * 66 + 64, is on one).
    assert_eq!(
        quads(
            Gemm::new(8, 8, 8)
                .batch(3)
                .a(MatrixLayout::row_major().batch_stride(66))
        ),
        (false, true)
    );
}

#[test]
fn types_without_simt_storage_say_why() {
    for types in [
        GemmTypes::I8_I32,
        GemmTypes::new(DType::F16, DType::F32, DType::BF16),
    ] {
        let reason = check_types(types).unwrap_err();
        assert!(reason.contains(&types.to_string()), "{reason}");
    }
}

#[test]
fn configuration_constraints_reject_bad_tiles() {
    let limits = wgpu::Limits::default();
    let bad = SimtConfig {
        name: "bad",
        tile_m: 64,
        tile_n: 64,
        tile_k: 6,
        thread_m: 8,
        thread_n: 8,
    };
    assert!(bad.check(&limits).is_err());
    let too_big = SimtConfig {
        name: "big",
        tile_m: 256,
        tile_n: 256,
        tile_k: 16,
        thread_m: 8,
        thread_n: 8,
    };
    assert!(too_big.check(&limits).is_err());
}

/// f16 arithmetic only where f16 sums of f16 inputs are asked for and the device has it.
#[test]
fn compute_type_is_f16_only_for_f16_sums_with_shader_f16() {
    assert_eq!(compute_type(GemmTypes::F16_ACC_F16, true), DType::F16);
    assert_eq!(compute_type(GemmTypes::F16_ACC_F16, false), DType::F32);
    assert_eq!(compute_type(GemmTypes::F16_F32, true), DType::F32);
}

/// Each type combination gets its own storage snippets; integers have no SIMT kernel.
#[test]
fn sources_pick_the_snippets_of_their_types() {
    assert!(simt_source(GemmTypes::BF16_F32_BF16, true, false)
        .unwrap()
        .contains("fn decode_16bit"));
    let f32_quads = simt_source(GemmTypes::F32, true, true).unwrap();
    assert!(
        f32_quads.contains("alias Element = f32;") && f32_quads.contains("array<vec4<Element>>")
    );
    let f16_scalars = simt_source(GemmTypes::F16_ACC_F16, true, false).unwrap();
    assert!(f16_scalars.contains("alias Element = f16;") && f16_scalars.contains("array<Element>"));
    assert!(f16_scalars.contains("alias CElement = f16;"));
    assert!(simt_source(GemmTypes::F16_ACC_F16, true, false)
        .unwrap()
        .starts_with("// The kernel multiplies and sums in f16"));
    assert!(simt_source(GemmTypes::I8_I32, true, false).is_none());
}
