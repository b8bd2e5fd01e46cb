//! Administration over HTTP, for role `admin` only: users (search, ban, role), games (search,
//! full state, abort, seat to a bot), statistics and the audit log. Every change, and every
//! read of a game's hidden state, is audited in the same transaction ([`crate::audit`]).

mod games;
mod moderation;
mod overview;
mod users;
pub mod views;

use actix_web::web;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::auth::Role;
use crate::db::AnyConnection;
use crate::error::Error;
use crate::http::extract::{AdminUser, Call, OptionalJson};

routes! {
    users::{list_users, ban_user, unban_user, set_role, reset_rating},
    games::{list_games, get_game, abort_game, seat_to_bot},
    overview::{stats, audit_log},
    moderation::{list_reports, hide_message, dismiss_reports, mute_user},
}

/// An administrator's request as every handler of this module takes it: the state, the
/// caller, and what the route takes from the path and the body.
pub type Admin<P = (), B = ()> = Call<AdminUser, P, B>;

/// An administrator's change of the thing whose id the path names, with its optional JSON
/// body.
pub type Change<B, P = uuid::Uuid> = Admin<web::Path<P>, OptionalJson<B>>;

impl<P, B> Admin<P, B> {
    /// Runs `use_case(conn, admin_id)` on the blocking pool.
    ///
    /// # Errors
    /// What the use case returns, and pool errors.
    pub async fn run<T, F>(&self, use_case: F) -> Result<T, Error>
    where
        F: FnOnce(&mut AnyConnection, &str) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        self.user.0.run(&self.state, use_case).await
    }
}

/// Users to list (a page of them: [`crate::http::pagination::PageQuery`]).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsersQuery {
    /// A part of the username, ignoring case (0–32 characters; empty or absent: everyone).
    #[param(max_length = 32)]
    pub query: Option<String>,
}

/// Games to list (a page of them: [`crate::http::pagination::PageQuery`]).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GamesQuery {
    /// `waiting`, `active`, `finished` or `aborted`, several separated by commas (default:
    /// all).
    #[param(value_type = Option<Vec<crate::games::GameStatus>>, style = Form, explode = false)]
    pub status: Option<String>,
    /// Only games in which the live account with this username holds or held a seat.
    pub player: Option<String>,
    /// Only games in which the account with this id holds or held a seat, deleted accounts
    /// included (a deleted account's username is free for others; `GET /admin/users` lists
    /// deleted accounts with their ids). With `player` too: only if both name one account.
    pub player_id: Option<uuid::Uuid>,
}

/// Audit entries to list (a page of them: [`crate::http::pagination::PageQuery`]).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this action: `ban_user`, `unban_user`, `change_role`, `reset_rating`, `read_game`,
    /// `abort_game`, `seat_to_bot`, `hide_message`, `dismiss_reports`, `mute_user`.
    pub action: Option<crate::http::views::schema::AuditAction>,
    /// Only entries about this account, game or chat message id (in any case).
    pub target_id: Option<uuid::Uuid>,
}

/// Why an account is banned.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BanRequest {
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but
    /// no other control characters, direction overrides, annotation marks or stray tags; kept in the audit log and on the
    /// account.
    #[schema(example = "abusive messages in game chat", min_length = 1)]
    pub reason: String,
}

/// Why, optionally.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalReason {
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but
    /// no other control characters, direction overrides, annotation marks or stray tags; kept in the audit log.
    #[schema(min_length = 1)]
    pub reason: Option<String>,
}

/// A new role.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleRequest {
    /// `player` or `admin`.
    // Required, but read as an `Option` so that its absence is answered with a sentence
    // naming the choices rather than serde's.
    #[schema(value_type = Role, required = true)]
    pub role: Option<Role>,
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but
    /// no other control characters, direction overrides, annotation marks or stray tags; kept in the audit log.
    #[schema(min_length = 1)]
    pub reason: Option<String>,
}

/// Which rating to reset.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetRatingRequest {
    /// `solo` or `partnership`; both when left out.
    #[schema(value_type = Option<crate::rules::Mode>)]
    pub mode: Option<crate::rules::Mode>,
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but
    /// no other control characters, direction overrides, annotation marks or stray tags; kept in the audit log.
    #[schema(min_length = 1)]
    pub reason: Option<String>,
}

/// Why a game is ended.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AbortRequest {
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but
    /// no other control characters, direction overrides, annotation marks or stray tags; players see it as the game's
    /// `abort_reason`.
    #[schema(example = "a player reported a bug in the deal", min_length = 1)]
    pub reason: String,
}

/// A reason as [`crate::text::check_reason`] keeps it.
fn reason(raw: &str) -> Result<String, Error> {
    crate::text::check_reason(raw)
}

fn optional_reason(raw: Option<&str>) -> Result<Option<String>, Error> {
    raw.map(reason).transpose()
}

fn not_yourself(admin: &AdminUser, target: &str, what: &str) -> Result<(), Error> {
    if admin.id() == target {
        return Err(Error::conflict(
            "own_account",
            format!("administrators cannot {what} their own account; ask another administrator"),
        ));
    }
    Ok(())
}
