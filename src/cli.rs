//! The `leekha` command line: `serve` (default), `migrate`, `openapi`.

use std::time::Instant;

use clap::{Parser, Subcommand};

use crate::app::AppState;
use crate::config::Config;
use crate::db::Db;
use crate::http::openapi;

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
    /// Replay every game from its seed and action log and compare with the stored snapshot;
    /// exits 1 if any differs.
    Verify,
    /// A bot tournament on seeded duplicate deals: the candidate plays each deal in every seat
    /// against the baseline; prints points per round saved with a 95% confidence interval,
    /// decision times and rounds per second. Same seed, same results.
    Simulate {
        /// The bot measured: random, easy, heuristic, expert, ismcts (information-set tree
        /// search, compared with the expert) or omniscient (the measuring bot that sees every
        /// hand). The last two exist only here.
        #[arg(long, default_value = "expert")]
        candidate: String,
        /// The bot it plays against: random, easy, heuristic, expert, ismcts or omniscient.
        #[arg(long, default_value = "heuristic")]
        baseline: String,
        /// Deals (rounds) to play.
        #[arg(long, default_value_t = 1000)]
        deals: usize,
        /// Seed of the deals and the bots.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Rule preset: classic or partnership.
        #[arg(long, default_value = "classic")]
        preset: String,
        /// Threads playing deals side by side. The results do not depend on it as long as
        /// the expert's rollout cap, not its 45 ms safety net, ends its searches (more
        /// threads than idle cores make the net bind); the decision times do, so the
        /// README's figures use 1 (one core).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
    },
    /// Administration tasks.
    Admin {
        /// Which task.
        #[command(subcommand)]
        command: AdminCommand,
    },
}

/// `leekha admin …`
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create an admin account, or make an existing account admin. The password comes from
    /// `LEEKHA_ADMIN_PASSWORD` or the first line of standard input, never from a flag.
    Create {
        /// The account's username.
        username: String,
    },
}

impl Cli {
    /// Parses the process's arguments (exits with a message on bad ones, or after `--help`),
    /// with the environment the server reads listed under the help of `leekha` and of
    /// `leekha serve`.
    pub fn from_args() -> Cli {
        use clap::{CommandFactory, FromArgMatches};
        let environment = crate::config::environment_help();
        let matches = Cli::command()
            .after_help(environment.clone())
            .mut_subcommand("serve", |serve| serve.after_help(environment))
            .get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
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
            let doc = serde_json::to_string_pretty(&openapi()).expect("the document serializes");
            say(&doc);
            0
        }
        Command::Migrate => match load().and_then(|(config, db)| migrate(&config, &db)) {
            Ok(()) => 0,
            Err(e) => fail(&e),
        },
        Command::Admin {
            command: AdminCommand::Create { username },
        } => {
            match load().and_then(|(config, db)| {
                migrate(&config, &db)?;
                create_admin(&db, &username)
            }) {
                Ok(message) => {
                    say(&message);
                    0
                }
                Err(e) => fail(&e),
            }
        }
        Command::Verify => match load().and_then(|(config, db)| {
            migrate(&config, &db)?;
            verify(&db)
        }) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(e) => fail(&e),
        },
        Command::Simulate {
            candidate,
            baseline,
            deals,
            seed,
            preset,
            threads,
        } => {
            use crate::bots::tournament::Contestant;
            let (Some(candidate), Some(baseline)) =
                (Contestant::parse(&candidate), Contestant::parse(&baseline))
            else {
                let names: Vec<&str> = Contestant::all().map(Contestant::as_str).collect();
                eprintln!("error: the bots are {}", names.join(", "));
                return 2;
            };
            let options = match crate::rules::RuleOptions::preset(&preset) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return 2;
                }
            };
            if deals == 0 {
                eprintln!("error: --deals must be at least 1");
                return 2;
            }
            let config = crate::bots::tournament::TournamentConfig {
                candidate,
                baseline,
                deals,
                seed,
                options,
                expert: crate::bots::ExpertConfig::DEFAULT,
            };
            say(&crate::bots::tournament::run_on(&config, usize::from(threads)).to_string());
            0
        }
        Command::Serve => match load().and_then(|(config, db)| {
            // A start that would be refused leaves the database as it was.
            crate::app::AppState::check_secret(&config)?;
            crate::app::AppState::check_listener(&config)?;
            migrate(&config, &db)?;
            serve(config, db, started)
        }) {
            Ok(()) => 0,
            Err(e) => fail(&e),
        },
    }
}

/// Writes a line to standard output. A reader that went away (`leekha openapi | head`) has
/// had what it wanted: that is no reason to panic, as `println!` does.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
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

fn verify(db: &Db) -> Result<bool, String> {
    let mut conn = db.conn().map_err(|e| e.to_string())?;
    let (checked, mismatches) =
        crate::games::verify::verify_all(&mut conn).map_err(|e| e.to_string())?;
    for m in &mismatches {
        say(&format!("MISMATCH {}: {}", m.game_id, m.reason));
    }
    say(&format!(
        "verified {checked} games: {} mismatches",
        mismatches.len()
    ));
    Ok(mismatches.is_empty())
}

fn read_admin_password() -> Result<String, String> {
    if let Ok(p) = std::env::var("LEEKHA_ADMIN_PASSWORD") {
        return Ok(p);
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password from standard input: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

fn create_admin(db: &Db, username: &str) -> Result<String, String> {
    use crate::auth::{Password, Role, Username};

    let username = Username::parse(username).map_err(|e| e.detail().to_owned())?;
    let password = read_admin_password()?;
    let mut conn = db.conn().map_err(|e| e.to_string())?;
    let existing =
        crate::db::users::by_username(&mut conn, &username.key()).map_err(|e| e.to_string())?;
    let now = crate::db::now();
    match existing {
        Some(user) => {
            let hash = if password.is_empty() {
                None
            } else {
                Some(
                    Password::parse(&password)
                        .map_err(|e| e.detail().to_owned())?
                        .hash()
                        .map_err(|e| e.to_string())?,
                )
            };
            let admin = crate::db::users::UserChange {
                role: Some(Role::Admin.as_str()),
                ..crate::db::users::UserChange::at(now)
            };
            crate::db::users::update(&mut conn, &user.id, &admin).map_err(|e| e.to_string())?;
            match hash {
                Some(hash) => {
                    crate::db::users::set_password(&mut conn, &user.id, &hash, now)
                        .map_err(|e| e.to_string())?;
                    Ok(format!(
                        "{} is now an admin, with the password given (the old one no longer works)",
                        user.username
                    ))
                }
                None => Ok(format!(
                    "{} is now an admin; the password is unchanged",
                    user.username
                )),
            }
        }
        None => {
            // A new account's name follows the rules of a chosen one: `guest_` is the guests'.
            Username::chosen(username.as_str(), None).map_err(|e| e.detail().to_owned())?;
            let hash = Password::parse(&password)
                .map_err(|e| e.detail().to_owned())?
                .hash()
                .map_err(|e| e.to_string())?;
            let id = uuid::Uuid::new_v4().to_string();
            crate::db::users::insert(
                &mut conn,
                &crate::db::users::NewUser {
                    id: &id,
                    username: username.as_str(),
                    username_key: &username.key(),
                    password_hash: Some(&hash),
                    role: Role::Admin.as_str(),
                    is_guest: false,
                    created_at: now,
                    updated_at: now,
                },
            )
            .map_err(|e| e.to_string())?;
            Ok(format!("admin {} created", username.as_str()))
        }
    }
}

/// Asks the scheduler to stop when `kind` (SIGTERM, SIGINT) arrives.
#[cfg(unix)]
async fn stop_on_signal(
    kind: tokio::signal::unix::SignalKind,
    stopper: crate::scheduler::Stopper,
    notifier: std::sync::Arc<crate::app::Notifier>,
) {
    match tokio::signal::unix::signal(kind) {
        Ok(mut signal) => {
            signal.recv().await;
            tracing::info!("stopping the scheduler; ending event streams and long-polls");
            stopper.stop();
            // Streams would otherwise hold the drain for its whole 30 s.
            notifier.shut_down();
        }
        // Without a handler the scheduler still stops, once the HTTP server has drained.
        Err(e) => tracing::warn!(error = %e, "cannot listen for a signal"),
    }
}

fn serve(config: Config, db: Db, started: Instant) -> Result<(), String> {
    let bind = config.bind;
    let workers = config.http_workers();
    let per_worker = config.connections_per_worker();
    let request_timeout = config.client_request_timeout;
    let keep_alive = if config.keep_alive.is_zero() {
        actix_web::http::KeepAlive::Disabled
    } else {
        actix_web::http::KeepAlive::Timeout(config.keep_alive)
    };
    let blocking_threads = (config.pool_size as usize).max(4);
    let database = config.database_url.to_string();
    let state = AppState::init(config, db)?;
    let scheduler = crate::scheduler::Scheduler::spawn(state.clone());
    // Beside the scheduler, so that a slow receiver never holds up a deadline: pushes, with
    // their own, shorter, interval (a turn should reach the phone within a second), and
    // webhooks.
    let pusher = crate::push::worker(state.clone())?;
    let webhooks = crate::webhooks::worker(state.clone())?;
    let stopper = scheduler.stopper();
    actix_web::rt::System::new().block_on(async move {
        // actix drains HTTP on SIGTERM/SIGINT; the scheduler hears the same signals itself, so
        // that it winds down during the drain rather than after it, within the same 30 s.
        #[cfg(unix)]
        for kind in [
            tokio::signal::unix::SignalKind::terminate(),
            tokio::signal::unix::SignalKind::interrupt(),
        ] {
            actix_web::rt::spawn(stop_on_signal(
                kind,
                stopper.clone(),
                state.notifier.clone(),
            ));
        }
        let settings = crate::http::transport::Settings {
            keep_alive,
            client_request_timeout: request_timeout,
        };
        let server = actix_server::Server::build()
            // In-flight requests get this long to finish after SIGTERM/SIGINT; each action is
            // one transaction, so a request cut off later still leaves nothing half-applied.
            .shutdown_timeout(30)
            // Blocking threads only wait for a pooled connection beyond the pool's size:
            // bound them (actix's default is 512), which also bounds memory.
            .worker_max_blocking_threads(blocking_threads)
            // Past the limit a worker stops accepting: new clients wait in the backlog
            // rather than each taking a file descriptor while slow ones hold theirs.
            .max_concurrent_connections(per_worker)
            // actix-web's backlog.
            .backlog(1024)
            .workers(workers);
        let server = crate::http::transport::bind(server, bind, state, settings)
            .map_err(|e| format!("cannot listen on {bind}: {e}"))?;
        tracing::info!(
            address = %bind,
            database = %database,
            startup_ms = started.elapsed().as_millis() as u64,
            "listening on http://{bind}"
        );
        server.run().await.map_err(|e| format!("server error: {e}"))
    })?;
    // After the HTTP server drained: wait for the scheduler to finish the game in hand (each
    // game is one transaction); it was asked to stop when the signal came.
    scheduler.stop();
    pusher.stop();
    webhooks.stop();
    tracing::info!("shut down");
    Ok(())
}
