//! Configuration read from the environment.
//!
//! Every variable has a default that works on a fresh machine; a bad value stops the process
//! with a message that names the variable, the value and what was expected.

use std::{fmt, net::SocketAddr, time::Duration};

use crate::auth::Secret;

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
            var: "DATABASE_URL",
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

/// Replaces the password of `scheme://user:password@host` with `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A configuration problem found at start.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A variable holds a value that cannot be used.
    #[error("{var}={value:?} is not valid: expected {expected}")]
    Invalid {
        /// The environment variable.
        var: &'static str,
        /// The offending value (redacted when it may hold a secret).
        value: String,
        /// What would have been accepted.
        expected: String,
    },
}

/// The service configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `DATABASE_URL`; default: the SQLite file `leekha.db` in the working directory.
    pub database_url: DatabaseUrl,
    /// `LEEKHA_BIND`; default `127.0.0.1:8080`.
    pub bind: SocketAddr,
    /// `LEEKHA_DB_POOL_SIZE`; default 16 on PostgreSQL, 8 on SQLite.
    pub pool_size: u32,
    /// `LEEKHA_DB_TIMEOUT_MS`: how long a request waits for a database connection before it
    /// gets 503; default 5000.
    pub db_timeout: Duration,
    /// `LEEKHA_MAX_BODY_BYTES`: the largest accepted request body; default 65536.
    pub max_body_bytes: usize,
    /// `LEEKHA_WORKERS`: HTTP worker threads; default: the number of cores.
    pub workers: Option<usize>,
    /// `LEEKHA_JWT_SECRET`: the access-token signing key, at least 32 bytes. Required on
    /// PostgreSQL; on SQLite a random one is generated once and kept in the database.
    pub jwt_secret: Option<Secret>,
    /// `LEEKHA_JWT_PREVIOUS_SECRET`: the key before the last rotation; its tokens stay valid.
    pub jwt_previous_secret: Option<Secret>,
    /// `LEEKHA_ACCESS_TOKEN_TTL_SECONDS`: access-token lifetime; default 900 (15 min).
    pub access_ttl_secs: i64,
    /// `LEEKHA_REFRESH_TOKEN_TTL_DAYS`: refresh-token lifetime; default 30.
    pub refresh_ttl_days: i64,
    /// `LEEKHA_AUTH_RATE_PER_MINUTE`: attempts per minute on register, login, guest and
    /// refresh, per client IP and per username; default 20.
    pub auth_rate_per_minute: u32,
    /// `LEEKHA_SCHEDULER_INTERVAL_MS`: how often each instance looks for due turns,
    /// reminders and webhook deliveries; default 1000.
    pub scheduler_interval: Duration,
    /// `LEEKHA_WEBHOOK_ALLOW_PRIVATE=1`: allow webhook URLs on private and loopback
    /// addresses (tests, private networks).
    pub webhook_allow_private: bool,
    /// `LEEKHA_WEBHOOK_RETRY_BASE_MS`: the first retry delay of a failed webhook; each
    /// next one doubles, up to an hour; default 5000.
    pub webhook_retry_base: Duration,
    /// `LEEKHA_WEBHOOK_MAX_AGE_SECONDS`: how long a webhook is retried; default 86400.
    pub webhook_max_age_secs: i64,
    /// `LEEKHA_TRUST_PROXY=1`: take the client IP from `X-Forwarded-For`/`Forwarded` (only
    /// behind a proxy that sets them).
    pub trust_proxy: bool,
}

impl Config {
    /// Reads the configuration from the process environment.
    ///
    /// # Errors
    /// The first variable whose value cannot be used.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the configuration from any key → value lookup (tests pass a map).
    ///
    /// # Errors
    /// The first variable whose value cannot be used.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let database_url =
            DatabaseUrl::parse(&get("DATABASE_URL").unwrap_or_else(|| "leekha.db".into()))?;
        let bind = parse_var(
            &get,
            "LEEKHA_BIND",
            "127.0.0.1:8080",
            "host:port, e.g. 127.0.0.1:8080",
        )?;
        let default_pool = match database_url.backend() {
            Backend::Postgres => "16",
            Backend::Sqlite => "8",
        };
        let pool_size: u32 = parse_var(
            &get,
            "LEEKHA_DB_POOL_SIZE",
            default_pool,
            "an integer 1..=512",
        )?;
        if !(1..=512).contains(&pool_size) {
            return Err(invalid(
                "LEEKHA_DB_POOL_SIZE",
                pool_size,
                "an integer 1..=512",
            ));
        }
        let timeout_ms: u64 = parse_var(
            &get,
            "LEEKHA_DB_TIMEOUT_MS",
            "5000",
            "milliseconds 100..=60000",
        )?;
        if !(100..=60_000).contains(&timeout_ms) {
            return Err(invalid(
                "LEEKHA_DB_TIMEOUT_MS",
                timeout_ms,
                "milliseconds 100..=60000",
            ));
        }
        let max_body_bytes: usize = parse_var(
            &get,
            "LEEKHA_MAX_BODY_BYTES",
            "65536",
            "bytes 1024..=16777216",
        )?;
        if !(1024..=16 * 1024 * 1024).contains(&max_body_bytes) {
            return Err(invalid(
                "LEEKHA_MAX_BODY_BYTES",
                max_body_bytes,
                "bytes 1024..=16777216",
            ));
        }
        let workers = match get("LEEKHA_WORKERS") {
            None => None,
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if (1..=256).contains(&n) => Some(n),
                _ => return Err(invalid("LEEKHA_WORKERS", v, "an integer 1..=256")),
            },
        };
        let jwt_secret = secret_var(&get, "LEEKHA_JWT_SECRET")?;
        let jwt_previous_secret = secret_var(&get, "LEEKHA_JWT_PREVIOUS_SECRET")?;
        let access_ttl_secs: i64 = parse_var(
            &get,
            "LEEKHA_ACCESS_TOKEN_TTL_SECONDS",
            "900",
            "seconds 1..=86400",
        )?;
        if !(1..=86_400).contains(&access_ttl_secs) {
            return Err(invalid(
                "LEEKHA_ACCESS_TOKEN_TTL_SECONDS",
                access_ttl_secs,
                "seconds 1..=86400",
            ));
        }
        let refresh_ttl_days: i64 =
            parse_var(&get, "LEEKHA_REFRESH_TOKEN_TTL_DAYS", "30", "days 1..=365")?;
        if !(1..=365).contains(&refresh_ttl_days) {
            return Err(invalid(
                "LEEKHA_REFRESH_TOKEN_TTL_DAYS",
                refresh_ttl_days,
                "days 1..=365",
            ));
        }
        let auth_rate_per_minute: u32 = parse_var(
            &get,
            "LEEKHA_AUTH_RATE_PER_MINUTE",
            "20",
            "an integer 1..=1000000",
        )?;
        if !(1..=1_000_000).contains(&auth_rate_per_minute) {
            return Err(invalid(
                "LEEKHA_AUTH_RATE_PER_MINUTE",
                auth_rate_per_minute,
                "an integer 1..=1000000",
            ));
        }
        let trust_proxy = bool_var(&get, "LEEKHA_TRUST_PROXY")?;
        let webhook_allow_private = bool_var(&get, "LEEKHA_WEBHOOK_ALLOW_PRIVATE")?;
        let interval_ms: u64 = parse_var(
            &get,
            "LEEKHA_SCHEDULER_INTERVAL_MS",
            "1000",
            "milliseconds 10..=60000",
        )?;
        if !(10..=60_000).contains(&interval_ms) {
            return Err(invalid(
                "LEEKHA_SCHEDULER_INTERVAL_MS",
                interval_ms,
                "milliseconds 10..=60000",
            ));
        }
        let retry_ms: u64 = parse_var(
            &get,
            "LEEKHA_WEBHOOK_RETRY_BASE_MS",
            "5000",
            "milliseconds 10..=3600000",
        )?;
        if !(10..=3_600_000).contains(&retry_ms) {
            return Err(invalid(
                "LEEKHA_WEBHOOK_RETRY_BASE_MS",
                retry_ms,
                "milliseconds 10..=3600000",
            ));
        }
        let webhook_max_age_secs: i64 = parse_var(
            &get,
            "LEEKHA_WEBHOOK_MAX_AGE_SECONDS",
            "86400",
            "seconds 1..=604800",
        )?;
        if !(1..=604_800).contains(&webhook_max_age_secs) {
            return Err(invalid(
                "LEEKHA_WEBHOOK_MAX_AGE_SECONDS",
                webhook_max_age_secs,
                "seconds 1..=604800",
            ));
        }
        Ok(Self {
            scheduler_interval: Duration::from_millis(interval_ms),
            webhook_allow_private,
            webhook_retry_base: Duration::from_millis(retry_ms),
            webhook_max_age_secs,
            jwt_secret,
            jwt_previous_secret,
            access_ttl_secs,
            refresh_ttl_days,
            auth_rate_per_minute,
            trust_proxy,
            database_url,
            bind,
            pool_size,
            db_timeout: Duration::from_millis(timeout_ms),
            max_body_bytes,
            workers,
        })
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

fn bool_var(get: &impl Fn(&str) -> Option<String>, var: &'static str) -> Result<bool, ConfigError> {
    match get(var).as_deref().map(str::trim) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(other) => Err(invalid(var, other, "1 or 0")),
    }
}

fn secret_var(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
) -> Result<Option<Secret>, ConfigError> {
    match get(var) {
        None => Ok(None),
        Some(v) if v.len() >= 32 => Ok(Some(Secret::new(v))),
        Some(v) => Err(ConfigError::Invalid {
            var,
            value: format!("<{} bytes>", v.len()),
            expected: "at least 32 bytes, e.g. the output of `openssl rand -hex 32`".to_owned(),
        }),
    }
}

fn invalid(var: &'static str, value: impl ToString, expected: &str) -> ConfigError {
    ConfigError::Invalid {
        var,
        value: value.to_string(),
        expected: expected.to_owned(),
    }
}

fn parse_var<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    var: &'static str,
    default: &str,
    expected: &str,
) -> Result<T, ConfigError> {
    let raw = get(var).unwrap_or_else(|| default.to_owned());
    raw.trim().parse().map_err(|_| invalid(var, raw, expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_password_is_never_displayed() {
        let url =
            DatabaseUrl::parse("postgres://leekha:s3cret@db:5432/leekha?sslmode=disable").unwrap();
        assert_eq!(url.backend(), Backend::Postgres);
        let shown = format!("{url} {url:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("postgres://leekha:***@db:5432/leekha?sslmode=disable"));
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
}
