//! Opening the examples' [`Context`]: options from the environment, and on failure a message
//! on stderr and exit status 1 (a tool cannot do anything without a device).

use coopgemm::{Context, ContextOptions};

/// A context with the options the environment gives (`ContextOptions::from_env`).
pub fn open_context() -> Context {
    open_context_with(|options| options)
}

/// A context with the environment's options as `adjust` changes them.
pub fn open_context_with(adjust: impl FnOnce(ContextOptions) -> ContextOptions) -> Context {
    let opened = ContextOptions::from_env()
        .and_then(|options| pollster::block_on(Context::with_options(adjust(options))));
    opened.unwrap_or_else(|error| {
        eprintln!("error: {error}");
        std::process::exit(1);
    })
}
