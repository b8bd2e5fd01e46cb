//! The game as a caller may see it now, without a full read when this instance can prove
//! its copy current.

use crate::db::games::{self as store, Probe};
use crate::db::{AnyConnection, Db};
use crate::error::Error;

use super::{GameStatus, HotTables, Table};

/// Loads the game for `user_id` to render a view: from this instance's copy ([`HotTables`])
/// when the database, asked in one small query ([`store::probe`]), has the game at the
/// copy's version, and otherwise read whole (and kept for the next view). Never stale: a view
/// after any action through any instance shows that action, since every change of the game
/// raises the version, and the spectator count and the caller's account come from the
/// probe. Players' usernames are as old as the copy (at most 5 s, see [`HotTables`]). The account is judged first, as by [`Table::load_for`].
///
/// On PostgreSQL the probe goes out with the instance's other probes of the moment
/// ([`crate::db::probes`]), and a view served from the copy holds no pooled connection.
///
/// # Errors
/// As [`Table::load_for`].
pub async fn view(
    db: &Db,
    hot: &std::sync::Arc<HotTables>,
    game_id: &str,
    user_id: &str,
) -> Result<Table, Error> {
    let probes = db.probes().filter(|_| hot.peek(game_id).is_some());
    let probed = match probes {
        Some(probes) => probes.probe(game_id, user_id).await,
        None => None,
    };
    let Some(answer) = probed else {
        let (hot, game_id, user_id) = (hot.clone(), game_id.to_owned(), user_id.to_owned());
        return db
            .run(move |conn| view_on(conn, &hot, &game_id, &user_id))
            .await;
    };
    // Any answer but the copy's version (another version, or no such game, which the full
    // read reports after judging the account) reads the game whole.
    if let Some(probe) = answer
        && let Some(table) = current(hot, game_id, probe)?
    {
        return Ok(table);
    }
    let (hot, game_id, user_id) = (hot.clone(), game_id.to_owned(), user_id.to_owned());
    db.run(move |conn| load(conn, &hot, &game_id, &user_id))
        .await
}

/// [`view`] on a connection of the caller's, probing on it.
fn view_on(
    conn: &mut AnyConnection,
    hot: &HotTables,
    game_id: &str,
    user_id: &str,
) -> Result<Table, Error> {
    if hot.peek(game_id).is_some() {
        let Some(probe) = store::probe(conn, game_id, Some(user_id))? else {
            crate::auth::check_account(conn, user_id)?;
            return Err(Error::not_found("no such game"));
        };
        if let Some(table) = current(hot, game_id, probe)? {
            return Ok(table);
        }
    }
    load(conn, hot, game_id, user_id)
}

/// The copy of the game, if it is at the probed version, with the probed spectator count,
/// once the probed account is judged.
fn current(hot: &HotTables, game_id: &str, probe: Probe) -> Result<Option<Table>, Error> {
    crate::auth::judge(probe.caller)?;
    let Some(cached) = hot.peek(game_id).filter(|c| c.row.version == probe.version) else {
        return Ok(None);
    };
    let mut table = (*cached).clone();
    let spectators = u32::try_from(probe.spectators).unwrap_or(u32::MAX);
    if table.spectators != spectators {
        // The next action's answer, rendered from the copy, shows the new count too.
        table.spectators = spectators;
        hot.put(table.clone());
    }
    Ok(Some(table))
}

/// The game read whole, and kept for the next view while it is active.
fn load(
    conn: &mut AnyConnection,
    hot: &HotTables,
    game_id: &str,
    user_id: &str,
) -> Result<Table, Error> {
    let mut table = Table::load_for(conn, game_id, false, user_id)?;
    if table.status() == GameStatus::Active {
        table.parsed = table.game()?;
        hot.put(table.clone());
    }
    Ok(table)
}
