//! The `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers of
//! draft-ietf-httpapi-ratelimit-headers (its three-field form; the reset in whole seconds),
//! on the responses of rate-limited operations, the 429 included.

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::RateLimit;

/// `RateLimit-Limit`: the attempts allowed at once.
pub const LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
/// `RateLimit-Remaining`: the attempts left.
pub const REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");
/// `RateLimit-Reset`: seconds until the whole quota is back.
pub const RESET: HeaderName = HeaderName::from_static("ratelimit-reset");

/// Sets the three headers from `limit`.
pub fn insert(headers: &mut HeaderMap, limit: RateLimit) {
    headers.insert(LIMIT, HeaderValue::from(limit.limit));
    headers.insert(REMAINING, HeaderValue::from(limit.remaining));
    headers.insert(RESET, HeaderValue::from(limit.reset_secs));
}
