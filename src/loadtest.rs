//! `leekha loadtest`: plays real games over HTTP against running servers with C concurrent
//! clients for D seconds and reports actions per second, latency percentiles and errors.
//!
//! Each client owns one table of four registered players and plays it with random legal
//! actions, learning whose turn it is from the previous response; a finished game is
//! replaced by a new one. See [`ViewMode`] for when it fetches views. With several base URLs, every request picks one at random, so
//! the instances play the same games at once.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, RngExt};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::rules::{Card, CardSet, RuleOptions, Seat, Trick, check_pass, legal_plays};

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

/// What happened.
#[derive(Debug, Default, Clone)]
pub struct LoadReport {
    /// Actions answered 200.
    pub actions_ok: u64,
    /// Requests that failed (status or transport), by kind.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// Latencies of the action requests (ms).
    pub action_ms: Vec<f64>,
    /// Latencies of every request (ms).
    pub request_ms: Vec<f64>,
    /// Games finished.
    pub games_finished: u64,
    /// Wall time.
    pub elapsed: Duration,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

impl LoadReport {
    fn merge(&mut self, other: LoadReport) {
        self.actions_ok += other.actions_ok;
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.action_ms.extend(other.action_ms);
        self.request_ms.extend(other.request_ms);
        self.games_finished += other.games_finished;
    }

    /// Actions per second.
    pub fn actions_per_sec(&self) -> f64 {
        self.actions_ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// (p50, p95, p99, max) of action latency in ms.
    pub fn action_percentiles(&self) -> (f64, f64, f64, f64) {
        let mut v = self.action_ms.clone();
        v.sort_by(f64::total_cmp);
        (
            percentile(&v, 50.0),
            percentile(&v, 95.0),
            percentile(&v, 99.0),
            v.last().copied().unwrap_or(0.0),
        )
    }

    /// The report as JSON (for scripts).
    pub fn to_json(&self) -> Value {
        let (p50, p95, p99, max) = self.action_percentiles();
        json!({
            "actions_ok": self.actions_ok,
            "actions_per_sec": self.actions_per_sec(),
            "requests": self.request_ms.len(),
            "requests_per_sec": self.request_ms.len() as f64 / self.elapsed.as_secs_f64().max(1e-9),
            "errors": self.errors,
            "games_finished": self.games_finished,
            "latency_ms": {"p50": p50, "p95": p95, "p99": p99, "max": max},
            "elapsed_s": self.elapsed.as_secs_f64(),
        })
    }
}

impl std::fmt::Display for LoadReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (p50, p95, p99, max) = self.action_percentiles();
        let errors: u64 = self.errors.values().sum();
        writeln!(f, "elapsed          {:.1} s", self.elapsed.as_secs_f64())?;
        writeln!(
            f,
            "actions          {} ok, {:.1} actions/s",
            self.actions_ok,
            self.actions_per_sec()
        )?;
        writeln!(
            f,
            "requests         {} ({:.1}/s, views + actions)",
            self.request_ms.len(),
            self.request_ms.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
        )?;
        writeln!(
            f,
            "action latency   p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms, max {max:.2} ms"
        )?;
        writeln!(f, "games finished   {}", self.games_finished)?;
        write!(f, "errors           {errors}")?;
        for (k, v) in &self.errors {
            write!(f, " [{k}: {v}]")?;
        }
        Ok(())
    }
}

struct Client {
    agent: ureq::Agent,
    urls: Vec<String>,
    report: LoadReport,
    rng: rand::rngs::StdRng,
}

struct Player {
    token: String,
}

enum Failure {
    Status(u16, String),
    Transport(String),
}

impl Client {
    fn url(&mut self, path: &str) -> String {
        let i = if self.urls.len() == 1 {
            0
        } else {
            self.rng.random_range(0..self.urls.len())
        };
        format!("{}{path}", self.urls[i])
    }

    /// One request; a 2xx body is parsed as `T` (a failure if it does not parse).
    fn call<T: DeserializeOwned>(
        &mut self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<T, Failure> {
        let url = self.url(path);
        let started = Instant::now();
        let result = match (method, body) {
            ("GET", _) => {
                let mut req = self.agent.get(&url);
                if let Some(t) = token {
                    req = req.header("authorization", &format!("Bearer {t}"));
                }
                req.call()
            }
            (_, body) => {
                let mut req = self
                    .agent
                    .post(&url)
                    .header("content-type", "application/json");
                if let Some(t) = token {
                    req = req.header("authorization", &format!("Bearer {t}"));
                }
                req.send(body.map(Value::to_string).unwrap_or_default().as_bytes())
            }
        };
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        self.report.request_ms.push(ms);
        match result {
            Ok(mut res) => {
                let status = res.status().as_u16();
                let text = res.body_mut().read_to_string().unwrap_or_default();
                if (200..300).contains(&status) {
                    if path.ends_with("/actions") {
                        self.report.action_ms.push(ms);
                    }
                    serde_json::from_str(&text)
                        .map_err(|e| Failure::Status(status, format!("unreadable body: {e}")))
                } else {
                    let code = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| v["code"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    Err(Failure::Status(status, code))
                }
            }
            Err(e) => Err(Failure::Transport(e.to_string())),
        }
    }

    fn record(&mut self, failure: &Failure) {
        let key = match failure {
            Failure::Status(s, code) => format!("{s} {code}"),
            Failure::Transport(e) => {
                format!("transport: {}", e.chars().take(40).collect::<String>())
            }
        };
        *self.report.errors.entry(key).or_default() += 1;
    }

    fn register(&mut self, name: &str) -> Result<Player, Failure> {
        let body = json!({"username": name, "password": "load-test-password"});
        let v: Value = self.call("POST", "/api/v1/auth/register", None, Some(&body))?;
        Ok(Player {
            token: v["access_token"].as_str().unwrap_or_default().to_owned(),
        })
    }
}

/// The parts of a game view (`GameView` in the API) a client needs: parsed into these
/// types, not a generic JSON tree, so the load generator spends little CPU of the machine
/// it shares with the server.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct View {
    status: String,
    version: i64,
    rules: Option<RuleOptions>,
    my_seat: Option<u8>,
    turn: Option<TurnPart>,
    round: Option<RoundPart>,
    legal_actions: Option<LegalPart>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TurnPart {
    seats: Vec<u8>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoundPart {
    number: u64,
    phase: String,
    hand: Vec<Card>,
    trick: TrickPart,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TrickPart {
    leader: u8,
    cards: Vec<PlayedPart>,
}

#[derive(Debug, Deserialize)]
struct PlayedPart {
    card: Card,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct LegalPart {
    #[serde(rename = "type")]
    kind: String,
    cards: Vec<Card>,
}

/// Picks a random legal action from a seat's view.
fn random_action<R: Rng + ?Sized>(view: &View, rng: &mut R) -> Option<Value> {
    let legal = view.legal_actions.as_ref()?;
    let cards = &legal.cards;
    if cards.is_empty() {
        return None;
    }
    match legal.kind.as_str() {
        "play" => Some(
            json!({"type": "play", "card": cards[rng.random_range(0..cards.len())].to_string()}),
        ),
        "pass" => {
            let rules = view.rules.as_ref()?;
            let hand: CardSet = view.round.as_ref()?.hand.iter().copied().collect();
            for _ in 0..500 {
                let mut pick = CardSet::EMPTY;
                while pick.len() < 3 {
                    pick.insert(cards[rng.random_range(0..cards.len())]);
                }
                if check_pass(hand, pick, rules).is_ok() {
                    let codes: Vec<String> = pick.iter().map(|c| c.to_string()).collect();
                    return Some(json!({"type": "pass", "cards": codes}));
                }
            }
            None
        }
        _ => None,
    }
}

fn run_client(
    index: usize,
    run: &str,
    config: &LoadConfig,
    stop: &AtomicBool,
    ready: &Barrier,
    ack: Option<&Mutex<std::fs::File>>,
) -> LoadReport {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(config.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut client = Client {
        agent,
        urls: config.urls.clone(),
        report: LoadReport::default(),
        rng: rand::SeedableRng::seed_from_u64(index as u64 ^ 0x5eed),
    };
    let mut players = Vec::new();
    let mut failures = 0;
    for k in 0..4 {
        let name = format!("lt{run}_{index}_{k}");
        while failures < 50 {
            match client.register(&name) {
                Ok(p) => {
                    players.push(p);
                    break;
                }
                Err(f) => {
                    client.record(&f);
                    failures += 1;
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }
    // Client 0 also starts the idle games: started, then never touched.
    if index == 0 && players.len() == 4 {
        for _ in 0..config.idle_games {
            if let Err(f) = start_table(&mut client, &players) {
                client.record(&f);
            }
        }
    }
    // Setup is not measured: every client starts playing at the same instant.
    ready.wait();
    client.report = LoadReport {
        errors: client.report.errors.clone(),
        ..LoadReport::default()
    };
    if players.len() < 4 {
        return client.report;
    }
    let mut table = TableState::default();
    while !stop.load(Ordering::Relaxed) {
        let id = match &table.game {
            Some(id) => id.clone(),
            None => match start_table(&mut client, &players) {
                Ok(id) => {
                    table = TableState {
                        game: Some(id.clone()),
                        ..TableState::default()
                    };
                    id
                }
                Err(f) => {
                    client.record(&f);
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            },
        };
        let path = format!("/api/v1/games/{id}");
        // The latest response, of any seat: whose turn it is, the trick, the status.
        let latest = match table.latest.take() {
            Some(v) => v,
            None => {
                match client.call::<View>("GET", &path, Some(&players[0].token.clone()), None) {
                    Ok(v) => v,
                    Err(f) => {
                        client.record(&f);
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                }
            }
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
        let token = players[seat].token.clone();
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
                    match client.call::<View>("GET", &path, Some(&token), None) {
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
        match client.call::<View>(
            "POST",
            &format!("{path}/actions"),
            Some(&token),
            Some(&action),
        ) {
            Ok(after) => {
                client.report.actions_ok += 1;
                if let Some(ack) = ack {
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

/// What a client knows of its table between requests.
#[derive(Default)]
struct TableState {
    game: Option<String>,
    rules: Option<RuleOptions>,
    /// The latest response (a seat's view).
    latest: Option<View>,
    /// Each seat's hand after the exchange, with its round number, from that seat's own
    /// last response.
    hands: [Option<(u64, CardSet)>; 4],
}

impl TableState {
    /// Remembers a seat's hand from its own view, once the round's exchange is over.
    fn remember(&mut self, seat: usize, view: &View) {
        let Some(round) = &view.round else { return };
        if view.my_seat.map(usize::from) != Some(seat) || round.phase != "playing" {
            return;
        }
        self.hands[seat] = Some((round.number, round.hand.iter().copied().collect()));
    }

    /// A random legal play for `seat` from its remembered hand and the trick in `latest`,
    /// or `None` when the client does not know enough (then it fetches the seat's view).
    fn tracked_play<R: Rng + ?Sized>(
        &mut self,
        seat: usize,
        latest: &View,
        rng: &mut R,
    ) -> Option<Value> {
        let round = latest.round.as_ref()?;
        if round.phase != "playing" {
            return None;
        }
        let (known_round, hand) = self.hands[seat]?;
        if known_round != round.number {
            return None;
        }
        let leader = Seat::new(round.trick.leader)?;
        let cards: Vec<Card> = round.trick.cards.iter().map(|p| p.card).collect();
        let trick = Trick::from_cards(leader, &cards)?;
        let legal: Vec<Card> = legal_plays(hand, &trick, self.rules.as_ref()?)
            .iter()
            .collect();
        if legal.is_empty() {
            return None;
        }
        let card = legal[rng.random_range(0..legal.len())];
        let mut rest = hand;
        rest.remove(card);
        self.hands[seat] = Some((round.number, rest));
        Some(json!({"type": "play", "card": card.to_string()}))
    }
}

fn start_table(client: &mut Client, players: &[Player]) -> Result<String, Failure> {
    let creator = players[0].token.clone();
    let body = json!({});
    let created: Value = client.call("POST", "/api/v1/games", Some(&creator), Some(&body))?;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    for (seat, p) in players.iter().enumerate().skip(1) {
        let token = p.token.clone();
        client.call::<serde::de::IgnoredAny>(
            "POST",
            &format!("/api/v1/games/{id}/join"),
            Some(&token),
            Some(&json!({"seat": seat})),
        )?;
    }
    Ok(id)
}

/// Runs the load test.
pub fn run(config: &LoadConfig) -> LoadReport {
    let stop = Arc::new(AtomicBool::new(false));
    let run_id: String = format!("{:06x}", rand::random::<u32>() & 0xff_ffff);
    let ack = config.ack_log.as_ref().map(|p| {
        Arc::new(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .expect("open the ack log"),
        ))
    });
    let ready = Arc::new(Barrier::new(config.clients + 1));
    let handles: Vec<_> = (0..config.clients)
        .map(|i| {
            let (stop, config, run_id, ack, ready) = (
                stop.clone(),
                config.clone(),
                run_id.clone(),
                ack.clone(),
                ready.clone(),
            );
            std::thread::spawn(move || {
                run_client(i, &run_id, &config, &stop, &ready, ack.as_deref())
            })
        })
        .collect();
    ready.wait();
    let started = Instant::now();
    std::thread::sleep(config.duration);
    stop.store(true, Ordering::Relaxed);
    let mut report = LoadReport::default();
    for h in handles {
        if let Ok(r) = h.join() {
            report.merge(r);
        }
    }
    report.elapsed = started.elapsed();
    report
}
