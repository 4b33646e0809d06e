//! GPU time of GEMMs from timestamp queries written around each of their dispatches
//! ([`Context::time_on_gpu`](crate::Context::time_on_gpu)).
//!
//! While a timing is under way, every dispatch a backend records for a GEMM (the kernel,
//! and split-K's reduction) claims a pair of timestamps, written right before and right
//! after it in the same pass or command buffer: wgpu passes (the SIMT kernel, the split-K
//! reduction) through `wgpu::ComputePassTimestampWrites` into one `wgpu::QuerySet`, the
//! cooperative-matrix kernel with `vkCmdWriteTimestamp` into a Vulkan query pool of its own
//! (`vulkan::dispatch`), inside the raw command buffer that holds the dispatch. Both count
//! ticks of the same queue's clock. A run's GPU time is the sum of its dispatches' times:
//! what the kernels took, without the time the queue spends between command buffers.
//!
//! Stamps taken in separate command buffers around a GEMM were tried first and came out
//! up to 4x too long on the H100; stamps inside the dispatch's own pass do not have that
//! problem.

use std::sync::Mutex;
use std::time::Duration;

/// Timestamp pairs a timing can claim per kind of pass (wgpu, raw Vulkan) before it reads
/// them back; [`Context::time_on_gpu`](crate::Context::time_on_gpu) times long series in
/// rounds of at most this many runs' dispatches.
pub(crate) const PAIRS: u32 = 512;

/// The wgpu query set and the bookkeeping of one timing at a time.
#[derive(Debug)]
pub(crate) struct GpuTimer {
    queries: wgpu::QuerySet,
    state: Mutex<TimerState>,
}

#[derive(Debug, Default)]
struct TimerState {
    /// The run that dispatches recorded now belong to, while a timing is under way.
    run: Option<usize>,
    /// The run of each claimed pair, in claim order (pair i = queries 2i and 2i + 1).
    wgpu_pairs: Vec<usize>,
    raw_pairs: Vec<usize>,
    /// A dispatch recorded during the timing could not be stamped (pairs exhausted, or no
    /// timestamps on the raw path): the runs' sums would be short.
    incomplete: bool,
}

/// The pairs one timing claimed: each pair's run, per kind of pass.
#[derive(Debug)]
pub(crate) struct ClaimedPairs {
    pub(crate) wgpu: Vec<usize>,
    pub(crate) raw: Vec<usize>,
    pub(crate) incomplete: bool,
}

impl GpuTimer {
    /// The timer of `device`, or `None` where it has no timestamp queries.
    pub(crate) fn new(device: &wgpu::Device) -> Option<GpuTimer> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("coopgemm timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * PAIRS,
        });
        Some(GpuTimer {
            queries,
            state: Mutex::new(TimerState::default()),
        })
    }

    pub(crate) fn query_set(&self) -> &wgpu::QuerySet {
        &self.queries
    }

    fn with_state<R>(&self, f: impl FnOnce(&mut TimerState) -> R) -> R {
        // A panic while the lock was held cannot leave the plain data inconsistent.
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut state)
    }

    /// Starts a timing; later dispatches count towards `run` (see [`GpuTimer::set_run`]).
    pub(crate) fn start(&self) {
        self.with_state(|state| *state = TimerState::default());
        self.set_run(0);
    }

    /// Counts the dispatches recorded from now on towards `run`.
    pub(crate) fn set_run(&self, run: usize) {
        self.with_state(|state| state.run = Some(run));
    }

    /// Ends the timing and says which pairs it claimed.
    pub(crate) fn finish(&self) -> ClaimedPairs {
        self.with_state(|state| {
            let state = std::mem::take(state);
            ClaimedPairs {
                wgpu: state.wgpu_pairs,
                raw: state.raw_pairs,
                incomplete: state.incomplete,
            }
        })
    }

    /// Claims a pair for a dispatch; `raw` picks the Vulkan pool. `None` outside a timing,
    /// and when the pairs are used up (then the timing is marked incomplete).
    fn claim(&self, raw: bool) -> Option<u32> {
        self.with_state(|state| {
            let run = state.run?;
            let pairs = if raw {
                &mut state.raw_pairs
            } else {
                &mut state.wgpu_pairs
            };
            if pairs.len() as u32 >= PAIRS {
                state.incomplete = true;
                return None;
            }
            pairs.push(run);
            Some(pairs.len() as u32 - 1)
        })
    }

    /// Timestamp writes for a wgpu compute pass that holds one dispatch of a GEMM, while a
    /// timing is under way.
    pub(crate) fn pass_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let pair = self.claim(false)?;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * pair),
            end_of_pass_write_index: Some(2 * pair + 1),
        })
    }

    /// The pair (queries 2i and 2i + 1 of the Vulkan pool) for a raw dispatch, while a
    /// timing is under way; `available` is whether the raw path can write timestamps.
    /// (Only the raw-Vulkan backend calls it, which is not built everywhere.)
    #[cfg_attr(not(vulkan_interop), allow(dead_code))]
    pub(crate) fn claim_raw(&self, available: bool) -> Option<u32> {
        if !available {
            self.with_state(|state| state.incomplete |= state.run.is_some());
            return None;
        }
        self.claim(true)
    }
}

/// Sums each run's dispatch times: `pairs` holds (run, [begin, end]) per stamped dispatch,
/// in ticks of `period_ns` nanoseconds.
pub(crate) fn sum_per_run(
    runs: usize,
    pairs: &[(usize, [u64; 2])],
    period_ns: f64,
) -> Vec<Duration> {
    let mut ticks = vec![0u64; runs];
    for &(run, [begin, end]) in pairs {
        if let Some(total) = ticks.get_mut(run) {
            *total = total.saturating_add(end.saturating_sub(begin));
        }
    }
    ticks
        .into_iter()
        .map(|t| Duration::from_secs_f64(t as f64 * period_ns * 1e-9))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_dispatch_times_per_run() {
        let pairs = [
            (0, [100, 150]),
            (1, [200, 260]),
            (0, [150, 170]),
            (1, [300, 340]),
        ];
        let sums = sum_per_run(2, &pairs, 2.0);
        assert_eq!(
            sums,
            vec![Duration::from_nanos(140), Duration::from_nanos(200)]
        );
    }
}
