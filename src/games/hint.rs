//! The expert bot's suggestion for a player's pending action.

use crate::bots::{self, BotLevel};
use crate::db::AnyConnection;
use crate::error::Error;
use crate::rules::{Action, Card, Seat, SeatView};

use super::{BotReason, GameStatus, Table, decode_plays, seat_of};

/// What a hint is computed from: the caller's own view and the round's public plays only.
#[derive(Debug)]
pub struct HintJob {
    view: SeatView,
    plays: Vec<(Seat, Card)>,
    seed: [u8; 32],
    /// The game version the hint is for.
    pub version: i64,
}

/// The bot level that makes hints.
pub const HINT_LEVEL: BotLevel = BotLevel::Expert;

/// Loads what a hint for the caller needs.
///
/// # Errors
/// 404 for a hidden game; 403 `not_seated` (also when a bot holds the seat for good); 409
/// `game_not_active`, or `nothing_to_do` while a bot plays the seat for a time.
pub fn prepare(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> Result<HintJob, Error> {
    let table = Table::load(conn, game_id)?;
    let seat = seat_of(&table, user_id)?;
    let not_running = || Error::conflict("game_not_active", "the game is not running");
    if table.status() != GameStatus::Active {
        return Err(not_running());
    }
    // A player whose seat a bot holds for good watches the game as a spectator does.
    if table.seen_from(Some(seat)).is_none() {
        return Err(Error::forbidden(
            "a bot plays your seat for the rest of the game: you watch it as a spectator",
        )
        .with_code("not_seated"));
    }
    // A seat a bot plays for a time is the bot's to act on: nothing to suggest, but the
    // way back, which depends on why the bot plays.
    if let Some(reason) = table.bot_reason(seat) {
        let detail = if reason == BotReason::Away {
            "a bot plays your seat while you are away: come back (DELETE /api/v1/me/away) to play again".to_owned()
        } else {
            format!(
                "a bot plays your seat after your turns timed out: reclaim it (POST /api/v1/games/{game_id}/reclaim) to play again"
            )
        };
        return Err(Error::conflict("nothing_to_do", detail));
    }
    let game = table.game()?.ok_or_else(not_running)?;
    let version = table.row.version;
    // Seeded by game and version, so the search only varies with how far the time budget
    // lets it go.
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(
        &uuid::Uuid::parse_str(&table.row.id)
            .unwrap_or_default()
            .into_bytes(),
    );
    seed[16..24].copy_from_slice(&version.to_le_bytes());
    Ok(HintJob {
        view: game.view(seat),
        plays: decode_plays(&table.row.round_plays),
        seed,
        version,
    })
}

impl HintJob {
    /// Runs the search (CPU-bound: call it off the async workers).
    ///
    /// # Errors
    /// 409 `nothing_to_do` when the caller has nothing to do now.
    pub fn run(&self) -> Result<Action, Error> {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::from_seed(self.seed);
        bots::choose(HINT_LEVEL, &self.view, &self.plays, &mut rng).ok_or_else(|| {
            Error::conflict("nothing_to_do", "you have nothing to do in this game now")
        })
    }
}
