//! `GET /games/{id}`.

use actix_web::{HttpRequest, get};

use crate::http::extract::Call;
use crate::http::preconditions::{not_modified, with_etag};
use crate::http::reply::Reply;
use crate::http::views::game::{GameView, game_view};

use super::{OnGameByToken, spectate, viewer_of};

/// The game as the caller may see it.
///
/// The game as the caller may see it: their own hand only. `ETag` is the version;
/// `If-None-Match` with it answers 304.
#[utoipa::path(operation_id = "get_game", tag = "games", security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("If-None-Match" = Option<String>, Header, description = "An `ETag` from an earlier answer, e.g. `\"12\"`: 304 while the game is still at that version")),
    responses(
        (status = 200, description = "The game", body = GameView),
        (status = 304, description = "Not modified since the given `ETag`; no body", headers(("ETag" = String, description = "The version, unchanged"))),
        (status = 404, description = "No such game, or one the caller may not see: a game closed to spectators, or a private game with no open seat or already started, that the caller has no seat in and is not invited to")))]
#[get("/games/{id}")]
pub async fn get_game(on: OnGameByToken<HttpRequest>) -> Reply {
    let Call {
        state,
        user: caller,
        path,
        input: req,
    } = on;
    let id = path.into_inner().to_string();
    let user_id = caller.user_id;
    let mut table = crate::games::view(&state.db, &state.hot, &id, &user_id).await?;
    let viewer = viewer_of(&table, &user_id)?;
    // The count read with the game may predate the caller's own watch.
    if let Some(watching) = spectate(&state, &table.row.id, viewer, &user_id).await {
        table.spectators = watching;
    }
    if let Some(res) = not_modified(&req, table.row.version) {
        return Ok(res);
    }
    Ok(with_etag(&game_view(&table, viewer)?, table.row.version))
}
