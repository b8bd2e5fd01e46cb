//! Administration over HTTP, for role `admin` only: users (search, ban, role), games (search,
//! full state, abort, seat to a bot), statistics and the audit log.
//!
//! Every change, and every read of a game's hidden state, appends an `audit_log` entry in the
//! same transaction as the thing it records: an action that commits is always audited, and
//! an audit entry never describes an action that rolled back.

use actix_web::{HttpResponse, get, post, put, web};
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::Connection;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::{IntoParams, ToSchema};

use crate::app::AppState;
use crate::auth::Role;
use crate::bots::BotLevel;
use crate::db::admin::{self as store, AuditRow, Keyset};
use crate::db::games::{self as games_store, GameRow};
use crate::db::users::{self, UserRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::games::events::ServerEvent;
use crate::games::{Change, GameStatus, Table};
use crate::http::accounts::UserStats;
use crate::http::extract::AdminUser;
use crate::http::game_views::{CardCode, GameView, LegalActionsView, PlayerRef, codes, game_view};
use crate::http::games::{
    ReplayAction, ReplayRound, ReplayView, SeatBrief, build_replay, decode_cursor, encode_cursor,
    limit, locked_table, parse_body,
};
use crate::http::problem::{ApiError, Problem};
use crate::rules::Seat;

/// Registers the routes of this module.
pub fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
    cfg.service(list_users)
        .service(ban_user)
        .service(unban_user)
        .service(set_role)
        .service(list_games)
        .service(get_game)
        .service(abort_game)
        .service(seat_to_bot)
        .service(stats)
        .service(audit_log);
}

/// The longest reason an administrator may give.
const MAX_REASON_CHARS: usize = 500;

// ----- requests ----------------------------------------------------------------------------

/// Users to list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsersQuery {
    /// A part of the username, ignoring case (0–32 characters; empty or absent: everyone).
    pub query: Option<String>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Games to list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GamesQuery {
    /// `waiting`, `active`, `finished` or `aborted`, several separated by commas (default:
    /// all).
    pub status: Option<String>,
    /// Only games in which the user with this username holds or held a seat.
    pub player: Option<String>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Audit entries to list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this action: `ban_user`, `unban_user`, `change_role`, `read_game`,
    /// `abort_game`, `seat_to_bot`.
    pub action: Option<String>,
    /// Only entries about this user or game id.
    pub target_id: Option<String>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Why an account is banned.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BanRequest {
    /// 1–500 characters; kept in the audit log and on the account.
    #[schema(example = "abusive messages in game chat")]
    pub reason: String,
}

/// Why, optionally.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalReason {
    /// 1–500 characters, kept in the audit log.
    pub reason: Option<String>,
}

/// A new role.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleRequest {
    /// `player` or `admin`.
    pub role: Option<Role>,
    /// 1–500 characters, kept in the audit log.
    pub reason: Option<String>,
}

/// Why a game is ended.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AbortRequest {
    /// 1–500 characters; players see it as the game's `abort_reason`.
    #[schema(example = "a player reported a bug in the deal")]
    pub reason: String,
}

// ----- responses ---------------------------------------------------------------------------

/// An account as administrators see it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminUserView {
    /// User id.
    pub id: uuid::Uuid,
    /// Username.
    pub username: String,
    /// `player` or `admin`.
    pub role: Role,
    /// A guest account.
    pub is_guest: bool,
    /// When the account was banned; null unless banned.
    pub banned_at: Option<DateTime<Utc>>,
    /// Why.
    pub ban_reason: Option<String>,
    /// When the account was deleted; null unless deleted.
    pub deleted_at: Option<DateTime<Utc>>,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Statistics.
    pub stats: UserStats,
}

impl From<&UserRow> for AdminUserView {
    fn from(u: &UserRow) -> Self {
        Self {
            id: u.id.parse().unwrap_or_default(),
            username: u.username.clone(),
            role: Role::parse(&u.role).unwrap_or(Role::Player),
            is_guest: u.is_guest,
            banned_at: u.banned_at.map(|t| t.and_utc()),
            ban_reason: u.ban_reason.clone(),
            deleted_at: u.deleted_at.map(|t| t.and_utc()),
            created_at: u.created_at.and_utc(),
            updated_at: u.updated_at.and_utc(),
            stats: UserStats {
                games_played: u.games_played,
                games_won: u.games_won,
            },
        }
    }
}

/// A page of accounts.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminUsersPage {
    /// Newest first.
    pub items: Vec<AdminUserView>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// A game in the administrators' list.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminGameSummary {
    /// Game id.
    pub id: uuid::Uuid,
    /// Status.
    pub status: GameStatus,
    /// `public` or `private`.
    pub visibility: String,
    /// Version.
    pub version: i64,
    /// The creator.
    pub created_by: uuid::Uuid,
    /// Who sits where.
    pub seats: Vec<SeatBrief>,
    /// Actions applied so far.
    pub action_count: i64,
    /// Why it was aborted.
    pub abort_reason: Option<String>,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Dealt.
    pub started_at: Option<DateTime<Utc>>,
    /// Ended.
    pub finished_at: Option<DateTime<Utc>>,
}

/// A page of games.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminGamesPage {
    /// Newest first.
    pub items: Vec<AdminGameSummary>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// One seat's hidden state.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminSeatState {
    /// 0..=3.
    pub seat: u8,
    /// The cards in hand now.
    pub hand: Vec<CardCode>,
    /// The cards taken in tricks this round.
    pub taken: Vec<CardCode>,
    /// The cards passed this round, once committed.
    pub passed: Option<Vec<CardCode>>,
    /// The cards received this round, once exchanged.
    pub received: Option<Vec<CardCode>>,
    /// What the seat may do now (null when nothing, or when a bot acts for it).
    pub legal_actions: Option<LegalActionsView>,
    /// Why a bot acts for the seat: `seat`, `resigned`, `timeout` or `admin`.
    pub bot_reason: Option<String>,
    /// Consecutive turns that timed out.
    pub timeouts_in_row: i32,
}

/// Everything about a game: the spectators' view plus every hand, every pass, the seed,
/// every deal and every action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminGameView {
    /// The game as a spectator sees it.
    #[serde(flatten)]
    pub game: GameView,
    /// The deal seed (64 hex digits); null before the deal.
    pub seed: Option<String>,
    /// Every seat's hidden state (empty before the deal).
    pub seats_private: Vec<AdminSeatState>,
    /// Every deal so far.
    pub rounds: Vec<ReplayRound>,
    /// Every action so far, in order.
    pub actions: Vec<ReplayAction>,
    /// Events appended so far.
    pub event_count: i64,
    /// Dealt.
    pub started_at: Option<DateTime<Utc>>,
    /// Ended.
    pub finished_at: Option<DateTime<Utc>>,
}

/// Accounts.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserCounts {
    /// Live (not deleted) accounts.
    pub total: i64,
    /// Banned.
    pub banned: i64,
    /// Administrators.
    pub admins: i64,
    /// Guests.
    pub guests: i64,
}

/// Games by status.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct GameCounts {
    /// All games.
    pub total: i64,
    /// Waiting for players.
    pub waiting: i64,
    /// Being played.
    pub active: i64,
    /// Ended by the rules.
    pub finished: i64,
    /// Ended by an administrator or because every player left.
    pub aborted: i64,
}

/// Actions applied recently.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActionCounts {
    /// In the last hour.
    pub last_hour: i64,
    /// In the last 24 hours.
    pub last_day: i64,
}

/// Server statistics.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StatsView {
    /// Accounts.
    pub users: UserCounts,
    /// Games by status.
    pub games: GameCounts,
    /// Actions applied recently (bots' and timeouts' included).
    pub actions: ActionCounts,
    /// When these were counted.
    pub generated_at: DateTime<Utc>,
}

/// One audit entry.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditEntryView {
    /// Entry id.
    pub id: uuid::Uuid,
    /// The administrator.
    pub admin: PlayerRef,
    /// `ban_user`, `unban_user`, `change_role`, `read_game`, `abort_game`, `seat_to_bot`.
    #[schema(example = "ban_user")]
    pub action: String,
    /// `user` or `game`.
    #[schema(example = "user")]
    pub target_type: String,
    /// The user or game id.
    pub target_id: String,
    /// Why, as the administrator gave it.
    pub reason: Option<String>,
    /// Facts of the action, e.g. `{"from": "player", "to": "admin"}` for a role change.
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
    /// When.
    pub created_at: DateTime<Utc>,
}

/// A page of the audit log.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditPage {
    /// Newest first.
    pub items: Vec<AuditEntryView>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

// ----- helpers -----------------------------------------------------------------------------

/// A reason of 1–500 characters, trimmed.
fn reason(raw: &str) -> Result<String, Error> {
    let trimmed = raw.trim();
    let n = trimmed.chars().count();
    if n == 0 || n > MAX_REASON_CHARS {
        return Err(Error::validation(format!(
            "reason must be 1..={MAX_REASON_CHARS} characters, got {n}"
        )));
    }
    Ok(trimmed.to_owned())
}

fn optional_reason(raw: Option<&str>) -> Result<Option<String>, Error> {
    raw.map(reason).transpose()
}

fn keyset_cursor(at: NaiveDateTime, id: &str) -> String {
    encode_cursor(&format!("{}|{id}", at.format("%Y-%m-%dT%H:%M:%S%.f")))
}

fn parse_keyset(cursor: Option<&str>) -> Result<Option<Keyset>, Error> {
    let Some(cursor) = cursor else {
        return Ok(None);
    };
    let raw = decode_cursor(cursor)?;
    let (at, id) = raw
        .split_once('|')
        .ok_or_else(|| Error::validation("cursor is not valid"))?;
    let at = NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M:%S%.f")
        .map_err(|_| Error::validation("cursor is not valid"))?;
    Ok(Some((at, id.to_owned())))
}

/// One page of a list fetched with `limit + 1` rows: the items and the next cursor.
fn page<R>(
    mut rows: Vec<R>,
    limit: i64,
    key: impl Fn(&R) -> (NaiveDateTime, &str),
) -> (Vec<R>, Option<String>) {
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next = if more {
        rows.last().map(|r| {
            let (at, id) = key(r);
            keyset_cursor(at, id)
        })
    } else {
        None
    };
    (rows, next)
}

/// What an audit entry records.
struct Audit<'a> {
    action: &'a str,
    target_type: &'a str,
    target_id: &'a str,
    reason: Option<&'a str>,
    details: serde_json::Value,
}

/// Appends the audit entry of `admin`'s action; call it inside the action's transaction.
fn audit(conn: &mut AnyConnection, admin: &str, entry: Audit<'_>) -> Result<(), Error> {
    store::insert_audit(
        conn,
        &AuditRow {
            id: uuid::Uuid::new_v4().to_string(),
            admin_id: admin.to_owned(),
            action: entry.action.to_owned(),
            target_type: entry.target_type.to_owned(),
            target_id: entry.target_id.to_owned(),
            reason: entry.reason.map(str::to_owned),
            details: entry.details.to_string(),
            created_at: db::now(),
        },
    )?;
    tracing::info!(
        admin = %admin,
        action = entry.action,
        target = %entry.target_id,
        "admin action"
    );
    Ok(())
}

/// Runs `f` in one transaction that starts by taking the account's lock, so that the checks
/// and the change see the same state (and SQLite never upgrades a stale read snapshot).
fn user_locked<T>(
    conn: &mut AnyConnection,
    id: &str,
    f: impl FnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<T, Error> {
    conn.transaction(|conn| {
        if !store::lock_user(conn, id)? {
            return Err(Error::not_found("no such user"));
        }
        f(conn)
    })
}

/// The live account `id`, or 404.
fn live_user(conn: &mut AnyConnection, id: &str) -> Result<UserRow, Error> {
    users::by_id(conn, id)?
        .filter(|u| u.deleted_at.is_none())
        .ok_or_else(|| Error::not_found("no such user"))
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

fn summary(table: &Table) -> AdminGameSummary {
    let row = &table.row;
    AdminGameSummary {
        id: row.id.parse().unwrap_or_default(),
        status: table.status(),
        visibility: row.visibility.clone(),
        version: row.version,
        created_by: row.created_by.parse().unwrap_or_default(),
        seats: table
            .seats
            .iter()
            .map(|s| SeatBrief {
                seat: s.seat as u8,
                player: s.user_id.as_deref().map(|id| PlayerRef {
                    id: id.parse().unwrap_or_default(),
                    username: table.name(id).unwrap_or("deleted").to_owned(),
                }),
                bot: s.bot_level.as_deref().and_then(BotLevel::parse),
                open: s.user_id.is_none() && s.bot_level.is_none() && s.invited_user_id.is_none(),
            })
            .collect(),
        action_count: row.action_count,
        abort_reason: row.abort_reason.clone(),
        created_at: row.created_at.and_utc(),
        updated_at: row.updated_at.and_utc(),
        started_at: row.started_at.map(|t| t.and_utc()),
        finished_at: row.finished_at.map(|t| t.and_utc()),
    }
}

/// The full state of a game: the spectators' view, each seat's own view's hidden parts, and
/// the replay record so far.
fn full_state(conn: &mut AnyConnection, table: &Table) -> Result<AdminGameView, Error> {
    let game = game_view(table, None)?;
    let rules_state = table.game()?;
    let mut seats_private = Vec::new();
    if let Some(state) = &rules_state {
        for seat in Seat::ALL {
            let own = game_view(table, Some(seat))?;
            let round = own.round;
            let row = &table.seats[seat.index()];
            seats_private.push(AdminSeatState {
                seat: seat.number(),
                hand: codes(state.hand(seat)),
                taken: codes(state.taken(seat)),
                passed: round.as_ref().and_then(|r| r.passed.clone()),
                received: round.as_ref().and_then(|r| r.received.clone()),
                legal_actions: own.legal_actions,
                bot_reason: row.bot_reason.clone(),
                timeouts_in_row: row.timeouts_in_row,
            });
        }
    }
    let ReplayView {
        rounds, actions, ..
    } = build_replay(conn, table)?;
    let row = &table.row;
    Ok(AdminGameView {
        game,
        seed: row.seed.clone(),
        seats_private,
        rounds,
        actions,
        event_count: row.event_count,
        started_at: row.started_at.map(|t| t.and_utc()),
        finished_at: row.finished_at.map(|t| t.and_utc()),
    })
}

// ----- users -------------------------------------------------------------------------------

/// Searches accounts by a part of the username (ignoring case), newest first. Deleted and
/// banned accounts are listed too.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(UsersQuery),
    responses(
        (status = 200, description = "A page of accounts", body = AdminUsersPage),
        (status = 400, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/admin/users")]
pub async fn list_users(
    state: web::Data<AppState>,
    _admin: AdminUser,
    query: web::Query<UsersQuery>,
) -> Result<HttpResponse, ApiError> {
    let needle = query.query.as_deref().map(str::trim).unwrap_or("");
    if needle.chars().count() > 32 {
        return Err(Error::validation("query must be at most 32 characters").into());
    }
    let needle = (!needle.is_empty()).then(|| needle.to_owned());
    let limit = limit(query.limit, 50, 200)?;
    let before = parse_keyset(query.cursor.as_deref())?;
    let page = state
        .db
        .run(move |conn| {
            let rows = store::search_users(conn, needle.as_deref(), before, limit + 1)?;
            let (rows, next_cursor) = page(rows, limit, |u| (u.created_at, &u.id));
            Ok(AdminUsersPage {
                items: rows.iter().map(AdminUserView::from).collect(),
                next_cursor,
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// Bans an account: its access tokens stop working on the next request, its refresh tokens
/// are revoked, and it cannot log in until unbanned.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body = BanRequest,
    responses(
        (status = 200, description = "Banned", body = AdminUserView),
        (status = 400, description = "Invalid reason or id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such (live) account", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Already banned (`already_banned`), or the caller's own account (`own_account`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/admin/users/{id}/ban")]
pub async fn ban_user(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: BanRequest = parse_body(&body)?;
    let why = reason(&request.reason)?;
    let target = path.into_inner().to_string();
    not_yourself(&admin, &target, "ban")?;
    let admin_id = admin.id().to_owned();
    let user = state
        .db
        .run(move |conn| {
            user_locked(conn, &target, |conn| {
                live_user(conn, &target)?;
                let now = db::now();
                if !store::ban(conn, &target, &why, now)? {
                    return Err(Error::conflict(
                        "already_banned",
                        "this account is already banned",
                    ));
                }
                let revoked = users::revoke_user(conn, &target, now)?;
                audit(
                    conn,
                    &admin_id,
                    Audit {
                        action: "ban_user",
                        target_type: "user",
                        target_id: &target,
                        reason: Some(&why),
                        details: json!({ "refresh_tokens_revoked": revoked }),
                    },
                )?;
                live_user(conn, &target)
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(AdminUserView::from(&user)))
}

/// Lifts a ban: the account's access tokens work again at once; its revoked refresh tokens
/// stay revoked, so its sessions log in anew.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body(content = OptionalReason, description = "Optional"),
    responses(
        (status = 200, description = "Unbanned", body = AdminUserView),
        (status = 400, description = "Invalid reason or id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such (live) account", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not banned (`not_banned`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/admin/users/{id}/unban")]
pub async fn unban_user(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: OptionalReason = parse_body(&body)?;
    let why = optional_reason(request.reason.as_deref())?;
    let target = path.into_inner().to_string();
    let admin_id = admin.id().to_owned();
    let user = state
        .db
        .run(move |conn| {
            user_locked(conn, &target, |conn| {
                let before = live_user(conn, &target)?;
                if !store::unban(conn, &target, db::now())? {
                    return Err(Error::conflict("not_banned", "this account is not banned"));
                }
                audit(
                    conn,
                    &admin_id,
                    Audit {
                        action: "unban_user",
                        target_type: "user",
                        target_id: &target,
                        reason: why.as_deref(),
                        details: json!({ "ban_reason": before.ban_reason }),
                    },
                )?;
                live_user(conn, &target)
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(AdminUserView::from(&user)))
}

/// Sets an account's role; it takes effect on the account's next request.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body = RoleRequest,
    responses(
        (status = 200, description = "The account with its new role", body = AdminUserView),
        (status = 400, description = "Missing or unknown role, invalid reason or id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such (live) account", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The caller's own account (`own_account`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[put("/admin/users/{id}/role")]
pub async fn set_role(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: RoleRequest = parse_body(&body)?;
    let role = request
        .role
        .ok_or_else(|| Error::validation("role is required: player or admin"))?;
    let why = optional_reason(request.reason.as_deref())?;
    let target = path.into_inner().to_string();
    not_yourself(&admin, &target, "change the role of")?;
    let admin_id = admin.id().to_owned();
    let user = state
        .db
        .run(move |conn| {
            user_locked(conn, &target, |conn| {
                let before = live_user(conn, &target)?;
                store::set_role(conn, &target, role.as_str(), db::now())?;
                audit(
                    conn,
                    &admin_id,
                    Audit {
                        action: "change_role",
                        target_type: "user",
                        target_id: &target,
                        reason: why.as_deref(),
                        details: json!({ "from": before.role, "to": role.as_str() }),
                    },
                )?;
                live_user(conn, &target)
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(AdminUserView::from(&user)))
}

// ----- games -------------------------------------------------------------------------------

/// Searches games by status and player, newest first, private ones included.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(GamesQuery),
    responses(
        (status = 200, description = "A page of games", body = AdminGamesPage),
        (status = 400, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/admin/games")]
pub async fn list_games(
    state: web::Data<AppState>,
    _admin: AdminUser,
    query: web::Query<GamesQuery>,
) -> Result<HttpResponse, ApiError> {
    let statuses: Vec<&'static str> = match query.status.as_deref().map(str::trim) {
        None | Some("") => Vec::new(),
        Some(raw) => raw
            .split(',')
            .map(|s| {
                GameStatus::parse(s.trim())
                    .map(GameStatus::as_str)
                    .ok_or_else(|| {
                        Error::validation(format!(
                            "status must be waiting, active, finished or aborted, not {s:?}"
                        ))
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    let player = query
        .player
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase);
    let limit = limit(query.limit, 50, 200)?;
    let before = parse_keyset(query.cursor.as_deref())?;
    let page = state
        .db
        .run(move |conn| {
            let player_id = match &player {
                None => None,
                Some(name) => match users::by_username(conn, name)? {
                    Some(user) => Some(user.id),
                    // Nobody by that name plays anything.
                    None => {
                        return Ok(AdminGamesPage {
                            items: Vec::new(),
                            next_cursor: None,
                        });
                    }
                },
            };
            let rows =
                store::search_games(conn, &statuses, player_id.as_deref(), before, limit + 1)?;
            let (rows, next_cursor) = page(rows, limit, |g: &GameRow| (g.created_at, &g.id));
            let mut items = Vec::with_capacity(rows.len());
            for row in rows {
                items.push(summary(&Table::load(conn, &row.id)?));
            }
            Ok(AdminGamesPage { items, next_cursor })
        })
        .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// The full state of a game: every hand, every pass, the seed, every deal and action.
/// Each read is recorded in the audit log.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "The whole game", body = AdminGameView),
        (status = 400, description = "Malformed id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/admin/games/{id}")]
pub async fn get_game(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let admin_id = admin.id().to_owned();
    let view = state
        .db
        .run(move |conn| {
            // The game's lock, as for a change: a consistent snapshot, and on SQLite a write
            // (the audit entry) that never follows a stale read.
            locked_table(conn, &id, |conn, table| {
                let view = full_state(conn, &table)?;
                audit(
                    conn,
                    &admin_id,
                    Audit {
                        action: "read_game",
                        target_type: "game",
                        target_id: &id,
                        reason: None,
                        details: json!({
                            "status": table.row.status,
                            "version": table.row.version,
                        }),
                    },
                )?;
                Ok(view)
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(view))
}

/// Ends a waiting or running game without a result. Its players see status `aborted` with
/// the reason, and a `game_aborted` event.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    request_body = AbortRequest,
    responses(
        (status = 200, description = "Aborted; the game as spectators see it", body = GameView),
        (status = 400, description = "Invalid reason or id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The game already ended (`game_over`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/admin/games/{id}/abort")]
pub async fn abort_game(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: AbortRequest = parse_body(&body)?;
    let why = reason(&request.reason)?;
    let id = path.into_inner().to_string();
    let admin_id = admin.id().to_owned();
    let gid = id.clone();
    let view = state
        .db
        .run(move |conn| {
            locked_table(conn, &gid, |conn, table| {
                let before = table.status();
                if !matches!(before, GameStatus::Waiting | GameStatus::Active) {
                    return Err(Error::conflict(
                        "game_over",
                        format!("the game is already {}", before.as_str()),
                    ));
                }
                let mut change = Change::new(table)?;
                let now = change.now();
                let row = &mut change.table.row;
                row.status = GameStatus::Aborted.as_str().into();
                row.abort_reason = Some(why.clone());
                row.finished_at = Some(now);
                change.push_server_event(&ServerEvent::GameAborted {
                    reason: why.clone(),
                });
                let table = change.commit(conn)?;
                audit(
                    conn,
                    &admin_id,
                    Audit {
                        action: "abort_game",
                        target_type: "game",
                        target_id: &gid,
                        reason: Some(&why),
                        details: json!({
                            "status_before": before.as_str(),
                            "version": table.row.version,
                        }),
                    },
                )?;
                game_view(&table, None)
            })
        })
        .await?;
    state.notifier.notify(&id);
    Ok(HttpResponse::Ok().json(view))
}

/// Hands a seat of a running game to a bot for the rest of the game (the human keeps the
/// seat's record and sees a `seat_changed` event with reason `admin`). The bot acts at once
/// if the seat must act.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("seat" = u8, Path, description = "Seat 0..=3"),
    ),
    request_body(content = OptionalReason, description = "Optional"),
    responses(
        (status = 200, description = "A bot plays the seat now; the game as spectators see it", body = GameView),
        (status = 400, description = "Invalid seat, reason or id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_not_active`, or a bot already plays the seat (`seat_controlled_by_bot`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/admin/games/{id}/seats/{seat}/bot")]
pub async fn seat_to_bot(
    state: web::Data<AppState>,
    admin: AdminUser,
    path: web::Path<(uuid::Uuid, u8)>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: OptionalReason = parse_body(&body)?;
    let why = optional_reason(request.reason.as_deref())?;
    let (id, seat) = path.into_inner();
    let seat = Seat::new(seat)
        .ok_or_else(|| Error::validation(format!("seat must be 0..=3, got {seat}")))?;
    let id = id.to_string();
    let admin_id = admin.id().to_owned();
    let gid = id.clone();
    let (view, applied) = state
        .db
        .run(move |conn| {
            locked_table(conn, &gid, |conn, table| {
                if table.status() != GameStatus::Active {
                    return Err(Error::conflict(
                        "game_not_active",
                        "only a running game's seats can be handed to a bot",
                    ));
                }
                if table.bot_of(seat).is_some() {
                    return Err(Error::conflict(
                        "seat_controlled_by_bot",
                        "a bot already plays this seat",
                    ));
                }
                let held_by = table.seats[seat.index()].user_id.clone();
                let actions_before = table.row.action_count;
                let mut change = Change::new(table)?;
                let level = BotLevel::takeover();
                let row = change.seat_mut(seat);
                row.bot_level = Some(level.as_str().into());
                row.bot_reason = Some("admin".into());
                let username = held_by
                    .as_deref()
                    .and_then(|u| change.table.name(u))
                    .map(str::to_owned);
                change.push_server_event(&ServerEvent::SeatChanged {
                    seat: seat.number(),
                    user_id: held_by.clone(),
                    username,
                    bot: Some(level.as_str().into()),
                    reason: "admin".into(),
                });
                change.run_bots()?;
                let table = change.commit(conn)?;
                let applied = (table.row.action_count - actions_before).max(0) as u64;
                audit(
                    conn,
                    &admin_id,
                    Audit {
                        action: "seat_to_bot",
                        target_type: "game",
                        target_id: &gid,
                        reason: why.as_deref(),
                        details: json!({
                            "seat": seat.number(),
                            "user_id": held_by,
                            "bot": level.as_str(),
                            "actions_applied": applied,
                        }),
                    },
                )?;
                Ok((game_view(&table, None)?, applied))
            })
        })
        .await?;
    state.notifier.notify(&id);
    state.metrics.actions_applied(applied);
    Ok(HttpResponse::Ok().json(view))
}

// ----- overview ----------------------------------------------------------------------------

/// Counts: accounts, games by status, actions applied in the last hour and day.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The counts", body = StatsView),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/admin/stats")]
pub async fn stats(
    state: web::Data<AppState>,
    _admin: AdminUser,
) -> Result<HttpResponse, ApiError> {
    let now = db::now();
    let counts = state
        .db
        .run(move |conn| Ok(store::stats(conn, now)?))
        .await?;
    let mut games = GameCounts::default();
    for (status, n) in counts.games_by_status {
        games.total += n;
        match GameStatus::parse(&status) {
            Some(GameStatus::Waiting) => games.waiting += n,
            Some(GameStatus::Active) => games.active += n,
            Some(GameStatus::Finished) => games.finished += n,
            Some(GameStatus::Aborted) | None => games.aborted += n,
        }
    }
    Ok(HttpResponse::Ok().json(StatsView {
        users: UserCounts {
            total: counts.users,
            banned: counts.banned,
            admins: counts.admins,
            guests: counts.guests,
        },
        games,
        actions: ActionCounts {
            last_hour: counts.actions_last_hour,
            last_day: counts.actions_last_day,
        },
        generated_at: now.and_utc(),
    }))
}

/// The audit log, newest first: every administrator action and every full read of a game.
#[utoipa::path(
    tag = "admin",
    security(("bearer" = [])),
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of the audit log", body = AuditPage),
        (status = 400, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not an administrator (`forbidden`), or banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/admin/audit")]
pub async fn audit_log(
    state: web::Data<AppState>,
    _admin: AdminUser,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, ApiError> {
    let limit = limit(query.limit, 50, 200)?;
    let before = parse_keyset(query.cursor.as_deref())?;
    let action = query.action.clone();
    let target = query.target_id.clone();
    let page = state
        .db
        .run(move |conn| {
            let rows = store::audit_page(
                conn,
                action.as_deref(),
                target.as_deref(),
                before,
                limit + 1,
            )?;
            let (rows, next_cursor) = page(rows, limit, |a: &AuditRow| (a.created_at, &a.id));
            let ids: Vec<String> = rows.iter().map(|r| r.admin_id.clone()).collect();
            let names: std::collections::HashMap<String, String> =
                games_store::usernames(conn, &ids)?.into_iter().collect();
            let items = rows
                .into_iter()
                .map(|r| AuditEntryView {
                    id: r.id.parse().unwrap_or_default(),
                    admin: PlayerRef {
                        id: r.admin_id.parse().unwrap_or_default(),
                        username: names
                            .get(&r.admin_id)
                            .cloned()
                            .unwrap_or_else(|| "deleted".into()),
                    },
                    details: serde_json::from_str(&r.details).unwrap_or(json!({})),
                    action: r.action,
                    target_type: r.target_type,
                    target_id: r.target_id,
                    reason: r.reason,
                    created_at: r.created_at.and_utc(),
                })
                .collect();
            Ok(AuditPage { items, next_cursor })
        })
        .await?;
    Ok(HttpResponse::Ok().json(page))
}
