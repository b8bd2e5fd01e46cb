//! The `leekha` binary: see [`leekha::cli`].

use clap::Parser;

fn main() {
    let code = leekha::cli::run(leekha::cli::Cli::parse());
    std::process::exit(code);
}
