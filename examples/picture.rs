//! A picture drawn by a coordinate network: every pixel's position, encoded as sines and
//! cosines, goes through a small MLP (12 → 64 → 64 → 64 → 3, SiLU between, sigmoid at the
//! end) whose output is the pixel's colour. The whole image is one `run_mlp` per network
//! kernel this device has; each kernel's image is checked against the f64 reference on a
//! sample of pixels (every 97th, and the first and last rows of pixels), the kernels'
//! images against each other, and the first kernel's image is written as a PNG.
//!
//! ```sh
//! cargo run --release --example picture                          # 1920x1080, picture.png
//! cargo run --release --example picture -- --width 480 --height 270 --out small.png
//! ```
//!
//! The weights are fixed: derived from a seed by the same arithmetic on every machine, so
//! every run draws the same picture.

#[allow(dead_code)]
mod common;

use std::path::PathBuf;

use clap::Parser;
use coopgemm::testing::MlpReference;
use coopgemm::{LayerWeights, Mlp, MlpActivation, MlpDesc, MlpKernel, MlpLayout};
use half::f16;

#[derive(Parser, Debug)]
#[command(about = "Draws a picture with a coordinate network on every network kernel (coopgemm)")]
struct Args {
    /// Width in pixels.
    #[arg(long, default_value_t = 1920)]
    width: u32,
    /// Height in pixels.
    #[arg(long, default_value_t = 1080)]
    height: u32,
    /// The PNG to write.
    #[arg(long, default_value = "picture.png")]
    out: PathBuf,
    /// The weights' seed (another seed, another picture).
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

/// Frequencies of the position encoding: sin and cos of 2^f·π·x and of 2^f·π·y each.
const FREQUENCIES: u32 = 3;
const ENCODED: u32 = 4 * FREQUENCIES;
const HIDDEN: u32 = 64;

fn network() -> MlpDesc {
    MlpDesc::new(ENCODED)
        .layer(HIDDEN, MlpActivation::Silu)
        .layer(HIDDEN, MlpActivation::Silu)
        .layer(HIDDEN, MlpActivation::Silu)
        .layer(3, MlpActivation::Sigmoid)
}

/// Uniform numbers in [-1, 1) from a seed (splitmix64), the same on every machine.
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// Each layer's weights and biases: uniform, scaled by the layer's fan-in so that the
/// activations neither vanish nor saturate (a colourful picture rather than a flat one).
fn weights(desc: &MlpDesc, seed: u64) -> Vec<LayerWeights> {
    let mut numbers = Numbers(seed);
    (0..desc.layers())
        .map(|layer| {
            let (inputs, outputs) = (desc.widths()[layer], desc.widths()[layer + 1]);
            let scale = 3.0 / (inputs as f32).sqrt();
            let w: Vec<f32> = (0..inputs * outputs)
                .map(|_| numbers.next() * scale)
                .collect();
            let b: Vec<f32> = (0..outputs).map(|_| numbers.next() * 0.5).collect();
            LayerWeights::from_f32(&w, &b)
        })
        .collect()
}

/// Row `y * width + x`: the pixel's centre in [-1, 1]², encoded.
fn encode(width: u32, height: u32) -> Vec<f16> {
    let mut rows = Vec::with_capacity((width * height * ENCODED) as usize);
    for y in 0..height {
        for x in 0..width {
            let u = (x as f32 + 0.5) / width as f32 * 2.0 - 1.0;
            let v = (y as f32 + 0.5) / height as f32 * 2.0 - 1.0;
            for f in 0..FREQUENCIES {
                let k = std::f32::consts::PI * (1 << f) as f32;
                for value in [(k * u).sin(), (k * u).cos(), (k * v).sin(), (k * v).cos()] {
                    rows.push(f16::from_f32(value));
                }
            }
        }
    }
    rows
}

/// The rows to check against the reference: every 97th, and the first and last image rows.
fn sample_rows(width: u32, height: u32) -> Vec<u32> {
    let pixels = width * height;
    let mut rows: Vec<u32> = (0..pixels).step_by(97).collect();
    rows.extend(0..width.min(pixels));
    rows.extend(pixels.saturating_sub(width)..pixels);
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// The most a sampled colour value may differ from the f64 reference: one 8-bit
/// colour step. Tighter than the reference's own bound, which covers every rounding of
/// the hidden layers at its worst; this is what a person could see.
const PICTURE_TOLERANCE: f64 = 1.0 / 255.0;

/// Whether `output` (3 f32 per pixel) matches the reference on the sampled rows (within the
/// reference's error bound and within [`PICTURE_TOLERANCE`]), and the largest difference.
fn verify(mlp: &Mlp, input: &[f16], output: &[f32], rows: &[u32]) -> (bool, f64) {
    let desc = mlp.desc();
    let gather = |data: &[f16], width: u32| -> Vec<f16> {
        rows.iter()
            .flat_map(|&r| {
                let start = (r * width) as usize;
                data[start..start + width as usize].iter().copied()
            })
            .collect()
    };
    let sampled_input = gather(input, desc.input_width());
    let sampled_output: Vec<f32> = rows
        .iter()
        .flat_map(|&r| {
            output[(r * 3) as usize..(r * 3 + 3) as usize]
                .iter()
                .copied()
        })
        .collect();
    let layout = MlpLayout::new(desc, rows.len() as u32);
    let reference = MlpReference::compute(
        desc,
        mlp.weights(),
        &layout,
        &sampled_input,
        &vec![0.0f32; sampled_output.len()],
    )
    .expect("reference");
    let comparison = reference.compare(&sampled_output);
    let largest = reference
        .expected
        .iter()
        .zip(&sampled_output)
        .map(|(want, got)| (want - *got as f64).abs())
        .fold(0.0, f64::max);
    (comparison.passed() && largest <= PICTURE_TOLERANCE, largest)
}

/// A PNG of 8-bit RGB pixels, its image data in stored (uncompressed) deflate blocks: no
/// compression library needed, at the cost of the file's size.
fn png(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &byte in bytes {
            crc ^= byte as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend(kind);
        out.extend(data);
        let crc = crc32(&out[start..]);
        out.extend(crc.to_be_bytes());
    }
    // Scanlines, each with filter type 0.
    let mut raw = Vec::with_capacity((height * (1 + 3 * width)) as usize);
    for row in rgb.chunks((3 * width) as usize) {
        raw.push(0);
        raw.extend(row);
    }
    // zlib: header, stored blocks of at most 65535 bytes, Adler-32.
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (index, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(index + 1 == blocks.len()));
        let length = block.len() as u16;
        zlib.extend(length.to_le_bytes());
        zlib.extend((!length).to_le_bytes());
        zlib.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + byte as u32) % 65521;
        b = (b + a) % 65521;
    }
    zlib.extend(((b << 16) | a).to_be_bytes());

    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, filter 0, no interlace
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn main() {
    env_logger::init();
    let args = Args::parse();
    if args.width == 0 || args.height == 0 {
        eprintln!("width and height must be at least 1");
        std::process::exit(2);
    }
    let context = common::open::open_context();
    println!("adapter: {}", context.adapter_info().name);
    let desc = network();
    let mlp = context
        .build_mlp(&desc, &weights(&desc, args.seed))
        .expect("the network builds");
    let input = encode(args.width, args.height);
    let rows = sample_rows(args.width, args.height);

    let mut images: Vec<(MlpKernel, Vec<f32>)> = Vec::new();
    let mut all_verified = true;
    for kernel in MlpKernel::ALL {
        let forced = mlp.with_kernel(Some(kernel));
        let started = std::time::Instant::now();
        let output: Vec<f32> = match context.evaluate_mlp::<f16, f32>(&forced, &input) {
            Ok(output) => output,
            Err(e) => {
                println!("{kernel}: not run here ({e})");
                continue;
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        let (verified, largest) = verify(&forced, &input, &output, &rows);
        all_verified &= verified;
        println!(
            "{kernel}: {}x{} pixels in {:.1} ms (upload, run and download), {} of {} sampled pixels checked: {} (largest difference from the reference {largest:.1e})",
            args.width,
            args.height,
            seconds * 1e3,
            rows.len(),
            args.width * args.height,
            if verified { "verified" } else { "WRONG" }
        );
        images.push((kernel, output));
    }
    let Some((first_kernel, first)) = images.first() else {
        eprintln!("no network kernel ran");
        std::process::exit(1);
    };
    for (kernel, image) in &images[1..] {
        let largest = first
            .iter()
            .zip(image)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!("{kernel} against {first_kernel}: largest difference {largest:.2e} (colour values 0..1)");
    }
    let rgb: Vec<u8> = first
        .iter()
        .map(|&c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)
        .collect();
    std::fs::write(&args.out, png(args.width, args.height, &rgb)).expect("write the PNG");
    println!("wrote {} ({first_kernel})", args.out.display());
    if !all_verified {
        std::process::exit(1);
    }
}
