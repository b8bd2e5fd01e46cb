//! The caller's profile: read, change, delete.

use actix_web::{HttpRequest, delete, get, patch};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::accounts::{self, ProfileChange};
use crate::auth::{Password, Username};
use crate::http::extract::{AuthUser, Call, Json, Mine};
use crate::http::reply::{Reply, no_content, ok};

use super::{UserView, check_rate};

/// Changes to the caller's account. A guest becomes a full account by setting a password.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMe {
    /// A new username (3–32 ASCII letters of either case, digits or `_`; unique ignoring case;
    /// not starting `guest_`, which is kept for guests, unless it is the caller's own).
    #[schema(pattern = "^[A-Za-z0-9_]{3,32}$")]
    pub username: Option<String>,
    /// A new password (8–128 characters).
    #[schema(format = Password, min_length = 8, max_length = 128)]
    pub password: Option<String>,
    /// Required to change the password of an account that has one.
    #[schema(format = Password)]
    pub current_password: Option<String>,
    /// The caller's current refresh token: a password change ends every other session of
    /// the account and keeps this one. Without it, the change ends every session, the
    /// caller's too: its access token is refused from the next request (401
    /// `invalid_token`), and the caller logs in again.
    #[schema(format = Password)]
    pub refresh_token: Option<String>,
}

/// The caller's profile after a change, and what became of its sessions.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UpdatedMe {
    /// The profile as it is now.
    #[serde(flatten)]
    pub user: UserView,
    /// How many sessions (logins, each with its chain of refresh tokens) a password change
    /// ended; 0 when the password did not change or the account had none before.
    #[schema(example = 1)]
    pub sessions_revoked: u32,
    /// Whether the caller's session goes on: `false` after a password change whose request
    /// had no live `refresh_token` of the caller's own session (none, or another session's),
    /// which ends the caller's session.
    #[schema(example = true)]
    pub session_kept: bool,
}

/// The caller's profile.
///
/// The account's id, username, role, creation time and game statistics. Every request
/// re-checks the account, so a ban or a deletion takes effect at once.
#[utoipa::path(operation_id = "get_me", tag = "accounts", security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = UserView),
        (status = 401, description = "Missing, invalid or expired token"),
        (status = 403, description = "Banned")))]
#[get("/me")]
pub async fn me(user: AuthUser) -> Reply {
    ok(UserView::from(&user.user))
}

/// Rename, or change the password.
///
/// Changes the caller's username and/or password. A guest that sets a password becomes a
/// full account. Changing the password of a full account needs `current_password`, and ends
/// every other session of the account: send the caller's `refresh_token` to keep its own
/// (without it, every session ends). The answer says how many ended (`sessions_revoked`)
/// and whether the caller's survives (`session_kept`). Renaming frees the old username.
/// Checks of `current_password` are rate limited like logins, per account and per client
/// address (429 with `Retry-After` above the limit).
#[utoipa::path(operation_id = "update_me", tag = "accounts", security(("bearer" = [])),
    request_body = UpdateMe,
    responses(
        (status = 200, description = "The updated profile and the sessions a password change ended", body = UpdatedMe),
        (status = 400, description = "Invalid input"),
        (status = 401, description = "Missing or invalid token"),
        (status = 403, description = "Wrong current password (`invalid_credentials`) or banned"),
        (status = 409, description = "Username taken"),
        (status = 429, description = "Too many `current_password` checks (`rate_limited`)")))]
#[patch("/me")]
pub async fn update_me(req: HttpRequest, call: Mine<(), Json<UpdateMe>>) -> Reply {
    let Call {
        state,
        user,
        input: body,
        ..
    } = call;
    let UpdateMe {
        username,
        password,
        current_password,
        refresh_token,
    } = body.into_inner();
    let change = ProfileChange::new(
        username
            .as_deref()
            .map(|name| Username::chosen(name, Some(&user.user.username)))
            .transpose()?,
        password.as_deref().map(Password::parse).transpose()?,
        current_password,
        refresh_token,
    )?
    .in_session(user.session.clone());
    if change.checks_password(&user.user) {
        // A stolen access token must not become an oracle for the password: guesses count
        // like logins, against the account and the address.
        let _quota = check_rate(&state, &req, "current_password", Some(user.id()))?;
    }
    let updated = state
        .db
        .run(move |conn| accounts::update_me(conn, &user.user, change))
        .await?;
    for session in &updated.ended_sessions {
        state.end_streams_of_session(session);
    }
    ok(UpdatedMe {
        user: UserView::from(&updated.user),
        sessions_revoked: u32::try_from(updated.sessions_revoked).unwrap_or(u32::MAX),
        session_kept: updated.session_kept,
    })
}

/// Delete the caller's account.
///
/// Deletes the caller's account: its sessions end, its username is freed, its past games
/// keep their record. It leaves its waiting games (declining invitations; a game left
/// without players is aborted), and a bot plays out its seats in running games
/// (`seat_changed`, reason `resigned`).
#[utoipa::path(operation_id = "delete_me", tag = "accounts", security(("bearer" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid token"),
        (status = 403, description = "Banned")))]
#[delete("/me")]
pub async fn delete_me(call: Mine) -> Reply {
    for done in call.mine(accounts::delete_me).await? {
        call.state.published(&done);
    }
    call.state.end_streams_of(call.user.id());
    no_content()
}
