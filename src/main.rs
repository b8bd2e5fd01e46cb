//! The `leekha` binary: see [`leekha::cli`].

fn main() {
    pin_mmap_threshold();
    let code = leekha::cli::run(leekha::cli::Cli::from_args());
    leave(code);
}

/// Ends the process with `code`, without the C library's exit handlers. A start that fails
/// after the PostgreSQL pool began to connect leaves pool threads inside libpq (and its TLS
/// library), whose handlers tear down what those threads are using: such exits died of a
/// segfault (status 139) about one time in twenty instead of answering 1. Nothing of ours
/// needs the handlers once the output is flushed; the database is left to its own
/// durability, as on any stop.
#[cfg(unix)]
#[allow(unsafe_code)]
fn leave(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` only ends the process; the output it would lose is flushed above.
    unsafe { libc::_exit(code) }
}

#[cfg(not(unix))]
fn leave(code: i32) -> ! {
    std::process::exit(code)
}

/// glibc raises its mmap threshold each time a large block is freed, so later large blocks
/// come from per-thread arenas, which keep them. argon2's 19 MiB blocks then left the server
/// holding hundreds of MiB after a burst of registrations (measured: 650 MiB RSS with 9 MiB
/// in use). A fixed threshold keeps such blocks in their own mappings, returned on free.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn pin_mmap_threshold() {
    // SAFETY: mallopt only changes allocator tuning; it is called before any other thread
    // exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn pin_mmap_threshold() {}
