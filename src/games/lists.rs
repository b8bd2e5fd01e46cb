//! Lists of games, each page read in one query (games with their seats and names).

use chrono::NaiveDateTime;

pub use crate::db::games::{FromGame, Urgency};
use crate::db::{self, AnyConnection, games as store};
use crate::error::Error;
use crate::rules::Seat;

use super::{GameStatus, Table};

/// Public games waiting for players that `caller` may join (none where someone who blocks
/// them sits), oldest first, after the keyset `after`; `friends_only`: those where a friend
/// of the caller sits.
///
/// # Errors
/// Database errors.
pub fn lobby(
    conn: &mut AnyConnection,
    caller: &str,
    after: Option<(NaiveDateTime, String)>,
    friends_only: bool,
    limit: i64,
) -> Result<Vec<Table>, Error> {
    Ok(store::lobby(conn, caller, after, friends_only, limit)?
        .into_iter()
        .map(Table::from_found)
        .collect())
}

/// The user's games (seated or invited) with these statuses, most urgent first, each with
/// the user's seat and its place in the list (where the next page starts after it).
///
/// # Errors
/// Database errors.
pub fn of_user(
    conn: &mut AnyConnection,
    user_id: &str,
    statuses: &[GameStatus],
    from: FromGame,
    limit: i64,
) -> Result<Vec<(Table, Seat, Urgency)>, Error> {
    store::for_user(conn, user_id, statuses, from, limit)?
        .into_iter()
        .map(|(found, seat, place)| {
            let seat = Seat::new(seat as u8).ok_or_else(|| Error::internal("stored seat"))?;
            Ok((Table::from_found(found), seat, place))
        })
        .collect()
}

/// Every game for administrators, newest first, by status and by a player: the live
/// account with the username `player`, the account with the id `player_id` (deleted
/// accounts included), or both (then only the games of the one account both name).
///
/// # Errors
/// Database errors.
pub fn search(
    conn: &mut AnyConnection,
    statuses: &[GameStatus],
    player: Option<&str>,
    player_id: Option<&str>,
    before: Option<(NaiveDateTime, String)>,
    limit: i64,
) -> Result<Vec<Table>, Error> {
    let by_name = match player {
        None => None,
        Some(name) => match db::users::by_username(conn, name)? {
            Some(user) => Some(user.id),
            // Nobody by that name plays anything.
            None => return Ok(Vec::new()),
        },
    };
    let seated = match (by_name, player_id) {
        (Some(a), Some(b)) if a != b => return Ok(Vec::new()),
        (Some(id), _) => Some(id),
        (None, id) => id.map(str::to_owned),
    };
    Ok(
        db::admin::search_games(conn, statuses, seated.as_deref(), before, limit)?
            .into_iter()
            .map(Table::from_found)
            .collect(),
    )
}

/// Parses a comma-separated list of statuses; `default` when empty.
///
/// # Errors
/// `validation_failed` naming the unknown status.
pub fn parse_statuses(raw: Option<&str>, default: &[GameStatus]) -> Result<Vec<GameStatus>, Error> {
    match raw.map(str::trim) {
        None | Some("") => Ok(default.to_vec()),
        Some(raw) => raw
            .split(',')
            .map(|s| {
                GameStatus::parse(s.trim()).ok_or_else(|| {
                    Error::validation(format!(
                        "status must be waiting, active, finished or aborted, not {s:?}"
                    ))
                })
            })
            .collect(),
    }
}
