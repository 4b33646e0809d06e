//! `coopgemm-spirv`: compiles coopgemm's GLSL kernels to the SPIR-V committed in
//! `glsl/spirv/`, and checks that the committed modules are what their sources produce.
//!
//! ```text
//! cargo run --release --manifest-path tools/spirv/Cargo.toml -- build [--glsl DIR]
//! cargo run --release --manifest-path tools/spirv/Cargo.toml -- check [--glsl DIR] [--require-spirv-val]
//! ```
//!
//! The variants are listed once, in `glsl/variants.txt` (output name, source file, defines).
//! Every variant is compiled by shaderc (glslang built from source by the `shaderc-sys`
//! crate, so the compiler is pinned by this package's Cargo.lock) as a compute shader for
//! Vulkan 1.2 (SPIR-V 1.5: a workgroup size from specialization constants stays a
//! `WorkgroupSize` built-in instead of SPIR-V 1.6's `LocalSizeId`, which needs
//! maintenance4), without debug information and without optimization, with `#include`
//! resolved in the `glsl/` folder. A variant marked `target-env=vulkan1.3` in the table is
//! compiled for Vulkan 1.3 (SPIR-V 1.6) instead: glslang accepts GL_NV_cooperative_matrix2
//! only there. The output is reproducible byte for byte.
//!
//! * `build` writes `glsl/spirv/<name>.spv` for every variant and deletes `.spv` files there
//!   that the table does not list.
//! * `check` compiles into memory and fails, listing them all, if a committed module differs
//!   from its source, is missing, or is not in the table.
//!
//! Both then run `spirv-val --target-env <the module's environment>` on every module when a `spirv-val` is
//! found (`SPIRV_VAL`, else `PATH`) and fail on any error; `--require-spirv-val` makes a
//! missing `spirv-val` an error. The lines CI can look for:
//!
//! ```text
//! spirv: 17 modules match their GLSL (shaderc 0.10.1, glslang 15.3.0)
//! spirv-val: 17 modules valid (SPIRV-Tools v2025.5 ...)
//! ```

use std::collections::BTreeSet;
use std::ffi::{c_char, c_int, CStr};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// A module's target environment (for glslang and for spirv-val). The default is Vulkan 1.2
/// (SPIR-V 1.5); a variant needs `target-env=vulkan1.3` (SPIR-V 1.6) in variants.txt only
/// where glslang demands SPIR-V 1.6 (GL_NV_cooperative_matrix2).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TargetEnv {
    Vulkan1_2,
    Vulkan1_3,
}

impl TargetEnv {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "vulkan1.2" => Some(Self::Vulkan1_2),
            "vulkan1.3" => Some(Self::Vulkan1_3),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Vulkan1_2 => "vulkan1.2",
            Self::Vulkan1_3 => "vulkan1.3",
        }
    }

    fn apply(self, options: &mut shaderc::CompileOptions) {
        let (env, spirv) = match self {
            Self::Vulkan1_2 => (shaderc::EnvVersion::Vulkan1_2, shaderc::SpirvVersion::V1_5),
            Self::Vulkan1_3 => (shaderc::EnvVersion::Vulkan1_3, shaderc::SpirvVersion::V1_6),
        };
        options.set_target_env(shaderc::TargetEnv::Vulkan, env as u32);
        options.set_target_spirv(spirv);
    }
}

/// This package's Cargo.lock: the versions of shaderc and shaderc-sys the tool was built with.
const CARGO_LOCK: &str = include_str!("../Cargo.lock");

/// `glslang_version_t` of glslang's C interface (glslang/Include/glslang_c_interface.h),
/// compiled into the static shaderc library that shaderc-sys links.
#[repr(C)]
struct GlslangVersion {
    major: c_int,
    minor: c_int,
    patch: c_int,
    flavor: *const c_char,
}

extern "C" {
    fn glslang_get_version(version: *mut GlslangVersion);
}

fn glslang_version() -> String {
    let mut version = GlslangVersion {
        major: 0,
        minor: 0,
        patch: 0,
        flavor: std::ptr::null(),
    };
    // SAFETY: glslang_get_version only writes the struct, whose layout matches the C one.
    unsafe { glslang_get_version(&mut version) };
    let flavor = if version.flavor.is_null() {
        String::new()
    } else {
        // SAFETY: glslang returns a pointer to a static NUL-terminated string.
        unsafe { CStr::from_ptr(version.flavor) }
            .to_string_lossy()
            .into_owned()
    };
    let mut text = format!("{}.{}.{}", version.major, version.minor, version.patch);
    if !flavor.is_empty() {
        text.push('-');
        text.push_str(&flavor);
    }
    text
}

/// The version of `package` in this tool's Cargo.lock.
fn locked_version(package: &str) -> String {
    let needle = format!("name = \"{package}\"");
    let mut lines = CARGO_LOCK.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle {
            if let Some(version) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                return version.trim_matches('"').to_string();
            }
        }
    }
    "unknown".to_string()
}

fn compiler_description() -> String {
    format!(
        "shaderc {}, glslang {}",
        locked_version("shaderc"),
        glslang_version()
    )
}

/// One line of glsl/variants.txt.
struct Variant {
    name: String,
    source: String,
    defines: Vec<(String, Option<String>)>,
    target_env: TargetEnv,
    line: usize,
}

/// A compiled variant.
struct Module {
    name: String,
    target_env: TargetEnv,
    spirv: Vec<u8>,
}

fn parse_variants(table: &Path) -> Result<Vec<Variant>, String> {
    let text = std::fs::read_to_string(table)
        .map_err(|e| format!("cannot read {}: {e}", table.display()))?;
    let mut variants = Vec::new();
    let mut names = BTreeSet::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let mut fields = content.split_whitespace();
        let name = fields.next().unwrap().to_string();
        let source = fields
            .next()
            .ok_or_else(|| format!("{}:{line}: no source file", table.display()))?
            .to_string();
        let valid_name = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid_name {
            return Err(format!(
                "{}:{line}: bad output name {name:?}",
                table.display()
            ));
        }
        if source.contains('/') || source.contains('\\') {
            return Err(format!(
                "{}:{line}: the source must be a file name in glsl/",
                table.display()
            ));
        }
        if !names.insert(name.clone()) {
            return Err(format!(
                "{}:{line}: {name} is listed twice",
                table.display()
            ));
        }
        let mut defines = Vec::new();
        let mut target_env = TargetEnv::Vulkan1_2;
        for field in fields {
            match field.split_once('=') {
                Some(("target-env", value)) => {
                    target_env = TargetEnv::parse(value).ok_or_else(|| {
                        format!(
                            "{}:{line}: target-env must be vulkan1.2 or vulkan1.3",
                            table.display()
                        )
                    })?;
                }
                Some((key, value)) => defines.push((key.to_string(), Some(value.to_string()))),
                None => defines.push((field.to_string(), None)),
            }
        }
        variants.push(Variant {
            name,
            source,
            defines,
            target_env,
            line,
        });
    }
    if variants.is_empty() {
        return Err(format!("{} lists no variant", table.display()));
    }
    Ok(variants)
}

/// Compiles every variant into memory: (name, SPIR-V bytes), in table order.
fn compile_all(glsl_dir: &Path, variants: &[Variant]) -> Result<Vec<Module>, String> {
    let compiler = shaderc::Compiler::new().map_err(|e| format!("shaderc: {e}"))?;
    let mut modules = Vec::new();
    let mut failures = Vec::new();
    for variant in variants {
        let source_path = glsl_dir.join(&variant.source);
        let source = std::fs::read_to_string(&source_path)
            .map_err(|e| format!("cannot read {}: {e}", source_path.display()))?;
        let mut options =
            shaderc::CompileOptions::new().map_err(|e| format!("shaderc options: {e}"))?;
        options.set_source_language(shaderc::SourceLanguage::GLSL);
        variant.target_env.apply(&mut options);
        options.set_optimization_level(shaderc::OptimizationLevel::Zero);
        for (key, value) in &variant.defines {
            options.add_macro_definition(key, value.as_deref());
        }
        let include_dir = glsl_dir.to_path_buf();
        options.set_include_callback(move |requested, _kind, _requester, _depth| {
            let valid = !requested.is_empty()
                && !requested.contains('/')
                && !requested.contains('\\')
                && requested != "."
                && requested != "..";
            if !valid {
                return Err(format!("{requested}: includes are file names in glsl/"));
            }
            let path = include_dir.join(requested);
            let content = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Ok(shaderc::ResolvedInclude {
                resolved_name: requested.to_string(),
                content,
            })
        });
        match compiler.compile_into_spirv(
            &source,
            shaderc::ShaderKind::Compute,
            &variant.source,
            "main",
            Some(&options),
        ) {
            Ok(artifact) => {
                if artifact.get_num_warnings() > 0 {
                    eprintln!(
                        "warning: {} (variants.txt line {}):\n{}",
                        variant.name,
                        variant.line,
                        artifact.get_warning_messages()
                    );
                }
                modules.push(Module {
                    name: variant.name.clone(),
                    target_env: variant.target_env,
                    spirv: artifact.as_binary_u8().to_vec(),
                });
            }
            Err(error) => failures.push(format!(
                "{} (variants.txt line {}): {error}",
                variant.name, variant.line
            )),
        }
    }
    if failures.is_empty() {
        Ok(modules)
    } else {
        Err(format!("compilation failed:\n{}", failures.join("\n")))
    }
}

/// The `.spv` file names in `dir`.
fn committed_names(dir: &Path) -> Result<BTreeSet<String>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut names = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = file_name.strip_suffix(".spv") {
            names.insert(stem.to_string());
        }
    }
    Ok(names)
}

fn build(glsl_dir: &Path, modules: &[Module]) -> Result<(), String> {
    let spirv_dir = glsl_dir.join("spirv");
    std::fs::create_dir_all(&spirv_dir)
        .map_err(|e| format!("cannot create {}: {e}", spirv_dir.display()))?;
    let listed: BTreeSet<&str> = modules.iter().map(|m| m.name.as_str()).collect();
    for stale in committed_names(&spirv_dir)? {
        if !listed.contains(stale.as_str()) {
            let path = spirv_dir.join(format!("{stale}.spv"));
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            println!("removed {} (not in variants.txt)", path.display());
        }
    }
    let mut changed = 0;
    for module in modules {
        let path = spirv_dir.join(format!("{}.spv", module.name));
        if std::fs::read(&path).ok().as_deref() == Some(module.spirv.as_slice()) {
            continue;
        }
        std::fs::write(&path, &module.spirv)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
        changed += 1;
    }
    println!(
        "spirv: {} modules built, {changed} changed ({})",
        modules.len(),
        compiler_description()
    );
    Ok(())
}

fn check(glsl_dir: &Path, modules: &[Module]) -> Result<(), String> {
    let spirv_dir = glsl_dir.join("spirv");
    let committed = committed_names(&spirv_dir)?;
    let mut problems = Vec::new();
    for module in modules {
        let path = spirv_dir.join(format!("{}.spv", module.name));
        match std::fs::read(&path) {
            Ok(stored) if stored == module.spirv => {}
            Ok(_) => problems.push(format!("differs from its GLSL: {}", path.display())),
            Err(_) => problems.push(format!("missing: {}", path.display())),
        }
    }
    let listed: BTreeSet<&str> = modules.iter().map(|m| m.name.as_str()).collect();
    for name in &committed {
        if !listed.contains(name.as_str()) {
            problems.push(format!(
                "not in variants.txt: {}",
                spirv_dir.join(format!("{name}.spv")).display()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(format!(
            "spirv: {} of {} modules do not match their GLSL ({}):\n  {}\nrun `cargo run --release \
             --manifest-path tools/spirv/Cargo.toml -- build` and commit glsl/spirv/",
            problems.len(),
            modules.len(),
            compiler_description(),
            problems.join("\n  ")
        ));
    }
    println!(
        "spirv: {} modules match their GLSL ({})",
        modules.len(),
        compiler_description()
    );
    Ok(())
}

/// spirv-val from `SPIRV_VAL`, else the first one on `PATH`.
fn find_spirv_val() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SPIRV_VAL").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("spirv-val"))
        .find(|candidate| candidate.is_file())
}

fn validate(modules: &[Module], required: bool) -> Result<(), String> {
    let Some(spirv_val) = find_spirv_val() else {
        if required {
            return Err("spirv-val: not found (set SPIRV_VAL or put it on PATH)".to_string());
        }
        println!("spirv-val: not found (set SPIRV_VAL or put it on PATH); validation skipped");
        return Ok(());
    };
    let version_output = Command::new(&spirv_val)
        .arg("--version")
        .output()
        .map_err(|e| format!("spirv-val: cannot run {}: {e}", spirv_val.display()))?;
    let version = String::from_utf8_lossy(&version_output.stdout)
        .lines()
        .next()
        .unwrap_or("unknown version")
        .trim()
        .to_string();
    let mut failures = Vec::new();
    for module in modules {
        let mut child = Command::new(&spirv_val)
            .args(["--target-env", module.target_env.name(), "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spirv-val: cannot run {}: {e}", spirv_val.display()))?;
        let mut stdin = child.stdin.take().unwrap();
        let writer = {
            let bytes = module.spirv.clone();
            std::thread::spawn(move || stdin.write_all(&bytes))
        };
        let output = child
            .wait_with_output()
            .map_err(|e| format!("spirv-val: {e}"))?;
        writer
            .join()
            .unwrap()
            .map_err(|e| format!("spirv-val: writing {}: {e}", module.name))?;
        if !output.status.success() {
            failures.push(format!(
                "{} (--target-env {}): {}{}",
                module.name,
                module.target_env.name(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    if !failures.is_empty() {
        return Err(format!(
            "spirv-val: {} of {} modules invalid ({version}, {}):\n{}",
            failures.len(),
            modules.len(),
            spirv_val.display(),
            failures.join("\n")
        ));
    }
    println!(
        "spirv-val: {} modules valid ({version}, {})",
        modules.len(),
        spirv_val.display()
    );
    Ok(())
}

const USAGE: &str = "usage: coopgemm-spirv build|check [--glsl DIR] [--require-spirv-val]
  build  compile glsl/variants.txt into glsl/spirv/ (and validate with spirv-val if found)
  check  compile into memory, compare with glsl/spirv/, validate with spirv-val if found
  --glsl DIR           the glsl/ folder (default: the one of this checkout)
  --require-spirv-val  fail when no spirv-val is found (SPIRV_VAL, else PATH)";

fn run() -> Result<(), String> {
    let mut args = std::env::args_os().skip(1);
    let mut command: Option<String> = None;
    let mut glsl_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../glsl"));
    let mut require_spirv_val = false;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--glsl") => {
                glsl_dir = PathBuf::from(
                    args.next()
                        .ok_or(format!("--glsl needs a folder\n{USAGE}"))?,
                );
            }
            Some("--require-spirv-val") => require_spirv_val = true,
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return Ok(());
            }
            Some(word @ ("build" | "check")) if command.is_none() => {
                command = Some(word.to_string());
            }
            _ => return Err(format!("unexpected argument {arg:?}\n{USAGE}")),
        }
    }
    let command = command.ok_or_else(|| USAGE.to_string())?;
    let glsl_dir = glsl_dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", glsl_dir.display()))?;
    let variants = parse_variants(&glsl_dir.join("variants.txt"))?;
    let modules = compile_all(&glsl_dir, &variants)?;
    let compared = if command == "build" {
        build(&glsl_dir, &modules)
    } else {
        check(&glsl_dir, &modules)
    };
    // Validate even when the comparison failed, so that one run reports everything.
    let validated = validate(&modules, require_spirv_val);
    match (compared, validated) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(a), Ok(())) | (Ok(()), Err(a)) => Err(a),
        (Err(a), Err(b)) => Err(format!("{a}\n{b}")),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}
