//! Use cases that end or inspect a game as a whole: an administrator's abort and full read.

use serde_json::json;

use crate::audit::{self, Entry};
use crate::db::AnyConnection;
use crate::error::Error;

use super::record::{Record, record};
use super::{Change, Committed, GameStatus, Table, locked};

/// Ends a waiting or running game without a result; audited in the same transaction.
///
/// # Errors
/// 404 for an unknown game; 409 `game_not_active` when it already ended.
pub fn abort(
    conn: &mut AnyConnection,
    game_id: &str,
    admin_id: &str,
    reason: &str,
) -> Result<Committed, Error> {
    locked(conn, game_id, |conn, table| {
        let before = table.status();
        if !matches!(before, GameStatus::Waiting | GameStatus::Active) {
            return Err(Error::conflict(
                "game_not_active",
                format!("the game is already {}", before.as_str()),
            ));
        }
        let mut change = Change::new(table)?;
        change.abort(reason);
        let done = change.commit_for(conn, None)?;
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "abort_game",
                target_type: "game",
                target_id: game_id,
                reason: Some(reason),
                details: json!({
                    "status_before": before.as_str(),
                    "version": done.table.row.version,
                }),
            },
        )?;
        Ok(done)
    })
}

/// Everything about a game, for an administrator; each read is audited.
///
/// # Errors
/// 404 for an unknown game.
pub fn inspect(
    conn: &mut AnyConnection,
    game_id: &str,
    admin_id: &str,
) -> Result<(Table, Record), Error> {
    // The game's lock, as for a change: a consistent snapshot, and on SQLite a write (the
    // audit entry) that never follows a stale read.
    locked(conn, game_id, |conn, table| {
        let record = record(conn, &table)?;
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "read_game",
                target_type: "game",
                target_id: game_id,
                reason: None,
                details: json!({ "status": table.row.status, "version": table.row.version }),
            },
        )?;
        Ok((table, record))
    })
}
