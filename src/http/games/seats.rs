//! Seats: join, leave, resign, reclaim.

use actix_web::post;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::games;
use crate::http::extract::OptionalJson;
use crate::http::reply::Reply;
use crate::http::views::game::GameView;

use super::{OnGame, answer};

/// Which seat to take.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinRequest {
    /// A specific open seat; default: the seat reserved for the caller, else the first open.
    #[schema(minimum = 0, maximum = 3)]
    pub seat: Option<u8>,
}

/// Take a seat.
///
/// Takes a seat: the one reserved for the caller, the one asked for, or the first open one.
/// The game starts when the fourth seat is taken.
#[utoipa::path(operation_id = "join_game", tag = "games", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    request_body(content = Option<JoinRequest>, description = "Optional; without a seat, the seat reserved for the caller or else the first open one"),
    responses(
        (status = 200, description = "Seated", body = GameView),
        (status = 400, description = "Invalid seat"),
        (status = 409, description = "`already_seated`, `seat_taken`, `game_full`, `game_not_waiting`, `too_many_active_games`")))]
#[post("/games/{id}/join")]
pub async fn join(on: OnGame<OptionalJson<JoinRequest>>) -> Reply {
    let seat = on.input.0.seat;
    let max_active = on.state.config.max_active_games_per_user;
    let done = on
        .run(move |conn, id, user_id| games::join(conn, id, user_id, seat, max_active))
        .await?;
    answer(&on.state, &done, false)
}

/// The handlers of the seat use cases that need only the game and the caller, one entry
/// each: its doc, name, operation id, path, service function and the responses it
/// documents beyond the common ones.
macro_rules! seat_changes {
    ($(
        $(#[$doc:meta])*
        $name:ident as $operation:literal at $path:literal by $use_case:path, [$($response:tt)*];
    )*) => {$(
        $(#[$doc])*
        #[utoipa::path(operation_id = $operation, tag = "games", security(("bearer" = [])),
            params(("id" = uuid::Uuid, Path, description = "Game id")),
            responses($($response)*))]
        #[post($path)]
        pub async fn $name(on: OnGame) -> Reply {
            answer(&on.state, &on.run($use_case).await?, false)
        }
    )*};
}

seat_changes! {
    /// Leave a game before it starts.
    ///
    /// Frees the caller's seat, or declines the caller's invitation. A waiting game that no
    /// human holds or is invited to any more is aborted. Once the game runs, resign instead.
    leave as "leave_game" at "/games/{id}/leave" by games::leave, [
        (status = 200, description = "Left; the game as it is now", body = GameView),
        (status = 403, description = "Not seated or invited (`not_seated`), or banned"),
        (status = 409, description = "The game has started (`game_not_waiting`): resign instead"),
    ];

    /// Resign: a bot plays the caller's seat.
    ///
    /// A `heuristic` bot takes the seat for the rest of the game and acts at once
    /// when the seat must act. The caller keeps the seat's record (and its result). Until
    /// the game ends the caller sees it as a spectator does (this answer too: `my_seat`
    /// null, no hand), so the hand the bot plays out reaches no one; the finished game shows
    /// the seat as theirs again. So does a seat an administrator handed to a bot.
    resign as "resign" at "/games/{id}/resign" by games::resign, [
        (status = 200, description = "A bot plays the seat now", body = GameView),
        (status = 403, description = "Not seated (`not_seated`), or banned"),
        (status = 409, description = "`game_not_active`, or the seat is already a bot's"),
    ];

    /// Take the caller's seat back from a bot.
    ///
    /// After two timeouts in a row a bot takes the seat; its player may reclaim it at any
    /// time while the game runs (a seat given up by resigning cannot be reclaimed).
    reclaim as "reclaim_seat" at "/games/{id}/reclaim" by games::reclaim, [
        (status = 200, description = "The caller plays the seat again", body = GameView),
        (status = 403, description = "Not seated (`not_seated`), or banned"),
        (status = 409, description = "`game_not_active`, or no bot took the seat for timeouts (`nothing_to_reclaim`)"),
    ];
}
