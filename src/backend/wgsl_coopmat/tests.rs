//! Unit tests of the WGSL cooperative-matrix backend's kernel assembly and configurations (no device needed).

use super::*;

/// Every way the kernel reads its operands.
const LOADS: [OperandLoads; 3] = [
    OperandLoads::Elements,
    OperandLoads::Quads,
    OperandLoads::Octs,
];

/// Every type combination the kernel stores.
const TYPES: [GemmTypes; 5] = [
    GemmTypes::F32,
    GemmTypes::F16_F32,
    GemmTypes::F16_ACC_F16,
    GemmTypes::F16_F32_F16,
    GemmTypes::F32_F32_F16,
];

/// What discrete GPUs offer (the H100 through wgpu: 48 KiB of workgroup memory, 1024
/// invocations); devices below skip the configurations that exceed it.
fn gpu_limits() -> wgpu::Limits {
    wgpu::Limits {
        max_compute_workgroup_storage_size: 49152,
        max_compute_invocations_per_workgroup: 1024,
        max_compute_workgroup_size_x: 1024,
        ..wgpu::Limits::default()
    }
}

fn properties(
    size: u32,
    ab_type: wgpu::CooperativeScalarType,
    cr_type: wgpu::CooperativeScalarType,
) -> wgpu::CooperativeMatrixProperties {
    wgpu::CooperativeMatrixProperties {
        m_size: size,
        n_size: size,
        k_size: size,
        ab_type,
        cr_type,
        saturating_accumulation: false,
    }
}

/// The kernel for every storable type combination, coop size, load width and staging
/// parses and validates with naga; every candidate tiling with every operand layout
/// specialises, with the workgroup size and memory the host computes; and every specialised
/// module is written as SPIR-V (Vulkan), and with the staging Metal gets as MSL 2.3 (its
/// simdgroup matrices), so a naga or kernel change that breaks either backend fails here,
/// without a GPU.
#[test]
fn every_variant_validates_and_writes_spirv_and_msl() {
    let limits = gpu_limits();
    let mut written = 0;
    for types in TYPES {
        for coop in [8, 16] {
            for (loads, staging) in LOADS
                .into_iter()
                .flat_map(|l| [(l, Staging::Vector), (l, Staging::Scalar)])
            {
                let name = format!("{types} c{coop} {loads:?} {staging:?}");
                let Some(source) = wgsl_coopmat_source(types, coop, loads, staging) else {
                    // Octs are for 16-bit inputs only.
                    assert!(
                        loads == OperandLoads::Octs && types.input != DType::F16,
                        "{name}"
                    );
                    continue;
                };
                let module = naga::front::wgsl::parse_str(&source)
                    .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&source)));
                // What wgpu grants a device with EXPERIMENTAL_COOPERATIVE_MATRIX and
                // SHADER_F16.
                let capabilities = naga::valid::Capabilities::COOPERATIVE_MATRIX
                    | naga::valid::Capabilities::SHADER_FLOAT16
                    | naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32;
                let info =
                    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
                        .validate(&module)
                        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(&source)));
                for config in WgslCoopConfig::CANDIDATES
                    .into_iter()
                    .filter(|c| c.coop == coop)
                {
                    if let Err(why) = config.check(&limits, 32, types) {
                        // Only f32 stages of the largest tiles outgrow 48 KiB.
                        assert!(
                            types.input == DType::F32 && why.contains("workgroup memory"),
                            "{config} {types}: {why}"
                        );
                        continue;
                    }
                    for layout in [(false, false), (false, true), (true, false), (true, true)] {
                        let msl = staging == Staging::for_backend(wgpu::Backend::Metal);
                        check_specialised(&module, &info, config, types, layout, &name, msl);
                        written += 1;
                    }
                }
            }
        }
    }
    // Every f16 variant with every tiling; f32 inputs with the tilings that fit.
    assert!(
        written >= 3 * LOADS.len() * 2 * WgslCoopConfig::CANDIDATES.len() * 4,
        "{written}"
    );
}

fn check_specialised(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    config: WgslCoopConfig,
    types: GemmTypes,
    layout: (bool, bool),
    name: &str,
    msl: bool,
) {
    let what = format!("{name} {config} layout {layout:?}");
    let mut constants = naga::back::PipelineConstants::default();
    for (constant, value) in config.constants(32, layout) {
        constants.insert(constant.to_string(), value);
    }
    let (specialised, specialised_info) = naga::back::pipeline_constants::process_overrides(
        module,
        info,
        Some((naga::ShaderStage::Compute, "main")),
        &constants,
    )
    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
    let workgroup_bytes: u32 = specialised
        .global_variables
        .iter()
        .filter(|(_, var)| var.space == naga::AddressSpace::WorkGroup)
        .map(|(_, var)| specialised.types[var.ty].inner.size(specialised.to_ctx()))
        .sum();
    assert_eq!(
        workgroup_bytes,
        config.workgroup_memory_bytes(types),
        "{what}"
    );
    assert_eq!(
        specialised.entry_points[0].workgroup_size,
        [config.workgroup_size(32), 1, 1],
        "{what}"
    );

    let spirv = naga::back::spv::write_vec(
        &specialised,
        &specialised_info,
        &naga::back::spv::Options {
            lang_version: (1, 3),
            ..Default::default()
        },
        Some(&naga::back::spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: "main".into(),
        }),
    )
    .unwrap_or_else(|e| panic!("{what}: SPIR-V: {e}"));
    // OpCapability CooperativeMatrixKHR (6022), and OpCooperativeMatrixMulAddKHR (4459).
    let has_instruction = |opcode: u32, operand: Option<u32>| {
        let mut at = 5;
        while at < spirv.len() {
            let (count, op) = ((spirv[at] >> 16) as usize, spirv[at] & 0xffff);
            if op == opcode && operand.is_none_or(|o| spirv.get(at + 1) == Some(&o)) {
                return true;
            }
            at += count.max(1);
        }
        false
    };
    assert!(
        has_instruction(17, Some(6022)),
        "{what}: no CooperativeMatrixKHR"
    );
    assert!(
        has_instruction(4459, None),
        "{what}: no OpCooperativeMatrixMulAddKHR"
    );
    if !msl {
        return;
    }

    let (msl, _) = naga::back::msl::write_string(
        &specialised,
        &specialised_info,
        &naga::back::msl::Options {
            lang_version: (2, 3),
            ..Default::default()
        },
        &naga::back::msl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, "main".into())),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{what}: MSL: {e}"));
    let (ab, acc) = (msl_scalar(types.input), msl_scalar(types.accumulate));
    for expected in [
        format!("simdgroup_{ab}{coop}x{coop}", coop = config.coop),
        format!("simdgroup_{acc}{coop}x{coop}", coop = config.coop),
        "simdgroup_multiply_accumulate".to_string(),
        "simdgroup_load".to_string(),
        "simdgroup_store".to_string(),
    ] {
        assert!(msl.contains(&expected), "{what}: MSL lacks {expected}");
    }
}

fn msl_scalar(t: DType) -> &'static str {
    match t {
        DType::F16 => "half",
        _ => "float",
    }
}

#[test]
fn configurations_round_trip_through_their_names() {
    for config in WgslCoopConfig::CANDIDATES {
        config.validate().unwrap();
        assert_eq!(config.to_string().parse::<WgslCoopConfig>(), Ok(config));
    }
    let mut names: Vec<String> = WgslCoopConfig::CANDIDATES
        .iter()
        .map(ToString::to_string)
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), WgslCoopConfig::CANDIDATES.len());
    for bad in [
        "",
        "c16",
        "c12-64x64x32-w2x2",
        "c16-64x64-w2x2",
        "c16-64x64x32-2x2",
        "c16-64x64x24-w2x2",
        "c16-64x64x48-w2x2",
        "c16-48x64x32-w2x2",
        "c16-64x64x32-w0x2",
        "c16-192x64x32-w2x2",
        "c16-64x64x32-w2x2-extra",
        "c16-64xx32-w2x2",
    ] {
        assert!(bad.parse::<WgslCoopConfig>().is_err(), "{bad:?} parsed");
    }
}

#[test]
fn checks_against_device_limits_say_why() {
    let config: WgslCoopConfig = "c16-128x128x32-w4x2".parse().unwrap();
    // lavapipe-like: 32 KiB of workgroup memory.
    let small = wgpu::Limits {
        max_compute_workgroup_storage_size: 32768,
        ..gpu_limits()
    };
    let why = config.check(&small, 32, GemmTypes::F16_F32).unwrap_err();
    assert!(why.contains("workgroup memory"), "{why}");
    // 256 invocations (WebGPU's default) pass; subgroups of 64 make 512.
    let webgpu_invocations = wgpu::Limits {
        max_compute_invocations_per_workgroup: 256,
        max_compute_workgroup_size_x: 256,
        ..gpu_limits()
    };
    assert!(config
        .check(&webgpu_invocations, 32, GemmTypes::F16_F32)
        .is_ok());
    let why = config
        .check(&webgpu_invocations, 64, GemmTypes::F16_F32)
        .unwrap_err();
    assert!(why.contains("invocations"), "{why}");
    // Subgroups of 8 leave 64 invocations to stage 1024 quads.
    let why = config
        .check(&gpu_limits(), 8, GemmTypes::F16_F32)
        .unwrap_err();
    assert!(why.contains("quads"), "{why}");
}

#[test]
fn usable_shapes_are_square_float_and_largest_first() {
    use wgpu::CooperativeScalarType::{F16, F32, I32};
    // The H100 through wgpu: 16x16x16, 16x8x16, 16x8x8 for f16 -> f16 / f32.
    let mut h100 = Vec::new();
    for (m, n, k) in [(16, 16, 16), (16, 8, 16), (16, 8, 8)] {
        for cr_type in [F16, F32] {
            h100.push(wgpu::CooperativeMatrixProperties {
                m_size: m,
                n_size: n,
                k_size: k,
                ab_type: F16,
                cr_type,
                saturating_accumulation: false,
            });
        }
    }
    let shapes = CoopShape::usable(&h100);
    assert_eq!(
        shapes,
        vec![
            CoopShape {
                size: 16,
                input: DType::F16,
                accumulate: DType::F16
            },
            CoopShape {
                size: 16,
                input: DType::F16,
                accumulate: DType::F32
            },
        ]
    );
    let mixed = [
        properties(8, F32, F32),
        properties(16, F16, F32),
        properties(8, F16, F32),
        properties(16, I32, I32),
    ];
    let shapes = CoopShape::usable(&mixed);
    assert_eq!(shapes.len(), 3);
    assert_eq!(shapes[0].size, 16);
}

#[test]
fn availability_names_the_missing_piece() {
    use wgpu::CooperativeScalarType::{F16, F32, I32};
    let coop = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
    let listed = [properties(16, F16, F32)];
    let why = availability(wgpu::Features::empty(), &[]).unwrap_err();
    assert!(why.contains("lists no cooperative matrices"), "{why}");
    let why = availability(wgpu::Features::SHADER_F16, &listed).unwrap_err();
    assert!(why.contains("created without"), "{why}");
    let why = availability(coop, &[properties(16, I32, I32)]).unwrap_err();
    assert!(why.contains("16x16x16 I32->I32"), "{why}");
    assert_eq!(availability(coop, &listed).unwrap().len(), 1);
    let _ = F32;
}

#[test]
fn sources_exist_only_for_wgsl_coop_types() {
    for types in GemmTypes::ALL {
        let expected = TYPES.contains(&types);
        assert_eq!(
            wgsl_coopmat_source(types, 16, OperandLoads::Elements, Staging::Vector).is_some(),
            expected,
            "{types}"
        );
        if !expected {
            assert!(check_types(types).unwrap_err().contains(&types.to_string()));
        }
    }
}

#[test]
fn kernel_subgroup_size_covers_every_hardware_subgroup() {
    let mut info = wgpu::AdapterInfo::new(wgpu::DeviceType::DiscreteGpu, wgpu::Backend::Vulkan);
    info.subgroup_min_size = 32;
    info.subgroup_max_size = 64;
    assert_eq!(kernel_subgroup_size(&info), 64);
    let mut apple = wgpu::AdapterInfo::new(wgpu::DeviceType::IntegratedGpu, wgpu::Backend::Metal);
    apple.name = "Apple M2".into();
    apple.subgroup_min_size = 4;
    apple.subgroup_max_size = 64;
    assert_eq!(kernel_subgroup_size(&apple), 32);
}

/// The header enables cooperative matrices and names the coop types; bf16 and other sizes have no kernel.
#[test]
fn sources_declare_the_coop_types() {
    let source =
        wgsl_coopmat_source(GemmTypes::F16_F32, 16, OperandLoads::Octs, Staging::Vector).unwrap();
    assert!(source.contains("enable wgpu_cooperative_matrix;"));
    assert!(source.contains("alias CoopC = coop_mat16x16<Acc, C>;"));
    assert!(wgsl_coopmat_source(
        GemmTypes::BF16_F32,
        16,
        OperandLoads::Quads,
        Staging::Vector
    )
    .is_none());
    assert!(
        wgsl_coopmat_source(GemmTypes::F32, 32, OperandLoads::Quads, Staging::Vector).is_none()
    );
}

/// The heuristic's tables hold only valid configurations (a typed table cannot name one that
/// does not exist, but it could hold one the kernel cannot run).
#[test]
fn every_preferred_config_is_valid() {
    for table in super::PREFERRED {
        for config in table {
            assert_eq!(config.validate(), Ok(()), "{config}");
        }
    }
}

/// Octs where they pay (f16 summed in f32, B not K-contiguous, 128-row tiles) and every
/// group of eight is aligned; quads where only groups of four are, or octs do not pay;
/// element loads otherwise.
#[test]
fn operand_loads_follow_alignment_and_measurements() {
    use crate::{Gemm, MatrixLayout};
    let large = "c16-128x128x32-w4x2".parse::<WgslCoopConfig>().unwrap();
    let small = "c16-64x64x32-w2x2".parse::<WgslCoopConfig>().unwrap();
    let loads = |gemm: Gemm, config: WgslCoopConfig| {
        let gemm = gemm.resolve().unwrap();
        let b_tile_stride = GemmParams::b_tile_stride(&gemm, config.tile_n);
        OperandLoads::for_gemm(&gemm, &config, b_tile_stride)
    };
    let f16 = |m, n, k| Gemm::new(m, n, k).types(GemmTypes::F16_F32);
    assert_eq!(loads(f16(256, 256, 64), large), OperandLoads::Octs);
    assert_eq!(
        loads(f16(256, 256, 64).types(GemmTypes::F16_F32_F16), large),
        OperandLoads::Octs
    );
    // Measured slower: B column-major, f16 sums, 64-row tiles.
    let column = f16(256, 256, 64).b(MatrixLayout::column_major());
    assert_eq!(loads(column, large), OperandLoads::Quads);
    let f16_sums = f16(256, 256, 64).types(GemmTypes::F16_ACC_F16);
    assert_eq!(loads(f16_sums, large), OperandLoads::Quads);
    assert_eq!(loads(f16(256, 256, 64), small), OperandLoads::Quads);
    // K = 36: A's rows are whole quads, not whole octs; K = 30: not even quads.
    assert_eq!(loads(f16(256, 256, 36), large), OperandLoads::Quads);
    assert_eq!(loads(f16(256, 256, 30), large), OperandLoads::Elements);
    assert_eq!(
        loads(Gemm::new(256, 256, 64).types(GemmTypes::F32), large),
        OperandLoads::Quads
    );
}
