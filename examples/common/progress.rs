//! Progress bars on stderr for the examples' long work (bench cases, tuning, the CPU
//! baseline): drawn only where stderr is a terminal (indicatif hides them elsewhere, so logs
//! and pipes get plain lines) and not with `--quiet`.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

fn style(template: &str, fallback: ProgressStyle) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or(fallback)
}

/// A bar of `length` steps, hidden when `quiet`.
pub fn bar(length: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
    bar.set_style(
        style(
            "{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}",
            ProgressStyle::default_bar(),
        )
        .progress_chars("=> "),
    );
    bar
}

/// A spinner for work of unknown length (tuning one class, the CPU reference), showing
/// `message` and the time so far; hidden when `quiet`.
pub fn spinner(message: String, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    spinner.set_style(style(
        "{spinner} {wide_msg} {elapsed}",
        ProgressStyle::default_spinner(),
    ));
    spinner.set_message(message);
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner
}

/// Prints `line` to stderr above `bar` (or plainly where the bar is not drawn).
pub fn note(bar: &ProgressBar, line: impl std::fmt::Display) {
    bar.suspend(|| eprintln!("{line}"));
}
