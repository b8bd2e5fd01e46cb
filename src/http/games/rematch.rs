//! `POST /games/{id}/rematch`.

use actix_web::post;

use crate::games;
use crate::http::reply::Reply;
use crate::http::views::game::GameView;

use super::{OnGame, answer};

/// Play a finished game again.
///
/// Asks for a rematch of a finished game, as one of its seated players. The first request
/// creates the new game (201): the same rules, visibility, turn time and `rated`, the caller
/// in their seat, the same bots, and every other player invited to their old seat (they are
/// notified, kind `invited`); the finished game's `rematch_id` then names it. Any later
/// request (simultaneous ones included) answers 200 with that same game, and seats the
/// caller in the seat reserved for them.
#[utoipa::path(operation_id = "rematch_game", tag = "games", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "The finished game's id")),
    responses(
        (status = 201, description = "The new game, created by this request", body = GameView),
        (status = 200, description = "The rematch another player created, the caller seated", body = GameView),
        (status = 403, description = "The caller had no seat (`not_seated`)"),
        (status = 409, description = "`game_not_finished`, `rematch_unavailable`, `too_many_games`, `too_many_active_games`")))]
#[post("/games/{id}/rematch")]
pub async fn rematch(on: OnGame) -> Reply {
    let max_active = on.state.config.max_active_games_per_user;
    let done = on
        .run(move |conn, id, user_id| games::rematch(conn, id, user_id, max_active))
        .await?;
    let reply = answer(&on.state, &done.committed, done.created);
    if done.created {
        // The finished game's view changed too (its `rematch_id`).
        on.state.announce(&on.path.to_string(), &[]);
    }
    reply
}
