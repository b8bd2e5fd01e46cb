//! The `leekha` binary: see [`leekha::cli`].

fn main() {
    pin_mmap_threshold();
    let code = leekha::cli::run(leekha::cli::Cli::from_args());
    std::process::exit(code);
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
