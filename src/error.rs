//! The one error type below the HTTP layer: what went wrong, as a [`Kind`] (which the HTTP
//! layer maps to a status, in `http::problem` only), a stable machine-readable `code` and a
//! detail for a person.
//!
//! Database, pool and rules errors are mapped here, in one place. An [`Kind::Internal`]
//! error keeps its cause for the log; clients never see it.

use std::borrow::Cow;
use std::fmt;

/// Seconds a 503 asks the client to wait when its cause names no other delay.
const UNAVAILABLE_RETRY_SECS: u32 = 2;

/// What kind of failure an [`Error`] is; each kind is one HTTP status at the edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Malformed input, or input that breaks a stated limit (400).
    BadRequest,
    /// Missing, invalid or expired credentials (401).
    Unauthorized,
    /// Authenticated but not allowed (403).
    Forbidden,
    /// No such resource, or one the caller may not know of (404).
    NotFound,
    /// The state of the resource refuses the request (409).
    Conflict,
    /// A body larger than the limit (413).
    PayloadTooLarge,
    /// A body in another media type than JSON (415).
    UnsupportedMediaType,
    /// Well-formed but refused by the rules of the game (422).
    Unprocessable,
    /// Too many requests (429, with a retry delay).
    RateLimited,
    /// A dependency (the database) is not reachable now (503, with a retry delay).
    Unavailable,
    /// A bug or an unexpected failure (500); the cause is logged, never shown.
    Internal,
}

/// An error of the service, the database or the rules, as clients will hear of it.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
    code: Cow<'static, str>,
    detail: String,
    // The two below are narrow or boxed so that results carrying an error stay small
    // (clippy's `result_large_err`): a day of seconds fits a u32 many times over.
    retry_after: Option<u32>,
    /// What only some errors say: a rate limit, the current version.
    extras: Option<Box<Extras>>,
    /// The cause of an internal error, logged and never sent.
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// A database connection turned out dead (see [`Error::lost_connection`]).
    lost_connection: bool,
}

/// What only some errors say, boxed so that every other error stays small.
#[derive(Debug, Default)]
struct Extras {
    /// The rate limit the request counted against, when it did.
    rate_limit: Option<RateLimit>,
    /// The version the resource is at, for a refused stale version (`version_conflict`).
    current_version: Option<i64>,
}

/// A result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of any kind, code and detail.
    pub fn new(kind: Kind, code: impl Into<Cow<'static, str>>, detail: impl Into<String>) -> Self {
        Self {
            kind,
            code: code.into(),
            detail: detail.into(),
            // Every 503 tells when to come back, so clients can rely on `Retry-After`.
            retry_after: (kind == Kind::Unavailable).then_some(UNAVAILABLE_RETRY_SECS),
            extras: None,
            source: None,
            lost_connection: false,
        }
    }

    /// `bad_request`, for malformed requests.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(Kind::BadRequest, "bad_request", detail)
    }

    /// `validation_failed`, for well-formed input that breaks a stated limit.
    pub fn validation(detail: impl Into<String>) -> Self {
        Self::new(Kind::BadRequest, "validation_failed", detail)
    }

    /// Unauthorized with the given code (`missing_token`, `invalid_token`, `token_expired`…).
    pub fn unauthorized(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(Kind::Unauthorized, code, detail)
    }

    /// `forbidden`.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(Kind::Forbidden, "forbidden", detail)
    }

    /// `not_found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(Kind::NotFound, "not_found", detail)
    }

    /// A conflict with the given code.
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(Kind::Conflict, code, detail)
    }

    /// Refused by the rules, with the given code.
    pub fn unprocessable(code: impl Into<Cow<'static, str>>, detail: impl Into<String>) -> Self {
        Self::new(Kind::Unprocessable, code, detail)
    }

    /// `rate_limited`, to be retried after `retry_after_secs` (at least 1).
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut e = Self::new(
            Kind::RateLimited,
            "rate_limited",
            format!("too many requests; retry in {retry_after_secs} s"),
        );
        e.retry_after = Some(u32::try_from(retry_after_secs.max(1)).unwrap_or(u32::MAX));
        e
    }

    /// `database_unavailable`, to be retried shortly.
    pub fn unavailable() -> Self {
        Self::new(
            Kind::Unavailable,
            "database_unavailable",
            "the database is not reachable; retry shortly",
        )
    }

    /// `database_unavailable` for a connection that turned out dead.
    fn connection_lost() -> Self {
        let mut e = Self::unavailable();
        e.lost_connection = true;
        e
    }

    /// `internal`: the cause is logged, the client sees a generic message.
    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        let mut e = Self::new(Kind::Internal, "internal", "an internal error occurred");
        e.source = Some(source.into());
        e
    }

    /// `validation_failed` unless `text` has `min..=max` characters (not bytes): the one
    /// wording of every length rule.
    ///
    /// # Errors
    /// As described.
    pub fn check_length(what: &str, text: &str, min: usize, max: usize) -> Result<(), Self> {
        let n = text.chars().count();
        if (min..=max).contains(&n) {
            Ok(())
        } else {
            Err(Self::validation(format!(
                "{what} must be {min}–{max} characters, got {n}"
            )))
        }
    }

    /// The same error, to be retried after `secs` (at least 1): `Retry-After`.
    pub fn with_retry_after(mut self, secs: u32) -> Self {
        self.retry_after = Some(secs.max(1));
        self
    }

    /// The same error with another code.
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Cow::Borrowed(code);
        self
    }

    /// The same error, saying which version the resource is at now: a client that sent a
    /// stale one can tell how far behind it is without another request.
    pub fn with_current_version(mut self, version: i64) -> Self {
        self.extras.get_or_insert_default().current_version = Some(version);
        self
    }

    /// The version the resource is at, when the error is about a stale one.
    pub fn current_version(&self) -> Option<i64> {
        self.extras.as_ref().and_then(|e| e.current_version)
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// What went wrong, for a person.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// Whether a database connection turned out dead: the database restarted or dropped
    /// this instance's sessions, and the pool's other idle connections are likely dead too.
    pub fn lost_connection(&self) -> bool {
        self.lost_connection
    }

    /// What went wrong, for an operator: the cause when there is one (an internal error's
    /// detail says nothing, so as to tell a client nothing), else the detail.
    pub fn cause(&self) -> String {
        self.source
            .as_ref()
            .map_or_else(|| self.detail.clone(), ToString::to_string)
    }

    /// Seconds after which a retry may succeed, for rate limits and outages.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after.map(u64::from)
    }

    /// The same error, reporting the rate limit its request counted against.
    pub fn with_rate_limit(mut self, rate_limit: RateLimit) -> Self {
        self.extras.get_or_insert_default().rate_limit = Some(rate_limit);
        self
    }

    /// The rate limit the request counted against, if it was rate limited.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.extras.as_ref().and_then(|e| e.rate_limit)
    }
}

/// Where a client stands against a rate limit after a request: what the HTTP layer reports
/// in the `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// The attempts a client may make at once (the quota).
    pub limit: u32,
    /// The attempts left now.
    pub remaining: u32,
    /// Seconds until the whole quota is available again (0 when it is).
    pub reset_secs: u64,
}

impl RateLimit {
    /// The tighter of two limits a request counted against: fewer attempts left, the
    /// later reset.
    pub fn tightest(self, other: Self) -> Self {
        Self {
            limit: self.limit.min(other.limit),
            remaining: self.remaining.min(other.remaining),
            reset_secs: self.reset_secs.max(other.reset_secs),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {}: {}", self.kind, self.code, self.detail)?;
        if let Some(source) = &self.source {
            write!(f, " (cause: {source})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<diesel::result::Error> for Error {
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind as K, Error as E};
        match &e {
            E::NotFound => Self::not_found("no such resource"),
            E::DatabaseError(K::UniqueViolation, _) => {
                Self::conflict("conflict", "the resource changed or already exists")
            }
            E::DatabaseError(K::SerializationFailure, _) => Self::conflict(
                "version_conflict",
                "a concurrent change won; reload and retry",
            ),
            E::DatabaseError(K::ClosedConnection, _) => {
                tracing::warn!(error = %e, "database connection lost");
                Self::connection_lost()
            }
            E::DatabaseError(_, info) if is_connection_message(info.message()) => {
                tracing::warn!(error = %e, "database connection lost");
                Self::connection_lost()
            }
            _ if is_busy(&e) => {
                // Not a bug: another writer held the lock past busy_timeout. The client may
                // retry shortly, and a load balancer should hear "unavailable", not "broken".
                tracing::warn!(error = %e, "the database is busy");
                let mut busy = Self::unavailable();
                busy.detail = "the database is busy with other writes; retry shortly".to_owned();
                busy
            }
            _ => Self::internal(e),
        }
    }
}

/// SQLite's answer when a lock was not had within busy_timeout: `SQLITE_BUSY` ("database is
/// locked") and `SQLITE_LOCKED` ("database table is locked", "database schema is locked").
/// diesel reports them as [`DatabaseErrorKind::Unknown`](diesel::result::DatabaseErrorKind)
/// with SQLite's message, also when the commit is what failed.
fn is_busy(e: &diesel::result::Error) -> bool {
    use diesel::result::Error as E;
    const SIGNS: [&str; 3] = [
        "database is locked",
        "database table is locked",
        "database schema is locked",
    ];
    match e {
        E::DatabaseError(_, info) => SIGNS.iter().any(|s| info.message().contains(s)),
        E::RollbackErrorOnCommit { commit_error, .. } => is_busy(commit_error),
        _ => false,
    }
}

/// libpq reports a dropped server as a generic error; recognize its messages.
fn is_connection_message(message: &str) -> bool {
    const SIGNS: [&str; 6] = [
        "server closed the connection",
        "connection to server",
        "terminating connection",
        "could not connect",
        "no connection to the server",
        "the database system is",
    ];
    SIGNS.iter().any(|s| message.contains(s))
}

impl From<crate::rules::RuleError> for Error {
    fn from(e: crate::rules::RuleError) -> Self {
        Self::unprocessable(e.code(), e.to_string())
    }
}

impl From<serde_json::Error> for Error {
    /// Only for data this server wrote itself: a stored document that does not parse is a
    /// bug, never the client's fault.
    fn from(e: serde_json::Error) -> Self {
        Self::internal(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message SQLite gives, in the form diesel hands it over.
    fn sqlite_error(message: &str) -> diesel::result::Error {
        diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::Unknown,
            Box::new(message.to_owned()),
        )
    }

    #[test]
    fn a_busy_sqlite_is_unavailable_with_a_retry_delay() {
        for message in [
            "database is locked",
            "database table is locked",
            "database schema is locked",
        ] {
            let e = Error::from(sqlite_error(message));
            assert_eq!(
                (e.kind(), e.code()),
                (Kind::Unavailable, "database_unavailable"),
                "{message}"
            );
            assert!(e.retry_after().is_some(), "{message}");
            assert!(e.detail().contains("busy"), "{message}: {}", e.detail());
        }
        let on_commit = diesel::result::Error::RollbackErrorOnCommit {
            rollback_error: Box::new(diesel::result::Error::BrokenTransactionManager),
            commit_error: Box::new(sqlite_error("database is locked")),
        };
        assert_eq!(Error::from(on_commit).kind(), Kind::Unavailable);
        assert_eq!(
            Error::from(sqlite_error("no such table: games")).kind(),
            Kind::Internal,
            "other database errors stay internal"
        );
    }

    #[test]
    fn an_internal_error_keeps_its_cause_out_of_the_detail() {
        let e = Error::internal("password=hunter2 in a failing query");
        assert_eq!(e.kind(), Kind::Internal);
        assert!(!e.detail().contains("hunter2"));
        assert!(e.to_string().contains("hunter2"), "the log line keeps it");
    }
}
