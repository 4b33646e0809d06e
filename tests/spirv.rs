//! The committed SPIR-V of the cooperative-matrix kernels is reproducible from its GLSL, and
//! valid. The pinned compiler lives in the shared folder beside the checkout
//! (`../shared/tools/glslang`, or `GLSLANG_VALIDATOR`); CI has it. Without it these tests
//! say so and pass only outside CI (`CI` unset), so a missing compiler cannot hide in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

fn glslang() -> Option<PathBuf> {
    let path = std::env::var_os("GLSLANG_VALIDATOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/tools/glslang/bin/glslangValidator")
        });
    if path.exists() {
        return Some(path);
    }
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    assert!(
        !in_ci,
        "CI must have the pinned glslangValidator at {}",
        path.display()
    );
    eprintln!(
        "skipping: no glslangValidator at {} (set GLSLANG_VALIDATOR)",
        path.display()
    );
    None
}

fn committed_modules() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("glsl/spirv");
    let mut modules: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    modules.sort();
    modules
}

#[test]
fn committed_spirv_matches_its_glsl_source() {
    let Some(glslang) = glslang() else { return };
    let scratch = std::env::temp_dir().join(format!("coopgemm-spirv-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let output = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("glsl/build.sh"))
        .env("GLSLANG_VALIDATOR", &glslang)
        .env("SPIRV_OUTPUT_DIR", &scratch)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "build.sh failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let committed = committed_modules();
    assert!(
        committed.len() >= 8,
        "expected every variant committed, found {committed:?}"
    );
    let mut rebuilt: Vec<_> = std::fs::read_dir(&scratch)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    rebuilt.sort();
    let committed_names: Vec<_> = committed
        .iter()
        .map(|p| p.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(
        rebuilt, committed_names,
        "build.sh and glsl/spirv/ disagree on the set of variants"
    );
    for module in &committed {
        let fresh = std::fs::read(scratch.join(module.file_name().unwrap())).unwrap();
        let stored = std::fs::read(module).unwrap();
        assert!(
            fresh == stored,
            "{} is stale: run glsl/build.sh and commit the result",
            module.display()
        );
    }
    std::fs::remove_dir_all(&scratch).ok();
}

#[test]
fn every_committed_module_passes_spirv_val() {
    let Some(glslang) = glslang() else { return };
    let spirv_val = std::env::var_os("SPIRV_VAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| glslang.with_file_name("spirv-val"));
    for module in committed_modules() {
        let output = Command::new(&spirv_val)
            .args(["--target-env", "vulkan1.3"])
            .arg(&module)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            module.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn every_variant_the_backend_embeds_is_committed() {
    use coopgemm::backend::coopmat::{VARIANTS, WORKGROUP_SCOPE_VARIANTS};
    for variant in VARIANTS.iter().chain(WORKGROUP_SCOPE_VARIANTS.iter()) {
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
            &0x0723_0203u32.to_le_bytes(),
            "{} is not SPIR-V",
            variant.name
        );
    }
}
