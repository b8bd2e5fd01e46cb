//! `GET /games/{id}/hint`.

use actix_web::{get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bots::BotLevel;
use crate::games::hint::{HINT_LEVEL, prepare};
use crate::http::reply::{Reply, ok};
use crate::http::views::game::{CardCode, codes_of};
use crate::rules::Action;

use super::OnGame;

/// The strongest bot's suggestion for the caller's pending action, by `type`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HintView {
    /// Pass these cards.
    Pass {
        /// The 3 cards to pass.
        #[schema(min_items = 3, max_items = 3)]
        cards: Vec<CardCode>,
        /// The bot level that made the suggestion.
        level: BotLevel,
        /// The game version the hint is for.
        version: i64,
    },
    /// Play this card.
    Play {
        /// The card to play.
        card: CardCode,
        /// The bot level that made the suggestion.
        level: BotLevel,
        /// The game version the hint is for.
        version: i64,
    },
}

/// A bot's suggestion for the caller's pending action.
///
/// The expert bot's suggestion for the caller's pending pass or play, computed from the
/// caller's own view and the round's public plays only. Its search is seeded by game and
/// version and bounded by an iteration cap and a time budget (a busy server explores less).
#[utoipa::path(operation_id = "get_hint", tag = "games", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "A legal action for the caller", body = HintView),
        (status = 403, description = "Not seated (`not_seated`; also a player whose seat a bot holds for good), or banned"),
        (status = 409, description = "The game is not running (`game_not_active`) or the caller has nothing to do now (`nothing_to_do`)")))]
#[get("/games/{id}/hint")]
pub async fn hint(on: OnGame) -> Reply {
    let job = on.run(prepare).await?;
    let version = job.version;
    let action = web::block(move || job.run()).await??;
    let level = HINT_LEVEL;
    ok(match action {
        Action::Pass { cards, .. } => HintView::Pass {
            cards: codes_of(&cards),
            level,
            version,
        },
        Action::Play { card, .. } => HintView::Play {
            card: CardCode(card.to_string()),
            level,
            version,
        },
    })
}
