//! Compiled pipelines persisted between processes.
//!
//! Building the GEMM pipelines (SPIR-V to machine code in the driver) is most of the time a
//! fresh process spends before its first GEMM. Where the device can hand its pipeline cache
//! out (`wgpu::Features::PIPELINE_CACHE` for the SIMT backend, `vkGetPipelineCacheData` for
//! the cooperative-matrix backend), the cache is written to a directory after new pipelines
//! are built and fed back to the driver by the next process.
//!
//! - Where: [`DiskCache::Default`] is `$COOPGEMM_CACHE_DIR`, else
//!   `$XDG_CACHE_HOME/coopgemm`, else `$HOME/.cache/coopgemm`. [`DiskCache::Off`] (what
//!   `COOPGEMM_CACHE=0` gives under `ContextOptions::from_env`) keeps nothing.
//! - Which file: names carry [`cache_key`] of the adapter (vendor and device ids, driver name
//!   and version, wgpu backend, coopgemm's version), so a cache from another driver is never
//!   fed in; inside, a small header with a checksum rejects truncated or damaged files before
//!   the driver sees them.
//! - How: written to a temporary file and renamed over the old one, so readers see a whole
//!   file or none. Failing to read or write only logs; it never fails a GEMM.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use std::ffi::OsString;

/// 64-bit FNV-1a: the checksum of cache files and the short hash in their names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ *byte as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Keeps `[A-Za-z0-9.]`, turns runs of anything else into one `_`, and stops at `max` bytes.
fn sanitize(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if out.len() >= max {
            break;
        }
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// The part of cache file names that names the adapter and driver: wgpu backend, vendor and
/// device ids, driver name and version, coopgemm's version, and a hash of all of them
/// unabridged (the readable parts are shortened to safe file-name characters). Public as
/// [`DiskCache::file_prefix`].
pub(crate) fn cache_key(info: &wgpu::AdapterInfo) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let backend = format!("{:?}", info.backend).to_lowercase();
    let full = format!(
        "{version}\n{backend}\n{}\n{}\n{}\n{}\n{}",
        info.vendor, info.device, info.name, info.driver, info.driver_info
    );
    format!(
        "coopgemm{version}-{backend}-{:04x}-{:04x}-{}-{}-{:016x}",
        info.vendor,
        info.device,
        sanitize(&info.driver, 24),
        sanitize(&info.driver_info, 40),
        fnv1a(full.as_bytes())
    )
}

/// Header of a cache file: magic, format version, key hash, payload length and checksum.
const MAGIC: &[u8; 8] = b"CGPCACHE";
const FORMAT_VERSION: u32 = 1;
const HEADER_BYTES: usize = 8 + 4 + 4 + 8 + 8 + 8;

fn encode(key_hash: u64, payload: &[u8]) -> Vec<u8> {
    let mut file = Vec::with_capacity(HEADER_BYTES + payload.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    file.extend_from_slice(&0u32.to_le_bytes());
    file.extend_from_slice(&key_hash.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&fnv1a(payload).to_le_bytes());
    file.extend_from_slice(payload);
    file
}

/// The payload of a file `encode` wrote for `key_hash`, or why it is not usable.
fn decode(key_hash: u64, mut file: Vec<u8>) -> Result<Vec<u8>, &'static str> {
    if file.len() < HEADER_BYTES || &file[..8] != MAGIC {
        return Err("not a coopgemm cache file");
    }
    let u32_at =
        |at: usize| u32::from_le_bytes([file[at], file[at + 1], file[at + 2], file[at + 3]]);
    let u64_at = |at: usize| (u32_at(at) as u64) | ((u32_at(at + 4) as u64) << 32);
    if u32_at(8) != FORMAT_VERSION {
        return Err("written by another coopgemm file format");
    }
    if u64_at(16) != key_hash {
        return Err("written for another adapter or driver");
    }
    if u64_at(24) != (file.len() - HEADER_BYTES) as u64 {
        return Err("truncated or extended");
    }
    let checksum = u64_at(32);
    let payload = file.split_off(HEADER_BYTES);
    if fnv1a(&payload) != checksum {
        return Err("checksum mismatch");
    }
    Ok(payload)
}

/// Where one adapter's cache files live: the directory and the adapter's [`cache_key`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheStore {
    dir: PathBuf,
    key: String,
}

impl CacheStore {
    /// The store for `info` as `setting` says, or `None` when the cache is off.
    pub(crate) fn new(setting: &DiskCache, info: &wgpu::AdapterInfo) -> Option<CacheStore> {
        let dir = setting.directory();
        if dir.is_none() {
            log::debug!("pipeline disk cache off");
        }
        Some(CacheStore {
            dir: dir?,
            key: cache_key(info),
        })
    }

    /// The file of one kind of cache (e.g. `simt.wgpu`), for this store's adapter.
    pub(crate) fn file(&self, kind: &'static str) -> CacheFile {
        CacheFile {
            path: self.dir.join(format!("{}.{kind}.bin", self.key)),
            key_hash: fnv1a(self.key.as_bytes()),
            saved: Mutex::new(None),
        }
    }
}

/// One cache file: loads its payload once, and rewrites it when handed different data.
#[derive(Debug)]
pub(crate) struct CacheFile {
    path: PathBuf,
    key_hash: u64,
    /// Checksum of the payload last loaded or saved, to skip writing identical data.
    saved: Mutex<Option<u64>>,
}

impl CacheFile {
    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The payload last saved for this adapter, if there is a usable one.
    pub(crate) fn load(&self) -> Option<Vec<u8>> {
        let file = match std::fs::read(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                log::debug!("pipeline cache {}: none yet", self.path.display());
                return None;
            }
            Err(error) => {
                log::warn!("pipeline cache {}: {error}", self.path.display());
                return None;
            }
        };
        match decode(self.key_hash, file) {
            Ok(payload) => {
                log::debug!(
                    "pipeline cache {}: loaded {} bytes",
                    self.path.display(),
                    payload.len()
                );
                if let Ok(mut saved) = self.saved.lock() {
                    *saved = Some(fnv1a(&payload));
                }
                Some(payload)
            }
            Err(why) => {
                log::warn!("pipeline cache {}: ignored ({why})", self.path.display());
                None
            }
        }
    }

    /// Writes `payload` (atomically: a temporary file renamed over the old one) unless it is
    /// what was last loaded or saved. Errors are logged, not returned.
    pub(crate) fn save(&self, payload: &[u8]) {
        let checksum = fnv1a(payload);
        let Ok(mut saved) = self.saved.lock() else {
            return;
        };
        if *saved == Some(checksum) {
            log::debug!(
                "pipeline cache {}: unchanged ({} bytes)",
                self.path.display(),
                payload.len()
            );
            return;
        }
        match self.write(payload) {
            Ok(()) => {
                *saved = Some(checksum);
                log::debug!(
                    "pipeline cache {}: saved {} bytes",
                    self.path.display(),
                    payload.len()
                );
            }
            Err(error) => log::warn!(
                "pipeline cache {}: not saved ({error})",
                self.path.display()
            ),
        }
    }

    fn write(&self, payload: &[u8]) -> std::io::Result<()> {
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut temporary = self.path.clone().into_os_string();
        temporary.push(format!(
            ".{}-{}.tmp",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        ));
        let temporary = PathBuf::from(temporary);
        let written = std::fs::write(&temporary, encode(self.key_hash, payload))
            .and_then(|()| std::fs::rename(&temporary, &self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(driver_info: &str) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            vendor: 0x10005,
            driver: "llvmpipe".into(),
            driver_info: driver_info.into(),
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan)
        }
    }

    #[test]
    fn key_names_the_driver_and_changes_with_it() {
        let key = cache_key(&info("Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)"));
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            key.starts_with(&format!(
                "coopgemm{version}-vulkan-10005-0000-llvmpipe-Mesa_25.0.7_2_bpo12_1_LLVM_15.0.6-"
            )),
            "{key}"
        );
        assert!(key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)));
        assert_ne!(key, cache_key(&info("Mesa 25.0.8 (LLVM 15.0.6)")));
        let mut other_device = info("Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)");
        other_device.device = 1;
        assert_ne!(key, cache_key(&other_device));
        // Long, odd driver strings still give short, safe names.
        let long = cache_key(&info(&"x/../y ".repeat(100)));
        assert!(long.len() < 140 && !long.contains('/'), "{long}");
    }

    #[test]
    fn files_round_trip_and_reject_damage() {
        let payload = b"pipeline cache bytes".to_vec();
        let file = encode(7, &payload);
        assert_eq!(decode(7, file.clone()), Ok(payload.clone()));
        assert!(decode(8, file.clone()).is_err(), "other adapter");
        assert!(
            decode(7, file[..file.len() - 1].to_vec()).is_err(),
            "truncated"
        );
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode(7, flipped).is_err(), "damaged");
        assert!(decode(7, b"short".to_vec()).is_err());
    }

    #[test]
    fn store_saves_atomically_and_loads_back() {
        let dir = std::env::temp_dir().join(format!(
            "coopgemm-unit-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let store = CacheStore {
            dir: dir.join("nested"),
            key: cache_key(&info("Mesa")),
        };
        let file = store.file("simt.wgpu");
        assert_eq!(file.load(), None);
        file.save(b"first");
        assert_eq!(store.file("simt.wgpu").load(), Some(b"first".to_vec()));
        assert_eq!(store.file("coopmat.vk").load(), None, "kinds are separate");
        file.save(b"second");
        assert_eq!(store.file("simt.wgpu").load(), Some(b"second".to_vec()));
        let leftovers: Vec<_> = std::fs::read_dir(dir.join("nested"))
            .unwrap()
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        let other = CacheStore {
            dir: dir.join("nested"),
            key: cache_key(&info("Mesa 2")),
        };
        assert_eq!(other.file("simt.wgpu").load(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Where [`Context`](crate::Context) keeps compiled pipelines between processes
/// ([`ContextOptions::disk_cache`](crate::ContextOptions::disk_cache)).
///
/// With [`ContextOptions::from_env`](crate::ContextOptions::from_env), `COOPGEMM_CACHE=0` makes it `Off`.
///
/// ```
/// use coopgemm::{ContextOptions, DiskCache};
/// // Tests and tools that want a cache of their own:
/// let dir = std::env::temp_dir().join("my-coopgemm-cache");
/// let options = ContextOptions::default().with_disk_cache(DiskCache::Dir(dir.clone()));
/// assert_eq!(options.disk_cache.directory(), Some(dir));
/// assert_eq!(DiskCache::Off.directory(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DiskCache {
    /// `$COOPGEMM_CACHE_DIR`, else `$XDG_CACHE_HOME/coopgemm`, else `$HOME/.cache/coopgemm`,
    /// looked up when a context opens its cache (or [`DiskCache::directory`] is called): the
    /// only variables a context reads without [`ContextOptions::from_env`](crate::ContextOptions::from_env), and only to find
    /// the directory.
    #[default]
    Default,
    /// This directory (created when the first cache is written).
    Dir(PathBuf),
    /// No persisted cache: every process builds its pipelines from scratch.
    Off,
}

impl DiskCache {
    /// The directory cache files go to, or `None` when the cache is off (this variant, or
    /// no variable names a default location).
    pub fn directory(&self) -> Option<PathBuf> {
        resolve_directory(self, location_variable)
    }

    /// The prefix of the cache files' names for `adapter` (vendor and device ids, driver
    /// name and version, wgpu backend, coopgemm's version): files of another adapter or
    /// driver have other names, so a cache is never fed to a driver that did not write it.
    ///
    /// ```
    /// let info = wgpu::AdapterInfo {
    ///     name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
    ///     vendor: 0x10005,
    ///     driver: "llvmpipe".into(),
    ///     driver_info: "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)".into(),
    ///     ..wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan)
    /// };
    /// let key = coopgemm::DiskCache::file_prefix(&info);
    /// assert!(key.starts_with(&format!("coopgemm{}-vulkan-10005-0000-llvmpipe-Mesa_25.0.7", env!("CARGO_PKG_VERSION"))));
    /// ```
    pub fn file_prefix(adapter: &wgpu::AdapterInfo) -> String {
        cache_key(adapter)
    }
}

/// [`DiskCache::directory`] with the environment read through `var`.
pub(crate) fn resolve_directory(
    setting: &DiskCache,
    var: impl Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let non_empty = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    match setting {
        DiskCache::Off => None,
        DiskCache::Dir(dir) => Some(dir.clone()),
        DiskCache::Default => non_empty("COOPGEMM_CACHE_DIR")
            .or_else(|| non_empty("XDG_CACHE_HOME").map(|dir| dir.join("coopgemm")))
            .or_else(|| non_empty("HOME").map(|dir| dir.join(".cache").join("coopgemm"))),
    }
}

/// An environment variable that is not an option but a location: where
/// [`DiskCache::Default`] puts its files (`COOPGEMM_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME`).
pub(crate) fn location_variable(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}
