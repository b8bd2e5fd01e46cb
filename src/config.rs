//! Configuration read from the environment.
//!
//! Every variable has a default that works on a fresh machine; a bad value stops the process
//! with a message that names the variable, the value and what was expected. clap reads the
//! variables (its `env` feature): each field of [`Config`] names its variable, its default
//! and the `value_parser` that checks it.

use std::{env, fmt, net::SocketAddr, ops::RangeInclusive, str::FromStr, time::Duration};

use clap::builder::TypedValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};

use crate::secret::Secret;

/// Which database engine a [`DatabaseUrl`] selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL, the production database.
    Postgres,
    /// An embedded SQLite file, the zero-setup default (single instance only).
    Sqlite,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Postgres => "postgresql",
            Backend::Sqlite => "sqlite",
        })
    }
}

/// A database location. Its `Display` and `Debug` never show a password.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    backend: Backend,
    /// For PostgreSQL the full URL; for SQLite the file path.
    target: String,
}

impl DatabaseUrl {
    /// Parses `postgres://…` / `postgresql://…` as PostgreSQL, and `sqlite://path`,
    /// `sqlite:path` or a bare file path as SQLite.
    ///
    /// # Errors
    /// An empty value, an in-memory SQLite database (each pooled connection would get its own
    /// empty database) or an unknown scheme such as `mysql://`.
    pub fn parse(raw: &str) -> Result<Self, ConfigError> {
        let raw = raw.trim();
        let bad = |why: &str| ConfigError::Invalid {
            var: "DATABASE_URL".to_owned(),
            value: redact(raw),
            expected: why.to_owned(),
        };
        if raw.is_empty() {
            return Err(bad("a postgres:// URL or a SQLite file path"));
        }
        if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
            return Ok(Self {
                backend: Backend::Postgres,
                target: raw.to_owned(),
            });
        }
        let path = raw
            .strip_prefix("sqlite://")
            .or_else(|| raw.strip_prefix("sqlite:"))
            .unwrap_or(raw);
        if path.is_empty() || path == ":memory:" || path.contains("mode=memory") {
            return Err(bad(
                "a SQLite file path (in-memory databases are not shared across the pool)",
            ));
        }
        // libpq's other form, `host=… user=… password=…`, would otherwise name a SQLite
        // file (and its password would be logged as the file's name).
        if raw.contains('=') && raw.contains(char::is_whitespace) && !raw.contains("://") {
            return Err(ConfigError::Invalid {
                var: "DATABASE_URL".to_owned(),
                value: "<keyword=value settings>".to_owned(),
                expected: "a postgres://user:password@host:port/database URL (libpq's \
                           keyword=value form is not read) or a SQLite file path"
                    .to_owned(),
            });
        }
        if let Some((scheme, _)) = raw.split_once("://")
            && !scheme.eq_ignore_ascii_case("sqlite")
        {
            return Err(bad(
                "a postgres:// URL or a SQLite file path (unknown scheme)",
            ));
        }
        Ok(Self {
            backend: Backend::Sqlite,
            target: path.to_owned(),
        })
    }

    /// The engine this URL selects.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The string to hand to the driver. Contains the password: never log it.
    pub fn expose(&self) -> &str {
        &self.target
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend {
            Backend::Postgres => f.write_str(&redact(&self.target)),
            Backend::Sqlite => write!(f, "sqlite:{}", self.target),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Replaces the passwords of a URL with `***`: that of `scheme://user:password@host`, and
/// the value of every query parameter naming one (`?password=…`, `sslpassword=…`, which
/// libpq reads as well).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some((key, _)) if key.to_ascii_lowercase().ends_with("password") => {
                        format!("{key}=***")
                    }
                    _ => param.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// The browser origins that may call the API across origins (CORS), from
/// `LEEKHA_CORS_ORIGINS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CorsOrigins {
    /// No CORS at all, the default: browsers keep pages of other origins out.
    #[default]
    Off,
    /// Any origin (`*`). Safe for this API only because it never takes credentials that a
    /// browser sends on its own (cookies): a page must hold a bearer token to do anything.
    Any,
    /// These origins exactly, as browsers send them in `Origin`: `scheme://host[:port]`,
    /// lowercase, without the default port.
    List(Vec<String>),
}

/// The proxies whose `X-Forwarded-For`/`Forwarded` entries are believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<ipnet::IpNet>);

impl TrustedProxies {
    /// Parses comma-separated addresses and CIDR ranges; empty for none.
    ///
    /// # Errors
    /// An item that is neither an IP address nor a CIDR range.
    pub fn parse(raw: &str) -> Result<Self, String> {
        raw.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                item.parse::<ipnet::IpNet>()
                    .or_else(|_| item.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| {
                        format!("comma-separated IP addresses or CIDR ranges (10.0.0.0/8); {item:?} is neither")
                    })
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether `ip` is one of the trusted proxies.
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }
}

impl CorsOrigins {
    /// Parses a comma-separated list of origins (`https://app.example.com,
    /// http://localhost:3000`), `*` alone for any origin, or nothing for none. Each origin
    /// is normalized as a browser writes it (`HTTPS://App.Example.com:443/` is
    /// `https://app.example.com`).
    ///
    /// # Errors
    /// An item that is not an `http` or `https` origin: with a path, a query, credentials,
    /// a wildcard host, `null`; or `*` together with other origins.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let items: Vec<&str> = raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if items.is_empty() {
            return Ok(Self::Off);
        }
        if items.contains(&"*") {
            return if items.len() == 1 {
                Ok(Self::Any)
            } else {
                Err("`*` alone (it allows every origin), or a list of origins without it".into())
            };
        }
        let mut origins = Vec::with_capacity(items.len());
        for item in items {
            let origin = Self::origin(item).map_err(|why| {
                format!(
                    "comma-separated origins such as https://app.example.com (scheme://host[:port]), \
                     or `*`; {item:?} {why}"
                )
            })?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(Self::List(origins))
    }

    fn origin(item: &str) -> Result<String, &'static str> {
        let url = url::Url::parse(item).map_err(|_| "is not a URL")?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err("is not http or https");
        }
        if url.host_str().is_none_or(|h| h.contains('*')) {
            return Err("has no host (wildcards are not supported)");
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("carries credentials");
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err("has a path, query or fragment: an origin has none");
        }
        Ok(url.origin().ascii_serialization())
    }

    /// Whether CORS is on.
    pub fn enabled(&self) -> bool {
        *self != Self::Off
    }
}

/// A configuration problem found at start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConfigError {
    /// A variable holds a value that cannot be used.
    #[error("{var}={value:?} is not valid: expected {expected}")]
    Invalid {
        /// The environment variable.
        var: String,
        /// The offending value (redacted when it may hold a secret).
        value: String,
        /// What would have been accepted.
        expected: String,
    },
}

impl ConfigError {
    /// The variable, value and expectation of a failed parse of [`Env`], without ever
    /// showing the value of a secret (the arguments with `hide_env_values`).
    fn from_clap(error: &clap::Error) -> Self {
        let source = std::error::Error::source(error);
        if let Some(e) = source.and_then(|s| s.downcast_ref::<ConfigError>()) {
            return e.clone();
        }
        let context = |kind| match error.get(kind) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        // Built, as in the parse that failed, so that arguments display as in its error.
        let mut command = Env::command();
        command.build();
        let arg = command
            .get_arguments()
            .find(|a| match context(ContextKind::InvalidArg) {
                Some(shown) => a.to_string() == shown,
                // clap names no argument for a value that is not UTF-8: the variable holding one.
                None => a
                    .get_env()
                    .and_then(env::var_os)
                    .is_some_and(|v| v.to_str().is_none()),
            });
        let var = arg.and_then(clap::Arg::get_env);
        let value = context(ContextKind::InvalidValue)
            .or_else(|| Some(env::var_os(var?)?.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let empty = value.is_empty();
        ConfigError::Invalid {
            var: var.map_or("a variable".into(), |v| v.to_string_lossy().into_owned()),
            value: if arg.is_some_and(clap::Arg::is_hide_env_values_set) {
                format!("<{} bytes>", value.len())
            } else {
                value
            },
            expected: source.map_or_else(
                || match error.kind() {
                    ErrorKind::InvalidUtf8 => "UTF-8 text".to_owned(),
                    // clap's own parsers (file paths) refuse an empty value without a reason.
                    ErrorKind::InvalidValue if empty => {
                        "a value (unset the variable to leave it out)".to_owned()
                    }
                    kind => kind.to_string(),
                },
                ToString::to_string,
            ),
        }
    }
}

/// The service configuration.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// `DATABASE_URL`; default: the SQLite file `leekha.db` in the working directory.
    #[arg(long, env = "DATABASE_URL", default_value = "leekha.db")]
    #[arg(value_parser = DatabaseUrl::parse)]
    pub database_url: DatabaseUrl,
    /// `LEEKHA_BIND`; default `127.0.0.1:8080`.
    #[arg(long, env = "LEEKHA_BIND", default_value = "127.0.0.1:8080", value_parser = socket_addr)]
    pub bind: SocketAddr,
    /// `LEEKHA_DB_POOL_SIZE`; default 16 on PostgreSQL, 8 on SQLite.
    // Read by `Env`: its default depends on the backend.
    #[arg(skip)]
    pub pool_size: u32,
    /// `LEEKHA_DB_TIMEOUT_MS`: how long a request waits for a database connection, and on
    /// SQLite for a lock another connection holds (`busy_timeout`), before it gets 503;
    /// default 5000.
    #[arg(long, env = "LEEKHA_DB_TIMEOUT_MS", default_value = "5000")]
    #[arg(value_parser = millis(100..=60_000))]
    pub db_timeout: Duration,
    /// `LEEKHA_MAX_BODY_BYTES`: the largest accepted request body; default 65536.
    #[arg(long, env = "LEEKHA_MAX_BODY_BYTES", default_value = "65536")]
    #[arg(value_parser = ranged::<usize>("bytes", 1024..=16 << 20))]
    pub max_body_bytes: usize,
    /// `LEEKHA_CLIENT_REQUEST_TIMEOUT_MS`: how long a client may take to send a request's
    /// headers, and then again its body; past it the answer is 408 and the connection is
    /// closed; default 10000.
    #[arg(
        long,
        env = "LEEKHA_CLIENT_REQUEST_TIMEOUT_MS",
        default_value = "10000"
    )]
    #[arg(value_parser = millis(100..=300_000))]
    pub client_request_timeout: Duration,
    /// `LEEKHA_KEEP_ALIVE_SECONDS`: how long an idle connection is kept open for a next
    /// request; 0 closes it after each response; default 5.
    #[arg(long, env = "LEEKHA_KEEP_ALIVE_SECONDS", default_value = "5")]
    #[arg(value_parser = ranged::<u64>("seconds", 0..=3600).map(Duration::from_secs))]
    pub keep_alive: Duration,
    /// `LEEKHA_MAX_CONNECTIONS`: open connections accepted at once, shared evenly among the
    /// workers (rounded down to a multiple of them, at least one each); further clients
    /// wait in the listen backlog; default 4096.
    #[arg(long, env = "LEEKHA_MAX_CONNECTIONS", default_value = "4096")]
    #[arg(value_parser = ranged::<usize>("an integer", 1..=1_000_000))]
    pub max_connections: usize,
    /// `LEEKHA_WORKERS`: HTTP worker threads; default: half the cores, at least one.
    #[arg(long, env = "LEEKHA_WORKERS", value_parser = ranged::<usize>("an integer", 1..=256))]
    pub workers: Option<usize>,
    /// `LEEKHA_JWT_SECRET`: the access-token signing key, at least 32 bytes. Required on
    /// PostgreSQL; on SQLite a random one is generated once and kept in the database.
    #[arg(long, env = "LEEKHA_JWT_SECRET", hide_env_values = true, value_parser = secret)]
    pub jwt_secret: Option<Secret>,
    /// `LEEKHA_JWT_PREVIOUS_SECRET`: the key before the last rotation; its tokens stay valid.
    #[arg(long, env = "LEEKHA_JWT_PREVIOUS_SECRET", hide_env_values = true, value_parser = secret)]
    pub jwt_previous_secret: Option<Secret>,
    /// `LEEKHA_ACCESS_TOKEN_TTL_SECONDS`: access-token lifetime; default 900 (15 min).
    #[arg(long, env = "LEEKHA_ACCESS_TOKEN_TTL_SECONDS", default_value = "900")]
    #[arg(value_parser = ranged::<i64>("seconds", 1..=86_400))]
    pub access_ttl_secs: i64,
    /// `LEEKHA_REFRESH_TOKEN_TTL_DAYS`: refresh-token lifetime; default 30.
    #[arg(long, env = "LEEKHA_REFRESH_TOKEN_TTL_DAYS", default_value = "30")]
    #[arg(value_parser = ranged::<i64>("days", 1..=365))]
    pub refresh_ttl_days: i64,
    /// `LEEKHA_AUTH_RATE_PER_MINUTE`: attempts per minute on register, login, guest and
    /// refresh, per client IP and per username; default 20.
    #[arg(long, env = "LEEKHA_AUTH_RATE_PER_MINUTE", default_value = "20")]
    #[arg(value_parser = ranged::<u32>("an integer", 1..=1_000_000))]
    pub auth_rate_per_minute: u32,
    /// `LEEKHA_MAX_ACTIVE_GAMES_PER_USER`: running games a user may hold seats in; creating
    /// or joining one more answers 409 `too_many_active_games`; default 100.
    #[arg(long, env = "LEEKHA_MAX_ACTIVE_GAMES_PER_USER", default_value = "100")]
    #[arg(value_parser = ranged::<i64>("an integer", 1..=100_000))]
    pub max_active_games_per_user: i64,
    /// `LEEKHA_SCHEDULER_INTERVAL_MS`: how often each instance looks for due turns,
    /// reminders and webhook deliveries (two loops: a slow receiver never holds up a turn);
    /// default 1000.
    #[arg(long, env = "LEEKHA_SCHEDULER_INTERVAL_MS", default_value = "1000")]
    #[arg(value_parser = millis(10..=60_000))]
    pub scheduler_interval: Duration,
    /// `LEEKHA_WEBHOOK_ALLOW_PRIVATE=1`: allow webhook URLs on private and loopback
    /// addresses (tests, private networks).
    #[arg(long, env = "LEEKHA_WEBHOOK_ALLOW_PRIVATE", default_value = "0")]
    #[arg(action = ArgAction::Set, value_parser = switch)]
    pub webhook_allow_private: bool,
    /// `LEEKHA_WEBHOOK_RETRY_BASE_MS`: the first retry delay of a failed webhook; each
    /// next one doubles, up to an hour; default 5000.
    #[arg(long, env = "LEEKHA_WEBHOOK_RETRY_BASE_MS", default_value = "5000")]
    #[arg(value_parser = millis(10..=3_600_000))]
    pub webhook_retry_base: Duration,
    /// `LEEKHA_WEBHOOK_MAX_AGE_SECONDS`: how long a webhook is retried; default 86400.
    #[arg(long, env = "LEEKHA_WEBHOOK_MAX_AGE_SECONDS", default_value = "86400")]
    #[arg(value_parser = ranged::<i64>("seconds", 1..=604_800))]
    pub webhook_max_age_secs: i64,
    /// `LEEKHA_FCM_URL`: where FCM HTTP v1 is (tests point it at a fake); default
    /// `https://fcm.googleapis.com`.
    #[arg(
        long,
        env = "LEEKHA_FCM_URL",
        value_parser = http_url,
        default_value = "https://fcm.googleapis.com"
    )]
    pub fcm_url: String,
    /// `LEEKHA_FCM_CREDENTIALS_FILE`: a Firebase service-account key (JSON); unset, no FCM.
    #[arg(long, env = "LEEKHA_FCM_CREDENTIALS_FILE")]
    pub fcm_credentials_file: Option<std::path::PathBuf>,
    /// `LEEKHA_APNS_URL`: where APNs is (tests point it at a fake); default
    /// `https://api.push.apple.com` (`https://api.sandbox.push.apple.com` for development
    /// builds of the app).
    #[arg(
        long,
        env = "LEEKHA_APNS_URL",
        value_parser = http_url,
        default_value = "https://api.push.apple.com"
    )]
    pub apns_url: String,
    /// `LEEKHA_APNS_KEY_FILE`: the APNs signing key (`AuthKey_….p8`: PKCS#8 PEM, P-256).
    /// APNs is on when this, `LEEKHA_APNS_KEY_ID`, `LEEKHA_APNS_TEAM_ID` and
    /// `LEEKHA_APNS_TOPIC` are all set.
    #[arg(long, env = "LEEKHA_APNS_KEY_FILE")]
    pub apns_key_file: Option<std::path::PathBuf>,
    /// `LEEKHA_APNS_KEY_ID`: the key's id (10 characters, from the developer account).
    #[arg(long, env = "LEEKHA_APNS_KEY_ID", value_parser = apple_id)]
    pub apns_key_id: Option<String>,
    /// `LEEKHA_APNS_TEAM_ID`: the developer team's id (10 characters).
    #[arg(long, env = "LEEKHA_APNS_TEAM_ID", value_parser = apple_id)]
    pub apns_team_id: Option<String>,
    /// `LEEKHA_APNS_TOPIC`: the app's bundle id, e.g. `com.example.leekha`.
    #[arg(long, env = "LEEKHA_APNS_TOPIC", value_parser = apns_topic)]
    pub apns_topic: Option<String>,
    /// `LEEKHA_APNS_CA_FILE`: extra root certificates (PEM) trusted for APNs beside the
    /// public ones (tests' fake, a private relay).
    #[arg(long, env = "LEEKHA_APNS_CA_FILE")]
    pub apns_ca_file: Option<std::path::PathBuf>,
    /// `LEEKHA_VAPID_PRIVATE_KEY_FILE`: the VAPID key (PEM, P-256) of Web Push; unset, one
    /// is generated once and kept in the database.
    #[arg(long, env = "LEEKHA_VAPID_PRIVATE_KEY_FILE")]
    pub vapid_private_key_file: Option<std::path::PathBuf>,
    /// `LEEKHA_VAPID_SUBJECT`: the contact sent with Web Push (`mailto:` or `https:`).
    #[arg(long, env = "LEEKHA_VAPID_SUBJECT", value_parser = vapid_subject)]
    pub vapid_subject: Option<String>,
    /// `LEEKHA_PUSH_INTERVAL_MS`: how often each instance looks for due pushes; default 100.
    #[arg(long, env = "LEEKHA_PUSH_INTERVAL_MS", default_value = "100")]
    #[arg(value_parser = millis(10..=60_000))]
    pub push_interval: Duration,
    /// `LEEKHA_PUSH_RETRY_BASE_MS`: the first retry delay of a push the service answered
    /// 429 or 5xx without `Retry-After`; each next one doubles; default 1000.
    #[arg(long, env = "LEEKHA_PUSH_RETRY_BASE_MS", default_value = "1000")]
    #[arg(value_parser = millis(10..=3_600_000))]
    pub push_retry_base: Duration,
    /// `LEEKHA_PUSH_SKIP_WATCHING=0`: push `your_turn`, `turn_reminder` and `chat_message`
    /// even to a user who has the game open live (an event stream on the delivering
    /// instance); default 1: those pushes are skipped, the open game shows them.
    #[arg(long, env = "LEEKHA_PUSH_SKIP_WATCHING", default_value = "1")]
    #[arg(action = ArgAction::Set, value_parser = switch)]
    pub push_skip_watching: bool,
    /// `LEEKHA_TRUST_PROXY=1`: the peer is a proxy that appends the client to
    /// `X-Forwarded-For`/`Forwarded` (only behind such a proxy); the client is the right-most
    /// hop no trusted proxy added (of `X-Forwarded-For` when there is one, else of
    /// `Forwarded`).
    #[arg(long, env = "LEEKHA_TRUST_PROXY", default_value = "0")]
    #[arg(action = ArgAction::Set, value_parser = switch)]
    pub trust_proxy: bool,
    /// `LEEKHA_TRUSTED_PROXIES`: addresses or CIDR ranges of proxies whose forwarding headers
    /// are believed (`10.0.0.0/8,192.0.2.7`); the client is the right-most hop not in them.
    /// Default none.
    #[arg(long, env = "LEEKHA_TRUSTED_PROXIES", default_value = "")]
    #[arg(value_parser = TrustedProxies::parse)]
    pub trusted_proxies: TrustedProxies,
    /// `LEEKHA_CORS_ORIGINS`: the browser origins allowed to call the API, comma-separated
    /// (`https://app.example.com,http://localhost:3000`), or `*` for any; default none (CORS
    /// off).
    #[arg(long, env = "LEEKHA_CORS_ORIGINS", default_value = "")]
    #[arg(value_parser = CorsOrigins::parse)]
    pub cors_origins: CorsOrigins,
    /// `LEEKHA_MAX_STREAMS`: event streams and long-polls open at once on this instance;
    /// one more answers 503 `too_many_streams` with `Retry-After`; default 3072. Each is
    /// a connection, so the connections the workers accept (`LEEKHA_MAX_CONNECTIONS`,
    /// rounded down to a multiple of them) must be more (the server refuses to start
    /// otherwise).
    #[arg(long, env = "LEEKHA_MAX_STREAMS", default_value = "3072")]
    #[arg(value_parser = ranged::<usize>("an integer", 1..=1_000_000))]
    pub max_streams: usize,
    /// `LEEKHA_STREAM_HEARTBEAT_SECONDS`: the longest silence on an event stream before a
    /// comment line keeps it open through proxies; default 15.
    #[arg(long, env = "LEEKHA_STREAM_HEARTBEAT_SECONDS", default_value = "15")]
    #[arg(value_parser = ranged::<u64>("seconds", 1..=15).map(Duration::from_secs))]
    pub stream_heartbeat: Duration,
    /// `LEEKHA_STREAM_MAX_SECONDS`: the longest an event stream stays open; then it ends
    /// and the client resumes with `Last-Event-ID` (a browser on a single-use ticket asks
    /// for a new one and reopens with `?after=`), which spreads long-lived clients over the
    /// instances again. 0, the default, keeps a stream open until its game ends, a logout, a
    /// ban or shutdown.
    #[arg(long, env = "LEEKHA_STREAM_MAX_SECONDS", default_value = "0")]
    #[arg(value_parser = ranged::<u64>("seconds", 0..=86_400).map(Duration::from_secs))]
    pub stream_max_age: Duration,
    /// `LEEKHA_STREAM_TICKET_TTL_SECONDS`: how long a stream ticket can be redeemed;
    /// default 60.
    #[arg(long, env = "LEEKHA_STREAM_TICKET_TTL_SECONDS", default_value = "60")]
    #[arg(value_parser = ranged::<i64>("seconds", 1..=60))]
    pub stream_ticket_ttl_secs: i64,
}

/// Everything clap reads: the [`Config`] and the one variable whose default depends on
/// another (the pool size, on the backend).
#[derive(Parser)]
#[command(name = "leekha")]
struct Env {
    #[command(flatten)]
    config: Config,
    /// `LEEKHA_DB_POOL_SIZE`: connections in the pool; default 16 on PostgreSQL, 8 on SQLite.
    #[arg(long, env = "LEEKHA_DB_POOL_SIZE", value_parser = ranged::<u32>("an integer", 1..=512))]
    pool_size: Option<u32>,
}

/// The variables the server reads, one paragraph each as their docs give them, for the
/// command line's help.
pub fn environment_help() -> String {
    let mut out = String::from(
        "Environment (every setting; a bad value stops the server, naming the variable):\n",
    );
    for arg in Env::command().get_arguments() {
        if arg.get_env().is_none() {
            continue;
        }
        let help = arg
            .get_long_help()
            .or_else(|| arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        out.push_str("  ");
        out.push_str(&help.replace('`', "").replace('\n', " "));
        out.push('\n');
    }
    // Read by the log subscriber, not here.
    out.push_str("  RUST_LOG: the log filter, e.g. info,leekha=debug; default info, with the lines of actix's HTTP/1 dispatcher off\n");
    out
}

impl Config {
    /// Reads the configuration from the process environment.
    ///
    /// # Errors
    /// The first variable whose value cannot be used.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::parse(Env::command(), ["leekha".to_owned()])
    }

    /// Reads the configuration from any key → value lookup (tests pass a map), never from
    /// the process environment.
    ///
    /// # Errors
    /// The first variable whose value cannot be used.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let command = Env::command();
        // clap reads a variable when its argument is built and takes no other value for it:
        // the lookup's values come in as options instead, and the arguments forget the
        // process environment.
        let given: Vec<String> = command
            .get_arguments()
            .filter_map(|a| {
                let value = get(&a.get_env()?.to_string_lossy())?;
                Some(format!("--{}={value}", a.get_long()?))
            })
            .collect();
        let args = std::iter::once("leekha".to_owned()).chain(given);
        Self::parse(command.mut_args(|a| a.env(None)), args)
    }

    fn parse(
        command: clap::Command,
        args: impl IntoIterator<Item = String>,
    ) -> Result<Self, ConfigError> {
        let Env {
            mut config,
            pool_size,
        } = command
            .try_get_matches_from(args)
            .and_then(|m| Env::from_arg_matches(&m))
            .map_err(|e| ConfigError::from_clap(&e))?;
        config.pool_size = pool_size.unwrap_or(match config.database_url.backend() {
            Backend::Postgres => 16,
            Backend::Sqlite => 8,
        });
        // Every stream holds a connection: with no connection left over, a full house of
        // streams would leave actions and health checks waiting in the listen backlog.
        // The connections the workers accept together, which the rounding may leave below
        // LEEKHA_MAX_CONNECTIONS.
        let usable = config.connections_per_worker() * config.http_workers();
        if config.max_streams >= usable {
            return Err(ConfigError::Invalid {
                var: "LEEKHA_MAX_STREAMS".into(),
                value: config.max_streams.to_string(),
                expected: format!(
                    "fewer than the {usable} connections the {} workers accept \
                     (LEEKHA_MAX_CONNECTIONS={} shared evenly): each stream holds a \
                     connection, and requests need some too",
                    config.http_workers(),
                    config.max_connections
                ),
            });
        }
        Ok(config)
    }

    /// The HTTP worker threads: `LEEKHA_WORKERS`, or half the cores, at least one. Half, not
    /// actix's one a core: a worker only speaks HTTP and hands the database work to the
    /// blocking threads, which need cores of their own (and so does PostgreSQL when it
    /// shares the machine). On two cores one worker spent a fifth less CPU per action than
    /// two, for more actions a second and a shorter tail (README, "Benchmarks").
    #[must_use]
    pub fn http_workers(&self) -> usize {
        self.workers.unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
            (cores / 2).max(1)
        })
    }

    /// The connections each worker accepts: `LEEKHA_MAX_CONNECTIONS` shared evenly, rounded
    /// down so that together they never hold more (at least one each, though).
    #[must_use]
    pub fn connections_per_worker(&self) -> usize {
        (self.max_connections / self.http_workers()).max(1)
    }

    /// A configuration for the given database with every other value at its default.
    pub fn for_database(database_url: DatabaseUrl) -> Self {
        let url = database_url.expose().to_owned();
        let mut config = Self::from_lookup(|k| (k == "DATABASE_URL").then(|| url.clone()))
            .expect("defaults are valid");
        config.database_url = database_url;
        config
    }
}

/// A number in `range`; otherwise the error says what was expected, e.g. `seconds 1..=86400`.
fn ranged<T>(unit: &'static str, range: RangeInclusive<T>) -> impl TypedValueParser<Value = T>
where
    T: FromStr + PartialOrd + fmt::Display + Clone + Send + Sync + 'static,
{
    move |raw: &str| {
        raw.trim()
            .parse()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| format!("{unit} {}..={}", range.start(), range.end()))
    }
}

/// Milliseconds in `range`, as a duration.
fn millis(range: RangeInclusive<u64>) -> impl TypedValueParser<Value = Duration> {
    ranged("milliseconds", range).map(Duration::from_millis)
}

/// An address and port to listen on; a host name (`localhost:8080`) is looked up once, at
/// start, and its first address taken.
fn socket_addr(raw: &str) -> Result<SocketAddr, &'static str> {
    use std::net::ToSocketAddrs;
    let raw = raw.trim();
    raw.parse().or_else(|_| {
        raw.to_socket_addrs()
            .ok()
            .and_then(|mut found| found.next())
            .ok_or("host:port, e.g. 127.0.0.1:8080 or localhost:8080")
    })
}

/// An `http://` or `https://` URL, as a push service's base address.
fn http_url(raw: &str) -> Result<String, &'static str> {
    let raw = raw.trim();
    match url::Url::parse(raw) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(raw.to_owned())
        }
        _ => Err("an http:// or https:// URL"),
    }
}

/// `1`/`true` or `0`/`false`/empty.
/// A switch: `1`/`true` or `0`/`false`. Empty is refused, as for a number: it meant off, the
/// opposite of the default for a switch that defaults on.
fn switch(raw: &str) -> Result<bool, &'static str> {
    match raw.trim() {
        "0" | "false" => Ok(false),
        "1" | "true" => Ok(true),
        _ => Err("1 or 0 (or true, false)"),
    }
}

fn vapid_subject(raw: &str) -> Result<String, &'static str> {
    let raw = raw.trim();
    if (raw.starts_with("mailto:") || raw.starts_with("https://")) && raw.len() <= 256 {
        Ok(raw.to_owned())
    } else {
        Err("a mailto: or https: URI (at most 256 characters)")
    }
}

/// An Apple key or team id: 10 letters and digits.
fn apple_id(raw: &str) -> Result<String, &'static str> {
    let raw = raw.trim();
    if raw.len() == 10 && raw.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(raw.to_owned())
    } else {
        Err("10 letters and digits, as the Apple developer account shows it")
    }
}

/// A bundle id (with APNs' suffixes such as `.voip`): letters, digits, `.`, `-`, `_`.
fn apns_topic(raw: &str) -> Result<String, &'static str> {
    let raw = raw.trim();
    let ok = (1..=255).contains(&raw.len())
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if ok {
        Ok(raw.to_owned())
    } else {
        Err("the app's bundle id, e.g. com.example.leekha")
    }
}

fn secret(raw: &str) -> Result<Secret, &'static str> {
    if raw.len() >= 32 {
        Ok(Secret::new(raw))
    } else {
        Err("at least 32 bytes, e.g. the output of `openssl rand -hex 32`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_variable_of_the_readme_and_no_other() {
        let readme = include_str!("../README.md");
        let section = readme
            .split("## Configuration")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("README has a Configuration section");
        let mut documented: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            // The subcommands' table shares the section.
            .filter(|name| name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .collect();
        let help = environment_help();
        let mut listed: Vec<&str> = help
            .lines()
            .skip(1)
            .filter_map(|l| l.trim_start().split([':', ';', '=']).next())
            .collect();
        documented.sort_unstable();
        listed.sort_unstable();
        assert_eq!(documented, listed);
    }

    #[test]
    fn a_postgres_password_is_never_displayed() {
        let url =
            DatabaseUrl::parse("postgres://leekha:s3cret@db:5432/leekha?sslmode=disable").unwrap();
        assert_eq!(url.backend(), Backend::Postgres);
        let shown = format!("{url} {url:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("postgres://leekha:***@db:5432/leekha?sslmode=disable"));
        // libpq also reads a password from the query.
        let url = DatabaseUrl::parse(
            "postgres://leekha@db/x?sslmode=require&password=s3cret&sslpassword=k3y",
        )
        .unwrap();
        assert_eq!(
            url.to_string(),
            "postgres://leekha@db/x?sslmode=require&password=***&sslpassword=***"
        );
    }

    #[test]
    fn sqlite_urls_and_paths_select_sqlite() {
        for raw in [
            "leekha.db",
            "sqlite://data/x.db",
            "sqlite:x.db",
            "/tmp/a.db",
        ] {
            assert_eq!(
                DatabaseUrl::parse(raw).unwrap().backend(),
                Backend::Sqlite,
                "{raw}"
            );
        }
        assert_eq!(
            DatabaseUrl::parse("sqlite://data/x.db").unwrap().expose(),
            "data/x.db"
        );
    }

    #[test]
    fn unusable_database_urls_are_refused_with_the_reason() {
        for raw in [
            "",
            ":memory:",
            "sqlite::memory:",
            "mysql://root@localhost/x",
        ] {
            let err = DatabaseUrl::parse(raw).unwrap_err().to_string();
            assert!(err.contains("DATABASE_URL"), "{err}");
        }
    }

    #[test]
    fn defaults_work_and_bad_values_name_the_variable() {
        let config = Config::from_lookup(|_| None).unwrap();
        assert_eq!(config.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(config.database_url.expose(), "leekha.db");

        let err = Config::from_lookup(|k| (k == "LEEKHA_BIND").then(|| "nowhere".to_owned()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("LEEKHA_BIND") && err.contains("host:port"),
            "{err}"
        );

        let err = Config::from_lookup(|k| (k == "LEEKHA_DB_POOL_SIZE").then(|| "0".to_owned()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("LEEKHA_DB_POOL_SIZE"), "{err}");

        let err =
            Config::from_lookup(|k| (k == "LEEKHA_JWT_SECRET").then(|| "short-secret".to_owned()))
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("LEEKHA_JWT_SECRET") && err.contains("32 bytes"),
            "{err}"
        );
        assert!(
            !err.contains("short-secret"),
            "a secret is never echoed: {err}"
        );
    }

    /// The configuration from these variables only.
    fn from(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_lookup(|k| {
            vars.iter()
                .find(|(v, _)| *v == k)
                .map(|(_, x)| x.to_string())
        })
    }

    #[test]
    fn every_default_is_the_documented_one() {
        let c = from(&[]).unwrap();
        assert_eq!(c.pool_size, 8);
        assert_eq!(c.db_timeout, Duration::from_millis(5000));
        assert_eq!(c.max_body_bytes, 65536);
        assert_eq!(c.client_request_timeout, Duration::from_millis(10_000));
        assert_eq!(c.keep_alive, Duration::from_secs(5));
        assert_eq!(c.max_connections, 4096);
        assert_eq!(c.workers, None);
        assert!(c.jwt_secret.is_none() && c.jwt_previous_secret.is_none());
        assert_eq!((c.access_ttl_secs, c.refresh_ttl_days), (900, 30));
        assert_eq!(c.auth_rate_per_minute, 20);
        assert_eq!(c.scheduler_interval, Duration::from_millis(1000));
        assert!(!c.webhook_allow_private && !c.trust_proxy);
        assert_eq!(c.webhook_retry_base, Duration::from_millis(5000));
        assert_eq!(c.webhook_max_age_secs, 86400);
        assert_eq!(c.cors_origins, CorsOrigins::Off);
        let pg = from(&[("DATABASE_URL", "postgres://p@db/leekha")]).unwrap();
        assert_eq!(pg.pool_size, 16);
    }

    #[test]
    fn apns_ids_and_topics_are_checked_and_name_their_variable() {
        let c = from(&[
            ("LEEKHA_APNS_KEY_ID", " ABC123DEFG "),
            ("LEEKHA_APNS_TEAM_ID", "TEAM123456"),
            ("LEEKHA_APNS_TOPIC", "com.example.leekha"),
        ])
        .unwrap();
        assert_eq!(c.apns_key_id.as_deref(), Some("ABC123DEFG"));
        assert_eq!(c.apns_url, "https://api.push.apple.com");
        for (var, value) in [
            ("LEEKHA_APNS_KEY_ID", "ABC"),
            ("LEEKHA_APNS_TEAM_ID", "TEAM12345\n"),
            ("LEEKHA_APNS_TOPIC", "com.example/leekha"),
        ] {
            let err = from(&[(var, value)]).unwrap_err().to_string();
            assert!(err.starts_with(var), "{err}");
        }
    }

    #[test]
    fn values_are_trimmed_and_checked_against_their_range() {
        let c = from(&[
            ("LEEKHA_WORKERS", " 4 "),
            ("LEEKHA_DB_POOL_SIZE", "512"),
            ("LEEKHA_DB_TIMEOUT_MS", "100"),
            ("LEEKHA_TRUST_PROXY", "true"),
            ("LEEKHA_WEBHOOK_ALLOW_PRIVATE", "1"),
            ("LEEKHA_KEEP_ALIVE_SECONDS", "0"),
        ])
        .unwrap();
        assert_eq!(c.keep_alive, Duration::ZERO, "0 turns keep-alive off");
        assert_eq!((c.workers, c.pool_size), (Some(4), 512));
        assert_eq!(c.db_timeout, Duration::from_millis(100));
        assert!(c.trust_proxy && c.webhook_allow_private);

        let err = |var, value| from(&[(var, value)]).unwrap_err().to_string();
        assert_eq!(
            err("LEEKHA_DB_TIMEOUT_MS", "60001"),
            r#"LEEKHA_DB_TIMEOUT_MS="60001" is not valid: expected milliseconds 100..=60000"#
        );
        assert_eq!(
            err("LEEKHA_WORKERS", ""),
            r#"LEEKHA_WORKERS="" is not valid: expected an integer 1..=256"#
        );
        assert_eq!(
            err("LEEKHA_TRUST_PROXY", "yes"),
            r#"LEEKHA_TRUST_PROXY="yes" is not valid: expected 1 or 0 (or true, false)"#
        );
        assert!(err("LEEKHA_PUSH_SKIP_WATCHING", "").contains("1 or 0"));
        assert!(err("LEEKHA_DB_POOL_SIZE", "513").contains("an integer 1..=512"));
        assert!(
            err("LEEKHA_CLIENT_REQUEST_TIMEOUT_MS", "50").contains("milliseconds 100..=300000")
        );
        assert!(err("LEEKHA_MAX_CONNECTIONS", "0").contains("an integer 1..=1000000"));
        for var in ["LEEKHA_FCM_URL", "LEEKHA_APNS_URL"] {
            for bad in ["notaurl", "ftp://push.example"] {
                assert!(
                    err(var, bad).contains("an http:// or https:// URL"),
                    "{var}={bad}"
                );
            }
        }
        let named = from(&[("LEEKHA_BIND", "localhost:8080")]).unwrap();
        assert!(named.bind.ip().is_loopback() && named.bind.port() == 8080);
        assert!(err("LEEKHA_BIND", "8080").contains("host:port"));
        assert_eq!(
            err("LEEKHA_VAPID_PRIVATE_KEY_FILE", ""),
            r#"LEEKHA_VAPID_PRIVATE_KEY_FILE="" is not valid: expected a value (unset the variable to leave it out)"#
        );
        assert!(err("DATABASE_URL", "mysql://u:pw@h/x").contains(r#""mysql://u:***@h/x""#));
        let keywords = err(
            "DATABASE_URL",
            "host=db user=leekha password=hunter2 dbname=x",
        );
        assert!(
            keywords.contains("keyword=value") && !keywords.contains("hunter2"),
            "{keywords}"
        );
        // Streams hold connections: the defaults leave some over, and so must a setting.
        let c = from(&[]).unwrap();
        assert!(c.max_streams < c.max_connections);
        let e = from(&[("LEEKHA_MAX_CONNECTIONS", "3072"), ("LEEKHA_WORKERS", "1")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            r#"LEEKHA_MAX_STREAMS="3072" is not valid: expected fewer than the 3072 connections the 1 workers accept (LEEKHA_MAX_CONNECTIONS=3072 shared evenly): each stream holds a connection, and requests need some too"#
        );
        // What the workers accept together, after the rounding down, is what counts.
        let e = from(&[
            ("LEEKHA_WORKERS", "2"),
            ("LEEKHA_MAX_CONNECTIONS", "3"),
            ("LEEKHA_MAX_STREAMS", "2"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("fewer than the 2 connections the 2 workers"),
            "{e}"
        );
        let c = from(&[("LEEKHA_WORKERS", "3"), ("LEEKHA_MAX_CONNECTIONS", "3076")]).unwrap();
        assert_eq!((c.http_workers(), c.connections_per_worker()), (3, 1025));
        let both = from(&[
            ("LEEKHA_MAX_CONNECTIONS", "15000"),
            ("LEEKHA_MAX_STREAMS", "11000"),
        ])
        .unwrap();
        assert_eq!((both.max_connections, both.max_streams), (15000, 11000));
    }

    #[test]
    fn secrets_are_never_shown() {
        let key = "k".repeat(40);
        let c = from(&[("LEEKHA_JWT_SECRET", &key)]).unwrap();
        assert_eq!(
            c.jwt_secret.as_ref().map(Secret::expose),
            Some(key.as_str())
        );
        assert!(!format!("{c:?}").contains(&key));
        let err = from(&[("LEEKHA_JWT_PREVIOUS_SECRET", "too-short-to-use")])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(r#"LEEKHA_JWT_PREVIOUS_SECRET="<16 bytes>""#),
            "{err}"
        );
        assert!(!err.contains("too-short"), "{err}");
    }

    #[test]
    fn cors_origins_are_exact_origins_normalized_or_any() {
        let parse = |raw: &str| from(&[("LEEKHA_CORS_ORIGINS", raw)]).map(|c| c.cors_origins);
        assert_eq!(parse("").unwrap(), CorsOrigins::Off);
        assert_eq!(parse(" , ").unwrap(), CorsOrigins::Off);
        assert_eq!(parse("*").unwrap(), CorsOrigins::Any);
        assert_eq!(
            parse("https://app.example.com, HTTP://LocalHost:3000/,https://App.example.com:443")
                .unwrap(),
            CorsOrigins::List(vec![
                "https://app.example.com".into(),
                "http://localhost:3000".into(),
            ])
        );
        for bad in [
            "app.example.com",
            "ftp://files.example.com",
            "https://app.example.com/app",
            "https://app.example.com?x=1",
            "https://user:pw@app.example.com",
            "https://*.example.com",
            "null",
            "*, https://app.example.com",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("LEEKHA_CORS_ORIGINS=") && err.contains("expected"),
                "{bad}: {err}"
            );
        }
        let err = parse("https://ok.example.com,https://x.example.com/path")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(r#""https://x.example.com/path" has a path"#),
            "{err}"
        );
    }
}
