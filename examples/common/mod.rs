//! Code the examples share (not an example itself: cargo builds `examples/*.rs` and
//! `examples/*/main.rs`). Each example uses a part of it, hence `#[allow(dead_code)]` where
//! it is included.

pub mod cli;
pub mod cpu;
pub mod open;
pub mod progress;
pub mod record;
pub mod reference;
pub mod warm_up;
