//! Draws bench records (`bench --json`) as an SVG chart: TFLOP/s per shape and types, one bar
//! per backend and kernel family with the reference (e.g. cuBLAS measured in the same call)
//! beside it, and for decode-like shapes (M ≤ 64, bound by memory, not arithmetic) the GB/s
//! they move against the memory's bandwidth.
//!
//! ```text
//! cargo run --example plot -- examples/results/h100-2026-11-25-session11/final/bench-tc.json \
//!     examples/results/h100-2026-11-25-session11/final/bench-i8.json --out chart.svg
//! ```
//! A folder given as input stands for every `*.json` in it. Reference files are the
//! `*cublas*.txt` files beside the inputs unless `--reference` names others (or
//! `--no-reference`); their lines are those `bench --reference` reads. A record's own
//! `reference_tflops` is used where no file has the case. Records that did not match the CPU
//! reference are left out. Where several records fall on one bar (the same shape, types,
//! backend, kernel family, B layout and timing), the fastest is drawn.
//!
//! Only plotters' SVG backend is used: no font or system library is needed (text is laid out
//! with estimated widths and drawn by whatever shows the SVG).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::Parser;
use coopgemm::GemmTypes;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

#[allow(dead_code)]
mod common;
use common::record::{self, BenchRecord};
use common::reference::{self as anchors, ReferenceEntry};

/// Draws bench records as an SVG chart: TFLOP/s per shape with the reference beside it, and
/// GB/s of decode-like shapes against the memory's bandwidth.
#[derive(Parser, Debug)]
#[command(name = "plot", version)]
struct Args {
    /// Bench JSON files, or folders (every *.json in them)
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The SVG to write
    #[arg(long, short, value_name = "FILE", default_value = "chart.svg")]
    out: PathBuf,
    /// Reference files (lines like `cublas fp16  4096x4096x4096:  652.3 TFLOP/s`)
    /// [default: the *cublas*.txt files beside the inputs]
    #[arg(long, value_name = "FILE", conflicts_with = "no_reference")]
    reference: Vec<PathBuf>,
    /// No reference bars
    #[arg(long)]
    no_reference: bool,
    /// The memory's bandwidth in GB/s, drawn as a line over the decode shapes (H100 SXM,
    /// HBM3: 3350)
    #[arg(long, value_name = "GB/S", default_value_t = 3350.0)]
    bandwidth_gbs: f64,
    /// Shapes with M up to this are decode-like: drawn in GB/s as well
    #[arg(long, value_name = "M", default_value_t = 64)]
    decode_max_m: u32,
    /// Records with this timing only: gpu-timestamps, wall-clock or all
    #[arg(long, default_value = "all")]
    timing: String,
    /// The chart's title [default: the adapter's name]
    #[arg(long)]
    title: Option<String>,
    /// Width of the SVG in pixels
    #[arg(long, default_value_t = 1400)]
    width: u32,
}

/// The JSON files an input stands for.
fn json_files(input: &Path) -> Result<Vec<PathBuf>, String> {
    if !input.is_dir() {
        return Ok(vec![input.to_path_buf()]);
    }
    files_in(input, |name| name.ends_with(".json"))
}

/// The files in `folder` whose name passes `keep`, sorted.
fn files_in(folder: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.is_file() && path.file_name().is_some_and(|n| keep(&n.to_string_lossy()))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The default reference files: `*cublas*.txt` beside (or in) each input.
fn references_beside(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for input in inputs {
        let folder = if input.is_dir() {
            input.as_path()
        } else {
            input.parent().unwrap_or(Path::new("."))
        };
        let folder = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        };
        for file in files_in(folder, |name| {
            name.contains("cublas") && name.ends_with(".txt")
        })? {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    Ok(files)
}

/// A bar's series: the backend, or the kernel family where the configuration names one
/// (`coopmat2-f16-...` is the VK_NV_cooperative_matrix2 kernel, `coopmat-f16-...` the KHR
/// one), then the B layout and timing where they are not the usual ones.
fn series_of(record: &BenchRecord) -> String {
    let family = record
        .config
        .split('-')
        .next()
        .filter(|token| token.starts_with(&record.backend))
        .unwrap_or(&record.backend);
    let mut name = family.to_string();
    if record.b_layout != "row" {
        name.push_str(&format!(", B {}", record.b_layout));
    }
    if record.timing == "wall-clock" {
        name.push_str(", wall clock");
    }
    name
}

/// One group of bars: a shape with its types.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Group {
    dtype: String,
    shape: (u32, u32, u32),
}

impl Group {
    fn label(&self) -> String {
        let (m, n, k) = self.shape;
        format!("{} {m}x{n}x{k}", self.dtype)
    }

    /// Bytes a GEMM of this group reads and writes at least: A, B and C once each.
    fn bytes(&self) -> Option<f64> {
        let types = GemmTypes::parse(&self.dtype)?;
        let (m, n, k) = self.shape;
        let (m, n, k) = (f64::from(m), f64::from(n), f64::from(k));
        let input = types.input.size_bytes() as f64;
        let output = types.output.size_bytes() as f64;
        Some((m * k + k * n) * input + m * n * output)
    }

    fn flops(&self) -> f64 {
        let (m, n, k) = self.shape;
        2.0 * f64::from(m) * f64::from(n) * f64::from(k)
    }
}

/// Bars by group and series, in the order they first appear.
#[derive(Default)]
struct Bars {
    groups: Vec<Group>,
    series: Vec<String>,
    /// TFLOP/s by (group, series) index.
    tflops: HashMap<(usize, usize), f64>,
    /// The series that are references (drawn in grey).
    references: Vec<usize>,
}

impl Bars {
    fn add(&mut self, group: Group, series: String, tflops: f64) {
        let g = index_of(&mut self.groups, group);
        let s = index_of(&mut self.series, series);
        let bar = self.tflops.entry((g, s)).or_insert(tflops);
        *bar = bar.max(tflops);
    }

    /// The bars of group `g`, as (series index, TFLOP/s) in series order.
    fn in_group(&self, g: usize) -> Vec<(usize, f64)> {
        (0..self.series.len())
            .filter_map(|s| self.tflops.get(&(g, s)).map(|&v| (s, v)))
            .collect()
    }
}

fn index_of<T: PartialEq>(list: &mut Vec<T>, item: T) -> usize {
    match list.iter().position(|known| *known == item) {
        Some(index) => index,
        None => {
            list.push(item);
            list.len() - 1
        }
    }
}

/// The bars the records and reference entries make; the reference series is named by its
/// lines' first word (e.g. `cublas`).
fn collect(records: &[BenchRecord], reference: &[ReferenceEntry]) -> Bars {
    let mut bars = Bars::default();
    for record in records {
        let Some(gflops) = record.gflops else {
            continue;
        };
        let group = Group {
            dtype: record.dtype.clone(),
            shape: (record.m, record.n, record.k),
        };
        bars.add(group, series_of(record), gflops / 1e3);
    }
    // The reference after every backend, so that its bar stands last in each group.
    for g in 0..bars.groups.len() {
        let group = bars.groups[g].clone();
        let from_file = GemmTypes::parse(&group.dtype)
            .and_then(|types| anchors::find(reference, types, group.shape))
            .map(|entry| {
                let name = entry.label.split_whitespace().next().unwrap_or("reference");
                (name.to_string(), entry.tflops)
            });
        let from_record = || {
            records
                .iter()
                .filter(|r| r.dtype == group.dtype && (r.m, r.n, r.k) == group.shape)
                .find_map(|r| r.reference_tflops)
                .map(|tflops| ("reference".to_string(), tflops))
        };
        if let Some((name, tflops)) = from_file.or_else(from_record) {
            bars.add(group, name.clone(), tflops);
            let series = index_of(&mut bars.series, name);
            if !bars.references.contains(&series) {
                bars.references.push(series);
            }
        }
    }
    bars
}

const MARGIN: u32 = 12;
const LABEL_AREA: u32 = 150;

fn color(series: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
    ];
    COLORS[series % COLORS.len()]
}

/// The reference's bars are dark grey, the backends' in colour.
fn bar_color(bars: &Bars, series: usize) -> RGBColor {
    if bars.references.contains(&series) {
        RGBColor(80, 80, 80)
    } else {
        color(series)
    }
}

type DrawError = Box<dyn std::error::Error>;

/// One panel: grouped bars of `value(group, TFLOP/s)` per group, optionally a horizontal
/// line (`ceiling`: value and label).
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    bars: &Bars,
    groups: &[usize],
    caption: &str,
    y_label: &str,
    value: impl Fn(&Group, f64) -> f64,
    ceiling: Option<(f64, String)>,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let mut top: f64 = 0.0;
    for &g in groups {
        for (_, tflops) in bars.in_group(g) {
            top = top.max(value(&bars.groups[g], tflops));
        }
    }
    if let Some((line, _)) = &ceiling {
        top = top.max(*line);
    }
    let top = if top > 0.0 { top * 1.12 } else { 1.0 };
    let count = groups.len();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 20))
        .margin(MARGIN)
        .x_label_area_size(LABEL_AREA)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..count as f64, 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_max_light_lines(1)
        .x_labels(0)
        .y_desc(y_label)
        .y_label_style(("sans-serif", 13))
        .draw()?;
    // The groups' names under their bars, turned to read downwards: the mesh labels only
    // numbers, and these are categories.
    let label_style = TextStyle::from(
        ("sans-serif", 13)
            .into_font()
            .transform(FontTransform::Rotate90),
    )
    .pos(Pos::new(HPos::Left, VPos::Center));
    let (base_x, base_y) = area.get_base_pixel();
    for (slot, &g) in groups.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(slot as f64 + 0.5, 0.0));
        area.draw(&Text::new(
            bars.groups[g].label(),
            (x - base_x, y - base_y + 6),
            label_style.clone(),
        ))?;
    }
    // Every series' bars, series by series so that each gets one legend entry.
    for series in 0..bars.series.len() {
        let mut rectangles = Vec::new();
        for (slot, &g) in groups.iter().enumerate() {
            let in_group = bars.in_group(g);
            let Some(position) = in_group.iter().position(|&(s, _)| s == series) else {
                continue;
            };
            let width = 0.8 / in_group.len() as f64;
            let left = slot as f64 + 0.1 + width * position as f64;
            let height = value(&bars.groups[g], in_group[position].1);
            rectangles.push([(left, 0.0), (left + width * 0.92, height)]);
        }
        if rectangles.is_empty() {
            continue;
        }
        let fill = bar_color(bars, series);
        chart
            .draw_series(
                rectangles
                    .into_iter()
                    .map(|corners| Rectangle::new(corners, fill.filled())),
            )?
            .label(bars.series[series].clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], fill.filled()));
    }
    if let Some((line, label)) = ceiling {
        let stroke = RGBColor(200, 0, 0).stroke_width(2);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, line), (count as f64, line)],
                stroke,
            )))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], stroke));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

fn main() {
    let args: Args = common::cli::parse();
    if let Err(message) = run(&args) {
        eprintln!("error: {message}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), DrawError> {
    if !["all", "gpu-timestamps", "wall-clock"].contains(&args.timing.as_str()) {
        return Err(format!(
            "--timing is gpu-timestamps, wall-clock or all, not {}",
            args.timing
        )
        .into());
    }
    let mut records = Vec::new();
    for input in &args.inputs {
        for file in json_files(input)? {
            records.extend(record::read(&file)?);
        }
    }
    let read = records.len();
    records.retain(|r| r.verified && (args.timing == "all" || r.timing == args.timing));
    let unverified = read - records.len();
    if records.is_empty() {
        return Err("no verified records to draw".into());
    }
    let reference_files = if args.no_reference {
        Vec::new()
    } else if args.reference.is_empty() {
        references_beside(&args.inputs)?
    } else {
        args.reference.clone()
    };
    let mut reference = Vec::new();
    for file in &reference_files {
        reference.extend(anchors::read(file)?);
    }
    let bars = collect(&records, &reference);
    let all: Vec<usize> = (0..bars.groups.len()).collect();
    let decode: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&g| {
            bars.groups[g].shape.0 <= args.decode_max_m && bars.groups[g].bytes().is_some()
        })
        .collect();
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("coopgemm bench: {}", records[0].adapter));
    let panel_height = 620;
    let height = if decode.is_empty() {
        panel_height
    } else {
        2 * panel_height
    };
    {
        let root = SVGBackend::new(&args.out, (args.width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (upper, lower) = root.split_vertically(panel_height);
        draw_panel(
            &upper,
            &bars,
            &all,
            &title,
            "TFLOP/s",
            |_, tflops| tflops,
            None,
        )?;
        if !decode.is_empty() {
            draw_panel(
                &lower,
                &bars,
                &decode,
                &format!(
                    "decode-like shapes (M ≤ {}): bytes of A, B and C over the time",
                    args.decode_max_m
                ),
                "GB/s",
                |group, tflops| {
                    let seconds = group.flops() / (tflops * 1e12);
                    group.bytes().unwrap_or(0.0) / seconds / 1e9
                },
                Some((
                    args.bandwidth_gbs,
                    format!("memory bandwidth {} GB/s", args.bandwidth_gbs),
                )),
            )?;
        }
        root.present()?;
    }
    let size = std::fs::metadata(&args.out)?.len();
    println!(
        "{}: {} records ({unverified} unverified or other timing left out), {} groups, {} decode-like, {} series, references from {} file(s), {size} bytes",
        args.out.display(),
        records.len(),
        bars.groups.len(),
        decode.len(),
        bars.series.len(),
        reference_files.len(),
    );
    Ok(())
}
