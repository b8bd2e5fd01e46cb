//! Ratings per user and mode, their history, the boards, and the counters behind a profile's
//! average points per round.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::keyset::{self, Direction, Keyset};
use super::schema::{games, rating_buckets, rating_history, ratings, users};

/// A row of `ratings`.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = ratings, primary_key(user_id, mode))]
pub struct RatingRow {
    /// The player.
    pub user_id: String,
    /// `solo` or `partnership`.
    pub mode: String,
    /// Weng-Lin mean.
    pub mu: f64,
    /// Weng-Lin uncertainty.
    pub sigma: f64,
    /// mu - 3 sigma.
    pub ordinal: f64,
    /// Rated games since the last reset.
    pub games: i32,
    /// On the boards: false while banned or deleted (kept by a trigger), and after a reset
    /// until the next rated game.
    pub listed: bool,
    /// Last change.
    pub updated_at: NaiveDateTime,
}

/// A row of `rating_history`.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = rating_history)]
pub struct HistoryRow {
    /// UUID.
    pub id: String,
    /// The player.
    pub user_id: String,
    /// `solo` or `partnership`.
    pub mode: String,
    /// The rated game; `None` for an administrator's reset.
    pub game_id: Option<String>,
    /// When.
    pub at: NaiveDateTime,
    /// Mean after the change.
    pub mu: f64,
    /// Uncertainty after the change.
    pub sigma: f64,
    /// Ordinal after the change.
    pub ordinal: f64,
    /// Rated games after the change.
    pub games: i32,
}

/// The stored ratings of `user_ids` in `mode` (missing users have none yet).
pub fn of_users(
    conn: &mut AnyConnection,
    mode: &str,
    user_ids: &[String],
) -> QueryResult<Vec<RatingRow>> {
    ratings::table
        .filter(ratings::mode.eq(mode))
        .filter(ratings::user_id.eq_any(user_ids))
        .select(RatingRow::as_select())
        .load(conn)
}

/// Every stored rating of one user.
pub fn of_user(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<RatingRow>> {
    ratings::table
        .filter(ratings::user_id.eq(user_id))
        .select(RatingRow::as_select())
        .load(conn)
}

/// Every stored rating, for `leekha verify`.
pub fn all(conn: &mut AnyConnection) -> QueryResult<Vec<RatingRow>> {
    ratings::table
        .order((ratings::user_id.asc(), ratings::mode.asc()))
        .select(RatingRow::as_select())
        .load(conn)
}

/// Takes the board lock of a mode (`solo` | `partnership`) for the rest of the transaction:
/// whoever writes ratings of the mode takes it first. A rating change moves a player between
/// `rating_buckets` rows (its trigger decrements one and increments another), so two games
/// finishing at once would otherwise lock bucket rows in opposite orders and deadlock. Games
/// finishing in one mode commit one after the other anyway: they all count in the same few
/// buckets. A no-op on SQLite, whose writers are serialized.
pub fn lock_board(conn: &mut AnyConnection, mode: &str) -> QueryResult<()> {
    let AnyConnection::Postgresql(pg) = conn else {
        return Ok(());
    };
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('leekha.ratings.' || $1))")
        .bind::<diesel::sql_types::Text, _>(mode)
        .execute(pg)
        .map(drop)
}

/// Writes a rating: updates the user's row for the mode, or inserts it. Callers hold the
/// user's lock, so the row cannot appear in between.
pub fn save(conn: &mut AnyConnection, row: &RatingRow) -> QueryResult<()> {
    let n = diesel::update(ratings::table.find((&row.user_id, &row.mode)))
        .set(row)
        .execute(conn)?;
    if n == 0 {
        diesel::insert_into(ratings::table)
            .values(row)
            .execute(conn)?;
    }
    Ok(())
}

/// Appends history rows.
pub fn append_history(conn: &mut AnyConnection, rows: &[HistoryRow]) -> QueryResult<()> {
    for row in rows {
        diesel::insert_into(rating_history::table)
            .values(row)
            .execute(conn)?;
    }
    Ok(())
}

/// One user's history in a mode, newest first, after the keyset `(at, id)` of the previous
/// page.
pub fn history(
    conn: &mut AnyConnection,
    user_id: &str,
    mode: &str,
    after: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<HistoryRow>> {
    let query = rating_history::table
        .filter(rating_history::user_id.eq(user_id))
        .filter(rating_history::mode.eq(mode))
        .into_boxed();
    keyset::page(
        query,
        rating_history::at,
        rating_history::id,
        Direction::NewestFirst,
        after,
    )
    .limit(limit)
    .select(HistoryRow::as_select())
    .load(conn)
}

/// The time of history rows of `mode` written now, under the mode's board lock: `at`, or
/// just after the mode's latest row when that is as late (a game that stamped its time
/// before it waited for the lock, or another instance's clock ahead). The history's order
/// is then the order its changes were made in, which [`all_history`] replays.
pub fn history_time(
    conn: &mut AnyConnection,
    mode: &str,
    at: NaiveDateTime,
) -> QueryResult<NaiveDateTime> {
    let latest: Option<NaiveDateTime> = rating_history::table
        .filter(rating_history::mode.eq(mode))
        .select(diesel::dsl::max(rating_history::at))
        .first(conn)?;
    Ok(match latest {
        Some(latest) if latest >= at => latest + chrono::TimeDelta::microseconds(1),
        _ => at,
    })
}

/// The whole history in the order it was written (time, then game), for `leekha verify`.
pub fn all_history(conn: &mut AnyConnection) -> QueryResult<Vec<HistoryRow>> {
    rating_history::table
        .order((
            rating_history::at.asc(),
            rating_history::game_id.asc(),
            rating_history::user_id.asc(),
        ))
        .select(HistoryRow::as_select())
        .load(conn)
}

// Board queries filter on `ratings.listed` itself, never on `listed = $n`: with a bound
// parameter, PostgreSQL's generic plan for a prepared statement cannot use the partial index
// `ratings_board … WHERE listed` and falls back to sorting the whole table.

/// A board row: the rating and the player's username.
pub type BoardRow = (RatingRow, String);

/// Up to `limit` listed players of `mode` in board order (ordinal descending, then user
/// id), after the board position `(ordinal, user_id)` when given.
pub fn board_after(
    conn: &mut AnyConnection,
    mode: &str,
    after: Option<(f64, &str)>,
    limit: i64,
) -> QueryResult<Vec<BoardRow>> {
    let mut query = ratings::table
        .inner_join(users::table)
        .filter(ratings::mode.eq(mode))
        .filter(ratings::listed)
        .into_boxed();
    if let Some((ordinal, user_id)) = after {
        // The first conjunct bounds the index range; the second excludes the ties already
        // shown.
        query = query.filter(ratings::ordinal.le(ordinal)).filter(
            ratings::ordinal
                .lt(ordinal)
                .or(ratings::user_id.gt(user_id.to_owned())),
        );
    }
    query
        .order((ratings::ordinal.desc(), ratings::user_id.asc()))
        .limit(limit)
        .select((RatingRow::as_select(), users::username))
        .load(conn)
}

/// Up to `limit` listed players of `mode` just ahead of the board position
/// `(ordinal, user_id)`, nearest first.
pub fn board_before(
    conn: &mut AnyConnection,
    mode: &str,
    before: (f64, &str),
    limit: i64,
) -> QueryResult<Vec<BoardRow>> {
    let (ordinal, user_id) = before;
    ratings::table
        .inner_join(users::table)
        .filter(ratings::mode.eq(mode))
        .filter(ratings::listed)
        .filter(ratings::ordinal.ge(ordinal))
        .filter(
            ratings::ordinal
                .gt(ordinal)
                .or(ratings::user_id.lt(user_id.to_owned())),
        )
        .order((ratings::ordinal.asc(), ratings::user_id.desc()))
        .limit(limit)
        .select((RatingRow::as_select(), users::username))
        .load(conn)
}

/// The bucket of an ordinal in `rating_buckets`: floor(4 * ordinal), as the triggers compute
/// it (multiplying by 4 is exact, so both sides agree on every float).
#[must_use]
pub fn bucket(ordinal: f64) -> i32 {
    (ordinal * 4.0).floor() as i32
}

/// Where the board position `(ordinal, user_id)` of `mode` stands, in one round trip: how
/// many listed players have a higher ordinal (one less than the rank of that ordinal), and
/// how many tied with it come before `user_id` in board order. The buckets above count at
/// once; only the players in the ordinal's own bucket are counted one by one.
pub fn standing_of(
    conn: &mut AnyConnection,
    mode: &str,
    ordinal: f64,
    user_id: &str,
) -> QueryResult<(i64, i64)> {
    use diesel::sql_types::{BigInt, Double, Integer, Text};
    #[derive(QueryableByName)]
    struct Standing {
        #[diesel(sql_type = BigInt)]
        above: i64,
        #[diesel(sql_type = BigInt)]
        tied: i64,
    }
    // Three counts as scalar subqueries of one select: one round trip.
    let sql = match conn {
        AnyConnection::Postgresql(_) => {
            "SELECT CAST(COALESCE((SELECT SUM(players) FROM rating_buckets              WHERE mode = $1 AND bucket > $2), 0) AS BIGINT)              + (SELECT count(*) FROM ratings WHERE mode = $1 AND listed                 AND ordinal > $3 AND ordinal < $4) AS above,              (SELECT count(*) FROM ratings WHERE mode = $1 AND listed                 AND ordinal = $3 AND user_id < $5) AS tied"
        }
        AnyConnection::Sqlite(_) => {
            "SELECT COALESCE((SELECT SUM(players) FROM rating_buckets              WHERE mode = ?1 AND bucket > ?2), 0)              + (SELECT count(*) FROM ratings WHERE mode = ?1 AND listed                 AND ordinal > ?3 AND ordinal < ?4) AS above,              (SELECT count(*) FROM ratings WHERE mode = ?1 AND listed                 AND ordinal = ?3 AND user_id < ?5) AS tied"
        }
    };
    let b = bucket(ordinal);
    let found: Standing = diesel::sql_query(sql)
        .bind::<Text, _>(mode)
        .bind::<Integer, _>(b)
        .bind::<Double, _>(ordinal)
        .bind::<Double, _>(f64::from(b + 1) / 4.0)
        .bind::<Text, _>(user_id)
        .get_result(conn)?;
    Ok((found.above, found.tied))
}

/// Adds a finished game's points and rounds to a player's counters.
pub fn add_points(
    conn: &mut AnyConnection,
    user_id: &str,
    points: i64,
    rounds: i64,
) -> QueryResult<()> {
    diesel::update(users::table.find(user_id))
        .set((
            users::points_taken.eq(users::points_taken + points),
            users::rounds_played.eq(users::rounds_played + rounds),
        ))
        .execute(conn)
        .map(drop)
}

/// A player's points taken and rounds played, over finished games.
pub fn points(conn: &mut AnyConnection, user_id: &str) -> QueryResult<(i64, i64)> {
    users::table
        .find(user_id)
        .select((users::points_taken, users::rounds_played))
        .first(conn)
}

/// Finished rated games, for the administrators' statistics.
pub fn rated_games(conn: &mut AnyConnection) -> QueryResult<i64> {
    games::table
        .filter(games::rated.eq(true))
        .filter(games::status.eq(super::types::GameStatus::Finished))
        .count()
        .get_result(conn)
}

/// Ids of finished rated games, oldest first, for `leekha verify`.
pub fn finished_rated_ids(conn: &mut AnyConnection) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::rated.eq(true))
        .filter(games::status.eq(super::types::GameStatus::Finished))
        .order((games::finished_at.asc(), games::id.asc()))
        .select(games::id)
        .load(conn)
}

/// Points a game at its rematch, and bumps its version so that cached views (`ETag`)
/// change. Under the game's lock.
pub fn set_rematch(
    conn: &mut AnyConnection,
    game_id: &str,
    rematch_id: &str,
    now: NaiveDateTime,
) -> QueryResult<()> {
    diesel::update(games::table.find(game_id))
        .set((
            games::rematch_id.eq(rematch_id),
            games::version.eq(games::version + 1),
            games::updated_at.eq(now),
        ))
        .execute(conn)
        .map(drop)
}

/// Those of `user_ids` who are banned or deleted (and so stay off the boards).
pub fn unlisted_among(conn: &mut AnyConnection, user_ids: &[String]) -> QueryResult<Vec<String>> {
    users::table
        .filter(users::id.eq_any(user_ids))
        .filter(
            users::banned_at
                .is_not_null()
                .or(users::deleted_at.is_not_null()),
        )
        .select(users::id)
        .load(conn)
}

/// The board row of `user_id` in `mode` (rating and username), when they have a listed
/// rating: one query.
pub fn board_row(
    conn: &mut AnyConnection,
    mode: &str,
    user_id: &str,
) -> QueryResult<Option<BoardRow>> {
    ratings::table
        .inner_join(users::table)
        .filter(ratings::mode.eq(mode))
        .filter(ratings::user_id.eq(user_id))
        .filter(ratings::listed)
        .select((RatingRow::as_select(), users::username))
        .first(conn)
        .optional()
}

/// Every non-empty bucket `(mode, bucket, players)`, for `leekha verify`.
pub fn buckets(conn: &mut AnyConnection) -> QueryResult<Vec<(String, i32, i32)>> {
    rating_buckets::table
        .filter(rating_buckets::players.ne(0))
        .order((rating_buckets::mode.asc(), rating_buckets::bucket.asc()))
        .select((
            rating_buckets::mode,
            rating_buckets::bucket,
            rating_buckets::players,
        ))
        .load(conn)
}
