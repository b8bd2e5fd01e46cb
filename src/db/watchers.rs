//! Spectators: who watches a game without a seat, until when (`game_watchers`).
//!
//! Both sides of a watch use the database's clock, not the instance's: the instance that
//! renews a watch and the one that counts it then agree even when their clocks drift.

use diesel::prelude::*;
use diesel::sql_types::Text;

use super::AnyConnection;
use super::schema::game_watchers;

/// How long one renewal counts a spectator, in seconds.
pub const TTL_SECONDS: u32 = 60;

/// A watch is renewed only when it has less than this left, so a spectator who reloads
/// often writes about once per half a time to live.
const RENEW_BELOW_SECONDS: u32 = 30;

/// The count of [`count_column`] on PostgreSQL, as a literal for the prepared find query.
macro_rules! count_pg {
    () => {
        "(SELECT count(*) FROM game_watchers w WHERE w.game_id = games.id \
         AND w.until > (now() AT TIME ZONE 'UTC'))"
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
    AND w.until > strftime('%Y-%m-%d %H:%M:%f', 'now'))";

/// Counts `user_id` as watching `game_id` for the next [`TTL_SECONDS`] (a write only when
/// the watch is new or nearly over), and forgets the game's lapsed watches. Returns how many
/// watch the game now, the caller included. A game closed to spectators counts nobody: an
/// outsider may still look at it while it waits for players, to join it, but is no
/// spectator.
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
                 FROM games WHERE id = $1 AND allow_spectators \
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
                 FROM games WHERE id = ?1 AND allow_spectators \
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
            .count()
            .get_result(conn)
    })
}
