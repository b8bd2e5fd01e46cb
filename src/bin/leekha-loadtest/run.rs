//! A run: the clients set up (four players each), then all playing their tables at once
//! for the configured time, their reports merged at the end.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use crate::client::{Client, Player};
use crate::connection::{Http, Target};
use crate::report::LoadReport;
use crate::table::{TableState, View, random_action};

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// Server base URLs, e.g. `http://127.0.0.1:8080`.
    pub urls: Vec<String>,
    /// Concurrent clients (tables).
    pub clients: usize,
    /// How long to play.
    pub duration: Duration,
    /// Where to append one line per acknowledged action (game, seat, action, version).
    pub ack_log: Option<std::path::PathBuf>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Extra games to start before the run and leave active (for memory measurements).
    pub idle_games: usize,
    /// How a client learns what a seat may do.
    pub views: ViewMode,
}

/// How a client learns what a seat may do before it acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ViewMode {
    /// Like a phone that keeps what it was told: each seat remembers the hand from its own
    /// last response and reads the trick from the latest response of any seat; a view is
    /// fetched only when that cannot be known (a new round, the exchange). Every request is
    /// then almost always an action, as in the pgbench transaction it is compared with.
    #[default]
    Track,
    /// Like a phone that opens the game after each "your turn": GET the acting seat's view
    /// before every action.
    Fetch,
}

/// What every client of a run shares.
struct Shared {
    config: LoadConfig,
    targets: Arc<[Result<Target, String>]>,
    run_id: String,
    stop: AtomicBool,
    ack: Option<Mutex<std::fs::File>>,
}

/// A client before the start: registers its four players (client 0 also starts the idle
/// games).
async fn set_up(index: usize, shared: Arc<Shared>) -> (Client, Vec<Player>) {
    let mut client = Client {
        http: Http::new(shared.targets.clone()),
        timeout: shared.config.timeout,
        report: LoadReport::default(),
        rng: rand::SeedableRng::seed_from_u64(index as u64 ^ 0x5eed),
    };
    let mut players = Vec::new();
    let mut failures = 0;
    for k in 0..4 {
        let name = format!("lt{}_{index}_{k}", shared.run_id);
        while failures < 50 {
            match client.register(&name).await {
                Ok(p) => {
                    players.push(p);
                    break;
                }
                Err(f) => {
                    client.record(&f);
                    failures += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
    // Client 0 also starts the idle games: started, then never touched.
    if index == 0 && players.len() == 4 {
        for _ in 0..shared.config.idle_games {
            if let Err(f) = client.start_table(&players).await {
                client.record(&f);
            }
        }
    }
    (client, players)
}

/// A client from the start until `stop`: plays its table.
async fn play(mut client: Client, players: Vec<Player>, shared: Arc<Shared>) -> LoadReport {
    let config = &shared.config;
    // Setup is not measured (only its errors are kept).
    client.report = LoadReport {
        errors: std::mem::take(&mut client.report.errors),
        ..LoadReport::default()
    };
    if players.len() < 4 {
        return client.report;
    }
    let mut table = TableState::default();
    while !shared.stop.load(Ordering::Relaxed) {
        let id = match &table.game {
            Some(id) => id.clone(),
            None => match client.start_table(&players).await {
                Ok(id) => {
                    table = TableState {
                        game: Some(id.clone()),
                        ..TableState::default()
                    };
                    id
                }
                Err(f) => {
                    client.record(&f);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let path = format!("/api/v1/games/{id}");
        // The latest response, of any seat: whose turn it is, the trick, the status.
        let latest = match table.latest.take() {
            Some(v) => v,
            None => match client
                .call::<View>("GET", &path, Some(&players[0].token), None)
                .await
            {
                Ok(v) => v,
                Err(f) => {
                    client.record(&f);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if latest.status != "active" {
            client.report.games_finished += u64::from(latest.status == "finished");
            table.game = None;
            continue;
        }
        if table.rules.is_none() {
            table.rules.clone_from(&latest.rules);
        }
        let Some(seat) = latest
            .turn
            .as_ref()
            .and_then(|t| t.seats.first())
            .map(|&s| usize::from(s))
            .filter(|&s| s < 4)
        else {
            continue;
        };
        let token = players[seat].token.as_str();
        let tracked = match config.views {
            ViewMode::Track => table.tracked_play(seat, &latest, &mut client.rng),
            ViewMode::Fetch => None,
        };
        let action = match tracked {
            Some(action) => action,
            None => {
                let mine = if latest.my_seat.map(usize::from) == Some(seat) {
                    latest
                } else {
                    match client.call::<View>("GET", &path, Some(token), None).await {
                        Ok(v) => v,
                        Err(f) => {
                            client.record(&f);
                            continue;
                        }
                    }
                };
                table.remember(seat, &mine);
                let action = random_action(&mine, &mut client.rng);
                table.latest = Some(mine);
                match action {
                    Some(action) => action,
                    None => continue,
                }
            }
        };
        match client
            .call::<View>(
                "POST",
                &format!("{path}/actions"),
                Some(token),
                Some(&action),
            )
            .await
        {
            Ok(after) => {
                client.report.actions_ok += 1;
                if let Some(ack) = &shared.ack {
                    let line = format!("{id}\t{seat}\t{action}\t{}\n", after.version);
                    if let Ok(mut f) = ack.lock() {
                        let _ = f.write_all(line.as_bytes());
                    }
                }
                table.remember(seat, &after);
                table.latest = Some(after);
            }
            Err(f) => {
                client.record(&f);
                // Start again from a fresh view.
                table.latest = None;
                table.hands = Default::default();
            }
        }
    }
    client.report
}

/// Runs the load test: every client a task of one event loop on one thread.
pub fn run(config: &LoadConfig) -> LoadReport {
    run_on_threads(config, 1)
}

/// Runs the load test with the clients split among `threads` event loops, each on its own
/// thread (at least one, at most one per client).
pub fn run_on_threads(config: &LoadConfig, threads: usize) -> LoadReport {
    let threads = threads.clamp(1, config.clients.max(1));
    let run_id: String = format!("{:06x}", rand::random::<u32>() & 0xff_ffff);
    let ack = config.ack_log.as_ref().map(|p| {
        Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .expect("open the ack log"),
        )
    });
    let shared = Arc::new(Shared {
        config: config.clone(),
        targets: config.urls.iter().map(|u| Target::parse(u)).collect(),
        run_id,
        stop: AtomicBool::new(false),
        ack,
    });
    let ready = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (shared, ready) = (shared.clone(), ready.clone());
            let clients: Vec<usize> = (t..config.clients).step_by(threads).collect();
            std::thread::Builder::new()
                .name(format!("loadtest-{t}"))
                .spawn(move || event_loop(&clients, &shared, &ready))
                .expect("start a load-test thread")
        })
        .collect();
    ready.wait();
    let started = Instant::now();
    std::thread::sleep(config.duration);
    shared.stop.store(true, Ordering::Relaxed);
    let mut report = LoadReport::default();
    for h in handles {
        if let Ok(r) = h.join() {
            report.merge(r);
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// One thread's clients: all set up, then (once every thread's clients are) all playing
/// until `stop`.
fn event_loop(clients: &[usize], shared: &Arc<Shared>, ready: &Barrier) -> LoadReport {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            ready.wait();
            let mut report = LoadReport::default();
            report.errors.insert(format!("runtime: {e}"), 1);
            return report;
        }
    };
    let set_up = runtime.block_on(async {
        let tasks: Vec<_> = clients
            .iter()
            .map(|&i| tokio::spawn(set_up(i, shared.clone())))
            .collect();
        let mut set_up = Vec::with_capacity(tasks.len());
        for task in tasks {
            if let Ok(client) = task.await {
                set_up.push(client);
            }
        }
        set_up
    });
    // Every client starts playing at the same instant.
    ready.wait();
    runtime.block_on(async {
        let tasks: Vec<_> = set_up
            .into_iter()
            .map(|(client, players)| tokio::spawn(play(client, players, shared.clone())))
            .collect();
        let mut report = LoadReport::default();
        for task in tasks {
            if let Ok(r) = task.await {
                report.merge(r);
            }
        }
        report
    })
}
