//! The `leekha` command line: `serve` (default), `migrate`, `openapi`.

use std::time::Instant;

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::db::Db;
use crate::http::{AppState, build_app, openapi};

/// The Leekha server.
#[derive(Debug, Parser)]
#[command(
    name = "leekha",
    version,
    about = "Server for asynchronous play of Leekha (ليخة)"
)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate the database, then serve HTTP until SIGTERM or SIGINT (the default).
    Serve,
    /// Apply pending migrations and exit.
    Migrate,
    /// Print the OpenAPI document (JSON) to standard output.
    Openapi,
}

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let started = Instant::now();
    if let Err(e) = crate::telemetry::init() {
        eprintln!("error: {e}");
        return 2;
    }
    match cli.command.unwrap_or(Command::Serve) {
        Command::Openapi => {
            let doc = openapi().to_pretty_json().expect("the document serializes");
            println!("{doc}");
            0
        }
        Command::Migrate => match load().and_then(|(config, db)| migrate(&config, &db)) {
            Ok(()) => 0,
            Err(e) => fail(&e),
        },
        Command::Serve => match load().and_then(|(config, db)| {
            migrate(&config, &db)?;
            serve(config, db, started)
        }) {
            Ok(()) => 0,
            Err(e) => fail(&e),
        },
    }
}

fn fail(message: &str) -> i32 {
    tracing::error!("{message}");
    eprintln!("error: {message}");
    1
}

fn load() -> Result<(Config, Db), String> {
    let config = Config::from_env().map_err(|e| e.to_string())?;
    let db = Db::open(&config);
    Ok((config, db))
}

fn migrate(config: &Config, db: &Db) -> Result<(), String> {
    let applied = db
        .migrate()
        .map_err(|e| format!("{e} (database {})", config.database_url))?;
    tracing::info!(database = %config.database_url, applied, "database migrated");
    Ok(())
}

fn serve(config: Config, db: Db, started: Instant) -> Result<(), String> {
    let bind = config.bind;
    let workers = config.workers;
    let database = config.database_url.to_string();
    let state = AppState::new(config, db);
    actix_web::rt::System::new().block_on(async move {
        let mut server = actix_web::HttpServer::new(move || build_app(state.clone()))
            // In-flight requests get this long to finish after SIGTERM/SIGINT; each action is
            // one transaction, so a request cut off later still leaves nothing half-applied.
            .shutdown_timeout(30);
        if let Some(n) = workers {
            server = server.workers(n);
        }
        let server = server
            .bind(bind)
            .map_err(|e| format!("cannot listen on {bind}: {e}"))?;
        tracing::info!(
            address = %bind,
            database = %database,
            startup_ms = started.elapsed().as_millis() as u64,
            "listening on http://{bind}"
        );
        server
            .run()
            .await
            .map_err(|e| format!("server error: {e}"))?;
        tracing::info!("shut down");
        Ok(())
    })
}
