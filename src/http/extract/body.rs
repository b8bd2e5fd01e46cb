//! Request bodies: a required JSON object ([`Json`]), an optional one ([`OptionalJson`]),
//! and the problems for a body that is not JSON, cannot be read or is too large.

use std::future::Future;
use std::pin::Pin;

use actix_web::error::PayloadError;
use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};

use crate::app::AppState;
use crate::error::Error;
use crate::http::json_body::{UniqueKeys, object};
use crate::http::problem::ApiError;

/// Whether a request body of this media type is read as JSON: `application/json` or any
/// `+json` type, parameters (`charset=utf-8`) aside. Endpoints with a required body
/// ([`Json`]) and those with an optional one ([`OptionalJson`]) accept the same types; not
/// actix-web's wider rule (any `json` subtype: `text/json` too).
pub fn is_json(mime: &actix_web::mime::Mime) -> bool {
    use actix_web::mime::{APPLICATION, JSON};
    (mime.type_() == APPLICATION && mime.subtype() == JSON) || mime.suffix() == Some(JSON)
}

/// The problem for a body that could not be read, in words a client can act on: actix's own
/// messages carry Rust debug output (`Some(Custom { kind: InvalidInput, … })`).
pub fn unreadable_body(err: &actix_web::error::PayloadError, limit: usize) -> Error {
    use actix_web::error::PayloadError as P;
    match err {
        P::Overflow => Error::new(
            crate::error::Kind::PayloadTooLarge,
            "payload_too_large",
            format!("the body is larger than the limit of {limit} bytes"),
        ),
        P::EncodingCorrupted => {
            Error::bad_request("the body is not valid for its Content-Encoding")
        }
        P::Incomplete(_) => Error::bad_request(
            "the body could not be read: it ended early, its chunked framing is broken, or it \
             is not valid for its Content-Encoding",
        ),
        _ => Error::bad_request("the body could not be read"),
    }
}

/// The body limit the app was built with (`LEEKHA_MAX_BODY_BYTES`): the `PayloadConfig` it
/// sets does not tell it.
pub fn body_limit(req: &HttpRequest) -> usize {
    req.app_data::<web::Data<AppState>>()
        .map_or(0, |state| state.config.max_body_bytes)
}

/// The problem for a body serde_json could not read: a wrong value in well-formed JSON is
/// `validation_failed`, anything else `bad_request`.
pub fn json_problem(e: &serde_json::Error) -> Error {
    if e.is_data() {
        Error::validation(e.to_string())
    } else {
        Error::bad_request(format!("malformed JSON: {e}"))
    }
}

/// 415 `unsupported_media_type`, for a body that is not declared as JSON.
pub fn unsupported_media_type() -> Error {
    Error::new(
        crate::error::Kind::UnsupportedMediaType,
        "unsupported_media_type",
        "send the body as Content-Type: application/json",
    )
}

/// An optional JSON body: an empty one (or only white space) gives the defaults.
///
/// A body is JSON only when the request says so, as for a required body: a `Content-Type`
/// that is not JSON ([`is_json`]) gets 415 `unsupported_media_type`, and so does a body
/// sent with no `Content-Type` at all. An empty body with no `Content-Type` is the
/// ordinary way to ask for the defaults.
#[derive(Debug, Clone, Default)]
pub struct OptionalJson<T>(pub T);

impl<T: serde::de::DeserializeOwned + Default + 'static> FromRequest for OptionalJson<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let declared_json = match req.mime_type() {
            Ok(None) => None,
            Ok(Some(mime)) => Some(is_json(&mime)),
            // An unreadable Content-Type declares nothing we can read.
            Err(_) => Some(false),
        };
        if declared_json == Some(false) {
            return Box::pin(std::future::ready(Err(refuse(unsupported_media_type()))));
        }
        let limit = body_limit(req);
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let body = body.await.map_err(|e| match e.as_error::<PayloadError>() {
                Some(unreadable) => refuse(unreadable_body(unreadable, limit)),
                None => e,
            })?;
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Self(T::default()));
            }
            if declared_json.is_none() {
                return Err(refuse(unsupported_media_type()));
            }
            let UniqueKeys(value) =
                serde_json::from_slice(&body).map_err(|e| refuse(json_problem(&e)))?;
            object(value).map(Self).map_err(refuse)
        })
    }
}

/// A required JSON body, which must be an object.
///
/// actix-web's `Json` reads the body (its `JsonConfig`: size limit, media type, and the
/// problem for each failure); what it reads must then be an object, as every request schema
/// of the API is (see [`object`]).
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    /// The body.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Json<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: serde::de::DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = UniqueKeys::from_request(req, payload);
        Box::pin(async move {
            let UniqueKeys(value) = body.await?;
            object(value).map(Self).map_err(refuse)
        })
    }
}

/// A required JSON body of any shape, for a handler that judges its shape later: read as
/// [`Json`] reads its body.
impl FromRequest for UniqueKeys {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // actix-web reads any `json` subtype; the API reads only those of [`is_json`].
        if let Ok(Some(mime)) = req.mime_type()
            && !is_json(&mime)
        {
            return Box::pin(std::future::ready(Err(refuse(unsupported_media_type()))));
        }
        let body = web::Json::<UniqueKeys>::from_request(req, payload);
        Box::pin(async move { Ok(body.await?.into_inner()) })
    }
}

fn refuse(error: Error) -> actix_web::Error {
    ApiError::from(error).into()
}
