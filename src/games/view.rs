//! The game as a caller may see it now, without a full read when this instance can prove
//! its copy current.

use crate::db::AnyConnection;
use crate::db::games as store;
use crate::error::Error;

use super::{GameStatus, HotTables, Table};

/// Loads the game for `user_id` to render a view: from this instance's copy ([`HotTables`])
/// when the database, asked in one small query ([`store::probe`]), has the game at the
/// copy's version, and otherwise read whole (and kept for the next view). Never stale: a view
/// after any action through any instance shows that action, since every change of what a
/// view shows raises the version, and the spectator count and the caller's account come from
/// the probe. The account is judged first, as by [`Table::load_for`].
///
/// # Errors
/// As [`Table::load_for`].
pub fn view(
    conn: &mut AnyConnection,
    hot: &HotTables,
    game_id: &str,
    user_id: &str,
) -> Result<Table, Error> {
    if let Some(cached) = hot.peek(game_id) {
        let Some(probe) = store::probe(conn, game_id, Some(user_id))? else {
            crate::auth::check_account(conn, user_id)?;
            return Err(Error::not_found("no such game"));
        };
        crate::auth::judge(probe.caller)?;
        if probe.version == cached.row.version {
            let mut table = (*cached).clone();
            let spectators = u32::try_from(probe.spectators).unwrap_or(u32::MAX);
            if table.spectators != spectators {
                // The next action's answer, rendered from the copy, shows the new count too.
                table.spectators = spectators;
                hot.put(table.clone());
            }
            return Ok(table);
        }
    }
    let mut table = Table::load_for(conn, game_id, false, user_id)?;
    if table.status() == GameStatus::Active {
        table.parsed = table.game()?;
        hot.put(table.clone());
    }
    Ok(table)
}
