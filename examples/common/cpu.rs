//! The bench's CPU baseline (`matrixmultiply`'s sgemm on one thread and on all cores) and the
//! measurement record every timed case fills in.

use std::time::Instant;

use coopgemm::testing::Reference;
use coopgemm::Gemm;
use indicatif::ProgressBar;

/// One timed case: its configuration, median time and verification.
pub struct Measurement {
    pub config: String,
    pub median_seconds: f64,
    pub timing: String,
    /// With `--wall-clock`: the median host time a GEMM's `Context::run` took to return
    /// (recording and submitting; what the calling thread is blocked for).
    pub host_submit_seconds: Option<f64>,
    pub max_relative_error: f64,
    pub passed: bool,
}

/// Every result is verified on full-mantissa data: products and sums rounded to a narrower
/// type than the GEMM promises would miss the reference's tolerance (exact-product data
/// would hide them, and report an error of 0).
pub const DATA: coopgemm::testing::SampleData = coopgemm::testing::SampleData::FullMantissa;

/// `c = a * b` for row-major `a` (rows × k), `b` (k × n) and `c` (rows × n) on this thread.
fn sgemm_rows(rows: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() >= rows * k && b.len() >= k * n && c.len() >= rows * n);
    // SAFETY: by the assert, every element sgemm addresses with these sizes and row-major
    // strides lies inside the slices; `c` is borrowed mutably, so it aliases neither input.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}

/// `c = a * b` (row-major m × k times k × n) with the rows of C split over `threads` threads.
fn cpu_gemm(threads: usize, (m, n, k): (usize, usize, usize), a: &[f32], b: &[f32], c: &mut [f32]) {
    if threads <= 1 || m == 0 || n == 0 {
        return sgemm_rows(m, n, k, a, b, c);
    }
    let rows_per_thread = m.div_ceil(threads);
    std::thread::scope(|scope| {
        for (index, c_rows) in c.chunks_mut(rows_per_thread * n).enumerate() {
            let rows = c_rows.len() / n;
            let a_rows = &a[index * rows_per_thread * k..][..rows * k];
            scope.spawn(move || sgemm_rows(rows, n, k, a_rows, b, c_rows));
        }
    });
}

/// Longest a CPU configuration is timed for once it has three samples.
const CPU_SECONDS: f64 = 5.0;

/// The CPU baseline at one shape: `matrixmultiply::sgemm` on one thread and on all cores,
/// each the median of up to `runs` calls after one warm-up call; the faster one, verified.
/// `bar`'s message follows the runs.
pub fn measure_cpu(
    (m, n, k): (u32, u32, u32),
    runs: usize,
    bar: &ProgressBar,
) -> Result<Measurement, coopgemm::Error> {
    let gemm = Gemm::new(m, n, k);
    let resolved = gemm.resolve()?;
    let shape = (m as usize, n as usize, k as usize);
    let a: Vec<f32> =
        coopgemm::testing::sample_data(DATA, resolved.a.required_elements() as usize, 1);
    let b: Vec<f32> =
        coopgemm::testing::sample_data(DATA, resolved.b.required_elements() as usize, 2);
    let mut c = vec![0.0f32; resolved.c.required_elements() as usize];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut timed = Vec::new();
    for threads in [1, cores].into_iter().take(if cores > 1 { 2 } else { 1 }) {
        cpu_gemm(threads, shape, &a, &b, &mut c);
        let started = Instant::now();
        let mut seconds = Vec::new();
        while seconds.len() < runs
            && (seconds.len() < 3 || started.elapsed().as_secs_f64() < CPU_SECONDS)
        {
            bar.set_message(format!(
                "{m}x{n}x{k} f32 on the CPU, {threads} thread(s): run {} of up to {runs}",
                seconds.len() + 1
            ));
            let run = Instant::now();
            cpu_gemm(threads, shape, &a, &b, &mut c);
            seconds.push(run.elapsed().as_secs_f64());
        }
        seconds.sort_by(f64::total_cmp);
        timed.push((threads, seconds[seconds.len() / 2]));
    }
    let &(threads, median_seconds) = timed
        .iter()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .ok_or_else(|| coopgemm::Error::Device("no CPU timing".into()))?;
    // Verify the faster configuration's own result.
    bar.set_message(format!(
        "{m}x{n}x{k} f32 on the CPU: checking against the reference"
    ));
    cpu_gemm(threads, shape, &a, &b, &mut c);
    let zeros = vec![0.0f32; c.len()];
    let reference = if gemm.flops() / 2.0 <= 512.0 * 512.0 * 512.0 {
        Reference::compute(&resolved, &a, &b, &zeros)?
    } else {
        Reference::sampled(&resolved, &a, &b, &zeros, 1024)?
    };
    let comparison = reference.compare(&c);
    let others: Vec<String> = timed
        .iter()
        .filter(|(t, _)| *t != threads)
        .map(|(t, s)| format!("threads={t}: {:.1} GFLOP/s", gemm.flops() / s / 1e9))
        .collect();
    Ok(Measurement {
        config: format!(
            "sgemm threads={threads}{}{}",
            if threads > 1 { " (rows split)" } else { "" },
            if others.is_empty() {
                String::new()
            } else {
                format!("; {}", others.join(", "))
            }
        ),
        median_seconds,
        timing: "wall-clock".into(),
        host_submit_seconds: None,
        max_relative_error: comparison.max_relative_error,
        passed: comparison.passed(),
    })
}
