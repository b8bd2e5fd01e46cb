//! Request extractors shared by handlers: the authenticated caller, the client IP and an
//! optional JSON body.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::header;
use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};

use crate::app::AppState;
use crate::auth::Role;
use crate::auth::tokens::TokenError;
use crate::db::users::UserRow;
use crate::error::Error;
use crate::games::Table;
use crate::http::problem::ApiError;

/// The caller, authenticated by a bearer access token and re-checked against the database on
/// every request, so a ban, a deletion or a role change takes effect at once.
#[derive(Debug, Clone)]
pub struct AuthUser {
    /// The account.
    pub user: UserRow,
    /// The role as stored now.
    pub role: Role,
}

impl AuthUser {
    /// The user id.
    pub fn id(&self) -> &str {
        &self.user.id
    }
}

impl FromRequest for AuthUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let caller = Caller::from_request(req, payload);
        Box::pin(async move {
            let state = state.ok_or_else(|| Error::internal("AppState missing"))?;
            let caller = caller.await?;
            Ok(state.db.run(move |conn| caller.check(conn)).await?)
        })
    }
}

/// The caller as its access token says: the token is verified (401 otherwise), the account
/// is not checked yet. The busiest handlers take this instead of [`AuthUser`] and call
/// [`Caller::check`] in the same database round as their own work, which saves a round
/// trip to a blocking thread per request; the checks are the same.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The user id the token names.
    pub user_id: String,
}

impl Caller {
    /// Loads the account and applies [`crate::auth::judge`]: 401 when it no longer
    /// exists, 403 `banned`.
    ///
    /// # Errors
    /// As described, and database errors.
    pub fn check(&self, conn: &mut crate::db::AnyConnection) -> Result<AuthUser, Error> {
        let (user, role) = crate::auth::check_account(conn, &self.user_id)?;
        Ok(AuthUser { user, role })
    }

    /// Loads a game for the caller, checking the account in the same query
    /// ([`Table::load_for`]).
    ///
    /// # Errors
    /// As [`Table::load_for`].
    pub fn load_game(
        &self,
        conn: &mut crate::db::AnyConnection,
        id: &str,
        for_update: bool,
    ) -> Result<Table, Error> {
        Table::load_for(conn, id, for_update, &self.user_id)
    }
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let verify = || {
            let state = req
                .app_data::<web::Data<AppState>>()
                .ok_or_else(|| Error::internal("AppState missing"))?;
            let token = bearer(req)?;
            let claims = state.keys.verify(&token).map_err(|e| match e {
                TokenError::Expired => {
                    Error::unauthorized("invalid_token", "the access token has expired; refresh it")
                }
                TokenError::Invalid => {
                    Error::unauthorized("invalid_token", "the access token is not valid")
                }
            })?;
            Ok(Caller {
                user_id: claims.sub,
            })
        };
        std::future::ready(verify())
    }
}

fn bearer(req: &HttpRequest) -> Result<String, Error> {
    let value = req.headers().get(header::AUTHORIZATION).ok_or_else(|| {
        Error::unauthorized("missing_token", "send Authorization: Bearer <access token>")
    })?;
    let value = value.to_str().map_err(|_| {
        Error::unauthorized("invalid_token", "the Authorization header is not ASCII")
    })?;
    let (scheme, token) = value.split_once(' ').ok_or_else(|| {
        Error::unauthorized(
            "invalid_token",
            "expected Authorization: Bearer <access token>",
        )
    })?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(Error::unauthorized(
            "invalid_token",
            "expected Authorization: Bearer <access token>",
        ));
    }
    Ok(token.trim().to_owned())
}

/// The client's IP address for rate limiting: the peer address, or the forwarded one when
/// the operator said a trusted proxy sets it.
pub fn client_ip(req: &HttpRequest, trust_proxy: bool) -> String {
    if trust_proxy && let Some(ip) = req.connection_info().realip_remote_addr() {
        return ip.to_owned();
    }
    req.peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// An authenticated administrator: [`AuthUser`] plus the role check. Everyone else gets 403
/// `forbidden` (401 without a valid token, 403 `banned` when banned, as for [`AuthUser`]).
/// The role is read from the database on each request, so a demotion takes effect at once.
#[derive(Debug, Clone)]
pub struct AdminUser(pub AuthUser);

impl AdminUser {
    /// The administrator's user id.
    pub fn id(&self) -> &str {
        self.0.id()
    }
}

impl FromRequest for AdminUser {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let user = AuthUser::from_request(req, payload);
        Box::pin(async move {
            let user = user.await?;
            if user.role != Role::Admin {
                return Err(Error::forbidden("this operation is for administrators").into());
            }
            Ok(AdminUser(user))
        })
    }
}

/// Whether a request body of this media type is read as JSON: `application/json` or any
/// `+json` type, parameters (`charset=utf-8`) aside. This is the rule of actix-web's `Json`
/// extractor (a `json` subtype or a `+json` suffix), so endpoints with a required body and
/// those with an optional one ([`OptionalJson`]) accept the same types.
pub fn is_json(mime: &actix_web::mime::Mime) -> bool {
    mime.subtype() == actix_web::mime::JSON || mime.suffix() == Some(actix_web::mime::JSON)
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
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let body = body.await?;
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Self(T::default()));
            }
            if declared_json.is_none() {
                return Err(refuse(unsupported_media_type()));
            }
            serde_json::from_slice(&body).map(Self).map_err(|e| {
                refuse(if e.is_data() {
                    Error::validation(e.to_string())
                } else {
                    Error::bad_request(format!("malformed JSON: {e}"))
                })
            })
        })
    }
}

fn refuse(error: Error) -> actix_web::Error {
    ApiError::from(error).into()
}
