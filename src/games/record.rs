//! The record of a game: every deal and every action, for replays and administrators.

use chrono::NaiveDateTime;
use serde::Deserialize;

use crate::db::{AnyConnection, games as store};
use crate::error::Error;
use crate::rules::Action;

use super::{GameStatus, Table};

/// A deal as it was dealt.
#[derive(Debug, Clone, Deserialize)]
pub struct DealtRound {
    /// Round number.
    pub round: u32,
    /// Dealer seat.
    pub dealer: u8,
    /// The four hands as dealt, by seat, as card codes.
    pub hands: Vec<Vec<String>>,
}

/// An action as stored.
#[derive(Debug, Clone)]
pub struct RecordedAction {
    /// 1, 2, …
    pub seq: i64,
    /// The action.
    pub action: Action,
    /// `player`, `bot` or `timeout`.
    pub actor: String,
    /// When.
    pub created_at: NaiveDateTime,
}

/// Every deal and every action of a game so far.
#[derive(Debug, Clone)]
pub struct Record {
    /// Every deal, in order.
    pub rounds: Vec<DealtRound>,
    /// Every action, in order.
    pub actions: Vec<RecordedAction>,
}

/// Reads the record of a loaded game.
///
/// # Errors
/// Database errors; 500 when stored data does not parse.
pub fn record(conn: &mut AnyConnection, table: &Table) -> Result<Record, Error> {
    let mut rounds = Vec::new();
    for e in store::all_events(conn, &table.row.id)? {
        if e.kind == "round_dealt" {
            rounds.push(serde_json::from_str(&e.data)?);
        }
    }
    let actions = store::actions(conn, &table.row.id)?
        .into_iter()
        .map(|a| {
            Ok(RecordedAction {
                seq: a.seq,
                action: serde_json::from_str(&a.action)?,
                actor: a.actor,
                created_at: a.created_at,
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(Record { rounds, actions })
}

/// A finished game's record for one of its players.
///
/// # Errors
/// 404 for a hidden game; 403 `not_seated` for anyone but its players; 409
/// `game_not_finished` while it runs.
pub fn replay(
    conn: &mut AnyConnection,
    game_id: &str,
    user_id: &str,
) -> Result<(Table, Record), Error> {
    let table = Table::load(conn, game_id)?;
    if !table.visible_to(user_id) {
        return Err(Error::not_found("no such game"));
    }
    if table.seat_of(user_id).is_none() {
        return Err(
            Error::forbidden("only the game's players can see its replay").with_code("not_seated"),
        );
    }
    if !matches!(table.status(), GameStatus::Finished | GameStatus::Aborted) {
        return Err(Error::conflict(
            "game_not_finished",
            "the replay opens when the game is over",
        ));
    }
    let record = record(conn, &table)?;
    Ok((table, record))
}
