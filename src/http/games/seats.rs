//! Seats: join, leave, resign, reclaim, and the creator's changes to a waiting game's seats.

use actix_web::{post, put, web};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::bots::BotLevel;
use crate::error::Error;
use crate::games::{self, SeatPlan};
use crate::http::extract::{Json, Mine, OptionalJson};
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
    /// the seat as theirs again. So does a seat an administrator handed to a bot. A seat a
    /// bot plays for a time (after timeouts, or while away) can be resigned too: the bot then
    /// keeps it for good.
    resign as "resign" at "/games/{id}/resign" by games::resign, [
        (status = 200, description = "A bot plays the seat now, for the rest of the game", body = GameView),
        (status = 403, description = "Not seated (`not_seated`), or banned"),
        (status = 409, description = "The game is not running (`game_not_active`), or a bot holds the seat for good already: resigned, or handed over by an administrator (`already_resigned`)"),
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

/// What a seat of a waiting game can become by its creator's hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatChangeKind {
    /// Anyone may join it.
    Open,
    /// Reserved for the user named by `username`.
    Invite,
    /// A bot of `level` (not in a rated game).
    Bot,
}

/// A seat as the game's creator wants it now.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatChangeRequest {
    /// `open`, `invite` (needs `username`) or `bot`.
    pub kind: SeatChangeKind,
    /// For `invite`: who.
    #[schema(example = "omar")]
    pub username: Option<String>,
    /// For `bot`: `random`, `easy`, `heuristic` (default) or `expert`.
    pub level: Option<BotLevel>,
}

impl SeatChangeRequest {
    fn plan(self) -> Result<SeatPlan, Error> {
        match (self.kind, self.username, self.level) {
            (SeatChangeKind::Open, None, None) => Ok(SeatPlan::Open),
            (SeatChangeKind::Invite, Some(name), None) => Ok(SeatPlan::Invite(name)),
            (SeatChangeKind::Bot, None, level) => {
                Ok(SeatPlan::Bot(level.unwrap_or(BotLevel::Heuristic)))
            }
            (SeatChangeKind::Invite, None, _) => {
                Err(Error::validation("an invite seat needs a username"))
            }
            (_, Some(_), _) => Err(Error::validation("only an invite seat takes a username")),
            (_, _, Some(_)) => Err(Error::validation("only a bot seat takes a level")),
        }
    }
}

/// Change a seat of a waiting game.
///
/// The game's creator, seated at it, sets a seat no player holds: open it to anyone,
/// reserve it for a user (which withdraws the invitation it held, if any; the new invitee
/// gets an `invited` notification, pushed silently if they had one for this game already),
/// or give it to a bot (not in a rated game). The seat's
/// players see a `seat_changed` event with reason `host`; the game starts when that fills
/// the table. Asking for what the seat already is changes nothing.
#[utoipa::path(operation_id = "set_seat", tag = "games", security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("seat" = u8, Path, description = "Seat 0..=3"),
    ),
    request_body = SeatChangeRequest,
    responses(
        (status = 200, description = "The game as it is now", body = GameView),
        (status = 400, description = "Invalid seat or body; an unknown or banned user, one already at the table, the caller; a bot in a rated game"),
        (status = 403, description = "Not the game's seated creator (`forbidden`), or a block stands between the invited user and someone at the table (`blocked`)"),
        (status = 404, description = "No such game"),
        (status = 409, description = "`game_not_waiting`, or a player holds the seat (`seat_taken`)")))]
#[put("/games/{id}/seats/{seat}")]
pub async fn set_seat(
    call: Mine<web::Path<(uuid::Uuid, String)>, Json<SeatChangeRequest>>,
) -> Reply {
    let (id, seat) = &*call.path;
    let seat = crate::http::extract::path_seat(seat)?;
    let plan = call.input.0.clone().plan()?;
    let id = id.to_string();
    let done = call
        .mine(move |conn, me| games::set_seat(conn, &id, me, seat, plan))
        .await?;
    answer(&call.state, &done, false)
}
