//! The `leekha` binary: see [`leekha::cli`].

use clap::Parser;

/// mimalloc instead of glibc's malloc. glibc raises its mmap threshold each time a large
/// block is freed, so argon2's 19 MiB blocks ended up in per-thread arenas that kept them
/// (measured: 650 MiB RSS with 9 MiB in use after a burst of registrations); and under load
/// its consolidation of small freed blocks cost about 5 % of the machine's CPU. mimalloc
/// returns large blocks to the system and keeps small ones in per-thread pages.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = leekha::cli::run(leekha::cli::Cli::parse());
    std::process::exit(code);
}
