//! The persisted pipeline cache: a context writes its drivers' pipeline caches to the
//! directory its options name, and a later context on the same directory loads them and still
//! computes correct results, also when the files are damaged.

mod common;

use std::path::{Path, PathBuf};

use coopgemm::{BackendChoice, BackendKind, Context, DiskCache, Gemm, GemmTypes};

/// A fresh directory for one test (the cache directory comes from the options, not the
/// environment, so tests running in parallel never share one).
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coopgemm-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn context_in(dir: &Path) -> Context {
    pollster::block_on(Context::with_options(
        common::test_options().with_disk_cache(DiskCache::Dir(dir.to_path_buf())),
    ))
    .expect("a GPU or CPU Vulkan adapter (install mesa-vulkan-drivers)")
}

/// (file name, size) of every cache file in `dir`.
fn cache_files(dir: &Path) -> Vec<(String, u64)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let size = entry.metadata().ok()?.len();
            Some((entry.file_name().to_string_lossy().into_owned(), size))
        })
        .collect();
    files.sort();
    files
}

/// Runs a small GEMM on every backend the context has for f32 (and f16 on coopmat, which may
/// lack f32), checked against the reference. Returns the kinds it ran on.
fn run_gemms(context: &Context, seed: u64) -> Vec<BackendKind> {
    let mut ran = Vec::new();
    let simt = context.with_backend(BackendChoice::Force(BackendKind::Simt));
    common::check::<f32, f32>(&simt, &Gemm::new(96, 80, 64), seed).unwrap();
    ran.push(BackendKind::Simt);
    let coopmat = context.backend(BackendKind::Coopmat);
    if coopmat.is_available() {
        let types = coopmat.types;
        let forced = context.with_backend(BackendChoice::Force(BackendKind::Coopmat));
        let gemm = Gemm::new(128, 128, 64);
        if types.contains(&GemmTypes::F16_F32) {
            common::check::<half::f16, f32>(&forced, &gemm.types(GemmTypes::F16_F32), seed)
                .unwrap();
            ran.push(BackendKind::Coopmat);
        } else if types.contains(&GemmTypes::F32) {
            common::check::<f32, f32>(&forced, &gemm, seed).unwrap();
            ran.push(BackendKind::Coopmat);
        }
    }
    ran
}

#[test]
fn a_second_context_loads_the_saved_caches() {
    common::install_logger();
    let dir = temp_dir("reuse");
    let first = context_in(&dir);
    let key = coopgemm::DiskCache::file_prefix(first.adapter_info());
    let wgpu_cache = first
        .device()
        .features()
        .contains(wgpu::Features::PIPELINE_CACHE);
    let ran = run_gemms(&first, 1);
    drop(first);
    let files = cache_files(&dir);
    eprintln!("cache files: {files:?}");
    // An explicit DiskCache::Dir persists whatever COOPGEMM_CACHE says.
    if wgpu_cache {
        let simt = files
            .iter()
            .find(|(name, _)| name.contains("simt"))
            .unwrap_or_else(|| panic!("no SIMT cache file in {files:?}"));
        assert!(simt.0.starts_with(&key), "{} lacks the key {key}", simt.0);
        assert!(simt.1 > 40, "empty SIMT cache file: {simt:?}");
    }
    if ran.contains(&BackendKind::Coopmat) {
        let coopmat = files
            .iter()
            .find(|(name, _)| name.contains("coopmat"))
            .unwrap_or_else(|| panic!("no coopmat cache file in {files:?}"));
        assert!(coopmat.0.starts_with(&key));
        assert!(coopmat.1 > 40, "empty coopmat cache file: {coopmat:?}");
    }
    assert!(
        files.iter().all(|(name, _)| !name.ends_with(".tmp")),
        "temporary files left: {files:?}"
    );

    // The second context starts from the saved caches and must compute the same.
    let second = context_in(&dir);
    run_gemms(&second, 2);
    drop(second);
    common::assert_no_validation_errors();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes of coopgemm's own header in front of the driver's data: magic, format version,
/// reserved, key hash, payload length, payload FNV-1a checksum.
const HEADER_BYTES: usize = 40;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ *byte as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Damages every cache file in `dir`: everywhere (coopgemm's header rejects it), or only the
/// driver's data with the checksum fixed up, so that wgpu and the driver see damaged data.
fn damage(dir: &Path, keep_header: bool) {
    for (name, size) in cache_files(dir) {
        let path = dir.join(&name);
        let mut bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, size);
        let start = if keep_header { HEADER_BYTES } else { 0 };
        for index in (start..bytes.len()).step_by(7) {
            bytes[index] ^= 0x5a;
        }
        if keep_header {
            let checksum = fnv1a(&bytes[HEADER_BYTES..]);
            bytes[32..40].copy_from_slice(&checksum.to_le_bytes());
        }
        std::fs::write(&path, &bytes).unwrap();
    }
}

#[test]
fn damaged_cache_files_are_ignored() {
    common::install_logger();
    let dir = temp_dir("damaged");
    let first = context_in(&dir);
    run_gemms(&first, 3);
    drop(first);
    for (round, keep_header) in [false, true].into_iter().enumerate() {
        damage(&dir, keep_header);
        let next = context_in(&dir);
        run_gemms(&next, 4 + round as u64);
        drop(next);
        // Whatever was damaged has been replaced by a good cache again.
        for (name, size) in cache_files(&dir) {
            assert!(size > HEADER_BYTES as u64, "{name} is {size} bytes");
        }
    }
    common::assert_no_validation_errors();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cache_can_be_turned_off() {
    common::install_logger();
    let context = pollster::block_on(Context::with_options(
        common::test_options().with_disk_cache(DiskCache::Off),
    ))
    .unwrap();
    assert_eq!(DiskCache::Off.directory(), None);
    run_gemms(&context, 5);
}

/// A SIMT-only context caching in `dir`, tuning as `autotune` says, with time enough to
/// time every candidate.
fn open_tuning_on_simt(dir: &Path, autotune: coopgemm::AutotuneChoice) -> Context {
    let options = common::test_options()
        .with_disk_cache(DiskCache::Dir(dir.to_path_buf()))
        .with_autotune(autotune)
        .with_tuning_time_limit(std::time::Duration::from_secs(60))
        .with_backend(BackendChoice::Force(BackendKind::Simt));
    pollster::block_on(Context::with_options(options))
        .expect("a GPU or CPU Vulkan adapter (install mesa-vulkan-drivers)")
}

/// B in panels of 64 leaves only the SIMT configurations 64 columns wide: few pipelines.
fn panel_gemm() -> Gemm {
    Gemm::new(70, 100, 40).b(coopgemm::MatrixLayout {
        order: coopgemm::Order::ColumnPanels { width: 64 },
        ..Default::default()
    })
}

/// Autotuning times the candidates of a new shape class once, uses the fastest, writes it to
/// the cache directory, and a later context reads it back instead of tuning again.
#[test]
fn autotune_remembers_the_winner_across_contexts() {
    let dir = temp_dir("autotune");
    let open = || open_tuning_on_simt(&dir, coopgemm::AutotuneChoice::OnFirstUse);
    let gemm = panel_gemm();
    let is_candidate = |config: &coopgemm::KernelConfig| config.tile().1 == 64;
    let context = open();
    let winner = context.prepare(&gemm).unwrap().config;
    assert!(is_candidate(&winner), "{winner}");
    common::check::<f32, f32>(&context, &gemm, 5).unwrap();
    let tune_file = cache_files(&dir)
        .into_iter()
        .find(|(name, _)| name.ends_with(".tune.bin"))
        .expect("a tuning file");
    let contents = std::fs::read(dir.join(&tune_file.0)).unwrap();
    assert!(
        String::from_utf8_lossy(&contents).contains(&format!("\t{winner}")),
        "{tune_file:?}"
    );
    drop(context);
    let again = open();
    assert_eq!(again.prepare(&gemm).unwrap().config, winner);
    common::check::<f32, f32>(&again, &gemm, 6).unwrap();
    drop(again);

    // A saved winner that names no candidate here (another version's, say) is tuned again
    // and replaced, not used. Same length, so only the checksum needs fixing.
    let path = dir.join(&tune_file.0);
    let mut bytes = std::fs::read(&path).unwrap();
    let stale: String = winner
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    let payload = String::from_utf8(bytes[HEADER_BYTES..].to_vec())
        .unwrap()
        .replace(&format!("\t{winner}"), &format!("\t{stale}"));
    bytes.truncate(HEADER_BYTES);
    bytes.extend_from_slice(payload.as_bytes());
    let checksum = fnv1a(&bytes[HEADER_BYTES..]);
    bytes[32..40].copy_from_slice(&checksum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let retuned = open();
    let config = retuned.prepare(&gemm).unwrap().config;
    assert!(is_candidate(&config), "{config} after {stale}");
    common::check::<f32, f32>(&retuned, &gemm, 7).unwrap();
    let contents = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
    assert!(
        !contents.contains(&stale) && contents.contains(&format!("\t{config}")),
        "{contents}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    common::assert_no_validation_errors();
}

/// By default no GEMM waits for tuning: a new shape class runs at once with the heuristic's
/// configuration and nothing is timed; `Context::tune` times the class (within the time
/// limit), the GEMM then runs the winner, and a later context reads it from the cache.
#[test]
fn tuning_happens_only_on_request() {
    let dir = temp_dir("tune-on-request");
    let open = || open_tuning_on_simt(&dir, coopgemm::AutotuneChoice::OnRequest);
    let gemm = panel_gemm();
    let context = open();
    let heuristic = context.prepare(&gemm).unwrap().config;
    common::check::<f32, f32>(&context, &gemm, 8).unwrap();
    let tuned_files = || {
        cache_files(&dir)
            .into_iter()
            .filter(|(name, _)| name.ends_with(".tune.bin"))
            .count()
    };
    assert_eq!(tuned_files(), 0, "a GEMM tuned without being asked to");
    if std::env::var("COOPGEMM_AUTOTUNE").is_ok() {
        return; // the environment overrides Auto; the rest needs the default
    }
    let kernels = context.tune(&[gemm]).unwrap();
    let winner = kernels[0].config;
    assert_eq!(winner.tile().1, 64, "{winner}");
    assert_eq!(tuned_files(), 1, "tune() wrote no winner");
    assert_eq!(context.prepare(&gemm).unwrap().config, winner);
    common::check::<f32, f32>(&context, &gemm, 9).unwrap();
    drop(context);
    let again = open();
    assert_eq!(again.prepare(&gemm).unwrap().config, winner);
    eprintln!("heuristic {heuristic}, tuned {winner}");
    let _ = std::fs::remove_dir_all(&dir);
}
