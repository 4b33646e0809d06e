//! Autotuning: timing every configuration a backend can run a shape class with, and using
//! the fastest from then on, in this process and (through the disk cache directory) in
//! later ones.
//!
//! - When: by default only on request ([`Context::tune`](crate::Context::tune)), so that no
//!   GEMM ever waits for it: a GEMM of a class without a winner runs at once with the
//!   backend's heuristic choice (its first call costs one pipeline build). With
//!   [`AutotuneChoice::OnFirstUse`] the first GEMM of each new class tunes before it runs.
//!   Either way tuning a class stops after the context's time limit
//!   ([`ContextOptions::tuning_time_limit`](crate::ContextOptions)), keeping the best so far
//!   (the heuristic's choice is always timed first).
//! - Shape class: backend, types, each of m, n, k rounded up to a power of two, whether it is
//!   batched, the three operand orders (with B's panel width), and whether an epilogue runs.
//!   GEMMs of one class share a winner.
//! - Timing: on scratch buffers of the GEMM's own shape and layouts (the caller's buffers
//!   are never touched), one warm-up run per candidate, then three rounds over all candidates,
//!   each timing ~2 ms of back-to-back runs from submission to completion; the best round
//!   counts. Descriptions whose scratch would exceed
//!   [`MAX_TUNING_BYTES`] keep the heuristic choice.
//! - Where: `<cache dir>/<adapter key>.tune.bin`, one `class<TAB>config` line per class
//!   (see [`DiskCache`](crate::DiskCache)); off with the disk cache, in memory only.
//! - Switch: [`AutotuneChoice`] in [`ContextOptions`](crate::ContextOptions), or
//!   `COOPGEMM_AUTOTUNE=0|1` (off / on first use).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::backend::{Backend, BackendKind, Target};
use crate::bindings::GemmBuffers;
use crate::disk_cache::{CacheFile, CacheStore};
use crate::error::Result;
use crate::options::AutotuneChoice;
use crate::problem::{Order, ResolvedGemm};

/// Scratch bytes (A, B, C and bias together) above which a class is not tuned.
pub const MAX_TUNING_BYTES: u64 = 512 << 20;
/// Rounds over all candidates after the warm-up.
const TUNING_ROUNDS: usize = 3;
/// How long one timed batch of back-to-back runs should take. Single runs right after the
/// warm-up misjudged the H100 at 4096³ (128x128x8-t8x8 timed 5.5 ms, 4.4 ms steady).
const TUNING_BATCH_SECONDS: f64 = 0.002;
/// Runs per batch at least, however long one run takes: with one run per batch, an 8192³
/// f16 class on the H100 once kept a candidate twice as slow as the best (7.3 vs 3.8 ms).
const MIN_TUNING_BATCH: usize = 3;

/// What the tuner does, after the environment is taken into account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TuningPolicy {
    /// Heuristics only.
    Never,
    /// Winners are used; classes are tuned only by `Context::tune`.
    OnRequest,
    /// New classes are tuned by the first GEMM that needs them.
    OnFirstUse,
}

impl TuningPolicy {
    /// The policy `choice` means here. On wasm32 nothing is ever tuned: tuning times
    /// candidates on the host clock and waits for the GPU, neither of which the browser's
    /// thread may do.
    pub(crate) fn for_choice(choice: AutotuneChoice) -> TuningPolicy {
        if cfg!(target_arch = "wasm32") {
            return TuningPolicy::Never;
        }
        match choice {
            AutotuneChoice::OnFirstUse => TuningPolicy::OnFirstUse,
            AutotuneChoice::Off => TuningPolicy::Never,
            AutotuneChoice::Auto => TuningPolicy::OnRequest,
        }
    }
}

/// The winners so far, and the file they are kept in.
#[derive(Debug)]
pub(crate) struct Tuner {
    policy: TuningPolicy,
    /// How long tuning one class may take (candidates left untimed then are skipped).
    time_limit: Duration,
    winners: Mutex<HashMap<String, Winner>>,
    file: Option<CacheFile>,
}

/// The fastest configuration of one class.
#[derive(Debug, Clone)]
struct Winner {
    config: String,
    /// Whether this process has seen `config` among the class's candidates. Winners read from
    /// disk may come from a process with other overrides (`COOPGEMM_COOPMAT2=0`, forced
    /// tiles) and are checked once, on first use; the class pins down everything else the
    /// candidates depend on, so one check serves every GEMM of the class.
    checked: bool,
}

fn order_name(order: Order) -> String {
    match order {
        Order::RowMajor => "r".into(),
        Order::ColumnMajor => "c".into(),
        Order::ColumnPanels { width } => format!("p{width}"),
    }
}

impl Tuner {
    pub(crate) fn new(
        policy: TuningPolicy,
        time_limit: Duration,
        store: Option<&CacheStore>,
    ) -> Tuner {
        let file = store.map(|store| store.file("tune"));
        let mut winners = HashMap::new();
        if policy != TuningPolicy::Never {
            if let Some(payload) = file.as_ref().and_then(CacheFile::load) {
                for line in String::from_utf8_lossy(&payload).lines() {
                    if let Some((class, config)) = line.split_once('\t') {
                        let config = config.to_string();
                        winners.insert(
                            class.to_string(),
                            Winner {
                                config,
                                checked: false,
                            },
                        );
                    }
                }
            }
        }
        Tuner {
            policy,
            time_limit,
            winners: Mutex::new(winners),
            file,
        }
    }

    /// The class `gemm` belongs to on `backend`.
    pub(crate) fn class(backend: &dyn Backend, gemm: &ResolvedGemm) -> String {
        let g = &gemm.gemm;
        let bucket = |value: u32| value.max(16).next_power_of_two();
        format!(
            "{}|{}|{}x{}x{}|{}|{}{}{}|{}",
            backend.kind(),
            g.types.short_name(),
            bucket(g.m),
            bucket(g.n),
            bucket(g.k),
            if g.batch > 1 { "batched" } else { "single" },
            order_name(gemm.a.order),
            order_name(gemm.b.order),
            order_name(gemm.c.order),
            if g.epilogue.is_identity() {
                "plain"
            } else {
                "epilogue"
            },
        )
    }

    /// The configuration to run `gemm` with on `backend`: a remembered winner, a new one
    /// (timed now, where the policy tunes on first use or `requested`), or `None` for the
    /// backend's own choice.
    pub(crate) fn config_for(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        requested: bool,
    ) -> Result<Option<String>> {
        if self.policy == TuningPolicy::Never || gemm.is_empty() {
            return Ok(None);
        }
        let class = Tuner::class(backend, gemm);
        let known = self
            .winners
            .lock()
            .ok()
            .and_then(|w| w.get(&class).cloned());
        if let Some(Winner {
            config,
            checked: true,
        }) = known
        {
            return Ok(Some(config));
        }
        let candidates = backend.tuning_candidates(gemm);
        if let Some(Winner { config, .. }) = known {
            if candidates.contains(&config) {
                if let Ok(mut winners) = self.winners.lock() {
                    winners.insert(
                        class,
                        Winner {
                            config: config.clone(),
                            checked: true,
                        },
                    );
                }
                return Ok(Some(config));
            }
            log::debug!(
                "autotune {class}: saved winner {config} does not apply here; tuning again"
            );
        }
        if candidates.len() < 2 {
            return Ok(None);
        }
        if !requested && self.policy != TuningPolicy::OnFirstUse {
            // Never make a GEMM wait: the heuristic runs it until someone tunes the class.
            return Ok(None);
        }
        // The heuristic's choice first, so that a time limit never leaves a class worse off.
        let heuristic = backend.prepare(gemm, None)?.config;
        let heuristic = heuristic.split('+').next().unwrap_or_default();
        let mut candidates = candidates;
        if let Some(index) = candidates.iter().position(|c| c == heuristic) {
            let first = candidates.remove(index);
            candidates.insert(0, first);
        }
        let started = Instant::now();
        let deadline = started + self.time_limit;
        let Some(timings) = time_candidates(device, queue, backend, gemm, &candidates, deadline)?
        else {
            return Ok(None);
        };
        let Some((winner, seconds)) = timings.iter().min_by(|a, b| a.1.total_cmp(&b.1)).cloned()
        else {
            return Ok(None);
        };
        log::info!(
            "autotune {class}: {winner} ({:.3} ms; tuned {} of {} candidates in {:.2} s: {})",
            seconds * 1e3,
            timings.len(),
            candidates.len(),
            started.elapsed().as_secs_f64(),
            timings
                .iter()
                .map(|(name, s)| format!("{name} {:.3} ms", s * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.remember(class, winner.clone());
        Ok(Some(winner))
    }
}

impl Tuner {
    /// Which of `backends` runs `gemm` fastest, each with its own configuration for it
    /// (`configs`, as [`Tuner::config_for`] chose): a remembered winner of the class, or one
    /// timed now where the policy tunes on first use or tuning is `requested` (each
    /// backend's configuration timed as [`Tuner::config_for`] times candidates). `None`
    /// when tuning is off, the class is not tuned yet, or the scratch would be too large.
    pub(crate) fn backend_for(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        backends: &[&dyn Backend],
        configs: &[String],
        gemm: &ResolvedGemm,
        requested: bool,
    ) -> Result<Option<BackendKind>> {
        let Some(first) = backends.first() else {
            return Ok(None);
        };
        if self.policy == TuningPolicy::Never || gemm.is_empty() || backends.len() < 2 {
            return Ok(None);
        }
        // The backends' own class, with the backend's name replaced by the set compared.
        let names: Vec<&str> = backends.iter().map(|b| b.kind().name()).collect();
        let class = Tuner::class(*first, gemm).replacen(
            first.kind().name(),
            &format!("backend:{}", names.join("/")),
            1,
        );
        let known = self
            .winners
            .lock()
            .ok()
            .and_then(|w| w.get(&class).map(|winner| winner.config.clone()));
        if let Some(kind) = known.and_then(|name| BackendKind::parse(&name)) {
            if names.contains(&kind.name()) {
                return Ok(Some(kind));
            }
        }
        if !requested && self.policy != TuningPolicy::OnFirstUse {
            return Ok(None);
        }
        let deadline = Instant::now() + self.time_limit;
        let mut timings = Vec::new();
        for (backend, config) in backends.iter().zip(configs) {
            let candidate = std::slice::from_ref(config);
            let Some(timed) = time_candidates(device, queue, *backend, gemm, candidate, deadline)?
            else {
                return Ok(None);
            };
            timings.extend(
                timed
                    .into_iter()
                    .map(|(_, seconds)| (backend.kind(), seconds)),
            );
        }
        let Some((winner, _)) = timings.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied() else {
            return Ok(None);
        };
        log::info!(
            "autotune {class}: {winner} ({})",
            timings
                .iter()
                .map(|(kind, s)| format!("{kind} {:.3} ms", s * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.remember(class, winner.name().to_string());
        Ok(Some(winner))
    }

    /// Keeps `config` as the checked winner of `class`, in memory and in the cache file.
    fn remember(&self, class: String, config: String) {
        if let Ok(mut winners) = self.winners.lock() {
            winners.insert(
                class,
                Winner {
                    config,
                    checked: true,
                },
            );
            if let Some(file) = &self.file {
                let mut lines: Vec<String> = winners
                    .iter()
                    .map(|(class, winner)| format!("{class}\t{}", winner.config))
                    .collect();
                lines.sort();
                file.save(lines.join("\n").as_bytes());
            }
        }
    }
}

/// Seconds per run of each candidate on scratch buffers, or `None` when the scratch would be
/// too large. A candidate that fails to record is skipped, and so is every candidate not
/// reached by `deadline` (the first is always timed); rounds stop at the deadline too.
fn time_candidates(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    backend: &dyn Backend,
    gemm: &ResolvedGemm,
    candidates: &[String],
    deadline: Instant,
) -> Result<Option<Vec<(String, f64)>>> {
    let types = gemm.gemm.types;
    let bytes =
        |elements: u64, element_bytes: u64| (elements * element_bytes).div_ceil(4).max(1) * 4;
    let sizes = [
        bytes(gemm.a.required_elements(), types.input.size_bytes()),
        bytes(gemm.b.required_elements(), types.input.size_bytes()),
        bytes(gemm.c.required_elements(), types.output.size_bytes()),
        bytes(gemm.bias.map_or(1, |bias| bias.end_index()), 4),
    ];
    let limit = device.limits();
    if sizes.iter().sum::<u64>() > MAX_TUNING_BYTES
        || sizes.iter().any(|&size| size > limit.max_buffer_size)
    {
        return Ok(None);
    }
    let scratch: Vec<wgpu::Buffer> = sizes
        .iter()
        .map(|&size| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("coopgemm autotune scratch"),
                size,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        })
        .collect();
    let mut buffers = GemmBuffers::new(&scratch[0], &scratch[1], &scratch[2]);
    if gemm.bias.is_some() {
        buffers.bias = Some(&scratch[3]);
    }
    let run = |name: &str, times: usize| -> Result<f64> {
        let started = Instant::now();
        for _ in 0..times {
            let mut list = Vec::new();
            backend.record_config(
                gemm,
                &buffers,
                Target::CommandBuffers(&mut list),
                Some(name),
            )?;
            queue.submit(list);
        }
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| crate::Error::Device(e.to_string()))?;
        Ok(started.elapsed().as_secs_f64() / times as f64)
    };
    // Warm-up: builds every pipeline and estimates a run.
    let mut timings: Vec<(String, f64)> = Vec::new();
    for name in candidates {
        if !timings.is_empty() && Instant::now() > deadline {
            log::debug!("autotune: time limit reached; {name} and later candidates skipped");
            break;
        }
        match run(name, 1) {
            Ok(seconds) => timings.push((name.clone(), seconds)),
            Err(error) => log::debug!("autotune: {name} skipped ({error})"),
        }
    }
    // Then rounds over all candidates (so that clock ramps and drift hit each alike), each
    // timing enough back-to-back runs to last ~2 ms (at least 3); a candidate keeps its best
    // round.
    let estimate = timings.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let runs =
        ((TUNING_BATCH_SECONDS / estimate.max(1e-6)).ceil() as usize).clamp(MIN_TUNING_BATCH, 20);
    for (_, best) in timings.iter_mut() {
        *best = f64::INFINITY;
    }
    for round in 0..TUNING_ROUNDS {
        if round > 0 && Instant::now() > deadline {
            break;
        }
        for (name, best) in timings.iter_mut() {
            *best = best.min(run(name, runs)?);
        }
    }
    Ok(Some(timings))
}
