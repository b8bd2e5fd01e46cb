//! The one error type of the HTTP layer, rendered as RFC 9457 `application/problem+json`
//! with a stable machine-readable `code`.
//!
//! Database, pool, extractor and rules errors are all mapped here, in one place. A 500 never
//! shows its cause to the client; the cause goes to the log with the request id.

use std::borrow::Cow;
use std::fmt;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error answered to a client.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: Cow<'static, str>,
    detail: String,
    retry_after: Option<u64>,
    allow: Option<String>,
    /// The cause of a 5xx, logged and never sent.
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The body of every error response (RFC 9457).
#[derive(Debug, Serialize, serde::Deserialize, ToSchema)]
pub struct Problem {
    /// A URI naming the problem type; `about:blank` plus `code` in this API.
    #[schema(example = "about:blank")]
    pub r#type: String,
    /// A short summary of the status.
    #[schema(example = "Unprocessable Entity")]
    pub title: String,
    /// The HTTP status code.
    #[schema(example = 422)]
    pub status: u16,
    /// What went wrong in this case, for a person.
    #[schema(example = "you hold a diamond: you must follow suit")]
    pub detail: String,
    /// A stable machine-readable code, e.g. `not_your_turn`, `version_conflict`.
    #[schema(example = "must_follow_suit")]
    pub code: String,
}

impl ApiError {
    /// An error with any status, code and detail.
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            detail: detail.into(),
            retry_after: None,
            allow: None,
            source: None,
        }
    }

    /// 400 `bad_request`, for malformed requests.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", detail)
    }

    /// 400 `validation_failed`, for well-formed input that breaks a stated limit.
    pub fn validation(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "validation_failed", detail)
    }

    /// 401 with the given code (`missing_token`, `invalid_token`, `token_expired`…).
    pub fn unauthorized(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, detail)
    }

    /// 403 `forbidden`.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", detail)
    }

    /// 404 `not_found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }

    /// 405 `method_not_allowed`, with the `Allow` header.
    pub fn method_not_allowed(allow: Vec<String>) -> Self {
        let mut e = Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("this path accepts {}", allow.join(", ")),
        );
        e.allow = Some(allow.join(", "));
        e
    }

    /// 409 with the given code.
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }

    /// 429 `rate_limited`, with `Retry-After` in seconds.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("too many requests; retry in {retry_after_secs} s"),
        );
        e.retry_after = Some(retry_after_secs.max(1));
        e
    }

    /// 503 `database_unavailable`.
    pub fn unavailable() -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "database_unavailable",
            "the database is not reachable; retry shortly",
        );
        e.retry_after = Some(2);
        e
    }

    /// 500 `internal`: the cause is logged, the client sees a generic message.
    pub fn internal(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        let mut e = Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "an internal error occurred",
        );
        e.source = Some(source.into());
        e
    }

    /// An error carrying only a status: its code and detail come from the status. Used for
    /// responses that some layer produced without a problem body.
    pub fn from_status(status: StatusCode) -> Self {
        let code = match status.as_u16() {
            400 => "bad_request",
            401 => "invalid_token",
            403 => "forbidden",
            404 => "not_found",
            405 => "method_not_allowed",
            408 => "request_timeout",
            409 => "conflict",
            413 => "payload_too_large",
            415 => "unsupported_media_type",
            429 => "rate_limited",
            503 => "unavailable",
            s if s >= 500 => "internal",
            _ => "bad_request",
        };
        let detail = status.canonical_reason().unwrap_or("error").to_owned();
        Self::new(status, code, detail)
    }

    /// The same error with another code.
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Cow::Borrowed(code);
        self
    }

    /// The same error with another status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The body sent to the client.
    pub fn problem(&self) -> Problem {
        Problem {
            r#type: "about:blank".to_owned(),
            title: self.status.canonical_reason().unwrap_or("Error").to_owned(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            code: self.code.to_string(),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.detail)?;
        if let Some(source) = &self.source {
            write!(f, " (cause: {source})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        if self.status.is_server_error() {
            tracing::error!(status = self.status.as_u16(), code = %self.code, error = %self, "request failed");
        }
        let mut builder = HttpResponse::build(self.status);
        builder.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        if let Some(secs) = self.retry_after {
            builder.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        if let Some(allow) = &self.allow
            && let Ok(value) = HeaderValue::from_str(allow)
        {
            builder.insert_header((header::ALLOW, value));
        }
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        builder.body(body)
    }
}

impl From<diesel::result::Error> for ApiError {
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
                Self::unavailable()
            }
            E::DatabaseError(_, info) if is_connection_message(info.message()) => {
                tracing::warn!(error = %e, "database connection lost");
                Self::unavailable()
            }
            _ => Self::internal(e),
        }
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

impl From<crate::rules::RuleError> for ApiError {
    fn from(e: crate::rules::RuleError) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, e.code(), e.to_string())
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(e: actix_web::error::BlockingError) -> Self {
        Self::internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;

    #[test]
    fn a_500_hides_its_cause_from_the_client() {
        let e = ApiError::internal("password=hunter2 in a failing query");
        let res = e.error_response();
        assert_eq!(res.status(), 500);
        let body = res.into_body().try_into_bytes().unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("\"code\":\"internal\""), "{text}");
    }

    #[test]
    fn rate_limited_carries_retry_after() {
        let res = ApiError::rate_limited(7).error_response();
        assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "7");
        assert_eq!(
            res.headers().get(header::CONTENT_TYPE).unwrap(),
            PROBLEM_JSON
        );
    }
}
