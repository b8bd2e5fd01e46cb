//! What every handler has in common: the application state it is given, the reply it returns,
//! and the few shapes of a successful answer.

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::app::AppState;
use crate::http::problem::ApiError;

/// The application state, as handlers receive it.
pub type State = web::Data<AppState>;

/// A handler's answer: a response, or an error that becomes problem+json.
pub type Reply = Result<HttpResponse, ApiError>;

/// 200 with `view` as JSON.
///
/// # Errors
/// Never; a [`Reply`] so that handlers can end with it.
pub fn ok(view: impl Serialize) -> Reply {
    Ok(HttpResponse::Ok().json(view))
}

/// `res` marked `Cache-Control: no-store`: it carries credentials (a token pair, a stream
/// ticket), which no cache on the way may keep (RFC 6749, 5.1).
pub fn uncached(mut res: HttpResponse) -> HttpResponse {
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    res
}

/// 201 with `Location: location` and `view` as JSON.
pub fn created(location: impl Into<String>, view: impl Serialize) -> HttpResponse {
    HttpResponse::Created()
        .insert_header((header::LOCATION, location.into()))
        .json(view)
}

/// 201 with `Location: location` when the request made something, else 200: the answer of
/// an idempotent `PUT` or `POST`.
pub fn made_or_held(created: bool, location: impl Into<String>, view: impl Serialize) -> Reply {
    Ok(if created {
        self::created(location, view)
    } else {
        HttpResponse::Ok().json(view)
    })
}

/// 204.
///
/// # Errors
/// Never; a [`Reply`] so that handlers can end with it.
pub fn no_content() -> Reply {
    Ok(HttpResponse::NoContent().finish())
}
