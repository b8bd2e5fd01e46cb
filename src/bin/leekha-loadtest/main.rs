//! `leekha-loadtest`: plays real games over HTTP against running Leekha servers with C
//! concurrent clients for D seconds and reports actions per second, latency percentiles and
//! errors.
//!
//! Each client owns one table of four registered players and plays it with random legal
//! actions, learning whose turn it is from the previous response; a finished game is
//! replaced by a new one. See [`ViewMode`] for when it fetches views. With several base
//! URLs, every request picks one at random, so the instances play the same games at once.
//!
//! The generator shares the machine with the server it measures, so every microsecond of
//! CPU it spends is taken from the server. All clients therefore run as tasks of one event
//! loop on one thread (a thread per client cost ~150 µs of CPU per action, mostly in the
//! kernel switching between 32 threads), each with one keep-alive HTTP/1.1 connection per
//! server, spoken by the small client in `http` (framing in `wire`).
//!
//! A separate binary rather than a `leekha` subcommand: it speaks to the server only over
//! HTTP, and of the server's code needs only the rules (to choose legal plays).

mod client;
mod connection;
mod report;
mod run;
mod table;
mod wire;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::run::{LoadConfig, ViewMode};

/// Play real games over HTTP against running Leekha servers and report throughput and
/// latency.
///
/// The servers need `LEEKHA_AUTH_RATE_PER_MINUTE` high enough for 4 registrations per
/// client.
#[derive(Debug, Parser)]
#[command(name = "leekha-loadtest", version)]
struct Args {
    /// Base URL of a server; repeat to spread requests over several instances.
    #[arg(long = "url", default_value = "http://127.0.0.1:8080")]
    urls: Vec<String>,
    /// Concurrent clients (each plays its own table of four players).
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Seconds to play.
    #[arg(long, default_value_t = 30)]
    duration: u64,
    /// Append one line per acknowledged action: game id, seat, action, version.
    #[arg(long)]
    ack_log: Option<PathBuf>,
    /// Per-request timeout, seconds.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Games to start before the run and leave active (memory measurements).
    #[arg(long, default_value_t = 0)]
    idle_games: usize,
    /// When clients fetch views: `track` (only when they cannot know; the default) or
    /// `fetch` (before every action).
    #[arg(long, value_enum, default_value_t = ViewMode::Track)]
    views: ViewMode,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.clients == 0 || args.duration == 0 {
        eprintln!("error: --clients and --duration must be at least 1");
        return ExitCode::from(2);
    }
    let config = LoadConfig {
        urls: args
            .urls
            .into_iter()
            .map(|u| u.trim_end_matches('/').to_owned())
            .collect(),
        clients: args.clients,
        duration: Duration::from_secs(args.duration),
        ack_log: args.ack_log,
        timeout: Duration::from_secs(args.timeout),
        idle_games: args.idle_games,
        views: args.views,
    };
    let report = run::run(&config);
    if args.json {
        println!("{}", report.to_json());
    } else {
        println!("{report}");
    }
    ExitCode::SUCCESS
}
