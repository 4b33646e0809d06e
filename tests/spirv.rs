//! The committed SPIR-V of the cooperative-matrix kernels agrees with `glsl/variants.txt`, and
//! each module has the shape the host relies on. These checks need no shader compiler.
//!
//! Whether the modules are what their GLSL compiles to (byte for byte), and whether they pass
//! `spirv-val`, is checked by the compiler tool, which CI runs separately:
//! `cargo run --release --manifest-path tools/spirv/Cargo.toml -- check`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SPIRV_MAGIC: u32 = 0x0723_0203;
const OP_EXECUTION_MODE: u32 = 16;
const OP_CAPABILITY: u32 = 17;
const OP_DECORATE: u32 = 71;
const OP_EXECUTION_MODE_ID: u32 = 331;
const EXECUTION_MODE_LOCAL_SIZE_ID: u32 = 38;
const DECORATION_SPEC_ID: u32 = 1;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;
const CAPABILITY_COOPERATIVE_MATRIX_KHR: u32 = 6022;
const CAPABILITY_COOPERATIVE_VECTOR_NV: u32 = 5394;

fn glsl_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("glsl")
}

/// One line of glsl/variants.txt: output name, source file, defines (NAME=VALUE), and the
/// option `target-env=vulkan1.3` among them where a module is SPIR-V 1.6.
struct Variant {
    name: String,
    source: String,
    defines: Vec<String>,
}

impl Variant {
    fn emulated(&self) -> bool {
        self.defines.iter().any(|d| {
            matches!(
                d.split('=').next(),
                Some("COOPMAT_EMULATED" | "COOPVEC_EMULATED")
            )
        })
    }

    fn targets_vulkan_1_3(&self) -> bool {
        self.defines.iter().any(|d| d == "target-env=vulkan1.3")
    }

    fn path(&self) -> PathBuf {
        glsl_dir().join("spirv").join(format!("{}.spv", self.name))
    }
}

fn variants() -> Vec<Variant> {
    let text = std::fs::read_to_string(glsl_dir().join("variants.txt")).unwrap();
    let variants: Vec<Variant> = text
        .lines()
        .map(|line| line.split('#').next().unwrap().trim())
        .filter(|line| !line.is_empty())
        .map(|line| {
            let mut fields = line.split_whitespace().map(str::to_string);
            Variant {
                name: fields.next().unwrap(),
                source: fields.next().expect("a source file after the name"),
                defines: fields.collect(),
            }
        })
        .collect();
    assert!(!variants.is_empty(), "glsl/variants.txt lists no variant");
    variants
}

/// The module as 32-bit words, after checking its header.
fn words(variant: &Variant) -> Vec<u32> {
    let bytes = std::fs::read(variant.path())
        .unwrap_or_else(|e| panic!("{}: {e}", variant.path().display()));
    assert!(
        bytes.len() >= 20 && bytes.len().is_multiple_of(4),
        "{}: {} bytes is no SPIR-V module",
        variant.name,
        bytes.len()
    );
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(words[0], SPIRV_MAGIC, "{} is not SPIR-V", variant.name);
    words
}

/// (opcode, operands) of every instruction after the header.
fn instructions(variant: &Variant) -> Vec<(u32, Vec<u32>)> {
    let words = words(variant);
    let mut instructions = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        assert!(
            count >= 1 && at + count <= words.len(),
            "{}: malformed instruction at word {at}",
            variant.name
        );
        instructions.push((opcode, words[at + 1..at + count].to_vec()));
        at += count;
    }
    instructions
}

fn capabilities(variant: &Variant) -> BTreeSet<u32> {
    instructions(variant)
        .into_iter()
        .filter(|(opcode, _)| *opcode == OP_CAPABILITY)
        .map(|(_, operands)| operands[0])
        .collect()
}

/// The values of `decoration` (OpDecorate <target> <decoration> <value>) in the module.
fn decoration_values(variant: &Variant, decoration: u32) -> BTreeSet<u32> {
    instructions(variant)
        .into_iter()
        .filter(|(opcode, operands)| {
            *opcode == OP_DECORATE && operands.len() == 3 && operands[1] == decoration
        })
        .map(|(_, operands)| operands[2])
        .collect()
}

#[test]
fn variants_table_and_committed_modules_agree() {
    let listed: BTreeSet<String> = variants().into_iter().map(|v| v.name).collect();
    let committed: BTreeSet<String> = std::fs::read_dir(glsl_dir().join("spirv"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .map(|name| {
            name.strip_suffix(".spv")
                .unwrap_or_else(|| panic!("glsl/spirv/{name} is not a .spv file"))
                .to_string()
        })
        .collect();
    let missing: Vec<_> = listed.difference(&committed).collect();
    let extra: Vec<_> = committed.difference(&listed).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "glsl/variants.txt and glsl/spirv/ disagree: not committed {missing:?}, not listed \
         {extra:?} (run `cargo run --release --manifest-path tools/spirv/Cargo.toml -- build`)"
    );
    for variant in variants() {
        assert!(
            glsl_dir().join(&variant.source).is_file(),
            "{}: no source glsl/{}",
            variant.name,
            variant.source
        );
    }
}

#[test]
fn modules_are_spirv_1_5_without_local_size_id_unless_marked() {
    for variant in variants() {
        let version = words(&variant)[1];
        if variant.targets_vulkan_1_3() {
            // GL_NV_cooperative_matrix2 exists only for SPIR-V 1.6 in glslang.
            assert_eq!(
                version, 0x0001_0600,
                "{}: SPIR-V version {version:#x}, expected 1.6 (target-env=vulkan1.3)",
                variant.name
            );
            continue;
        }
        assert_eq!(
            version, 0x0001_0500,
            "{}: SPIR-V version {version:#x}, expected 1.5 (Vulkan 1.2)",
            variant.name
        );
        // For SPIR-V 1.6 glslang writes a spec-constant workgroup size as LocalSizeId,
        // which needs maintenance4; SPIR-V 1.5 modules use the WorkgroupSize built-in.
        for (opcode, operands) in instructions(&variant) {
            assert!(
                !(opcode == OP_EXECUTION_MODE_ID
                    && operands.get(1) == Some(&EXECUTION_MODE_LOCAL_SIZE_ID)),
                "{}: uses LocalSizeId",
                variant.name
            );
            assert!(
                !(opcode == OP_EXECUTION_MODE
                    && operands.get(1) == Some(&EXECUTION_MODE_LOCAL_SIZE_ID)),
                "{}: uses LocalSizeId",
                variant.name
            );
        }
    }
}

#[test]
fn only_the_emulated_modules_do_without_cooperative_matrices() {
    let mut emulated = 0;
    // The skinny kernel (GEMMs of few rows) never multiplies cooperative matrices, the
    // cooperative-vector network kernel neither (below).
    for variant in variants()
        .into_iter()
        .filter(|v| v.source != "gemm_skinny.comp" && v.source != "mlp_coopvec.comp")
    {
        let uses_coopmat = capabilities(&variant).contains(&CAPABILITY_COOPERATIVE_MATRIX_KHR);
        if variant.emulated() {
            emulated += 1;
            assert!(
                !uses_coopmat,
                "{}: an emulated module declares CooperativeMatrixKHR",
                variant.name
            );
        } else {
            assert!(
                uses_coopmat,
                "{}: declares no CooperativeMatrixKHR capability",
                variant.name
            );
        }
    }
    assert!(emulated > 0, "glsl/variants.txt lists no emulated variant");
    for variant in variants()
        .into_iter()
        .filter(|v| v.source == "gemm_skinny.comp")
    {
        assert!(
            !capabilities(&variant).contains(&CAPABILITY_COOPERATIVE_MATRIX_KHR),
            "{}: the skinny kernel declares CooperativeMatrixKHR",
            variant.name
        );
    }
}

#[test]
fn only_the_emulated_coopvec_modules_do_without_cooperative_vectors() {
    let mut counts = [0; 2];
    for variant in variants()
        .into_iter()
        .filter(|v| v.source == "mlp_coopvec.comp")
    {
        let capabilities = capabilities(&variant);
        assert!(
            !capabilities.contains(&CAPABILITY_COOPERATIVE_MATRIX_KHR),
            "{}: declares CooperativeMatrixKHR",
            variant.name
        );
        assert_eq!(
            capabilities.contains(&CAPABILITY_COOPERATIVE_VECTOR_NV),
            !variant.emulated(),
            "{}: CooperativeVectorNV only where not emulated",
            variant.name
        );
        counts[usize::from(variant.emulated())] += 1;
    }
    assert_eq!(
        counts,
        [4, 4],
        "real and emulated coopvec modules per row type"
    );
}

#[test]
fn subgroup_kernel_modules_share_one_host_interface() {
    // Every module of gemm_coopmat.comp, emulated or not, has the specialization constants
    // 0..=14, every module of gemm_skinny.comp 0..=8, every module of mlp_coopmat.comp
    // 0..=6, of mlp_coopmat_rows.comp 0..=23, of mlp_coopvec.comp 0..=45, and all the
    // storage buffers of set
    // 0, bindings 0..=3 (the one set layout of src/vulkan/dispatch.rs).
    let bindings: BTreeSet<u32> = (0..=3).collect();
    for variant in variants() {
        let spec_ids: BTreeSet<u32> = match variant.source.as_str() {
            "gemm_coopmat.comp" => (0..=14).collect(),
            "gemm_skinny.comp" => (0..=8).collect(),
            "mlp_coopmat.comp" => (0..=6).collect(),
            "mlp_coopmat_rows.comp" => (0..=23).collect(),
            "mlp_coopvec.comp" => (0..=45).collect(),
            _ => continue,
        };
        assert_eq!(
            decoration_values(&variant, DECORATION_SPEC_ID),
            spec_ids,
            "{}: specialization constant IDs",
            variant.name
        );
        assert_eq!(
            decoration_values(&variant, DECORATION_BINDING),
            bindings,
            "{}: bindings",
            variant.name
        );
        assert_eq!(
            decoration_values(&variant, DECORATION_DESCRIPTOR_SET),
            BTreeSet::from([0]),
            "{}: descriptor sets",
            variant.name
        );
    }
}

#[test]
fn every_variant_the_backend_embeds_is_committed() {
    let embedded = coopgemm::config::KernelVariant::embedded();
    for variant in embedded {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("glsl/spirv/{}.spv", variant.name));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            variant.spirv,
            "{}",
            variant.name
        );
        assert_eq!(
            &variant.spirv[..4],
            &SPIRV_MAGIC.to_le_bytes(),
            "{} is not SPIR-V",
            variant.name
        );
    }
}
