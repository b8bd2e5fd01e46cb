//! `POST /games/{id}/rematch`.

use actix_web::http::header;
use actix_web::{HttpResponse, post, web};

use crate::app::AppState;
use crate::games;
use crate::http::extract::AuthUser;
use crate::http::preconditions::etag;
use crate::http::problem::{ApiError, Problem};
use crate::http::views::game::{GameView, game_view};

use super::for_caller;

/// Play a finished game again.
///
/// Asks for a rematch of a finished game, as one of its seated players. The first request
/// creates the new game (201): the same rules, visibility, turn time and `rated`, the caller
/// in their seat, the same bots, and every other player invited to their old seat (they are
/// notified, kind `invited`); the finished game's `rematch_id` then names it. Any later
/// request (simultaneous ones included) answers 200 with that same game, and seats the
/// caller in the seat reserved for them.
#[utoipa::path(
    operation_id = "rematch_game",
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "The finished game's id")),
    responses(
        (status = 201, description = "The new game, created by this request", body = GameView),
        (status = 200, description = "The rematch another player created, the caller seated", body = GameView),
        (status = 403, description = "The caller had no seat (`not_seated`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_not_finished`, `rematch_unavailable`, `too_many_games`, `too_many_active_games`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/rematch")]
pub async fn rematch(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let old = path.to_string();
    let max_active = state.config.max_active_games_per_user;
    let done = for_caller(&state, &user, path, move |conn, id, user_id| {
        games::rematch(conn, id, user_id, max_active)
    })
    .await?;
    state.published(&done.committed);
    if done.created {
        // The finished game's view changed too (its `rematch_id`).
        state.announce(&old, &[]);
    }
    let view = game_view(&done.committed.table, done.committed.seat)?;
    let mut answer = if done.created {
        let mut created = HttpResponse::Created();
        created.insert_header((header::LOCATION, format!("/api/v1/games/{}", view.id)));
        created
    } else {
        HttpResponse::Ok()
    };
    Ok(answer
        .insert_header((header::ETAG, etag(view.version)))
        .json(view))
}
