//! `leekha loadtest`: plays real games over HTTP against running servers with C concurrent
//! clients for D seconds and reports actions per second, latency percentiles and errors.
//!
//! Each client owns one table of four registered players and plays it with random legal
//! actions, learning whose turn it is from the previous response; a finished game is
//! replaced by a new one. See [`ViewMode`] for when it fetches views. With several base URLs, every request picks one at random, so
//! the instances play the same games at once.
//!
//! The generator shares the machine with the server it measures, so every microsecond of
//! CPU it spends is taken from the server. All clients therefore run as tasks of one event
//! loop on one thread (a thread per client cost ~150 µs of CPU per action, mostly in the
//! kernel switching between 32 threads), each with one keep-alive HTTP/1.1 connection per
//! server, spoken by the small client below (see `Http`).

use std::io::Write;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, RngExt};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::net::TcpStream;

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

/// A server requests go to, from a base URL parsed (and its name resolved) once.
struct Target {
    /// The `Host` header.
    host: String,
    /// The base URL's path, without a trailing slash: prepended to every request path.
    prefix: String,
    /// Where to connect, tried in order.
    addrs: Vec<SocketAddr>,
}

impl Target {
    /// A base URL (`http://host[:port][/prefix]`); the error reads like a transport error.
    fn parse(base: &str) -> Result<Target, String> {
        let url = url::Url::parse(base).map_err(|e| format!("bad uri: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!("bad uri: {} is not supported", url.scheme()));
        }
        let host = url
            .host_str()
            .ok_or_else(|| "bad uri: no host".to_owned())?;
        let host = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let addrs = url.socket_addrs(|| None).map_err(|e| format!("io: {e}"))?;
        if addrs.is_empty() {
            return Err("host not found".to_owned());
        }
        Ok(Target {
            host,
            prefix: url.path().trim_end_matches('/').to_owned(),
            addrs,
        })
    }
}

/// Largest response accepted, head and body.
const MAX_RESPONSE: usize = 16 << 20;
/// Largest response head accepted.
const MAX_HEAD: usize = 64 << 10;

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// No body (HEAD, 1xx, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(usize),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// What a client needs of a response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    status: u16,
    framing: Framing,
    keep_alive: bool,
}

/// Where the head ends (just past its blank line) in `buf`, searching from `from`.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| from + p + 4)
}

/// Parses a response head (status line and headers, up to the blank line).
fn parse_head(head: &[u8], method: &str) -> Result<Head, String> {
    let bad = |what: &str| format!("protocol: {what}");
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.trim_ascii_end());
    let status_line = lines.next().unwrap_or_default();
    let rest = status_line
        .strip_prefix(b"HTTP/1.")
        .ok_or_else(|| bad("not an HTTP/1.x response"))?;
    let http10 = rest.first() == Some(&b'0');
    if rest.get(1) != Some(&b' ') || rest.get(5).is_some_and(|&b| b != b' ') {
        return Err(bad("bad status line"));
    }
    let status = rest
        .get(2..5)
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..1000).contains(s))
        .ok_or_else(|| bad("bad status line"))?;
    let mut length = None;
    let mut chunked = false;
    let mut keep_alive = !http10;
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (line[..colon].trim_ascii(), line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or_else(|| bad("bad content-length"))?;
            if length.is_some_and(|l| l != n) {
                return Err(bad("conflicting content-length"));
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = value
                .split(|&b| b == b',')
                .any(|v| v.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    keep_alive = true;
                }
            }
        }
    }
    if status == 101 {
        keep_alive = false;
    }
    let framing = if method == "HEAD" || status < 200 || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        keep_alive = false;
        Framing::UntilClose
    };
    Ok(Head {
        status,
        framing,
        keep_alive,
    })
}

/// A chunked body's data ranges and the length of its whole encoding.
type Chunks = (Vec<Range<usize>>, usize);

/// A chunked body at the start of `buf`: the data ranges and the length of the whole
/// encoding (chunks, last chunk, trailers), or `None` while incomplete.
fn chunked_body(buf: &[u8]) -> Result<Option<Chunks>, String> {
    let mut chunks = Vec::new();
    let mut pos = 0;
    loop {
        let Some(eol) = crlf(buf, pos) else {
            return Ok(None);
        };
        let line = &buf[pos..eol];
        let size = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size.trim_ascii())
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .filter(|&s| s <= MAX_RESPONSE)
            .ok_or_else(|| "protocol: bad chunk size".to_owned())?;
        pos = eol + 2;
        if size == 0 {
            // Trailers, up to an empty line.
            loop {
                let Some(eol) = crlf(buf, pos) else {
                    return Ok(None);
                };
                let empty = eol == pos;
                pos = eol + 2;
                if empty {
                    return Ok(Some((chunks, pos)));
                }
            }
        }
        if buf.len() < pos + size + 2 {
            return Ok(None);
        }
        if &buf[pos + size..pos + size + 2] != b"\r\n" {
            return Err("protocol: bad chunk end".to_owned());
        }
        chunks.push(pos..pos + size);
        pos += size + 2;
    }
}

/// Where the line starting at `from` ends (the index of its `\r\n`).
fn crlf(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| from + p)
}

/// Writes all of `buf`.
async fn write_all(stream: &TcpStream, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match stream.try_write(buf) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether a kept connection still looks usable: nothing to read (the server has neither
/// closed it nor sent anything unasked). Costs no system call unless the event loop saw the
/// socket become readable since the last read, and then the one `read` that the response
/// would otherwise have spent finding nothing yet.
fn is_open(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

async fn connect(addrs: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last = "host not found".to_owned();
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = format!("io: {e}"),
        }
    }
    Err(last)
}

/// A minimal HTTP/1.1 client for one virtual client: one keep-alive connection per
/// server, one request at a time.
///
/// Hand-written rather than a general client (ureq, hyper, awc) because its CPU per
/// request is what the measurement is about: it writes each request with one `write`,
/// usually reads the response with one `read` into a buffer it keeps, and parses only
/// the status line and the three headers that delimit the body (`Content-Length`,
/// `Transfer-Encoding: chunked` and `Connection`); no header maps, and its buffers are
/// reused from request to request. Plain `http://` only. A connection is closed after any failure and
/// reopened by the next request; one the server closed while idle is noticed before
/// reuse (as ureq does), never by retrying a request that may have been applied.
struct Http {
    targets: Arc<[Result<Target, String>]>,
    /// The open connection to each target.
    conns: Vec<Option<TcpStream>>,
    /// The request being sent.
    out: Vec<u8>,
    /// Its body, serialized.
    body: Vec<u8>,
    /// The response: `rbuf[..filled]` has been read.
    rbuf: Vec<u8>,
    filled: usize,
    /// The status of the response being read and when its head arrived, once it has.
    head: Option<(u16, Instant)>,
}

impl Http {
    fn new(targets: Arc<[Result<Target, String>]>) -> Http {
        Http {
            conns: targets.iter().map(|_| None).collect(),
            targets,
            out: Vec::with_capacity(1024),
            body: Vec::with_capacity(256),
            rbuf: vec![0; 16 << 10],
            filled: 0,
            head: None,
        }
    }

    /// Reads more of the response into `rbuf`; `Ok(0)` at the end of the stream.
    async fn read_more(&mut self, stream: &TcpStream) -> Result<usize, String> {
        if self.rbuf.len() - self.filled < 4096 {
            if self.rbuf.len() >= MAX_RESPONSE {
                return Err(format!(
                    "the response body is larger than request limit: {MAX_RESPONSE}"
                ));
            }
            self.rbuf.resize(self.rbuf.len() * 2, 0);
        }
        loop {
            match stream.try_read(&mut self.rbuf[self.filled..]) {
                Ok(n) => {
                    self.filled += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    stream.readable().await.map_err(|e| format!("io: {e}"))?;
                }
                Err(e) => return Err(format!("io: {e}")),
            }
        }
    }

    /// Sends one request to target `i` and reads the response; returns where its body is
    /// in `rbuf`. Sets `head` as soon as the head has arrived, so that a caller whose
    /// timeout drops this future still knows the status.
    async fn exchange(
        &mut self,
        i: usize,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Range<usize>, String> {
        let target = self.targets[i].as_ref().map_err(Clone::clone)?;
        self.out.clear();
        let _ = write!(
            self.out,
            "{method} {}{path} HTTP/1.1\r\nhost: {}\r\nuser-agent: leekha-loadtest\r\n",
            target.prefix, target.host
        );
        if let Some(t) = token {
            let _ = write!(self.out, "authorization: Bearer {t}\r\n");
        }
        if method != "GET" {
            self.body.clear();
            if let Some(b) = body {
                serde_json::to_writer(&mut self.body, b).map_err(|e| format!("body: {e}"))?;
            }
            let _ = write!(
                self.out,
                "content-type: application/json\r\ncontent-length: {}\r\n\r\n",
                self.body.len()
            );
            self.out.extend_from_slice(&self.body);
        } else {
            self.out.extend_from_slice(b"\r\n");
        }
        // Taken out: it goes back only after a complete, well-delimited response.
        let stream = match self.conns[i].take() {
            Some(s) if is_open(&s) => s,
            _ => connect(&target.addrs).await?,
        };
        write_all(&stream, &self.out)
            .await
            .map_err(|e| format!("io: {e}"))?;
        self.filled = 0;
        let (head, body_start) = loop {
            let mut scanned = 0;
            let end = loop {
                if let Some(end) = head_end(&self.rbuf[..self.filled], scanned) {
                    break end;
                }
                if self.filled > MAX_HEAD {
                    return Err(format!("response header is too big: > {MAX_HEAD}"));
                }
                scanned = self.filled.saturating_sub(3);
                if self.read_more(&stream).await? == 0 {
                    // ureq's words, so that reports read as before.
                    return Err("io: Peer disconnected".to_owned());
                }
            };
            let head = parse_head(&self.rbuf[..end], method)?;
            if head.status >= 200 || head.status == 101 {
                // (101 Switching Protocols ends HTTP on this connection: not kept.)
                break (head, end);
            }
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            self.rbuf.copy_within(end..self.filled, 0);
            self.filled -= end;
        };
        self.head = Some((head.status, Instant::now()));
        let (body, end) = match head.framing {
            Framing::Empty => (body_start..body_start, body_start),
            Framing::Length(n) => {
                let end = body_start + n;
                if end > MAX_RESPONSE {
                    return Err(format!(
                        "the response body is larger than request limit: {MAX_RESPONSE}"
                    ));
                }
                while self.filled < end {
                    if self.read_more(&stream).await? == 0 {
                        return Err("io: Peer disconnected".to_owned());
                    }
                }
                (body_start..end, end)
            }
            Framing::UntilClose => {
                while self.read_more(&stream).await? > 0 {}
                (body_start..self.filled, self.filled)
            }
            Framing::Chunked => {
                let (chunks, len) = loop {
                    if let Some(parsed) = chunked_body(&self.rbuf[body_start..self.filled])? {
                        break parsed;
                    }
                    if self.read_more(&stream).await? == 0 {
                        return Err("io: Peer disconnected".to_owned());
                    }
                };
                // Moves the chunks' data together, in place.
                let mut to = body_start;
                for chunk in chunks {
                    let n = chunk.len();
                    self.rbuf
                        .copy_within(body_start + chunk.start..body_start + chunk.end, to);
                    to += n;
                }
                (body_start..to, body_start + len)
            }
        };
        // Kept only if nothing unasked followed the response.
        if head.keep_alive && end == self.filled {
            self.conns[i] = Some(stream);
        }
        Ok(body)
    }
}

struct Client {
    http: Http,
    timeout: Duration,
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

/// The one field a client reads of a register response.
#[derive(Deserialize)]
struct Session {
    #[serde(default)]
    access_token: Value,
}

/// The one field a client reads of a created game.
#[derive(Deserialize)]
struct Created {
    #[serde(default)]
    id: Value,
}

impl Client {
    /// One request; a 2xx body is parsed as `T` (a failure if it does not parse).
    async fn call<T: DeserializeOwned>(
        &mut self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<T, Failure> {
        let i = if self.http.targets.len() == 1 {
            0
        } else {
            self.rng.random_range(0..self.http.targets.len())
        };
        let started = Instant::now();
        self.http.head = None;
        let deadline = tokio::time::Instant::from_std(started + self.timeout);
        let result =
            tokio::time::timeout_at(deadline, self.http.exchange(i, method, path, token, body))
                .await;
        let head = self.http.head.take();
        // Up to the response head, as before (ureq returned there and read the body after).
        let until = head.map_or_else(Instant::now, |(_, at)| at);
        let ms = until.duration_since(started).as_secs_f64() * 1000.0;
        self.report.request_ms.push(ms);
        let (status, text) = match (result, head) {
            (Ok(Ok(range)), Some((status, _))) => (status, &self.http.rbuf[range]),
            // The head came but not the whole body: an empty body, an error below.
            (_, Some((status, _))) => (status, &[][..]),
            (Ok(Err(e)), None) => return Err(Failure::Transport(e)),
            (Err(_), None) => return Err(Failure::Transport("timeout: global".to_owned())),
            (Ok(Ok(_)), None) => return Err(Failure::Transport("protocol: no head".to_owned())),
        };
        if (200..300).contains(&status) {
            if path.ends_with("/actions") {
                self.report.action_ms.push(ms);
            }
            serde_json::from_slice(text)
                .map_err(|e| Failure::Status(status, format!("unreadable body: {e}")))
        } else {
            let code = serde_json::from_slice::<Value>(text)
                .ok()
                .and_then(|v| v["code"].as_str().map(str::to_owned))
                .unwrap_or_default();
            Err(Failure::Status(status, code))
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

    async fn register(&mut self, name: &str) -> Result<Player, Failure> {
        let body = json!({"username": name, "password": "load-test-password"});
        let v: Session = self
            .call("POST", "/api/v1/auth/register", None, Some(&body))
            .await?;
        Ok(Player {
            token: v.access_token.as_str().unwrap_or_default().to_owned(),
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
            if let Err(f) = start_table(&mut client, &players).await {
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
            None => match start_table(&mut client, &players).await {
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

async fn start_table(client: &mut Client, players: &[Player]) -> Result<String, Failure> {
    let created: Created = client
        .call(
            "POST",
            "/api/v1/games",
            Some(&players[0].token),
            Some(&json!({})),
        )
        .await?;
    let id = created.id.as_str().unwrap_or_default().to_owned();
    for (seat, p) in players.iter().enumerate().skip(1) {
        client
            .call::<serde::de::IgnoredAny>(
                "POST",
                &format!("/api/v1/games/{id}/join"),
                Some(&p.token),
                Some(&json!({"seat": seat})),
            )
            .await?;
    }
    Ok(id)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_heads_say_how_the_body_ends() {
        let head = |text: &str, method| parse_head(text.as_bytes(), method);
        assert_eq!(
            head(
                "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: application/json\r\n\r\n",
                "GET"
            ),
            Ok(Head {
                status: 200,
                framing: Framing::Length(12),
                keep_alive: true
            })
        );
        assert_eq!(
            head(
                "HTTP/1.1 201 Created\r\ntransfer-encoding: gzip, Chunked\r\nconnection: Close\r\n\r\n",
                "POST"
            ),
            Ok(Head {
                status: 201,
                framing: Framing::Chunked,
                keep_alive: false
            })
        );
        assert_eq!(
            head("HTTP/1.0 200 OK\r\n\r\n", "GET"),
            Ok(Head {
                status: 200,
                framing: Framing::UntilClose,
                keep_alive: false
            })
        );
        assert_eq!(
            head(
                "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 0\r\n\r\n",
                "GET"
            ),
            Ok(Head {
                status: 200,
                framing: Framing::Length(0),
                keep_alive: true
            })
        );
        assert_eq!(
            head(
                "HTTP/1.1 304 Not Modified\r\ncontent-length: 99\r\n\r\n",
                "GET"
            ),
            Ok(Head {
                status: 304,
                framing: Framing::Empty,
                keep_alive: true
            })
        );
        assert!(head("HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n", "GET").is_err());
        assert!(head("HTTP/1.1 2000 OK\r\n\r\n", "GET").is_err());
        assert!(head("SSH-2.0-OpenSSH\r\n\r\n", "GET").is_err());
    }

    #[test]
    fn chunked_bodies_are_decoded_once_complete() {
        let encoded = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        let whole = encoded.len() - 4;
        let (chunks, len) = chunked_body(encoded).unwrap().unwrap();
        assert_eq!(len, whole);
        let data: Vec<u8> = chunks
            .into_iter()
            .flat_map(|c| encoded[c].to_vec())
            .collect();
        assert_eq!(data, b"Wikipedia");
        for cut in 0..whole {
            assert_eq!(chunked_body(&encoded[..cut]), Ok(None), "{cut}");
        }
        assert!(chunked_body(b"zz\r\n").is_err());
        assert!(chunked_body(b"2\r\nabc\r\n0\r\n\r\n").is_err());
    }

    /// A server answering with canned responses, one per request, on connections it closes
    /// after the responses marked so; returns how many connections it accepted.
    fn canned_server(
        responses: Vec<(&'static str, bool)>,
    ) -> (String, std::thread::JoinHandle<usize>) {
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut responses = responses.into_iter();
            let mut connections = 0;
            'accept: loop {
                let (mut socket, _) = listener.accept().unwrap();
                connections += 1;
                loop {
                    // One request: a head (and a body of its content-length).
                    let mut request = Vec::new();
                    let mut byte = [0u8];
                    while !request.ends_with(b"\r\n\r\n") {
                        if socket.read(&mut byte).unwrap() == 0 {
                            continue 'accept;
                        }
                        request.push(byte[0]);
                    }
                    let text = String::from_utf8(request).unwrap();
                    let length = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .map_or(0, |n| n.parse().unwrap());
                    let mut body = vec![0; length];
                    socket.read_exact(&mut body).unwrap();
                    let Some((response, close)) = responses.next() else {
                        break 'accept;
                    };
                    socket.write_all(response.as_bytes()).unwrap();
                    if responses.len() == 0 {
                        break 'accept;
                    }
                    if close {
                        continue 'accept;
                    }
                }
            }
            connections
        });
        (url, server)
    }

    #[derive(Debug, Deserialize)]
    struct X {
        x: u32,
    }

    /// A client of `urls` and the event loop to run it on.
    fn test_client(urls: &[&str], timeout: Duration) -> (Client, tokio::runtime::Runtime) {
        let client = Client {
            http: Http::new(urls.iter().map(|u| Target::parse(u)).collect()),
            timeout,
            report: LoadReport::default(),
            rng: rand::SeedableRng::seed_from_u64(1),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        (client, runtime)
    }

    #[test]
    fn the_client_keeps_connections_and_reads_every_kind_of_body() {
        let (url, server) = canned_server(vec![
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"x\":1}",
                false,
            ),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{\"x\r\n4\r\n\":2}\r\n0\r\n\r\n",
                false,
            ),
            (
                "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 7\r\n\r\n{\"x\":3}",
                true,
            ),
            // Then closed while idle, without saying so.
            (
                "HTTP/1.1 404 Not Found\r\ncontent-length: 20\r\n\r\n{\"code\":\"not_found\"}",
                true,
            ),
            ("HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nnot", false),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n{\"x\":6}",
                false,
            ),
        ]);
        let (mut client, runtime) = test_client(&[&url], Duration::from_secs(5));
        runtime.block_on(async {
            let body = json!({"a": 1});
            for want in 1..=3 {
                let got = client
                    .call::<X>("POST", "/x/actions", Some("t"), Some(&body))
                    .await;
                assert_eq!(got.ok().map(|x| x.x), Some(want));
            }
            match client.call::<X>("GET", "/x", None, None).await {
                Err(Failure::Status(404, code)) => assert_eq!(code, "not_found"),
                _ => panic!("not the 404"),
            }
            // The server has closed the kept connection: noticed before it is used.
            tokio::time::sleep(Duration::from_millis(100)).await;
            match client.call::<X>("GET", "/x", None, None).await {
                Err(Failure::Status(200, e)) => assert!(e.starts_with("unreadable body"), "{e}"),
                _ => panic!("not the unreadable body"),
            }
            assert_eq!(
                client
                    .call::<X>("GET", "/x", None, None)
                    .await
                    .ok()
                    .map(|x| x.x),
                Some(6)
            );
        });
        drop(client);
        assert_eq!(server.join().unwrap(), 3);
    }

    #[test]
    fn silence_is_a_timeout_and_no_server_a_transport_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let silent = format!("http://{}", listener.local_addr().unwrap());
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", l.local_addr().unwrap())
        };
        let (mut client, runtime) = test_client(&[&silent, &closed], Duration::from_millis(200));
        runtime.block_on(async {
            for _ in 0..8 {
                if let Err(f) = client.call::<X>("GET", "/", None, None).await {
                    client.record(&f);
                }
            }
        });
        let errors = &client.report.errors;
        assert_eq!(errors.values().sum::<u64>(), 8, "{errors:?}");
        assert!(
            errors.contains_key("transport: timeout: global"),
            "{errors:?}"
        );
        assert!(
            errors
                .keys()
                .any(|k| k.starts_with("transport: io: Connection refused")),
            "{errors:?}"
        );
        assert_eq!(client.report.request_ms.len(), 8);
        drop(listener);
    }
}
