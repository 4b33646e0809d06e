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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let threads: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(8);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let serial_open = args.iter().any(|a| a == "serial-open");
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
