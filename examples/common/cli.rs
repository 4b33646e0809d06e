//! The examples' command lines: [`parse`] (clap, with a usage line on every error) and the
//! values they share as clap value parsers: a GEMM shape (`MxNxK`), types by short name
//! (`f16`) and a backend by name (`coopmat`).

use clap::error::ErrorKind;
use clap::Parser;
use coopgemm::{BackendKind, GemmTypes};

/// The arguments of this process; on `--help` or `--version` prints them and exits 0, on an
/// error prints it with the usage line and exits 2.
pub fn parse<T: Parser>() -> T {
    T::try_parse().unwrap_or_else(|error| match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => error.exit(),
        _ => {
            let text = error.render().to_string();
            // clap gives the usage line with some errors (unknown arguments), not with others
            // (bad values).
            if text.contains("Usage:") {
                error.exit()
            }
            let message = text
                .split("\n\nFor more information")
                .next()
                .unwrap_or(&text);
            exit_with_usage::<T>(message.trim_start_matches("error: "))
        }
    })
}

/// Prints `error: {message}` and the usage line of `T`'s command, and exits 2.
pub fn exit_with_usage<T: clap::CommandFactory>(message: &str) -> ! {
    eprintln!(
        "error: {message}\n\n{}\n\nFor more information, try '--help'.",
        T::command().render_usage()
    );
    std::process::exit(2)
}

/// `MxNxK`, e.g. `4096x4096x512`.
pub fn parse_shape(text: &str) -> Result<(u32, u32, u32), String> {
    let numbers: Vec<u32> = text
        .split('x')
        .map(|v| v.parse().map_err(|_| format!("{v:?} is not a size")))
        .collect::<Result<_, _>>()?;
    match numbers[..] {
        [m, n, k] => Ok((m, n, k)),
        _ => Err(format!("a shape is MxNxK, not {text}")),
    }
}

/// The names [`GemmTypes::parse`] accepts, for messages and `--help`.
pub fn types_names() -> String {
    GemmTypes::ALL
        .iter()
        .map(|t| t.short_name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Types by short name (`f32`, `f16`, `bf16`, `i8`, `f16acc16`, ...).
pub fn parse_types(text: &str) -> Result<GemmTypes, String> {
    GemmTypes::parse(text).ok_or_else(|| format!("unknown types {text} (one of {})", types_names()))
}

/// A backend by name (`simt`, `coopmat`, `wgsl-coopmat`).
pub fn parse_backend(text: &str) -> Result<BackendKind, String> {
    BackendKind::parse(text).ok_or_else(|| {
        let names: Vec<_> = BackendKind::ALL.iter().map(|b| b.name()).collect();
        format!("unknown backend {text} (one of {})", names.join(", "))
    })
}

/// A backend by name, or `auto` for the library's choice.
pub fn parse_backend_choice(text: &str) -> Result<coopgemm::BackendChoice, String> {
    match text {
        "auto" => Ok(coopgemm::BackendChoice::Auto),
        other => parse_backend(other).map(coopgemm::BackendChoice::Force),
    }
}
