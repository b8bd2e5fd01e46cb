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

/// Parses `If-Match` (`"12"`, `W/"12"` or `12`) into the version it asks for; `*` asks only
/// that the game exists, which every action on it does anyway (RFC 9110, 13.1.1), so it asks
/// for no version. A weak tag is read as the version it names: the tags this server sends are
/// strong, and a client that got one weakened by a proxy still means that version.
///
/// # Errors
/// `bad_request` for anything but a version or `*` (a list of tags included: an action
/// applies to one version).
pub fn if_match(req: &HttpRequest) -> Result<Option<i64>, Error> {
    let Some(value) = req.headers().get(header::IF_MATCH) else {
        return Ok(None);
    };
    let raw = value.to_str().unwrap_or("").trim();
    if raw == "*" {
        return Ok(None);
    }
    // A weak tag counts as the strong one, against RFC 9110's strong comparison on purpose:
    // the tag is the game's version, the same whatever the encoding, and a proxy that
    // compresses (nginx's gzip) weakens the tags it passes on, so a client behind one could
    // otherwise never send an action with a precondition.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(value: &str) -> Result<Option<i64>, Error> {
        let req = actix_web::test::TestRequest::default()
            .insert_header((header::IF_MATCH, value))
            .to_http_request();
        if_match(&req)
    }

    #[test]
    fn if_match_names_one_version_or_any() {
        assert_eq!(asked("\"12\"").unwrap(), Some(12));
        assert_eq!(asked("W/\"12\"").unwrap(), Some(12));
        assert_eq!(asked("12").unwrap(), Some(12));
        assert_eq!(asked("*").unwrap(), None);
        for bad in ["\"12\", \"13\"", "abc", ""] {
            assert!(asked(bad).is_err(), "{bad}");
        }
        let none = actix_web::test::TestRequest::default().to_http_request();
        assert_eq!(if_match(&none).unwrap(), None);
    }
}
