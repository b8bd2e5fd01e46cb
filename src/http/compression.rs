//! Response compression: actix-web's `Compress` encodes a response as the client's
//! `Accept-Encoding` allows (`br`, `gzip`; also `zstd` and `deflate`), and nothing without
//! that header. Two kinds of response stay as they are: small bodies, where the encoding
//! costs more than it saves, and event streams, whose events must reach the client as they
//! are written rather than when a compressor's buffer fills.
//!
//! `Compress` leaves alone a response that already has a `Content-Encoding`, so
//! [`mark_plain`], inside it, marks those two kinds with `identity`, and [`unmark`],
//! outside it, removes the mark (RFC 9110 §8.4.1 keeps `identity` out of that header).
//!
//! Entity tags stay as the handlers set them: a game's `ETag` is its version whatever the
//! encoding, so `If-None-Match` and `If-Match` work the same on compressed responses.

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::header::{self, HeaderValue};

/// Bodies smaller than this go uncompressed: they fit in a packet either way.
pub const MIN_COMPRESSED_BYTES: u64 = 1024;

/// Whether a response should keep its body as it is.
fn stays_plain<B: MessageBody>(res: &ServiceResponse<B>) -> bool {
    let small =
        matches!(res.response().body().size(), BodySize::Sized(n) if n < MIN_COMPRESSED_BYTES);
    let stream = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    small || stream
}

/// Inside `Compress` (with [`super::adjust::each_response`]): marks the responses that must
/// stay plain.
pub fn mark_plain<B: MessageBody>(res: &mut ServiceResponse<B>) {
    if stays_plain(res) && !res.headers().contains_key(header::CONTENT_ENCODING) {
        res.headers_mut().insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static("identity"),
        );
    }
}

/// Outside `Compress` (with [`super::adjust::each_response`]): removes the mark of
/// [`mark_plain`], and says `Vary: Accept-Encoding` on every response whose body depends on
/// that header, compressed or not (RFC 9110 §12.5.5), so that a shared cache never serves
/// one client's encoding to another. A 304 carries it too: it stands for the full response.
pub fn unmark<B>(res: &mut ServiceResponse<B>) {
    let plain = res
        .headers()
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| v == "identity");
    if plain {
        res.headers_mut().remove(header::CONTENT_ENCODING);
    }
    let varies = !plain || res.status() == actix_web::http::StatusCode::NOT_MODIFIED;
    let said = res.headers().get_all(header::VARY).any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|name| name.trim().eq_ignore_ascii_case("accept-encoding"))
        })
    });
    if varies && !said {
        res.headers_mut()
            .append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::HttpResponse;
    use actix_web::test::TestRequest;

    fn plain(res: HttpResponse) -> bool {
        stays_plain(&TestRequest::default().to_srv_response(res))
    }

    #[test]
    fn small_bodies_and_event_streams_stay_plain() {
        assert!(plain(
            HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
        ));
        assert!(!plain(HttpResponse::Ok().body("x".repeat(2000))));
        let events = futures_util::stream::once(async {
            Ok::<_, actix_web::Error>(actix_web::web::Bytes::from("data: {}\n\n"))
        });
        assert!(plain(
            HttpResponse::Ok()
                .content_type("text/event-stream")
                .streaming(events)
        ));
        let other = futures_util::stream::once(async {
            Ok::<_, actix_web::Error>(actix_web::web::Bytes::from("[]"))
        });
        assert!(!plain(HttpResponse::Ok().streaming(other)));
    }
}
