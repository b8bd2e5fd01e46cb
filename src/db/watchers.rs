//! Spectators: who watches a game without a seat, until when (`game_watchers`).
//!
//! Both sides of a watch use the database's clock, not the instance's: the instance that
//! renews a watch and the one that counts it then agree even when their clocks drift.

use diesel::prelude::*;
use diesel::sql_types::Text;

use super::AnyConnection;
use super::schema::{game_seats, game_watchers};

/// How long one renewal counts a spectator, in seconds.
pub const TTL_SECONDS: u32 = 60;

/// A watch is renewed only when it has less than this left, so a spectator who reloads
/// often writes about once per half a time to live.
const RENEW_BELOW_SECONDS: u32 = 30;

/// The count of [`count_column`] on PostgreSQL, as a literal for the prepared find query.
///
/// A watcher who has taken a seat since is a player, not a spectator.
macro_rules! count_pg {
    () => {
        "(SELECT count(*) FROM game_watchers w WHERE w.game_id = games.id \
         AND w.until > (now() AT TIME ZONE 'UTC') AND NOT EXISTS (SELECT 1 FROM game_seats ws \
         WHERE ws.game_id = w.game_id AND ws.user_id = w.user_id))"
    };
}
pub(super) use count_pg;

/// The spectators of the game in the row `games` of the enclosing query: watches not yet
/// expired, in the engine's dialect.
pub(super) fn count_column(
    conn: &AnyConnection,
) -> diesel::expression::SqlLiteral<diesel::sql_types::BigInt> {
    diesel::dsl::sql(match conn {
        AnyConnection::Postgresql(_) => count_pg!(),
        AnyConnection::Sqlite(_) => COUNT_SQLITE,
    })
}

const COUNT_SQLITE: &str = "(SELECT count(*) FROM game_watchers w WHERE w.game_id = games.id \
    AND w.until > strftime('%Y-%m-%d %H:%M:%f', 'now') AND NOT EXISTS (SELECT 1 FROM game_seats \
    ws WHERE ws.game_id = w.game_id AND ws.user_id = w.user_id))";

/// Counts `user_id` as watching `game_id` for the next [`TTL_SECONDS`] (a write only when
/// the watch is new or nearly over), and forgets the game's lapsed watches. Returns how many
/// watch the game now, the caller included. A game closed to spectators, or private, counts
/// nobody: an outsider may still look at it while it waits for players, to join it, but is
/// no spectator. Nor is a user a seat is kept for (invited): they look at the game to take
/// it. Watchers who have taken a seat since are not counted.
///
/// # Errors
/// Database errors.
pub fn renew(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> QueryResult<i64> {
    let (forget, renew) = match conn {
        AnyConnection::Postgresql(_) => (
            "DELETE FROM game_watchers WHERE game_id = $1 AND until <= (now() AT TIME ZONE 'UTC')"
                .to_owned(),
            format!(
                "INSERT INTO game_watchers (game_id, user_id, until) SELECT $1, $2, \
                 (now() AT TIME ZONE 'UTC') + interval '{TTL_SECONDS} seconds' \
                 FROM games WHERE id = $1 AND allow_spectators AND visibility = 'public' \
                 AND NOT EXISTS (SELECT 1 FROM game_seats WHERE game_id = $1 \
                 AND invited_user_id = $2) \
                 ON CONFLICT (game_id, user_id) DO UPDATE SET until = excluded.until \
                 WHERE game_watchers.until < (now() AT TIME ZONE 'UTC') \
                 + interval '{RENEW_BELOW_SECONDS} seconds'"
            ),
        ),
        AnyConnection::Sqlite(_) => (
            "DELETE FROM game_watchers WHERE game_id = ? \
             AND until <= strftime('%Y-%m-%d %H:%M:%f', 'now')"
                .to_owned(),
            format!(
                "INSERT INTO game_watchers (game_id, user_id, until) SELECT ?1, ?2, \
                 strftime('%Y-%m-%d %H:%M:%f', 'now', '+{TTL_SECONDS} seconds') \
                 FROM games WHERE id = ?1 AND allow_spectators AND visibility = 'public' \
                 AND NOT EXISTS (SELECT 1 FROM game_seats WHERE game_id = ?1 \
                 AND invited_user_id = ?2) \
                 ON CONFLICT (game_id, user_id) DO UPDATE SET until = excluded.until \
                 WHERE game_watchers.until < \
                 strftime('%Y-%m-%d %H:%M:%f', 'now', '+{RENEW_BELOW_SECONDS} seconds')"
            ),
        ),
    };
    super::write_transaction(conn, |conn| {
        diesel::sql_query(forget)
            .bind::<Text, _>(game_id)
            .execute(conn)?;
        diesel::sql_query(renew)
            .bind::<Text, _>(game_id)
            .bind::<Text, _>(user_id)
            .execute(conn)?;
        // The lapsed watches are gone: every row left is live.
        game_watchers::table
            .filter(game_watchers::game_id.eq(game_id))
            .filter(diesel::dsl::not(diesel::dsl::exists(
                game_seats::table
                    .filter(game_seats::game_id.eq(game_watchers::game_id))
                    .filter(
                        game_seats::user_id
                            .nullable()
                            .eq(game_watchers::user_id.nullable()),
                    ),
            )))
            .count()
            .get_result(conn)
    })
}

/// Ends `user_id`'s watch of `game_id` (they took a seat): whether there was one that still
/// counted.
///
/// # Errors
/// Database errors.
pub fn forget(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> QueryResult<bool> {
    // On the database's clock, as the count that included it.
    let live = match conn {
        AnyConnection::Postgresql(_) => "until > (now() AT TIME ZONE 'UTC')",
        AnyConnection::Sqlite(_) => "until > strftime('%Y-%m-%d %H:%M:%f', 'now')",
    };
    let watch = game_watchers::table
        .filter(game_watchers::game_id.eq(game_id))
        .filter(game_watchers::user_id.eq(user_id));
    let counted: i64 = watch
        .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(live))
        .count()
        .get_result(conn)?;
    diesel::delete(watch).execute(conn)?;
    Ok(counted > 0)
}
