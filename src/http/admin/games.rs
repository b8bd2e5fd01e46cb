//! Administration of games.

use actix_web::{get, post, web};

use crate::db::AnyConnection;
use crate::error::Error;
use crate::games::{self, Committed, lists};
use crate::http::pagination::{PageQuery, Paged, keyset_page};
use crate::http::preconditions::with_etag;
use crate::http::reply::{Reply, ok};
use crate::http::views::game::{GameView, game_view};

use super::views::{AdminGameView, AdminGamesPage, full_state, summary};
use super::{AbortRequest, Admin, Change, GamesQuery, OptionalReason, optional_reason, reason};

/// Search games.
///
/// Searches games by status and player (by username or account id), newest first, private
/// ones included.
#[utoipa::path(operation_id = "admin_list_games", tag = "admin", security(("bearer" = [])),
    params(GamesQuery, PageQuery),
    responses((status = 200, description = "A page of games", body = AdminGamesPage)))]
#[get("/admin/games")]
pub async fn list_games(admin: Admin<(), Paged<GamesQuery>>) -> Reply {
    let (query, page) = &admin.input;
    let statuses = lists::parse_statuses(query.status.as_deref(), &[])?;
    let player = query
        .player
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase);
    let player_id = query.player_id.map(|id| id.to_string());
    let (limit, before) = page.keyset()?;
    let tables = admin
        .state
        .db
        .run(move |conn| {
            let (name, id) = (player.as_deref(), player_id.as_deref());
            lists::search(conn, &statuses, name, id, before, limit + 1)
        })
        .await?;
    let (tables, next_cursor) = keyset_page(tables, limit, |t| (t.row.created_at, &t.row.id));
    ok(AdminGamesPage {
        items: tables.iter().map(summary).collect(),
        next_cursor,
    })
}

/// The full state of a game, every hand included.
///
/// The full state of a game: every hand, every pass, the seed, every deal and action. Each
/// read is recorded in the audit log.
#[utoipa::path(operation_id = "admin_get_game", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses((status = 200, description = "The whole game", body = AdminGameView)))]
#[get("/admin/games/{id}")]
pub async fn get_game(admin: Admin<web::Path<uuid::Uuid>>) -> Reply {
    let id = admin.path.to_string();
    let (table, record) = admin
        .run(move |conn, admin_id| games::inspect(conn, &id, admin_id))
        .await?;
    ok(full_state(&table, &record)?)
}

/// Abort a game.
///
/// Ends a waiting or running game without a result. Its players see status `aborted` with
/// the reason, and a `game_aborted` event.
#[utoipa::path(operation_id = "admin_abort_game", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    request_body = AbortRequest,
    responses(
        (status = 200, description = "Aborted; the game as spectators see it", body = GameView),
        (status = 400, description = "Invalid reason or id"),
        (status = 409, description = "The game already ended (`game_not_active`)")))]
#[post("/admin/games/{id}/abort")]
pub async fn abort_game(admin: Change<AbortRequest>) -> Reply {
    let why = reason(&admin.input.0.reason)?;
    let id = admin.path.to_string();
    admin
        .change_game(move |conn, admin_id| games::abort(conn, &id, admin_id, &why))
        .await
}

/// Hand a seat to a bot.
///
/// Hands a seat of a running game to a bot for the rest of the game (the human keeps the
/// seat's record and sees a `seat_changed` event with reason `admin`). The bot acts at once
/// if the seat must act.
#[utoipa::path(operation_id = "admin_seat_to_bot", tag = "admin", security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("seat" = u8, Path, description = "Seat 0..=3"),
    ),
    request_body(content = Option<OptionalReason>, description = "Optional"),
    responses(
        (status = 200, description = "A bot plays the seat now; the game as spectators see it", body = GameView),
        (status = 400, description = "Invalid seat, reason or id"),
        (status = 409, description = "`game_not_active`, or a bot already plays the seat (`seat_controlled_by_bot`)")))]
#[post("/admin/games/{id}/seats/{seat}/bot")]
pub async fn seat_to_bot(admin: Change<OptionalReason, (uuid::Uuid, String)>) -> Reply {
    let why = optional_reason(admin.input.0.reason.as_deref())?;
    let (id, seat) = &*admin.path;
    let seat = crate::http::extract::path_seat(seat)?;
    let id = id.to_string();
    admin
        .change_game(move |conn, admin_id| {
            games::seat_to_bot(conn, &id, seat, admin_id, why.as_deref())
        })
        .await
}

impl<P, B> Admin<P, B> {
    /// Runs an administrator's change of a game and answers the game as spectators see it.
    async fn change_game<F>(&self, change: F) -> Reply
    where
        F: FnOnce(&mut AnyConnection, &str) -> Result<Committed, Error> + Send + 'static,
    {
        let done = self.run(change).await?;
        self.state.published(&done);
        let view = game_view(&done.table, None)?;
        Ok(with_etag(&view, view.version))
    }
}
