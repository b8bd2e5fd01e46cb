//! CORS, for browsers on the origins of `LEEKHA_CORS_ORIGINS`, with actix-cors. Off by
//! default: then no response carries a CORS header and browsers keep other origins out.
//!
//! A request from an origin that is not allowed is served as usual, without CORS headers
//! (the browser then hides the answer from the page); only its preflight is refused (400).
//! Credentials are never allowed: the API takes bearer tokens, which a page must hold and
//! send itself, never cookies.

use actix_cors::Cors;
use actix_web::dev::ServiceResponse;
use actix_web::http::{Method, header};
use actix_web::middleware::Condition;

use crate::config::CorsOrigins;

/// The request headers a page may send beyond the CORS-safelisted ones.
const ALLOWED_HEADERS: [&str; 6] = [
    "authorization",
    "content-type",
    "if-match",
    "if-none-match",
    "idempotency-key",
    "last-event-id",
];

/// The response headers a page may read beyond the CORS-safelisted ones.
const EXPOSED_HEADERS: [&str; 10] = [
    "etag",
    "location",
    "retry-after",
    "allow",
    "idempotent-replayed",
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "x-request-id",
    "www-authenticate",
];

/// How long a browser may reuse a preflight's answer, in seconds (browsers cap it lower).
const PREFLIGHT_MAX_AGE: usize = 3600;

/// The CORS middleware for the configured origins; a no-op when CORS is off.
pub fn cors(origins: &CorsOrigins) -> Condition<Cors> {
    let mut cors = Cors::default()
        .allowed_methods([
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allowed_headers(ALLOWED_HEADERS.map(header::HeaderName::from_static))
        .expose_headers(EXPOSED_HEADERS.map(header::HeaderName::from_static))
        .max_age(PREFLIGHT_MAX_AGE)
        // A refused origin gets the answer without CORS headers, not an error: only the
        // browser can judge an origin, and other clients send one too.
        .block_on_origin_mismatch(false);
    match origins {
        CorsOrigins::Off => {}
        CorsOrigins::Any => cors = cors.allow_any_origin().send_wildcard(),
        CorsOrigins::List(list) => {
            for origin in list {
                cors = cors.allowed_origin(origin);
            }
        }
    }
    Condition::new(origins.enabled(), cors)
}

/// Outside [`cors`] (with [`super::adjust::each_response`]): drops
/// `Access-Control-Expose-Headers` from answers that allow no origin. actix-cors adds it to
/// every answer, including those to origins it does not allow and to requests without an
/// `Origin`; the other origins are to be served without CORS headers. (`Vary: Origin` stays:
/// caches must still tell the answers apart.)
pub fn only_for_allowed_origins<B>(res: &mut ServiceResponse<B>) {
    let headers = res.headers_mut();
    if !headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN) {
        headers.remove(header::ACCESS_CONTROL_EXPOSE_HEADERS);
    }
}
