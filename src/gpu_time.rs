//! [`Context::time_on_gpu`]: the GPU time of GEMM runs, from timestamps around each
//! dispatch (wgpu's query set for wgpu passes, the cooperative-matrix backend's own for raw
//! Vulkan dispatches).

use std::time::Duration;

use crate::bindings::GemmBuffers;
use crate::context::Context;
use crate::error::Result;
use crate::mlp::{Mlp, MlpBuffers};
use crate::problem::Gemm;
use crate::timing::{self, GpuTimer};

impl Context {
    /// Runs `gemm` `runs` times back to back and returns the GPU time of each run: the sum of
    /// the times its dispatches took (the kernel, and split-K's reduction where the GEMM is
    /// split), from timestamps written right before and after each dispatch, inside its own
    /// pass or command buffer. Unlike wall-clock time, this leaves out the host's submission
    /// work and the queue's gaps between command buffers. The kernel is prepared (built,
    /// and autotuned where that is on) before the first timed run.
    ///
    /// `Ok(None)` where the device has no timestamp queries (`wgpu::Features::TIMESTAMP_QUERY`,
    /// which coopgemm's own devices enable when the adapter has it; a caller's device needs
    /// it enabled too). Timings run one at a time on a context; GEMMs that other threads
    /// record on it meanwhile are counted in too.
    ///
    /// ```
    /// use coopgemm::{Context, Gemm, GemmBuffers};
    /// let context = Context::new_blocking()?;
    /// let gemm = Gemm::new(64, 64, 64);
    /// let a = context.upload("A", &vec![1.0f32; 64 * 64])?;
    /// let b = context.upload("B", &vec![1.0f32; 64 * 64])?;
    /// let c = context.upload("C", &vec![0.0f32; 64 * 64])?;
    /// if let Some(times) = context.time_on_gpu(&gemm, &GemmBuffers::new(&a, &b, &c), 3)? {
    ///     assert_eq!(times.len(), 3);
    /// }
    /// # Ok::<(), coopgemm::Error>(())
    /// ```
    ///
    /// On wasm32 always `Ok(None)`: timing waits for the GPU, which the browser's thread may
    /// not.
    pub fn time_on_gpu(
        &self,
        gemm: &Gemm,
        buffers: &GemmBuffers<'_>,
        runs: usize,
    ) -> Result<Option<Vec<Duration>>> {
        self.time_runs_on_gpu(
            runs,
            || self.prepare(gemm).map(drop),
            || self.run(gemm, buffers).map(drop),
        )
    }

    /// Runs `mlp` on `buffers` `runs` times back to back and returns the GPU time of each
    /// run (its dispatch, from timestamps written right before and after it), as
    /// [`Context::time_on_gpu`] does for GEMMs. `Ok(None)` where the device has no timestamp
    /// queries, and on wasm32.
    pub fn time_mlp_on_gpu(
        &self,
        mlp: &Mlp,
        buffers: &MlpBuffers<'_>,
        runs: usize,
    ) -> Result<Option<Vec<Duration>>> {
        // An untimed first run builds the pipeline.
        let run = || self.run_mlp(mlp, buffers).map(drop);
        self.time_runs_on_gpu(runs, run, run)
    }

    /// The GPU time of each of `runs` calls of `run` (each records and submits one run),
    /// from the timestamps their dispatches claim, after `prepare`.
    fn time_runs_on_gpu(
        &self,
        runs: usize,
        prepare: impl FnOnce() -> Result<()>,
        mut run: impl FnMut() -> Result<()>,
    ) -> Result<Option<Vec<Duration>>> {
        let Some((timer, timing)) = self.timer().filter(|_| !cfg!(target_arch = "wasm32")) else {
            return Ok(None);
        };
        prepare()?;
        let _one_at_a_time = timing.lock().unwrap_or_else(|e| e.into_inner());
        let period_ns = self.queue().get_timestamp_period() as f64;
        // A run stamps one or two dispatches (two when split); rounds leave room for four.
        let runs_per_round = (timing::PAIRS as usize / 4).max(1);
        let mut times = Vec::with_capacity(runs);
        while times.len() < runs {
            let round = runs_per_round.min(runs - times.len());
            timer.start();
            let submitted = (0..round).try_for_each(|index| {
                timer.set_run(index);
                run()
            });
            let claimed = timer.finish();
            submitted?;
            self.wait()?;
            if claimed.incomplete {
                return Ok(None);
            }
            let mut pairs = self.read_wgpu_timestamps(timer, &claimed.wgpu)?;
            if !claimed.raw.is_empty() {
                let ticks = self.raw_timestamps(claimed.raw.len() as u32)?;
                pairs.extend(claimed.raw.iter().copied().zip(ticks));
            }
            let round_times = timing::sum_per_run(round, &pairs, period_ns);
            log::debug!("GPU time of {round} runs: {round_times:?}");
            times.extend(round_times);
        }
        Ok(Some(times))
    }

    /// (run, [begin, end]) of the first `runs_of_pairs.len()` pairs of the wgpu query set.
    fn read_wgpu_timestamps(
        &self,
        timer: &GpuTimer,
        runs_of_pairs: &[usize],
    ) -> Result<Vec<(usize, [u64; 2])>> {
        if runs_of_pairs.is_empty() {
            return Ok(Vec::new());
        }
        let queries = 2 * runs_of_pairs.len() as u32;
        let resolved = self.create_buffer(
            "coopgemm timestamps",
            queries as u64 * 8,
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        )?;
        let mut encoder = self.device().create_command_encoder(&Default::default());
        encoder.resolve_query_set(timer.query_set(), 0..queries, &resolved, 0);
        self.queue().submit([encoder.finish()]);
        // Each u64 tick as two little-endian 32-bit words.
        let words: Vec<i32> = pollster::block_on(self.download(&resolved, 2 * queries as usize))?;
        let tick = |query: usize| {
            words[2 * query] as u32 as u64 | (words[2 * query + 1] as u32 as u64) << 32
        };
        Ok(runs_of_pairs
            .iter()
            .enumerate()
            .map(|(pair, &run)| (run, [tick(2 * pair), tick(2 * pair + 1)]))
            .collect())
    }
}
