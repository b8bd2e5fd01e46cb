//! Logging setup: `tracing` to stderr, filtered by `RUST_LOG`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The filter without `RUST_LOG`. actix's HTTP/1 dispatcher logs at ERROR every request it
/// cannot parse, which any client can send at will; those requests are answered (400, 431,
/// 408) and counted by nobody, so its lines are off unless `RUST_LOG` asks for them.
pub const DEFAULT_FILTER: &str = "info,actix_http::h1::dispatcher=off";

/// Installs the global subscriber.
///
/// # Errors
/// A `RUST_LOG` that does not parse, with the parser's reason.
pub fn init() -> Result<(), String> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(raw) if !raw.trim().is_empty() => EnvFilter::try_new(&raw).map_err(|e| {
            format!("RUST_LOG={raw:?} is not valid: {e} (e.g. RUST_LOG=info,leekha=debug)")
        })?,
        _ => EnvFilter::new(DEFAULT_FILTER),
    };
    // Colours only for a person at a terminal: a file, `docker logs` or a log collector
    // would get escape codes in every line. `NO_COLOR` turns them off anywhere.
    let colours = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colours)
        .with_writer(std::io::stderr)
        .try_init()
        .ok();
    Ok(())
}
