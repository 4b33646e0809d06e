//! Declares `cfg(vulkan_interop)`: set where wgpu builds its Vulkan backend (Windows, Linux,
//! Android, FreeBSD; coopgemm does not ask for `vulkan-portability`, so not on Apple or the
//! web). Everything that uses ash or wgpu's Vulkan HAL is compiled only there, behind the
//! module boundary in `src/vulkan/mod.rs`. Keep this list equal to the target condition on
//! `ash` in Cargo.toml.
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
}
