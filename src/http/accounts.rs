//! Accounts and authentication: register, login, guests, rotating refresh tokens, the
//! caller's profile.

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use chrono::{DateTime, Utc};
use diesel::Connection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::app::AppState;
use crate::auth::tokens::{hash_refresh_token, new_refresh_token};
use crate::auth::{Password, Role, Username, verify_password};
use crate::db::users::{self, NewRefreshToken, NewUser, UserRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::http::extract::{AuthUser, client_ip};
use crate::http::problem::{ApiError, Problem};

/// Registers the routes of this module.
pub fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
    cfg.service(register)
        .service(login)
        .service(guest)
        .service(refresh)
        .service(logout)
        .service(me)
        .service(update_me)
        .service(delete_me);
}

/// Credentials for register and login.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Credentials {
    /// 3–32 characters of `a-z`, `0-9`, `_`; unique ignoring case.
    #[schema(example = "layla_99")]
    pub username: String,
    /// 8–128 characters.
    #[schema(example = "correct horse battery", format = Password)]
    pub password: String,
}

/// A refresh token presented for rotation or logout.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RefreshRequest {
    /// The refresh token from the last login, registration or refresh.
    pub refresh_token: String,
}

/// Changes to the caller's account. A guest becomes a full account by setting a password.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMe {
    /// A new username.
    pub username: Option<String>,
    /// A new password (8–128 characters).
    #[schema(format = Password)]
    pub password: Option<String>,
    /// Required to change the password of an account that has one.
    #[schema(format = Password)]
    pub current_password: Option<String>,
}

/// Per-player statistics.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserStats {
    /// Finished games the user had a seat in.
    pub games_played: i32,
    /// Of those, games the user won (or co-won).
    pub games_won: i32,
}

/// A user as the user sees themself.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserView {
    /// User id.
    pub id: uuid::Uuid,
    /// Username.
    #[schema(example = "layla_99")]
    pub username: String,
    /// `player` or `admin`.
    pub role: Role,
    /// A guest account (random username, no password yet).
    pub is_guest: bool,
    /// When the account was made.
    pub created_at: DateTime<Utc>,
    /// Statistics.
    pub stats: UserStats,
}

impl From<&UserRow> for UserView {
    fn from(u: &UserRow) -> Self {
        Self {
            id: u.id.parse().unwrap_or_default(),
            username: u.username.clone(),
            role: Role::parse(&u.role).unwrap_or(Role::Player),
            is_guest: u.is_guest,
            created_at: u.created_at.and_utc(),
            stats: UserStats {
                games_played: u.games_played,
                games_won: u.games_won,
            },
        }
    }
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
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds until the access token expires.
    #[schema(example = 900)]
    pub expires_in: i64,
}

/// Stores a refresh token of `family` (a new family for a new login) and signs the pair.
fn new_session(
    conn: &mut AnyConnection,
    state: &AppState,
    user: &UserRow,
    family: Option<&str>,
) -> Result<TokenResponse, Error> {
    let now = db::now();
    let refresh_token = new_refresh_token();
    let id = uuid::Uuid::new_v4().to_string();
    let family = family.map_or_else(|| id.clone(), str::to_owned);
    users::insert_refresh(
        conn,
        &NewRefreshToken {
            id: &id,
            user_id: &user.id,
            family_id: &family,
            token_hash: &hash_refresh_token(&refresh_token),
            created_at: now,
            expires_at: now + chrono::Duration::days(state.config.refresh_ttl_days),
        },
    )?;
    let role = Role::parse(&user.role).unwrap_or(Role::Player);
    Ok(TokenResponse {
        user: UserView::from(user),
        access_token: state.keys.issue(&user.id, role, now.and_utc().timestamp()),
        refresh_token,
        token_type: "Bearer".to_owned(),
        expires_in: state.keys.access_ttl_secs(),
    })
}

fn username_taken(e: diesel::result::Error) -> Error {
    match e {
        diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        ) => Error::conflict("username_taken", "this username is taken"),
        other => other.into(),
    }
}

fn check_rate(
    state: &AppState,
    req: &HttpRequest,
    action: &str,
    username: Option<&str>,
) -> Result<(), Error> {
    let ip = client_ip(req, state.config.trust_proxy);
    let mut keys = vec![format!("{action}:ip:{ip}")];
    if let Some(name) = username {
        keys.push(format!("{action}:user:{}", name.to_ascii_lowercase()));
    }
    state.limits.check(&keys)
}

/// Creates an account and logs it in.
#[utoipa::path(
    tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 201, description = "Registered and logged in", body = TokenResponse),
        (status = 400, description = "Malformed or invalid input", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Username taken (`username_taken`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Rate limited", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/auth/register")]
pub async fn register(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<Credentials>,
) -> Result<HttpResponse, ApiError> {
    check_rate(&state, &req, "register", Some(&body.username))?;
    let username = Username::parse(&body.username)?;
    let password = Password::parse(&body.password)?;
    let st = state.clone();
    let session = state
        .db
        .run(move |conn| {
            let hash = password.hash()?;
            let now = db::now();
            let id = uuid::Uuid::new_v4().to_string();
            conn.transaction(|conn| {
                users::insert(
                    conn,
                    &NewUser {
                        id: &id,
                        username: username.as_str(),
                        username_key: &username.key(),
                        password_hash: Some(&hash),
                        role: Role::Player.as_str(),
                        is_guest: false,
                        created_at: now,
                        updated_at: now,
                    },
                )
                .map_err(username_taken)?;
                let user =
                    users::by_id(conn, &id)?.ok_or_else(|| Error::internal("user vanished"))?;
                new_session(conn, &st, &user, None)
            })
        })
        .await?;
    Ok(HttpResponse::Created().json(session))
}

/// Logs in with username and password. An unknown user and a wrong password get the same
/// answer, in the same time.
#[utoipa::path(
    tag = "accounts",
    request_body = Credentials,
    responses(
        (status = 200, description = "Logged in", body = TokenResponse),
        (status = 400, description = "Malformed input", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Wrong username or password (`invalid_credentials`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The account is banned (`banned`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Rate limited", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/auth/login")]
pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<Credentials>,
) -> Result<HttpResponse, ApiError> {
    check_rate(&state, &req, "login", Some(&body.username))?;
    let Credentials { username, password } = body.into_inner();
    let st = state.clone();
    let session = state
        .db
        .run(move |conn| {
            let user = users::by_username(conn, &username.to_ascii_lowercase())?;
            let hash = user.as_ref().and_then(|u| u.password_hash.as_deref());
            if !verify_password(&password, hash) {
                return Err(Error::unauthorized(
                    "invalid_credentials",
                    "wrong username or password",
                ));
            }
            let user = user.ok_or_else(|| Error::internal("verified without a user"))?;
            if user.banned_at.is_some() {
                return Err(Error::new(
                    crate::error::Kind::Forbidden,
                    "banned",
                    "this account is banned",
                ));
            }
            conn.transaction(|conn| new_session(conn, &st, &user, None))
        })
        .await?;
    Ok(HttpResponse::Ok().json(session))
}

/// Creates a guest account with a random username and logs it in. Set a password with
/// `PATCH /api/v1/me` to keep it.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 201, description = "A guest account and its tokens", body = TokenResponse),
        (status = 429, description = "Rate limited", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/auth/guest")]
pub async fn guest(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    check_rate(&state, &req, "guest", None)?;
    let st = state.clone();
    let session = state
        .db
        .run(move |conn| {
            for _ in 0..5 {
                let suffix: String = (0..10)
                    .map(|_| {
                        const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
                        ALPHABET[rand::random_range(0..ALPHABET.len())] as char
                    })
                    .collect();
                let name = format!("guest_{suffix}");
                let now = db::now();
                let id = uuid::Uuid::new_v4().to_string();
                let result = conn.transaction(|conn| {
                    users::insert(
                        conn,
                        &NewUser {
                            id: &id,
                            username: &name,
                            username_key: &name,
                            password_hash: None,
                            role: Role::Player.as_str(),
                            is_guest: true,
                            created_at: now,
                            updated_at: now,
                        },
                    )
                    .map_err(username_taken)?;
                    let user =
                        users::by_id(conn, &id)?.ok_or_else(|| Error::internal("user vanished"))?;
                    new_session(conn, &st, &user, None)
                });
                match result {
                    Err(e) if e.code() == "username_taken" => continue,
                    other => return other,
                }
            }
            Err(Error::internal("could not pick a free guest name"))
        })
        .await?;
    Ok(HttpResponse::Created().json(session))
}

enum RefreshOutcome {
    Session(Box<TokenResponse>),
    Refused(Error),
}

/// Spends a refresh token for a new pair (rotation). Presenting a token that was already
/// spent revokes every token descended from the same login.
#[utoipa::path(
    tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "A new token pair; the presented refresh token is spent", body = TokenResponse),
        (status = 400, description = "Malformed input", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Unknown, expired, spent or revoked (`invalid_token`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The account is banned (`banned`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Rate limited", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/auth/refresh")]
pub async fn refresh(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<RefreshRequest>,
) -> Result<HttpResponse, ApiError> {
    check_rate(&state, &req, "refresh", None)?;
    let hash = hash_refresh_token(&body.refresh_token);
    let st = state.clone();
    let outcome = state
        .db
        .run(move |conn| {
            db::write_transaction(conn, |conn| {
                let now = db::now();
                let invalid = |detail: &str| RefreshOutcome::Refused(Error::unauthorized("invalid_token", detail));
                let Some(token) = users::refresh_by_hash(conn, &hash)? else {
                    return Ok(invalid("unknown refresh token"));
                };
                if token.revoked_at.is_some() {
                    return Ok(invalid("this refresh token was revoked; log in again"));
                }
                if token.spent_at.is_some() || !users::spend_refresh(conn, &token.id, now)? {
                    // A spent token presented again means it leaked or was replayed: end the
                    // whole session, the copy in the thief's hands included.
                    users::revoke_family(conn, &token.family_id, now)?;
                    tracing::warn!(family = %token.family_id, user = %token.user_id, "refresh token reuse; family revoked");
                    return Ok(invalid("this refresh token was already used; the session is revoked, log in again"));
                }
                if token.expires_at <= now {
                    return Ok(invalid("this refresh token has expired; log in again"));
                }
                let user = users::by_id(conn, &token.user_id)?
                    .filter(|u| u.deleted_at.is_none())
                    .ok_or_else(|| Error::unauthorized("invalid_token", "the account no longer exists"))?;
                if user.banned_at.is_some() {
                    return Ok(RefreshOutcome::Refused(Error::new(crate::error::Kind::Forbidden,
                        "banned",
                        "this account is banned",
                    )));
                }
                Ok(RefreshOutcome::Session(Box::new(new_session(conn, &st, &user, Some(&token.family_id))?)))
            })
        })
        .await?;
    match outcome {
        RefreshOutcome::Session(s) => Ok(HttpResponse::Ok().json(s)),
        RefreshOutcome::Refused(e) => Err(e.into()),
    }
}

/// Ends the session of this refresh token (its whole family). Answers 204 whether or not the
/// token was known, so it can be retried safely.
#[utoipa::path(
    tag = "accounts",
    request_body = RefreshRequest,
    responses(
        (status = 204, description = "Logged out"),
        (status = 400, description = "Malformed input", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/auth/logout")]
pub async fn logout(
    state: web::Data<AppState>,
    body: web::Json<RefreshRequest>,
) -> Result<HttpResponse, ApiError> {
    let hash = hash_refresh_token(&body.refresh_token);
    state
        .db
        .run(move |conn| {
            if let Some(token) = users::refresh_by_hash(conn, &hash)? {
                users::revoke_family(conn, &token.family_id, db::now())?;
            }
            Ok(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The caller's profile.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = UserView),
        (status = 401, description = "Missing, invalid or expired token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/me")]
pub async fn me(user: AuthUser) -> HttpResponse {
    HttpResponse::Ok().json(UserView::from(&user.user))
}

/// Changes the caller's username and/or password. A guest that sets a password becomes a
/// full account.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    request_body = UpdateMe,
    responses(
        (status = 200, description = "The updated profile", body = UserView),
        (status = 400, description = "Invalid input", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Wrong current password (`invalid_credentials`) or banned", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Username taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[patch("/me")]
pub async fn update_me(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<UpdateMe>,
) -> Result<HttpResponse, ApiError> {
    use diesel::Connection;

    let UpdateMe {
        username,
        password,
        current_password,
    } = body.into_inner();
    if username.is_none() && password.is_none() {
        return Err(Error::validation("nothing to change: give username and/or password").into());
    }
    let username = username.as_deref().map(Username::parse).transpose()?;
    let password = password.as_deref().map(Password::parse).transpose()?;
    let row = user.user.clone();
    let updated = state
        .db
        .run(move |conn| {
            let new_hash = match &password {
                None => None,
                Some(p) => {
                    if let Some(old) = row.password_hash.as_deref() {
                        let current = current_password.as_deref().ok_or_else(|| {
                            Error::validation("current_password is required to change the password")
                        })?;
                        if !verify_password(current, Some(old)) {
                            return Err(Error::forbidden("the current password is wrong")
                                .with_code("invalid_credentials"));
                        }
                    }
                    Some(p.hash()?)
                }
            };
            conn.transaction(|conn| {
                let now = db::now();
                if let Some(name) = &username {
                    users::rename(conn, &row.id, name.as_str(), &name.key(), now)
                        .map_err(username_taken)?;
                }
                if let Some(hash) = &new_hash {
                    users::set_password(conn, &row.id, hash, now)?;
                }
                users::by_id(conn, &row.id)?.ok_or_else(|| Error::internal("user vanished"))
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(UserView::from(&updated)))
}

/// Deletes the caller's account: its sessions end, its username is freed, its past games keep
/// their record.
#[utoipa::path(
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/me")]
pub async fn delete_me(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    use diesel::Connection;

    let id = user.id().to_owned();
    state
        .db
        .run(move |conn| {
            conn.transaction(|conn| {
                let now = db::now();
                users::mark_deleted(conn, &id, now)?;
                users::revoke_user(conn, &id, now)?;
                Ok(())
            })
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
