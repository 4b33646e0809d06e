//! Warming the GPU up before a case is timed. The GPU's clock governor lowers the clocks
//! while the GPU idles (here: while the CPU prepares a case's data and its reference) and
//! raises them again only after about a second of load. On the H100 the SM clock sat at
//! 675-750 MHz, not 1980, for 1.5 s after a few seconds idle (nvidia-smi every 100 ms,
//! `examples/results/h100-2026-11-27-clocks/`), and a network timed there after four
//! warm-up runs took 3 to 4x its steady time. So a case runs back to back, in batches of
//! about 50 ms, until two batches in a row agree and at least half a second has passed.

use std::time::Instant;

/// Warm-up lasts at least this long...
const MIN_SECONDS: f64 = 0.5;
/// ...and ends at the latest after this long, steady or not.
const MAX_SECONDS: f64 = 4.0;
/// Two batches agree when their time per run differs by at most this fraction.
const STEADY: f64 = 0.03;
/// The length a batch aims at (and the benchmarks' timed samples).
pub const BATCH_SECONDS: f64 = 0.05;

/// Runs `run` back to back, `wait`ing after each batch, until the time per run is steady
/// (or [`MAX_SECONDS`] have passed); returns the last batch's seconds per run (a wait
/// included: an overestimate).
pub fn until_steady<E>(
    mut run: impl FnMut() -> Result<(), E>,
    mut wait: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    let started = Instant::now();
    let mut batch = 1_usize;
    let mut previous: Option<f64> = None;
    loop {
        let batch_started = Instant::now();
        for _ in 0..batch {
            run()?;
        }
        wait()?;
        let per_run = batch_started.elapsed().as_secs_f64().max(1e-7) / batch as f64;
        let elapsed = started.elapsed().as_secs_f64();
        let steady = previous.is_some_and(|p| (per_run - p).abs() <= STEADY * p);
        if (elapsed >= MIN_SECONDS && steady) || elapsed >= MAX_SECONDS {
            return Ok(per_run);
        }
        previous = Some(per_run);
        batch = ((BATCH_SECONDS / per_run) as usize).clamp(1, 4096);
    }
}
