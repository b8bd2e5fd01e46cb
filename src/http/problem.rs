//! The HTTP face of [`crate::error::Error`]: RFC 9457 `application/problem+json` with a stable
//! `code`. This is the one place where error kinds become statuses.
//!
//! A 500 never shows its cause to the client; the cause goes to the log with the request id.
//!
//! The `type` of a problem is `/problems/{code}` and its `title` the code's, both from
//! [`problem_catalog`]; `GET /problems/{code}` explains the code.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::{Error, Kind, RateLimit};
use crate::http::{problem_catalog, rate_limit};

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An error answered to a client: a service error, plus what only HTTP knows (`Allow`).
#[derive(Debug)]
pub struct ApiError {
    error: Error,
    status: StatusCode,
    allow: Option<String>,
}

/// The body of every error response (RFC 9457).
#[derive(Debug, Serialize, serde::Deserialize, ToSchema)]
pub struct Problem {
    /// The problem type: `/problems/{code}`, a URI reference relative to this server, where
    /// a page explains the code.
    #[schema(example = "/problems/must_follow_suit")]
    pub r#type: String,
    /// A short summary of the problem type (of the status, for a code this server does not
    /// know).
    #[schema(example = "Must follow suit")]
    pub title: String,
    /// The HTTP status code.
    #[schema(example = 422)]
    pub status: u16,
    /// What went wrong in this case, for a person.
    #[schema(example = "you hold a diamond: you must follow suit")]
    pub detail: String,
    /// A stable machine-readable code, e.g. `not_your_turn`, `version_conflict`.
    #[schema(value_type = problem_catalog::CodeSchema, example = "must_follow_suit")]
    pub code: String,
    /// With `version_conflict` for a stale `expected_version` or `If-Match`: the version the
    /// game is at now (its view's `version` and `ETag`). Absent otherwise, and absent when
    /// a concurrent change won the race without a version having been sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, example = 12)]
    pub current_version: Option<i64>,
}

/// The status of each kind of error.
fn status_of(kind: Kind) -> StatusCode {
    match kind {
        Kind::BadRequest => StatusCode::BAD_REQUEST,
        Kind::Unauthorized => StatusCode::UNAUTHORIZED,
        Kind::Forbidden => StatusCode::FORBIDDEN,
        Kind::NotFound => StatusCode::NOT_FOUND,
        Kind::Conflict => StatusCode::CONFLICT,
        Kind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Kind::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Kind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
        Kind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        Kind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Kind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        Self {
            status: status_of(error.kind()),
            error,
            allow: None,
        }
    }
}

impl From<diesel::result::Error> for ApiError {
    fn from(e: diesel::result::Error) -> Self {
        Error::from(e).into()
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(e: actix_web::error::BlockingError) -> Self {
        Error::internal(e.to_string()).into()
    }
}

impl ApiError {
    /// 405 `method_not_allowed`, with the `Allow` header.
    pub fn method_not_allowed(allow: Vec<String>) -> Self {
        let allow = allow.join(", ");
        Self {
            error: Error::new(
                Kind::BadRequest,
                "method_not_allowed",
                format!("this path accepts {allow}"),
            ),
            status: StatusCode::METHOD_NOT_ALLOWED,
            allow: Some(allow),
        }
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
            406 => "not_acceptable",
            408 => "request_timeout",
            409 => "conflict",
            413 => "payload_too_large",
            415 => "unsupported_media_type",
            429 => "rate_limited",
            431 => "headers_too_large",
            503 => "unavailable",
            s if s >= 500 => "internal",
            _ => "bad_request",
        };
        let detail = status.canonical_reason().unwrap_or("error").to_owned();
        let kind = if status.is_server_error() {
            Kind::Unavailable
        } else {
            Kind::BadRequest
        };
        Self {
            error: Error::new(kind, code, detail),
            status,
            allow: None,
        }
    }

    /// The same error, reporting the rate limit its request counted against (the
    /// `RateLimit-*` headers).
    pub fn with_rate_limit(mut self, limit: RateLimit) -> Self {
        self.error = self.error.with_rate_limit(limit);
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        self.error.code()
    }

    /// The body sent to the client.
    pub fn problem(&self) -> Problem {
        Problem::of(&self.error, self.status)
    }
}

impl Problem {
    /// The body for `error` answered with `status`.
    fn of(error: &Error, status: StatusCode) -> Self {
        let code = error.code();
        let title = match problem_catalog::find(code) {
            Some(entry) => entry.title,
            None => status.canonical_reason().unwrap_or("Error"),
        };
        Problem {
            r#type: problem_catalog::type_uri(code),
            title: title.to_owned(),
            status: status.as_u16(),
            detail: error.detail().to_owned(),
            code: code.to_owned(),
            current_version: error.current_version(),
        }
    }

    /// The status and the JSON body a client hears for `error`, as the error response
    /// carries them (for answers kept to be replayed).
    pub fn rendered(error: &Error) -> (u16, String) {
        let status = status_of(error.kind());
        let body = serde_json::to_string(&Self::of(error, status)).unwrap_or_default();
        (status.as_u16(), body)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.error)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        if self.status.is_server_error() {
            tracing::error!(status = self.status.as_u16(), code = %self.error.code(), error = %self.error, "request failed");
        } else {
            // A refusal is the client's business: there for debugging, not in the log.
            tracing::debug!(status = self.status.as_u16(), code = %self.error.code(), error = %self.error, "request refused");
        }
        let mut builder = HttpResponse::build(self.status);
        builder.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        if let Some(secs) = self.error.retry_after() {
            builder.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        if let Some(allow) = &self.allow
            && let Ok(value) = HeaderValue::from_str(allow)
        {
            builder.insert_header((header::ALLOW, value));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            builder.insert_header((
                header::WWW_AUTHENTICATE,
                www_authenticate(self.error.code()),
            ));
        }
        let body = serde_json::to_vec(&self.problem()).unwrap_or_default();
        let mut res = builder.body(body);
        if let Some(limit) = self.error.rate_limit() {
            rate_limit::insert(res.headers_mut(), limit);
        }
        res
    }
}

/// The challenge of a 401 (RFC 9110 §11.6.1, RFC 6750 §3): the API takes Bearer tokens; a
/// token that was sent and refused says so (`error="invalid_token"`), a missing one does
/// not, and a wrong password at login names only the scheme.
fn www_authenticate(code: &str) -> HeaderValue {
    HeaderValue::from_static(match code {
        "invalid_token" => r#"Bearer realm="leekha", error="invalid_token""#,
        _ => r#"Bearer realm="leekha""#,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;

    #[test]
    fn a_401_carries_its_bearer_challenge() {
        let res = ApiError::from(Error::unauthorized("invalid_token", "expired")).error_response();
        assert_eq!(
            res.headers().get(header::WWW_AUTHENTICATE).unwrap(),
            r#"Bearer realm="leekha", error="invalid_token""#
        );
        let res = ApiError::from(Error::unauthorized("missing_token", "none")).error_response();
        assert_eq!(
            res.headers().get(header::WWW_AUTHENTICATE).unwrap(),
            r#"Bearer realm="leekha""#
        );
        let res = ApiError::from(Error::not_found("no")).error_response();
        assert!(res.headers().get(header::WWW_AUTHENTICATE).is_none());
    }

    #[test]
    fn a_500_hides_its_cause_from_the_client() {
        let e = ApiError::from(Error::internal("password=hunter2 in a failing query"));
        let res = e.error_response();
        assert_eq!(res.status(), 500);
        let body = res.into_body().try_into_bytes().unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("\"code\":\"internal\""), "{text}");
    }

    #[test]
    fn rate_limited_carries_retry_after_and_the_limit() {
        let limit = RateLimit {
            limit: 20,
            remaining: 0,
            reset_secs: 60,
        };
        let res = ApiError::from(Error::rate_limited(7).with_rate_limit(limit)).error_response();
        assert_eq!(res.headers().get(header::RETRY_AFTER).unwrap(), "7");
        assert_eq!(res.headers().get("ratelimit-limit").unwrap(), "20");
        assert_eq!(res.headers().get("ratelimit-remaining").unwrap(), "0");
        assert_eq!(res.headers().get("ratelimit-reset").unwrap(), "60");
        assert_eq!(
            res.headers().get(header::CONTENT_TYPE).unwrap(),
            PROBLEM_JSON
        );
    }

    #[test]
    fn every_kind_has_its_status() {
        for (kind, status) in [
            (Kind::BadRequest, 400),
            (Kind::Unauthorized, 401),
            (Kind::Forbidden, 403),
            (Kind::NotFound, 404),
            (Kind::Conflict, 409),
            (Kind::PayloadTooLarge, 413),
            (Kind::UnsupportedMediaType, 415),
            (Kind::Unprocessable, 422),
            (Kind::RateLimited, 429),
            (Kind::Unavailable, 503),
            (Kind::Internal, 500),
        ] {
            assert_eq!(status_of(kind).as_u16(), status, "{kind:?}");
        }
    }
}
