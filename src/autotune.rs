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
//! - Switch: [`AutotuneChoice`] in [`ContextOptions`](crate::ContextOptions) (from the
//!   environment, `COOPGEMM_AUTOTUNE=0|1`: off / on first use).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::backend::{Backend, BackendKind, KernelConfig, Target};
use crate::bindings::GemmBuffers;
use crate::disk_cache::{CacheFile, CacheStore};
use crate::error::Result;
use crate::options::AutotuneChoice;
use crate::problem::{Order, ResolvedGemm};
use crate::types::GemmTypes;

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
            AutotuneChoice::OnRequest => TuningPolicy::OnRequest,
        }
    }
}

/// The winners so far, and the file they are kept in.
#[derive(Debug)]
pub(crate) struct Tuner {
    policy: TuningPolicy,
    /// How long tuning one class may take (candidates left untimed then are skipped).
    time_limit: Duration,
    winners: Mutex<Winners>,
    file: Option<CacheFile>,
}

/// GEMMs that share a winner: types, each of m, n, k rounded up to a power of two (n and k
/// 16 at least; m from 1, because GEMMs of few rows run the skinny kernel, whose
/// configurations follow the rows), batched or not, the three operand orders and whether an
/// epilogue runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ShapeClass {
    types: GemmTypes,
    size: [u32; 3],
    batched: bool,
    orders: [Order; 3],
    epilogue: bool,
}

impl ShapeClass {
    pub(crate) fn of(gemm: &ResolvedGemm) -> ShapeClass {
        let g = &gemm.gemm;
        let bucket = |value: u32| value.max(16).next_power_of_two();
        ShapeClass {
            types: g.types,
            size: [g.m.max(1).next_power_of_two(), bucket(g.n), bucket(g.k)],
            batched: g.batch > 1,
            orders: [gemm.a.order, gemm.b.order, gemm.c.order],
            epilogue: !g.epilogue.is_identity(),
        }
    }
}

/// `f16|4096x4096x4096|single|rrr|plain`: the class in the disk cache's lines.
impl fmt::Display for ShapeClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [m, n, k] = self.size;
        write!(f, "{}|{m}x{n}x{k}|", self.types.short_name())?;
        f.write_str(if self.batched { "batched|" } else { "single|" })?;
        for order in self.orders {
            match order {
                Order::RowMajor => f.write_str("r")?,
                Order::ColumnMajor => f.write_str("c")?,
                Order::ColumnPanels { width } => write!(f, "p{width}")?,
            }
        }
        f.write_str(if self.epilogue { "|epilogue" } else { "|plain" })
    }
}

/// What one tuning compares for a class: the configurations of one backend, or backends
/// (each with its own configuration for the class).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Contest {
    Configs(BackendKind),
    Backends(Vec<BackendKind>),
}

/// A class and what was compared for it: the key of a winner.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TuningKey {
    contest: Contest,
    class: ShapeClass,
}

/// `coopmat|<class>` or `backend:coopmat/wgsl-coopmat|<class>`.
impl fmt::Display for TuningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.contest {
            Contest::Configs(kind) => write!(f, "{kind}|{}", self.class),
            Contest::Backends(kinds) => {
                let names: Vec<&str> = kinds.iter().map(|kind| kind.name()).collect();
                write!(f, "backend:{}|{}", names.join("/"), self.class)
            }
        }
    }
}

/// The fastest configuration, or backend, of one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Winner {
    Config(KernelConfig),
    Backend(BackendKind),
}

impl fmt::Display for Winner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Winner::Config(config) => config.fmt(f),
            Winner::Backend(kind) => kind.fmt(f),
        }
    }
}

/// Winners this process has confirmed, and winners read from disk not yet matched to a
/// candidate. Saved winners may come from a process with other overrides
/// (`COOPGEMM_COOPMAT2=0`, forced tiles): each is looked up among the candidates of the first
/// GEMM of its class that needs it, and kept typed from then on (the class pins down
/// everything else the candidates depend on, so one check serves every GEMM of the class).
#[derive(Debug, Default)]
struct Winners {
    confirmed: HashMap<TuningKey, Winner>,
    saved: HashMap<String, String>,
}

impl Tuner {
    /// A tuner with the winners saved in `store`'s tuning file (none if the policy is never
    /// to tune).
    pub(crate) fn new(
        policy: TuningPolicy,
        time_limit: Duration,
        store: Option<&CacheStore>,
    ) -> Tuner {
        let file = store.map(|store| store.file("tune"));
        let mut winners = Winners::default();
        if policy != TuningPolicy::Never {
            if let Some(payload) = file.as_ref().and_then(CacheFile::load) {
                for line in String::from_utf8_lossy(&payload).lines() {
                    if let Some((key, winner)) = line.split_once('\t') {
                        winners.saved.insert(key.to_string(), winner.to_string());
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

    /// The winner of `key`: confirmed, or saved and accepted by `accept` (which turns the
    /// saved text into a typed winner where it still applies).
    fn winner(&self, key: &TuningKey, accept: impl Fn(&str) -> Option<Winner>) -> Option<Winner> {
        let mut winners = self.winners.lock().ok()?;
        if let Some(winner) = winners.confirmed.get(key) {
            return Some(*winner);
        }
        if winners.saved.is_empty() {
            return None;
        }
        let text = key.to_string();
        let saved = winners.saved.get(&text)?.clone();
        match accept(&saved) {
            Some(winner) => {
                winners.saved.remove(&text);
                winners.confirmed.insert(key.clone(), winner);
                Some(winner)
            }
            None => {
                log::debug!("autotune {key}: saved winner {saved} does not apply here");
                None
            }
        }
    }

    /// Whether a class without a winner is tuned now.
    fn tunes_now(&self, requested: bool) -> bool {
        // Never make a GEMM wait unless asked to: the heuristic runs it until someone tunes
        // the class.
        requested || self.policy == TuningPolicy::OnFirstUse
    }

    /// The configuration `backend` runs `gemm` with: the class's winner, tuning the class
    /// first where it has none and tuning is `requested` (by [`Context::tune`]) or happens on
    /// first use; `None` for the backend's heuristic.
    ///
    /// [`Context::tune`]: crate::Context::tune
    pub(crate) fn config_for(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        backend: &dyn Backend,
        gemm: &ResolvedGemm,
        requested: bool,
    ) -> Result<Option<KernelConfig>> {
        if self.policy == TuningPolicy::Never || gemm.is_empty() {
            return Ok(None);
        }
        let key = TuningKey {
            contest: Contest::Configs(backend.kind()),
            class: ShapeClass::of(gemm),
        };
        // Candidates are listed only where a saved winner must be matched or the class is
        // tuned now, not for every GEMM that runs.
        let saved_candidate = |name: &str| {
            backend
                .candidates(gemm)
                .into_iter()
                .find(|config| config.to_string() == name)
                .map(Winner::Config)
        };
        if let Some(Winner::Config(config)) = self.winner(&key, saved_candidate) {
            return Ok(Some(config));
        }
        if !self.tunes_now(requested) {
            return Ok(None);
        }
        let mut candidates = backend.candidates(gemm);
        if candidates.len() < 2 {
            return Ok(None);
        }
        // The heuristic's choice first, so that a time limit never leaves a class worse off.
        let heuristic = backend.choose(gemm)?;
        if let Some(index) = candidates.iter().position(|c| *c == heuristic) {
            let first = candidates.remove(index);
            candidates.insert(0, first);
        }
        let started = Instant::now();
        let deadline = started + self.time_limit;
        let Some(timings) = time_candidates(device, queue, backend, gemm, &candidates, deadline)?
        else {
            return Ok(None);
        };
        let Some((winner, seconds)) = timings.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied()
        else {
            return Ok(None);
        };
        log::info!(
            "autotune {key}: {winner} ({:.3} ms; tuned {} of {} candidates in {:.2} s: {})",
            seconds * 1e3,
            timings.len(),
            candidates.len(),
            started.elapsed().as_secs_f64(),
            timings
                .iter()
                .map(|(config, s)| format!("{config} {:.3} ms", s * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.remember(key, Winner::Config(winner));
        Ok(Some(winner))
    }

    /// The faster of `backends` (each running the configuration `config_of` gives it, asked
    /// only when they are timed) for `gemm`'s class: remembered, or timed now where tuning
    /// is `requested` or happens on first use; `None` when not known.
    pub(crate) fn backend_for(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        backends: &[&dyn Backend],
        config_of: &dyn Fn(&dyn Backend) -> Result<KernelConfig>,
        gemm: &ResolvedGemm,
        requested: bool,
    ) -> Result<Option<BackendKind>> {
        if self.policy == TuningPolicy::Never || gemm.is_empty() || backends.len() < 2 {
            return Ok(None);
        }
        let kinds: Vec<BackendKind> = backends.iter().map(|b| b.kind()).collect();
        let key = TuningKey {
            contest: Contest::Backends(kinds.clone()),
            class: ShapeClass::of(gemm),
        };
        let saved_backend = |name: &str| {
            BackendKind::parse(name)
                .filter(|kind| kinds.contains(kind))
                .map(Winner::Backend)
        };
        if let Some(Winner::Backend(kind)) = self.winner(&key, saved_backend) {
            return Ok(Some(kind));
        }
        if !self.tunes_now(requested) {
            return Ok(None);
        }
        let deadline = Instant::now() + self.time_limit;
        let mut timings = Vec::new();
        for backend in backends {
            let config = config_of(*backend)?;
            let candidate = std::slice::from_ref(&config);
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
            "autotune {key}: {winner} ({})",
            timings
                .iter()
                .map(|(kind, s)| format!("{kind} {:.3} ms", s * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.remember(key, Winner::Backend(winner));
        Ok(Some(winner))
    }

    /// Keeps `winner` for `key`, in memory and in the tuning file (with the saved winners
    /// this process has not needed).
    fn remember(&self, key: TuningKey, winner: Winner) {
        if let Ok(mut winners) = self.winners.lock() {
            winners.saved.remove(&key.to_string());
            winners.confirmed.insert(key, winner);
            if let Some(file) = &self.file {
                let mut lines: Vec<String> = winners
                    .confirmed
                    .iter()
                    .map(|(key, winner)| format!("{key}\t{winner}"))
                    .chain(
                        winners
                            .saved
                            .iter()
                            .map(|(key, winner)| format!("{key}\t{winner}")),
                    )
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
    candidates: &[KernelConfig],
    deadline: Instant,
) -> Result<Option<Vec<(KernelConfig, f64)>>> {
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
    let run = |config: &KernelConfig, times: usize| -> Result<f64> {
        let started = Instant::now();
        for _ in 0..times {
            let mut list = Vec::new();
            backend.record(gemm, &buffers, Target::CommandBuffers(&mut list), config)?;
            queue.submit(list);
        }
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| crate::Error::Device(e.to_string()))?;
        Ok(started.elapsed().as_secs_f64() / times as f64)
    };
    // Warm-up: builds every pipeline and estimates a run.
    let mut timings: Vec<(KernelConfig, f64)> = Vec::new();
    for config in candidates {
        if !timings.is_empty() && Instant::now() > deadline {
            log::debug!("autotune: time limit reached; {config} and later candidates skipped");
            break;
        }
        match run(config, 1) {
            Ok(seconds) => timings.push((*config, seconds)),
            Err(error) => log::debug!("autotune: {config} skipped ({error})"),
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
        for (config, best) in timings.iter_mut() {
            *best = best.min(run(config, runs)?);
        }
    }
    Ok(Some(timings))
}
