//! `GET /games/{id}/hint`.

use actix_web::{HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::app::AppState;
use crate::bots::BotLevel;
use crate::games::hint::{HINT_LEVEL, prepare};
use crate::http::extract::AuthUser;
use crate::http::problem::{ApiError, Problem};
use crate::http::views::game::{CardCode, action_parts};

use super::for_caller;

/// The strongest bot's suggestion for the caller's pending action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct HintView {
    /// `pass` or `play`.
    #[serde(rename = "type")]
    pub kind: String,
    /// For a pass: the 3 cards to pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardCode>>,
    /// For a play: the card to play.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<CardCode>,
    /// The bot level that made the suggestion.
    pub level: BotLevel,
    /// The game version the hint is for.
    pub version: i64,
}

/// The expert bot's suggestion for the caller's pending pass or play, computed from the
/// caller's own view and the round's public plays only. Its search is seeded by game and
/// version and bounded by an iteration cap and a time budget (a busy server explores less).
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "A legal action for the caller", body = HintView),
        (status = 403, description = "Not seated (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The game is not running (`game_not_active`) or the caller has nothing to do now (`nothing_to_do`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/games/{id}/hint")]
pub async fn hint(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let job = for_caller(&state, &user, path, prepare).await?;
    let version = job.version;
    let action = web::block(move || job.run()).await??;
    let (kind, cards, card) = action_parts(&action);
    Ok(HttpResponse::Ok().json(HintView {
        kind: kind.into(),
        cards,
        card,
        level: HINT_LEVEL,
        version,
    }))
}
