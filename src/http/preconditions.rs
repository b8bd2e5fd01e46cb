//! Conditional requests on games: `ETag` is the game's version, `If-Match` asks for a version
//! (409 otherwise), `If-None-Match` answers 304 when nothing changed.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use serde::Serialize;

use crate::error::Error;

/// The entity tag of a version.
pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// Parses `If-Match` (`"12"`, `W/"12"` or `12`).
///
/// # Errors
/// `bad_request` for anything but a version.
pub fn if_match(req: &HttpRequest) -> Result<Option<i64>, Error> {
    let Some(value) = req.headers().get(header::IF_MATCH) else {
        return Ok(None);
    };
    let raw = value.to_str().unwrap_or("").trim();
    let raw = raw.strip_prefix("W/").unwrap_or(raw).trim_matches('"');
    raw.parse()
        .map(Some)
        .map_err(|_| Error::bad_request("If-Match must be a game version, e.g. \"12\""))
}

/// `304 Not Modified` when `If-None-Match` names `version` (or `*`).
pub fn not_modified(req: &HttpRequest, version: i64) -> Option<HttpResponse> {
    let tag = etag(version);
    let none_match = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())?;
    none_match
        .split(',')
        .any(|t| {
            let t = t.trim();
            t == "*" || t.strip_prefix("W/").unwrap_or(t) == tag
        })
        .then(|| {
            HttpResponse::NotModified()
                .insert_header((header::ETAG, tag))
                .finish()
        })
}

/// 200 with a JSON body and the version as `ETag`.
pub fn with_etag(body: &impl Serialize, version: i64) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::ETAG, etag(version)))
        .json(body)
}
