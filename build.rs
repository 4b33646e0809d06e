//! Two things the code needs from outside Rust:
//!
//! - `cfg(vulkan_interop)`: set where wgpu builds its Vulkan backend (Windows, Linux,
//!   Android, FreeBSD; coopgemm does not ask for `vulkan-portability`, so not on Apple or the
//!   web). Everything that uses ash or wgpu's Vulkan HAL is compiled only there, behind the
//!   module boundary in `src/vulkan/mod.rs`. Keep this list equal to the target condition on
//!   `ash` in Cargo.toml.
//! - `$OUT_DIR/kernel_variants.rs`, `$OUT_DIR/mlp_variants.rs`, `$OUT_DIR/mlp_rows_variants.rs`
//!   and `$OUT_DIR/mlp_coopvec_variants.rs`: the tables of SPIR-V modules the cooperative-matrix
//!   backend and the fused network kernels embed, generated
//!   from `glsl/variants.txt`, the only list of variants (the same one `tools/spirv`
//!   compiles).

use std::fmt::Write as _;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vulkan_interop)");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let vulkan = family.split(',').any(|f| f == "windows")
        || matches!(os.as_str(), "windows" | "linux" | "android" | "freebsd");
    if vulkan {
        println!("cargo::rustc-cfg=vulkan_interop");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=glsl/variants.txt");
    write_variant_tables();
}

/// The `GemmTypes` constant a variant computes, from its A_TYPE, ACC_TYPE and C_TYPE.
fn gemm_types(a: &str, accumulate: &str, c: &str) -> &'static str {
    match (a, accumulate, c) {
        ("float16_t", "float", "float") => "F16_F32",
        ("float16_t", "float16_t", "float16_t") => "F16_ACC_F16",
        ("float16_t", "float", "float16_t") => "F16_F32_F16",
        ("bfloat16_t", "float", "float") => "BF16_F32",
        ("bfloat16_t", "float", "bfloat16_t") => "BF16_F32_BF16",
        ("int8_t", "int32_t", "int32_t") => "I8_I32",
        ("float", "float", "float") => "F32",
        other => panic!("glsl/variants.txt: no GemmTypes for {other:?}"),
    }
}

/// The `MlpIo` constant a network variant reads and writes, from its IN_TYPE and OUT_TYPE.
fn mlp_io(input: &str, output: &str) -> &'static str {
    match (input, output) {
        ("float16_t", "float16_t") => "F16",
        ("float", "float") => "F32",
        ("float16_t", "float") => "F16_F32",
        ("float", "float16_t") => "F32_F16",
        other => panic!("glsl/variants.txt: no MlpIo for {other:?}"),
    }
}

fn write_variant_tables() {
    let table = std::fs::read_to_string("glsl/variants.txt").expect("glsl/variants.txt");
    let mut subgroup = String::new();
    let mut emulated = String::new();
    let mut workgroup = String::new();
    let mut skinny = String::new();
    let mut skinny_emulated = String::new();
    let mut decode = String::new();
    let mut decode_emulated = String::new();
    let mut mlp = String::new();
    let mut mlp_rows = String::new();
    let mut mlp_coopvec = String::new();
    for line in table.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(name), Some(source)) = (words.next(), words.next()) else {
            panic!("glsl/variants.txt: malformed line {line:?}");
        };
        let define = |key: &str| {
            line.split_whitespace()
                .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
        };
        if let Some((table, switch)) = match source {
            "mlp_coopmat.comp" => Some((&mut mlp, "COOPMAT_EMULATED")),
            "mlp_coopmat_rows.comp" => Some((&mut mlp_rows, "COOPMAT_EMULATED")),
            "mlp_coopvec.comp" => Some((&mut mlp_coopvec, "COOPVEC_EMULATED")),
            _ => None,
        } {
            let io = mlp_io(
                define("IN_TYPE").expect("IN_TYPE"),
                define("OUT_TYPE").expect("OUT_TYPE"),
            );
            let emulated = define(switch).is_some();
            writeln!(
                table,
                "    MlpVariant {{\n        name: \"{name}\",\n        io: MlpIo::{io},\n        emulated: {emulated},\n        spirv: include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/glsl/spirv/{name}.spv\")),\n    }},"
            )
            .unwrap();
            continue;
        }
        let types = gemm_types(
            define("A_TYPE").expect("A_TYPE"),
            define("ACC_TYPE").expect("ACC_TYPE"),
            define("C_TYPE").expect("C_TYPE"),
        );
        let entry = format!(
            "    KernelVariant {{\n        name: \"{name}\",\n        types: GemmTypes::{types},\n        spirv: include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/glsl/spirv/{name}.spv\")),\n    }},\n"
        );
        let target = match (source, define("COOPMAT_EMULATED").is_some()) {
            ("gemm_coopmat.comp", false) => &mut subgroup,
            ("gemm_coopmat.comp", true) => &mut emulated,
            ("gemm_coopmat2.comp", _) => &mut workgroup,
            ("gemm_skinny.comp", false) => &mut skinny,
            ("gemm_skinny.comp", true) => &mut skinny_emulated,
            ("gemm_decode.comp", false) => &mut decode,
            ("gemm_decode.comp", true) => &mut decode_emulated,
            _ => panic!("glsl/variants.txt: unknown source {source}"),
        };
        target.push_str(&entry);
    }
    let mut out = String::new();
    for (name, doc, entries) in [
        ("VARIANTS", "Every compiled variant of `glsl/gemm_coopmat.comp`.", &subgroup),
        ("EMULATED_VARIANTS", "The variants of `glsl/gemm_coopmat.comp` whose matrix operations are emulated in software\n/// (`COOPMAT_EMULATED`, see `glsl/matrix_ops.glsl`): the same kernel, bindings and\n/// specialization constants, without the cooperative-matrix extension. Used only when a\n/// context asks for [`ContextOptions::emulate_cooperative_matrix`](crate::ContextOptions),\n/// to test the host path on devices without cooperative matrices.", &emulated),
        ("WORKGROUP_SCOPE_VARIANTS", "Every compiled variant of `glsl/gemm_coopmat2.comp` (`VK_NV_cooperative_matrix2`). None\n/// stores bf16: that would take a bf16 accumulator matrix, which no device lists (see\n/// `glsl/variants.txt`); bf16 -> bf16 runs on the KHR kernel.", &workgroup),
        ("SKINNY_VARIANTS", "Every compiled variant of `glsl/gemm_skinny.comp` (GEMMs of a few rows) for GPUs.", &skinny),
        ("SKINNY_EMULATED_VARIANTS", "The variants of `glsl/gemm_skinny.comp` the emulated backend runs (CPU drivers): its loops\n/// rolled (`COOPMAT_EMULATED`), which CPU compilers build in a fraction of the time.", &skinny_emulated),
        ("DECODE_VARIANTS", "Every compiled variant of `glsl/gemm_decode.comp` (GEMMs of up to 16 rows on\n/// cooperative matrices) for GPUs. Floating-point inputs are summed in f32.", &decode),
        ("DECODE_EMULATED_VARIANTS", "The variants of `glsl/gemm_decode.comp` the emulated backend runs (CPU drivers): its matrix\n/// operations in plain arithmetic (`COOPMAT_EMULATED`).", &decode_emulated),
    ] {
        writeln!(out, "/// {doc}\n///\n/// Generated by build.rs from `glsl/variants.txt`.\npub const {name}: &[KernelVariant] = &[\n{entries}];\n").unwrap();
    }
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("kernel_variants.rs"), out).unwrap();
    let mlp = format!("/// Every compiled variant of `glsl/mlp_coopmat.comp` (the fused network kernel), real and\n/// emulated.\n///\n/// Generated by build.rs from `glsl/variants.txt`.\npub(crate) const MLP_VARIANTS: &[MlpVariant] = &[\n{mlp}];\n");
    std::fs::write(out_dir.join("mlp_variants.rs"), mlp).unwrap();
    let mlp_rows = format!("/// Every compiled variant of `glsl/mlp_coopmat_rows.comp` (the fused network kernel whose\n/// subgroups own rows), real and emulated.\n///\n/// Generated by build.rs from `glsl/variants.txt`.\npub(crate) const MLP_ROWS_VARIANTS: &[MlpVariant] = &[\n{mlp_rows}];\n");
    std::fs::write(out_dir.join("mlp_rows_variants.rs"), mlp_rows).unwrap();
    let mlp_coopvec = format!("/// Every compiled variant of `glsl/mlp_coopvec.comp` (the cooperative-vector network\n/// kernel), real and emulated (`COOPVEC_EMULATED`).\n///\n/// Generated by build.rs from `glsl/variants.txt`.\npub(crate) const MLP_COOPVEC_VARIANTS: &[MlpVariant] = &[\n{mlp_coopvec}];\n");
    std::fs::write(out_dir.join("mlp_coopvec_variants.rs"), mlp_coopvec).unwrap();
}
