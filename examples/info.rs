//! Prints the adapter, each backend with why it is or is not available, the device's
//! cooperative-matrix configurations (M, N, K, A/B/C/result types, scope) and the square ones
//! the WGSL cooperative-matrix backend uses.
//!
//! ```text
//! cargo run --example info
//! ```

use coopgemm::{Gemm, GemmTypes};

#[allow(dead_code)]
mod common;

/// Prints the adapter, each backend with why it is or is not available, and the device's
/// cooperative-matrix configurations. Takes no options.
#[derive(clap::Parser, Debug)]
#[command(name = "info", version)]
struct Args {}

fn main() {
    let Args {} = common::cli::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let context = common::open::open_context();
    let info = context.adapter_info();
    println!(
        "adapter: {} ({:?}, {:?})",
        info.name, info.backend, info.device_type
    );
    println!("driver: {} {}", info.driver, info.driver_info);
    let limits = context.device().limits();
    println!(
        "limits: workgroup storage {} B, {} invocations per workgroup, storage binding {} B",
        limits.max_compute_workgroup_storage_size,
        limits.max_compute_invocations_per_workgroup,
        limits.max_storage_buffer_binding_size
    );
    println!("backends:");
    for status in context.backends() {
        match status.availability {
            Ok(what) => println!("  {:<12} available: {what}", status.kind.name()),
            Err(why) => println!("  {:<12} unavailable: {why}", status.kind.name()),
        }
    }
    let cooperative_matrices = context.cooperative_matrices();
    if let (Some(device), Some(enabled)) = (
        &cooperative_matrices.vulkan,
        cooperative_matrices.vulkan_features,
    ) {
        println!(
            "subgroup size {} (min {}, max {}), shared memory {} B, max invocations {}, VK_NV_cooperative_matrix2: {}",
            device.subgroup_size,
            device.min_subgroup_size,
            device.max_subgroup_size,
            device.shared_memory_bytes,
            device.max_workgroup_invocations,
            device.has_nv_cooperative_matrix2
        );
        println!("enabled: {enabled:?}");
        println!("cooperative-matrix configurations:");
        for shape in &device.shapes {
            println!("  {shape}");
        }
        if !device.flexible_shapes.is_empty() {
            println!(
                "VK_NV_cooperative_matrix2 workgroup-scope shapes (max dimension {}, max workgroup {}):",
                device.flexible_max_dimension, device.workgroup_scope_max_invocations
            );
            for shape in &device.flexible_shapes {
                let [a, b, c, r] = shape
                    .types
                    .map(|t| t.map_or("other".to_string(), |t| t.to_string()));
                println!(
                    "  granularity M{} N{} K{} A {a} B {b} C {c} R {r} scope {} invocations {}",
                    shape.m_granularity,
                    shape.n_granularity,
                    shape.k_granularity,
                    if shape.workgroup_scope {
                        "workgroup"
                    } else {
                        "other"
                    },
                    shape.workgroup_invocations
                );
            }
        }
    }
    if let Some(subgroup_size) = cooperative_matrices.wgsl_subgroup_size {
        println!(
            "WGSL cooperative matrices (wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX), kernels built for subgroups of {subgroup_size}:"
        );
        for shape in &cooperative_matrices.wgsl_shapes {
            println!("  {shape}");
        }
    }
    println!("selection for 4096x4096x4096:");
    for types in GemmTypes::ALL {
        let gemm = Gemm::new(4096, 4096, 4096).types(types);
        match context.select(&gemm) {
            Ok(selection) => {
                let kernel = context
                    .prepare(&gemm)
                    .map(|k| k.to_string())
                    .unwrap_or_else(|e| format!("({e})"));
                println!(
                    "  {:<10} {} ({}) -> {kernel}",
                    types.short_name(),
                    selection.backend,
                    selection.reason
                )
            }
            Err(error) => println!("  {:<10} none: {error}", types.short_name()),
        }
    }
}
