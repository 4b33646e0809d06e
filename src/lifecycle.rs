//! One device set up or torn down at a time in the process.
//!
//! On the H100 (NVIDIA driver 580.159.04), eight threads that each opened a context, ran a
//! GEMM and dropped it, five times over (`examples/context_churn`), hung in 3 runs of 3:
//! every thread waiting on a futex inside the driver, most of them while dropping their
//! contexts. With the opening and the dropping done one at a time (the GEMMs still
//! concurrent) it finished 4 runs of 4 (records in
//! `examples/results/h100-2026-11-24-session8/`). Both are rare and take milliseconds, so
//! coopgemm opens its Vulkan devices, builds a context's backends and tears a context down
//! while holding [`turn`].

use std::ops::Deref;
use std::sync::{Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::new(());

/// The process's turn to set up or tear down a device (released when dropped).
pub(crate) fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A value that is dropped while holding [`turn`] (a context's device and backends).
#[derive(Debug)]
pub(crate) struct TornDownInTurn<T>(Option<T>);

impl<T> TornDownInTurn<T> {
    pub(crate) fn new(value: T) -> TornDownInTurn<T> {
        TornDownInTurn(Some(value))
    }
}

impl<T> Deref for TornDownInTurn<T> {
    type Target = T;

    fn deref(&self) -> &T {
        match &self.0 {
            Some(value) => value,
            // Only `drop` takes the value out, and nothing can deref after it.
            None => unreachable!("a TornDownInTurn is read after it was dropped"),
        }
    }
}

impl<T> Drop for TornDownInTurn<T> {
    fn drop(&mut self) {
        let _turn = turn();
        drop(self.0.take());
    }
}
