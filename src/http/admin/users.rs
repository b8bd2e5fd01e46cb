//! Administration of accounts.

use actix_web::{get, post, put, web};

use crate::db::AnyConnection;
use crate::db::admin as store;
use crate::db::users::UserRow;
use crate::error::Error;
use crate::http::pagination::{PageQuery, Paged, keyset_page};
use crate::http::ratings::RatingsView;
use crate::http::reply::{Reply, ok};

use super::views::{AdminUserView, AdminUsersPage};
use super::{
    Admin, BanRequest, Change, OptionalReason, ResetRatingRequest, RoleRequest, UsersQuery,
    not_yourself, optional_reason, reason,
};

/// Search accounts.
///
/// Searches accounts by a part of the username (ignoring case), newest first. Deleted and
/// banned accounts are listed too.
#[utoipa::path(operation_id = "admin_list_users", tag = "admin", security(("bearer" = [])),
    params(UsersQuery, PageQuery),
    responses((status = 200, description = "A page of accounts", body = AdminUsersPage)))]
#[get("/admin/users")]
pub async fn list_users(admin: Admin<(), Paged<UsersQuery>>) -> Reply {
    let (query, page) = &admin.input;
    let needle = query.query.as_deref().map(str::trim).unwrap_or("");
    if needle.chars().count() > 32 {
        return Err(Error::validation("query must be at most 32 characters").into());
    }
    let needle = (!needle.is_empty()).then(|| needle.to_owned());
    let (limit, before) = page.keyset()?;
    let rows = admin
        .state
        .db
        .run(move |conn| {
            Ok(store::search_users(
                conn,
                needle.as_deref(),
                before,
                limit + 1,
            )?)
        })
        .await?;
    let (rows, next_cursor) = keyset_page(rows, limit, |u| (u.created_at, &u.id));
    ok(AdminUsersPage {
        items: rows.iter().map(AdminUserView::from).collect(),
        next_cursor,
    })
}

/// Ban an account.
///
/// Bans an account: its access tokens stop working on the next request, its refresh tokens
/// are revoked, and it cannot log in until unbanned. It leaves its waiting games (declining
/// its invitations; a game left without humans is aborted); its running games go on, its
/// turns timing out to the bots.
#[utoipa::path(operation_id = "admin_ban_user", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body = BanRequest,
    responses(
        (status = 200, description = "Banned", body = AdminUserView),
        (status = 400, description = "Invalid reason or id"),
        (status = 404, description = "No such (live) account"),
        (status = 409, description = "Already banned (`already_banned`), or the caller's own account (`own_account`)")))]
#[post("/admin/users/{id}/ban")]
pub async fn ban_user(admin: Change<BanRequest>) -> Reply {
    let why = reason(&admin.input.0.reason)?;
    let target = admin.path.to_string();
    not_yourself(&admin.user, &target, "ban")?;
    let banned = target.clone();
    let (user, left) = admin
        .run(move |conn, admin_id| crate::admin::ban(conn, admin_id, &banned, &why))
        .await?;
    admin.state.end_streams_of(&target);
    for done in &left {
        admin.state.published(done);
    }
    ok(AdminUserView::from(&user))
}

/// Lift a ban.
///
/// Lifts a ban: the account can log in again. The sessions the ban ended stay ended (their
/// refresh tokens are refused, and so are their access tokens by every endpoint but the game
/// view and actions until they expire), so each logs in anew.
#[utoipa::path(operation_id = "admin_unban_user", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body(content = Option<OptionalReason>, description = "Optional"),
    responses(
        (status = 200, description = "Unbanned", body = AdminUserView),
        (status = 400, description = "Invalid reason or id"),
        (status = 404, description = "No such (live) account"),
        (status = 409, description = "Not banned (`not_banned`)")))]
#[post("/admin/users/{id}/unban")]
pub async fn unban_user(admin: Change<OptionalReason>) -> Reply {
    let why = optional_reason(admin.input.0.reason.as_deref())?;
    admin
        .change_user(None, move |conn, admin_id, target| {
            crate::admin::unban(conn, admin_id, target, why.as_deref())
        })
        .await
}

/// Set an account's role.
///
/// Sets an account's role; it takes effect on the account's next request. The role the
/// account has already changes nothing and is not audited.
#[utoipa::path(operation_id = "admin_set_role", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body = RoleRequest,
    responses(
        (status = 200, description = "The account with its new role", body = AdminUserView),
        (status = 400, description = "Missing or unknown role, invalid reason or id"),
        (status = 404, description = "No such (live) account"),
        (status = 409, description = "The caller's own account (`own_account`)")))]
#[put("/admin/users/{id}/role")]
pub async fn set_role(admin: Change<RoleRequest>) -> Reply {
    let request = &admin.input.0;
    let role = request
        .role
        .ok_or_else(|| Error::validation("role is required: player or admin"))?;
    let why = optional_reason(request.reason.as_deref())?;
    admin
        .change_user(Some("change the role of"), move |conn, admin_id, target| {
            crate::admin::set_role(conn, admin_id, target, role, why.as_deref())
        })
        .await
}

/// Reset an account's rating.
///
/// Resets an account's rating in one mode, or in both when `mode` is left out, to a new
/// player's (μ 25, σ 25/3, no games, on no leaderboard until their next rated game), e.g.
/// after a player was found to collude. Audited
/// (`reset_rating`, with the ratings before); the player's history gets an entry without a
/// game, from which `leekha verify` replays on.
#[utoipa::path(operation_id = "admin_reset_rating", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body(content = Option<ResetRatingRequest>, description = "Optional; without `mode`, both modes are reset"),
    responses(
        (status = 200, description = "The account's ratings after the reset", body = RatingsView),
        (status = 400, description = "Invalid mode, reason or id"),
        (status = 404, description = "No such (live) account")))]
#[post("/admin/users/{id}/ratings/reset")]
pub async fn reset_rating(admin: Change<ResetRatingRequest>) -> Reply {
    let why = optional_reason(admin.input.0.reason.as_deref())?;
    let mode = admin.input.0.mode;
    let target = admin.path.to_string();
    let standings = admin
        .run(move |conn, admin_id| {
            crate::ratings::reset(conn, admin_id, &target, mode, why.as_deref())
        })
        .await?;
    ok(RatingsView::from(standings))
}

impl<B> Admin<web::Path<uuid::Uuid>, B> {
    /// Runs an administrator's change of the account the path names and answers the account.
    /// With `not_own`, the change is refused on the administrator's own account
    /// (`own_account`), `not_own` naming what is refused.
    pub(super) async fn change_user<F>(&self, not_own: Option<&str>, change: F) -> Reply
    where
        F: FnOnce(&mut AnyConnection, &str, &str) -> Result<UserRow, Error> + Send + 'static,
    {
        let target = self.path.to_string();
        if let Some(what) = not_own {
            not_yourself(&self.user, &target, what)?;
        }
        let user = self
            .run(move |conn, admin_id| change(conn, admin_id, &target))
            .await?;
        ok(AdminUserView::from(&user))
    }
}
