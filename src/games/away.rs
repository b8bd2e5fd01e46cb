//! Away mode: a user who will not play for a while (`PUT /me/away`) has the heuristic bot
//! play their seats at once, so three others do not wait out a turn timer on every turn.
//! Each seat is handed over with a `seat_changed` event (`away`) and given back (`returned`)
//! when the user returns or the time runs out; while a bot plays the seat, no `your_turn`
//! or reminder goes to the user. A game that starts while its player is away starts with
//! the bot in that seat. The user stays seated: the game's result is theirs.

use chrono::{Duration, NaiveDateTime};

use crate::db::{self, AnyConnection, games as store};
use crate::error::Error;

use super::{BotReason, Change, Committed, GameStatus, Table};

/// The longest time away one request may ask for.
pub const MAX_AWAY: Duration = Duration::days(30);

/// What going away or coming back did.
#[derive(Debug, Default)]
pub struct AwayChange {
    /// Until when the user is away now (`None`: not away).
    pub until: Option<NaiveDateTime>,
    /// The games whose seat changed hands, as committed.
    pub games: Vec<Committed>,
}

/// Marks `user_id` away until `until` and hands every seat of theirs in a running game to
/// the bot, which acts at once where the seat must. Asking again moves the end time.
///
/// # Errors
/// 400 when `until` is not in the future or more than [`MAX_AWAY`] ahead.
pub fn go_away(
    conn: &mut AnyConnection,
    user_id: &str,
    until: NaiveDateTime,
) -> Result<AwayChange, Error> {
    let now = db::now();
    if until <= now {
        return Err(Error::validation("until must lie in the future"));
    }
    if until > now + MAX_AWAY {
        return Err(Error::validation("until must lie within 30 days"));
    }
    db::write_transaction(conn, |conn| {
        db::users::set_away(conn, user_id, Some(until), now).map_err(Error::from)
    })?;
    // One transaction per game, after the user's row is committed: a game's lock is never
    // taken while holding the user's (actions take them the other way round).
    let mut games = Vec::new();
    for id in store::active_game_ids_of(conn, user_id)? {
        if let Some(done) = in_game(conn, &id, user_id, Hand::ToBot)? {
            games.push(done);
        }
    }
    Ok(AwayChange {
        until: Some(until),
        games,
    })
}

/// Ends `user_id`'s time away (nothing happens when they were not away): the seats the bot
/// played for them are theirs again.
///
/// # Errors
/// Database errors.
pub fn come_back(conn: &mut AnyConnection, user_id: &str) -> Result<AwayChange, Error> {
    db::write_transaction(conn, |conn| {
        db::users::set_away(conn, user_id, None, db::now()).map_err(Error::from)
    })?;
    let mut games = Vec::new();
    for id in store::active_game_ids_of(conn, user_id)? {
        if let Some(done) = in_game(conn, &id, user_id, Hand::Back)? {
            games.push(done);
        }
    }
    Ok(AwayChange { until: None, games })
}

/// Brings back the users whose time away has passed, at most `limit`; what changed.
///
/// # Errors
/// Database errors.
pub fn end_due(conn: &mut AnyConnection, limit: i64) -> Result<Vec<Committed>, Error> {
    let mut games = Vec::new();
    for user_id in db::users::back_from_away(conn, db::now(), limit)? {
        games.extend(come_back(conn, &user_id)?.games);
    }
    Ok(games)
}

/// Starts a game whose table is full ([`Change::start`]), the seats of players who are away
/// going to the bot before the deal.
///
/// # Errors
/// Database and rules errors.
pub fn start_game(conn: &mut AnyConnection, change: &mut Change) -> Result<(), Error> {
    let humans: Vec<String> = change.humans().into_iter().map(|(_, u)| u).collect();
    // Their accounts' locks (held already by a join), so that going away, which takes the
    // account's, is read here once committed, or waits for the start and then finds the
    // game running.
    super::lock_accounts(conn, humans.iter().map(String::as_str))?;
    let away = db::users::away_among(conn, &humans, db::now())?;
    change.start(&away)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hand {
    ToBot,
    Back,
}

fn in_game(
    conn: &mut AnyConnection,
    game_id: &str,
    user_id: &str,
    hand: Hand,
) -> Result<Option<Committed>, Error> {
    super::locked(conn, game_id, |conn, table: Table| {
        let Some(seat) = table.seat_of(user_id) else {
            return Ok(None);
        };
        if table.status() != GameStatus::Active {
            return Ok(None);
        }
        let mut change = Change::new(table)?;
        match hand {
            // A seat a bot holds already (resigned, timed out, an administrator's) stays so.
            Hand::ToBot if change.table.bot_of(seat).is_none() => {
                change.hand_to_bot(seat, BotReason::Away);
                change.run_bots()?;
            }
            Hand::Back if change.table.bot_reason(seat) == Some(BotReason::Away) => {
                change.give_back(seat, "returned");
            }
            _ => return Ok(None),
        }
        change.commit_for(conn, Some(seat)).map(Some)
    })
}
