//! Opens, uses and drops contexts on several threads at once, and says how far each thread
//! got: a check that contexts can be created concurrently.
//!
//! ```text
//! cargo run --release --example context_churn -- [THREADS] [ROUNDS] [serial-open]
//! ```
//! `serial-open` opens and drops contexts (with their buffers: the whole device's life but
//! the GEMM) one at a time, with the GEMMs still concurrent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coopgemm::{Context, ContextOptions, Gemm, GemmBuffers, GemmTypes};

#[allow(dead_code)]
mod common;

/// Opens, uses and drops contexts on several threads at once, and says how far each thread
/// got: a check that contexts can be created concurrently.
#[derive(clap::Parser, Debug)]
#[command(name = "context_churn", version)]
struct Args {
    /// Threads, each opening, using and dropping contexts
    #[arg(default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    threads: u32,
    /// Contexts each thread opens in turn
    #[arg(default_value_t = 5)]
    rounds: u32,
    /// `serial-open`: open and drop contexts one at a time (the GEMMs still concurrent)
    #[arg(value_enum)]
    mode: Option<Mode>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    /// Contexts opened and dropped one at a time
    SerialOpen,
}

fn main() {
    let args: Args = common::cli::parse();
    let (threads, rounds) = (args.threads as usize, args.rounds as usize);
    let serial_open = args.mode == Some(Mode::SerialOpen);
    let progress = Arc::new(
        (0..threads)
            .map(|_| AtomicUsize::new(0))
            .collect::<Vec<_>>(),
    );
    let open_turn = Arc::new(Mutex::new(()));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|thread| {
            let progress = progress.clone();
            let open_turn = open_turn.clone();
            std::thread::spawn(move || {
                for round in 0..rounds {
                    // Stage numbers: round * 10 + 1 opening, 2 running, 3 dropping, 4 done.
                    let stage = |s: usize| progress[thread].store(round * 10 + s, Ordering::SeqCst);
                    stage(1);
                    let turn = serial_open.then(|| open_turn.lock().unwrap());
                    let options = ContextOptions::from_env().expect("COOPGEMM_* variables");
                    let context = pollster::block_on(Context::with_options(options))
                        .expect("a Vulkan adapter");
                    drop(turn);
                    stage(2);
                    {
                        let gemm = Gemm::new(128, 128, 64).types(GemmTypes::F16_F32);
                        let a = context
                            .upload("a", &vec![half::f16::from_f32(1.0); 128 * 64])
                            .unwrap();
                        let b = context
                            .upload("b", &vec![half::f16::from_f32(1.0); 64 * 128])
                            .unwrap();
                        let c = context.upload("c", &vec![0.0f32; 128 * 128]).unwrap();
                        context.run(&gemm, &GemmBuffers::new(&a, &b, &c)).unwrap();
                        let result: Vec<f32> =
                            pollster::block_on(context.download(&c, 128 * 128)).unwrap();
                        assert!(result.iter().all(|&v| v == 64.0));
                    }
                    stage(3);
                    let turn = serial_open.then(|| open_turn.lock().unwrap());
                    drop(context);
                    drop(turn);
                    stage(4);
                }
            })
        })
        .collect();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let done = workers.iter().all(|w| w.is_finished());
        let stages: Vec<usize> = progress.iter().map(|p| p.load(Ordering::SeqCst)).collect();
        if done {
            println!(
                "all {threads} threads finished {rounds} rounds in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            return;
        }
        if started.elapsed() > Duration::from_secs(30) {
            println!("STUCK after 30 s: thread stages (round*10 + 1 open, 2 run, 3 drop, 4 done): {stages:?}");
            std::process::exit(3);
        }
    }
}
