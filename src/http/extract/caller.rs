//! Who is calling: the bearer access token verified ([`Caller`]), the account checked
//! against the database ([`AuthUser`]), and the administrator's role ([`AdminUser`]).

use std::future::Future;
use std::pin::Pin;

use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};

use crate::app::AppState;
use crate::auth::Role;
use crate::auth::tokens::TokenError;
use crate::db::users::UserRow;
use crate::error::Error;
use crate::http::problem::ApiError;

/// The caller, authenticated by a bearer access token and re-checked against the database on
/// every request, so a ban, a deletion or a role change takes effect at once.
#[derive(Debug, Clone)]
pub struct AuthUser {
    /// The account.
    pub user: UserRow,
    /// The role as stored now.
    pub role: Role,
    /// The session (refresh-token family) the access token belongs to, when it names one.
    pub session: Option<String>,
}

impl AuthUser {
    /// The user id.
    pub fn id(&self) -> &str {
        &self.user.id
    }

    /// Runs `use_case(conn, caller_id)` on the blocking pool: the one shape of a handler's
    /// database round for the caller.
    ///
    /// # Errors
    /// What the use case returns, and pool errors.
    pub async fn run<T, F>(&self, state: &AppState, use_case: F) -> Result<T, Error>
    where
        F: FnOnce(&mut crate::db::AnyConnection, &str) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        let id = self.id().to_owned();
        state.db.run(move |conn| use_case(conn, &id)).await
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
    /// The session the token belongs to (`sid`), when it names one.
    pub session: Option<String>,
}

impl Caller {
    /// Loads the account and applies [`crate::auth::judge`]: 401 when it no longer
    /// exists, 403 `banned`; then 401 when the session the token names has ended (a logout,
    /// a password change that ended the account's other sessions, a replayed refresh
    /// token), so that a stolen token stops at once where the account is concerned.
    ///
    /// # Errors
    /// As described, and database errors.
    pub fn check(&self, conn: &mut crate::db::AnyConnection) -> Result<AuthUser, Error> {
        let (user, role) = crate::auth::check_account(conn, &self.user_id)?;
        if let Some(sid) = self.session.as_deref()
            && !crate::accounts::session_open(conn, sid)?
        {
            return Err(Error::unauthorized(
                "invalid_token",
                "this session has ended (logged out, or ended by a password change or a \
                 replayed refresh token); log in again",
            ));
        }
        Ok(AuthUser {
            user,
            role,
            session: self.session.clone(),
        })
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
                session: claims.sid,
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
