//! Request bodies in a content coding the server cannot undo get 415.
//!
//! actix decodes `gzip`, `deflate`, `br` and `zstd` request bodies, and reads a body whose
//! `Content-Encoding` it does not know (`x-gzip`, `compress`, a list such as `gzip, br`)
//! as if it were not encoded at all: the client then learns that its JSON is
//! malformed, which it is not. RFC 9110 (§15.5.16) answers such a body with 415 and an
//! `Accept-Encoding` that names the codings that would have been read.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use futures_util::FutureExt;

use super::problem::ApiError;
use super::slow_body::has_body;
use crate::error::{Error, Kind};

/// The codings actix decodes in this build, as `Accept-Encoding` names them.
pub const READABLE: &str = "gzip, deflate, br, zstd";

/// Middleware (for `App::wrap_fn`): a body in an unknown coding is refused before any
/// handler reads it.
pub fn refuse_unknown<S, B>(
    req: ServiceRequest,
    srv: &S,
) -> impl Future<Output = Result<ServiceResponse<BoxBody>, actix_web::Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    S::Future: 'static,
    B: MessageBody + 'static,
{
    let coding = req.headers().get(header::CONTENT_ENCODING);
    match coding.filter(|_| has_body(&req)).and_then(unreadable) {
        None => srv
            .call(req)
            .map(|res| res.map(ServiceResponse::map_into_boxed_body))
            .left_future(),
        Some(problem) => {
            let mut answer: HttpResponse = ApiError::from(problem).error_response();
            answer
                .headers_mut()
                .insert(header::ACCEPT_ENCODING, HeaderValue::from_static(READABLE));
            std::future::ready(Ok(req.into_response(answer))).right_future()
        }
    }
}

/// The problem with a `Content-Encoding` actix would not decode, if it is one.
fn unreadable(value: &HeaderValue) -> Option<Error> {
    let named = value.to_str().unwrap_or("(not text)").trim();
    let known = ["gzip", "deflate", "br", "zstd", "identity"]
        .iter()
        .any(|coding| named.eq_ignore_ascii_case(coding));
    (!known).then(|| {
        Error::new(
            Kind::UnsupportedMediaType,
            "unsupported_media_type",
            format!(
                "the body's Content-Encoding `{named}` is not one the server reads: send it \
                 with one of {READABLE}, or unencoded"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(value: &str) -> bool {
        unreadable(&HeaderValue::from_str(value).unwrap()).is_some()
    }

    #[test]
    fn only_the_codings_actix_decodes_are_read() {
        for known in ["gzip", "GZIP", " deflate ", "br", "zstd", "identity"] {
            assert!(!refused(known), "{known} refused");
        }
        for unknown in ["x-gzip", "gzip, br", "compress", "lz4", ""] {
            assert!(refused(unknown), "{unknown:?} read");
        }
    }
}
