//! `GET /games/{id}/replay`.

use actix_web::get;

use crate::games;
use crate::http::reply::{Reply, ok};
use crate::http::views::replay::{ReplayView, replay_view};

use super::OnGame;

/// The whole game, after its end.
///
/// After the end: the seed, every deal and every action, for the game's players. Players
/// can check every deal and every action against the rules: the seed reproduces the deals.
#[utoipa::path(operation_id = "get_replay", tag = "games", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "The whole game", body = ReplayView),
        (status = 403, description = "Not one of the game's players (`not_seated`), or banned"),
        (status = 409, description = "The game is not over yet (`game_not_finished`)")))]
#[get("/games/{id}/replay")]
pub async fn replay(on: OnGame) -> Reply {
    let (table, record) = on.run(games::replay).await?;
    ok(replay_view(&table, &record)?)
}
