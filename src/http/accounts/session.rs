//! Sessions: register, login, guest, refresh, logout.

use std::future::Future;

use actix_web::{HttpRequest, HttpResponse, post};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::accounts::{self, Issuer, NewAccount, Session};
use crate::app::AppState;
use crate::auth::{Password, Username};
use crate::db::AnyConnection;
use crate::error::Error;
use crate::http::extract::Json;
use crate::http::rate_limit;
use crate::http::reply::{Reply, State, created, no_content, uncached};

use super::{UserView, check_rate};

/// Credentials for register and login.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// 3–32 ASCII letters of either case, digits or `_`; unique ignoring case; not starting
    /// `guest_` (kept for guest accounts).
    #[schema(example = "layla_99", pattern = "^[A-Za-z0-9_]{3,32}$")]
    pub username: String,
    /// 8–128 characters.
    #[schema(example = "correct horse battery", format = Password, min_length = 8, max_length = 128)]
    pub password: String,
}

/// A refresh token presented for rotation or logout.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshRequest {
    /// The refresh token from the last login, registration or refresh.
    pub refresh_token: String,
}

/// How the access token is presented: `Authorization: Bearer <token>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum TokenType {
    /// RFC 6750.
    Bearer,
}

/// A new session: the user and a token pair.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenResponse {
    /// The account.
    pub user: UserView,
    /// Bearer access token (JWT); send as `Authorization: Bearer …`.
    pub access_token: String,
    /// Opaque refresh token; single use: `POST /auth/refresh` spends it for a new pair.
    pub refresh_token: String,
    /// Always `Bearer`.
    pub token_type: TokenType,
    /// Seconds until the access token expires.
    #[schema(example = 900)]
    pub expires_in: i64,
}

impl From<Session> for TokenResponse {
    fn from(s: Session) -> Self {
        Self {
            user: UserView::from(&s.user),
            access_token: s.access_token,
            refresh_token: s.refresh_token,
            token_type: TokenType::Bearer,
            expires_in: s.expires_in,
        }
    }
}

/// Runs `answer` under the rate limit of `action` (see [`check_rate`]): refused with 429
/// past the quota, and the answer, success or error, carries the `RateLimit-*` headers.
async fn rate_limited(
    state: &AppState,
    req: &HttpRequest,
    action: &str,
    account: Option<&str>,
    answer: impl Future<Output = Reply>,
) -> Reply {
    let limit = check_rate(state, req, action, account)?;
    match answer.await {
        Ok(mut res) => {
            rate_limit::insert(res.headers_mut(), limit);
            Ok(res)
        }
        Err(e) => Err(e.with_rate_limit(limit)),
    }
}

/// The refusals that login and refresh document alike: both reopen a session of an existing
/// account from a body, under a rate limit. Never constructed; only its responses are used.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
enum SessionRefusals {
    #[response(status = 400, description = "Malformed input")]
    Malformed,
    #[response(status = 403, description = "The account is banned (`banned`)")]
    Banned,
    #[response(status = 429, description = "Rate limited")]
    RateLimited,
}

/// Where a new account can be read back: the `Location` of a 201 from register and guest.
const ME: &str = "/api/v1/me";

/// Runs a use case that opens a session on the blocking pool, with this server's keys, and
/// answers its token pair: 201 naming the account in `Location` when the use case made it,
/// else 200.
async fn open_session<F>(state: &AppState, new_account: bool, open: F) -> Reply
where
    F: FnOnce(&mut AnyConnection, &Issuer) -> Result<Session, Error> + Send + 'static,
{
    let issuer = Issuer::new(state.keys.clone(), state.config.refresh_ttl_days);
    let session = state.db.run(move |conn| open(conn, &issuer)).await?;
    let tokens = TokenResponse::from(session);
    Ok(uncached(if new_account {
        created(ME, tokens)
    } else {
        HttpResponse::Ok().json(tokens)
    }))
}

/// Create an account and log in.
///
/// Usernames are 3–32 ASCII letters, digits or `_`, unique ignoring case, and do not start
/// `guest_` (kept for guest accounts); passwords 8–128
/// characters. Answers the same token pair as a login. Rate limited per client address and
/// per username (`RateLimit-*` headers; 429 with `Retry-After` above the limit).
#[utoipa::path(operation_id = "register", tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 201, description = "Registered and logged in", body = TokenResponse),
        (status = 400, description = "Malformed or invalid input"),
        (status = 409, description = "Username taken (`username_taken`)"),
        (status = 429, description = "Rate limited")))]
#[post("/auth/register")]
pub async fn register(state: State, req: HttpRequest, body: Json<Credentials>) -> Reply {
    let answer = async {
        let account = NewAccount {
            username: Username::chosen(&body.username, None)?,
            password: Password::parse(&body.password)?,
        };
        open_session(&state, true, move |conn, issuer| {
            accounts::register(conn, issuer, account)
        })
        .await
    };
    rate_limited(&state, &req, "register", Some(&body.username), answer).await
}

/// Log in with username and password.
///
/// Logs in with username and password. An unknown user and a wrong password get the same
/// answer, in the same time.
#[utoipa::path(operation_id = "login", tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 200, description = "Logged in", body = TokenResponse),
        (status = 401, description = "Wrong username or password (`invalid_credentials`)"),
        SessionRefusals))]
#[post("/auth/login")]
pub async fn login(state: State, req: HttpRequest, body: Json<Credentials>) -> Reply {
    let Credentials { username, password } = body.into_inner();
    let account = username.clone();
    let answer = open_session(&state, false, move |conn, issuer| {
        accounts::login(conn, issuer, &username, &password)
    });
    rate_limited(&state, &req, "login", Some(&account), answer).await
}

/// Play as a guest.
///
/// Creates a guest account with a random username and logs it in. Set a password with
/// `PATCH /api/v1/me` to keep it.
#[utoipa::path(operation_id = "create_guest", tag = "accounts",
    responses(
        (status = 201, description = "A guest account and its tokens", body = TokenResponse),
        (status = 429, description = "Rate limited")))]
#[post("/auth/guest")]
pub async fn guest(state: State, req: HttpRequest) -> Reply {
    let answer = open_session(&state, true, accounts::guest);
    rate_limited(&state, &req, "guest", None, answer).await
}

/// Exchange a refresh token for a new pair.
///
/// Spends a refresh token for a new pair (rotation). Presenting a token that was already
/// spent revokes every token descended from the same login. Refresh before the access token
/// expires (`expires_in` seconds), and keep the new refresh token: the old one is spent.
#[utoipa::path(operation_id = "refresh_tokens", tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "A new token pair; the presented refresh token is spent", body = TokenResponse),
        (status = 401, description = "Unknown, expired, spent or revoked (`invalid_token`)"),
        SessionRefusals))]
#[post("/auth/refresh")]
pub async fn refresh(state: State, req: HttpRequest, body: Json<RefreshRequest>) -> Reply {
    let RefreshRequest { refresh_token } = body.into_inner();
    let token = refresh_token.clone();
    let answer = open_session(&state, false, move |conn, issuer| {
        accounts::refresh(conn, issuer, &refresh_token)
    });
    let reply = rate_limited(&state, &req, "refresh", None, answer).await;
    if reply.is_err() {
        // A replayed token ended its session: its streams on this instance end now (the
        // others heard the refusal's wake-up).
        let ended = state
            .db
            .run(move |conn| accounts::ended_session_of(conn, &token))
            .await;
        if let Ok(Some(session)) = ended {
            state.end_streams_of_session(&session);
        }
    }
    reply
}

/// Log out a session.
///
/// Ends the session of this refresh token (its whole family) and its open event streams.
/// Answers 204 whether or not the token was known, so it can be retried safely. The
/// session's access tokens are refused from the next request by every endpoint that reads
/// the account; the game view and actions take them until they expire (`expires_in`, 15 min
/// by default), so a client discards its access token when it logs out.
#[utoipa::path(operation_id = "logout", tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 204, description = "Logged out"),
        (status = 400, description = "Malformed input")))]
#[post("/auth/logout")]
pub async fn logout(state: State, body: Json<RefreshRequest>) -> Reply {
    let RefreshRequest { refresh_token } = body.into_inner();
    let session = state
        .db
        .run(move |conn| accounts::logout(conn, &refresh_token))
        .await?;
    if let Some(session) = session {
        state.end_streams_of_session(&session);
    }
    no_content()
}
