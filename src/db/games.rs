//! Games, seats, the action log, the event log and stored idempotent responses.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::keyset::{self, Direction, Keyset};
use super::prepared::{Bind, Prepared, Sql};
use super::schema::{game_actions, game_events, game_seats, games, idempotency_keys, users};
use super::types::{BotReason, GameStatus, Visibility};
use crate::bots::BotLevel;

/// A row of `games`.
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = games, treat_none_as_null = true)]
pub struct GameRow {
    /// UUID.
    pub id: String,
    /// Where the game is in its life.
    pub status: GameStatus,
    /// Who may see it.
    pub visibility: Visibility,
    /// Resolved rules (JSON).
    pub rules: String,
    /// Change counter.
    pub version: i64,
    /// Creator.
    pub created_by: String,
    /// Seconds per turn.
    pub turn_timeout_seconds: i32,
    /// Seed (hex).
    pub seed: Option<String>,
    /// Rules state (JSON).
    pub state: Option<String>,
    /// ",0,2," seats to act.
    pub to_act: String,
    /// Deadline of the current turn.
    pub deadline: Option<NaiveDateTime>,
    /// Open seats.
    pub open_seats: i32,
    /// Actions applied.
    pub action_count: i64,
    /// Events appended.
    pub event_count: i64,
    /// Result (JSON).
    pub result: Option<String>,
    /// Abort reason.
    pub abort_reason: Option<String>,
    /// Created.
    pub created_at: NaiveDateTime,
    /// Updated.
    pub updated_at: NaiveDateTime,
    /// Started.
    pub started_at: Option<NaiveDateTime>,
    /// Finished.
    pub finished_at: Option<NaiveDateTime>,
    /// When to remind the late seats.
    pub reminder_at: Option<NaiveDateTime>,
    /// The current round's card plays, `"<seat><card>,…"`.
    pub round_plays: String,
    /// When the scheduler must look at the game next (see [`GameRow::next_wake`]).
    pub wake_at: Option<NaiveDateTime>,
    /// Counts for the ratings.
    pub rated: bool,
    /// The game a rematch of this finished one created.
    pub rematch_id: Option<String>,
    /// Signed-in users without a seat may watch it (when public).
    pub allow_spectators: bool,
}

impl GameRow {
    /// The wake time to store with this row's deadline and reminder, given the one stored so
    /// far. A stored time still ahead of `now` and not after the new timers stays: an action
    /// that only pushes the timers later then leaves every indexed column alone, which lets
    /// PostgreSQL update the row in place. The scheduler, woken early, sets the exact time.
    #[must_use]
    pub fn next_wake(&self, now: NaiveDateTime) -> Option<NaiveDateTime> {
        let due = match (self.deadline, self.reminder_at) {
            (Some(d), Some(r)) => Some(d.min(r)),
            (d, r) => d.or(r),
        }?;
        match self.wake_at {
            Some(w) if w > now && w <= due => Some(w),
            _ => Some(due),
        }
    }
}

impl GameRow {
    /// A new game waiting for players: version 0, nothing dealt, no timers.
    pub fn new(
        id: &str,
        created_by: &str,
        rules: String,
        visibility: Visibility,
        turn_timeout_seconds: i32,
        now: NaiveDateTime,
    ) -> Self {
        Self {
            id: id.to_owned(),
            status: GameStatus::Waiting,
            visibility,
            rules,
            version: 0,
            created_by: created_by.to_owned(),
            turn_timeout_seconds,
            seed: None,
            state: None,
            to_act: String::new(),
            deadline: None,
            open_seats: 0,
            action_count: 0,
            event_count: 0,
            result: None,
            abort_reason: None,
            created_at: now,
            updated_at: now,
            started_at: None,
            finished_at: None,
            reminder_at: None,
            round_plays: String::new(),
            wake_at: None,
            rated: false,
            rematch_id: None,
            allow_spectators: true,
        }
    }
}

/// A row of `game_seats`.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = game_seats, primary_key(game_id, seat), treat_none_as_null = true)]
pub struct SeatRow {
    /// Game.
    pub game_id: String,
    /// 0..=3.
    pub seat: i32,
    /// Human.
    pub user_id: Option<String>,
    /// Invited user.
    pub invited_user_id: Option<String>,
    /// Bot level while a bot acts.
    pub bot_level: Option<BotLevel>,
    /// Why a bot acts.
    pub bot_reason: Option<BotReason>,
    /// Consecutive timeouts.
    pub timeouts_in_row: i32,
}

/// A row of `game_events`.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = game_events)]
pub struct EventRow {
    /// Game.
    pub game_id: String,
    /// Sequence number.
    pub seq: i64,
    /// Type.
    pub kind: String,
    /// Payload (JSON, private parts included).
    pub data: String,
    /// When.
    pub created_at: NaiveDateTime,
}

/// A row of `game_actions`.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = game_actions)]
pub struct ActionRow {
    /// Game.
    pub game_id: String,
    /// Sequence number.
    pub seq: i64,
    /// Seat.
    pub seat: i32,
    /// rules::Action (JSON).
    pub action: String,
    /// player | bot | timeout.
    pub actor: String,
    /// The human who sent it.
    pub user_id: Option<String>,
    /// When.
    pub created_at: NaiveDateTime,
}

/// Takes the game's write lock for the rest of the transaction: a row lock on PostgreSQL,
/// the database write lock on SQLite. It must be the transaction's first statement, so that
/// on SQLite no stale read snapshot exists when the lock is granted. Returns whether the game
/// exists.
pub fn lock(conn: &mut AnyConnection, id: &str) -> QueryResult<bool> {
    let n = diesel::update(games::table.find(id))
        .set(games::version.eq(games::version))
        .execute(conn)?;
    Ok(n == 1)
}

/// Ids of games whose wake time is at or before `now`, most overdue first.
pub fn due(conn: &mut AnyConnection, now: NaiveDateTime, limit: i64) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::wake_at.le(now))
        .order(games::wake_at.asc())
        .limit(limit)
        .select(games::id)
        .load(conn)
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    #[allow(dead_code, reason = "only the row count matters")]
    id: String,
}

/// Takes the game's lock if its wake time has still passed, skipping a game another
/// instance holds. On SQLite the write lock serializes everything, so a plain lock does.
pub fn claim_due(conn: &mut AnyConnection, id: &str, now: NaiveDateTime) -> QueryResult<bool> {
    match conn {
        AnyConnection::Postgresql(pg) => {
            let rows: Vec<IdRow> = diesel::sql_query(
                "SELECT id FROM games WHERE id = $1 AND wake_at <= $2 FOR UPDATE SKIP LOCKED",
            )
            .bind::<diesel::sql_types::Text, _>(id)
            .bind::<diesel::sql_types::Timestamp, _>(now)
            .load(pg)?;
            Ok(rows.len() == 1)
        }
        AnyConnection::Sqlite(_) => lock(conn, id),
    }
}

/// Stores a game's reminder time and next wake time, and nothing else.
pub fn set_timers(
    conn: &mut AnyConnection,
    id: &str,
    reminder_at: Option<NaiveDateTime>,
    wake_at: Option<NaiveDateTime>,
) -> QueryResult<()> {
    diesel::update(games::table.find(id))
        .set((
            games::reminder_at.eq(reminder_at),
            games::wake_at.eq(wake_at),
        ))
        .execute(conn)?;
    Ok(())
}

/// How many games `user_id` created that still wait for players.
pub fn waiting_created_by(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    games::table
        .filter(games::created_by.eq(user_id))
        .filter(games::status.eq(GameStatus::Waiting))
        .count()
        .get_result(conn)
}

/// How many running games `user_id` holds a seat in (also while a bot plays it for them).
pub fn active_games_of(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    game_seats::table
        .inner_join(games::table)
        .filter(game_seats::user_id.eq(user_id))
        .filter(games::status.eq(GameStatus::Active))
        .count()
        .get_result(conn)
}

/// The ids of the running games where the user holds a seat.
pub fn active_game_ids_of(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<String>> {
    game_seats::table
        .inner_join(games::table)
        .filter(game_seats::user_id.eq(user_id))
        .filter(games::status.eq(GameStatus::Active))
        .order(games::id.asc())
        .select(games::id)
        .load(conn)
}

/// The waiting games where `user_id` holds a seat or an invitation, by id.
pub fn waiting_game_ids_of(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<String>> {
    game_seats::table
        .inner_join(games::table)
        .filter(
            game_seats::user_id
                .eq(user_id)
                .or(game_seats::invited_user_id.eq(user_id)),
        )
        .filter(games::status.eq(GameStatus::Waiting))
        .order(games::id.asc())
        .select(games::id)
        .distinct()
        .load(conn)
}

/// The game row.
pub fn find(conn: &mut AnyConnection, id: &str) -> QueryResult<Option<GameRow>> {
    games::table
        .find(id)
        .select(GameRow::as_select())
        .first(conn)
        .optional()
}

/// The four seats, in order.
pub fn seats(conn: &mut AnyConnection, id: &str) -> QueryResult<Vec<SeatRow>> {
    game_seats::table
        .filter(game_seats::game_id.eq(id))
        .order(game_seats::seat.asc())
        .select(SeatRow::as_select())
        .load(conn)
}

/// (id, username) of the given users.
pub fn usernames(conn: &mut AnyConnection, ids: &[String]) -> QueryResult<Vec<(String, String)>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    users::table
        .filter(users::id.eq_any(ids))
        .select((users::id, users::username))
        .load(conn)
}

/// A seat as read together with its game: the seat row plus the names (and the seated
/// user's webhook) from `users`, so that loading a game is one query.
#[derive(Debug, Clone)]
pub struct LoadedSeat {
    /// The seat row.
    pub row: SeatRow,
    /// Username of the seated user.
    pub username: Option<String>,
    /// Username of the invited user.
    pub invited_username: Option<String>,
    /// Whether the seated user has a webhook (on PostgreSQL also: or a push device), so
    /// that their notifications take the path that writes deliveries.
    pub has_webhook: bool,
}

/// The seats with the users' names, as one JSON text column (so that the game and its seats
/// come back in one round trip; a join would repeat the large game row four times).
macro_rules! seats_pg {
    () => {
        "(SELECT CAST(json_agg(json_build_array(s.seat, s.user_id, \
    s.invited_user_id, s.bot_level, s.bot_reason, s.timeouts_in_row, u.username, i.username, \
    u.webhook_url IS NOT NULL OR EXISTS (SELECT 1 FROM push_devices p WHERE p.user_id = u.id)) \
    ORDER BY s.seat) AS TEXT) FROM game_seats s \
    LEFT JOIN users u ON u.id = s.user_id LEFT JOIN users i ON i.id = s.invited_user_id \
    WHERE s.game_id = games.id)"
    };
}
const SEATS_SQLITE: &str = "(SELECT json_group_array(json(x)) FROM (SELECT json_array(s.seat, \
    s.user_id, s.invited_user_id, s.bot_level, s.bot_reason, s.timeouts_in_row, u.username, \
    i.username, CASE WHEN u.webhook_url IS NULL THEN json('false') ELSE json('true') END) AS x \
    FROM game_seats s LEFT JOIN users u ON u.id = s.user_id \
    LEFT JOIN users i ON i.id = s.invited_user_id WHERE s.game_id = games.id ORDER BY s.seat))";

/// The seats column of a list query (see [`Found`]), in the engine's dialect.
pub(super) fn seats_column(
    conn: &AnyConnection,
) -> diesel::expression::SqlLiteral<diesel::sql_types::Nullable<diesel::sql_types::Text>> {
    diesel::dsl::sql(match conn {
        AnyConnection::Postgresql(_) => seats_pg!(),
        AnyConnection::Sqlite(_) => SEATS_SQLITE,
    })
}

/// One page of the games a boxed `games` query keeps, in keyset order by creation, each with
/// its seats and spectators.
pub(super) fn page_of(
    conn: &mut AnyConnection,
    query: games::BoxedQuery<'_, <AnyConnection as Connection>::Backend>,
    direction: Direction,
    from: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<Found>> {
    let seats = seats_column(conn);
    let spectators = super::watchers::count_column(conn);
    let rows: Vec<(GameRow, Option<String>, i64)> =
        keyset::page(query, games::created_at, games::id, direction, from)
            .limit(limit)
            .select((GameRow::as_select(), seats, spectators))
            .load(conn)?;
    rows.into_iter()
        .map(|(row, seats, spectators)| Found::listed(row, seats, spectators))
        .collect()
}

type SeatTuple = (
    i32,
    Option<String>,
    Option<String>,
    Option<BotLevel>,
    Option<BotReason>,
    i32,
    Option<String>,
    Option<String>,
    bool,
);

fn parse_seats(game_id: &str, raw: Option<String>) -> QueryResult<Vec<LoadedSeat>> {
    let tuples: Vec<SeatTuple> = match raw {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))?,
        None => Vec::new(),
    };
    Ok(tuples
        .into_iter()
        .map(
            |(
                seat,
                user_id,
                invited_user_id,
                bot_level,
                bot_reason,
                timeouts_in_row,
                name,
                invited,
                hook,
            )| {
                LoadedSeat {
                    row: SeatRow {
                        game_id: game_id.to_owned(),
                        seat,
                        user_id,
                        invited_user_id,
                        bot_level,
                        bot_reason,
                        timeouts_in_row,
                    },
                    username: name,
                    invited_username: invited,
                    has_webhook: hook,
                }
            },
        )
        .collect())
}

/// The caller's account state, read with the game ([`find_with_seats`]).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct CallerState {
    /// Deleted.
    pub deleted: bool,
    /// Banned.
    pub banned: bool,
    /// Role as stored.
    pub role: String,
}

macro_rules! caller_pg {
    () => {
        caller_pg!("$1")
    };
    ($id:literal) => {
        concat!(
            "(SELECT CAST(json_build_object('deleted', u.deleted_at IS NOT NULL, \
            'banned', u.banned_at IS NOT NULL, 'role', u.role) AS TEXT) FROM users u \
            WHERE u.id = ",
            $id,
            ")"
        )
    };
}
const CALLER_SQLITE: &str = "(SELECT json_object(\
    'deleted', CASE WHEN u.deleted_at IS NULL THEN json('false') ELSE json('true') END, \
    'banned', CASE WHEN u.banned_at IS NULL THEN json('false') ELSE json('true') END, \
    'role', u.role) FROM users u WHERE u.id = ";

/// The game row, its seats (`seats_pg!`) and the caller (`caller_pg!`), kept prepared (see
/// [`Prepared`]).
///
/// `seen_version` is the game's version in the statement's snapshot. With `FOR UPDATE` it
/// tells whether the snapshot is older than the row: a statement that waited for another
/// transaction's lock gets the row as that transaction left it (PostgreSQL re-reads a
/// locked row that changed meanwhile), but its sub-selects (the seats, the names) were read
/// in the snapshot taken before the wait, so they miss what that transaction wrote. Every
/// change of a game's seats also writes its row (a new version), so a stale snapshot always
/// shows as a `seen_version` other than the row's. Without a lock there is no wait and one
/// snapshot: `seen_version` is then the row's own, read without a second look-up.
macro_rules! find_pg {
    ($seen:literal, $where:literal) => {
        Sql::new(concat!(
            "SELECT games.*, ",
            seats_pg!(),
            " AS seats, ",
            super::watchers::count_pg!(),
            " AS spectators, ",
            caller_pg!(),
            " AS caller, ",
            $seen,
            " AS seen_version FROM games WHERE ",
            $where
        ))
    };
}
/// Keys [`FIND_PG`] in diesel's statement cache (see [`Sql`]).
enum FindKey {}
static FIND_PG: Sql<FindKey> = find_pg!("games.version", "games.id = $2");
/// Keys [`FIND_PG_LOCKED`] in diesel's statement cache.
enum FindLockedKey {}
static FIND_PG_LOCKED: Sql<FindLockedKey> = find_pg!(
    "(SELECT seen.version FROM games seen WHERE seen.id = $2)",
    "games.id = $3 FOR UPDATE"
);

#[derive(QueryableByName)]
struct GameWithSeats {
    #[diesel(embed)]
    game: GameRow,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    seats: Option<String>,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    spectators: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    caller: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    seen_version: Option<i64>,
}

/// A game as [`find_with_seats`] reads it.
pub struct Found {
    /// The row.
    pub row: GameRow,
    /// Its spectators now ([`super::watchers`]).
    pub spectators: i64,
    /// The seats, in order.
    pub seats: Vec<LoadedSeat>,
    /// The caller's account, when one was asked for and exists.
    pub caller: Option<CallerState>,
}

impl Found {
    /// A game as a list reads it: with its seats column (JSON), and no caller.
    fn listed(row: GameRow, seats: Option<String>, spectators: i64) -> QueryResult<Self> {
        Ok(Self {
            seats: parse_seats(&row.id, seats)?,
            row,
            spectators,
            caller: None,
        })
    }
}

/// A game with its seats and their users' names, and the account of `caller` if given, in
/// one query. With `for_update`, the game row is locked for the rest of the transaction: on
/// PostgreSQL by this query (`FOR UPDATE`); on SQLite by [`lock`], which must then run
/// first, as the transaction's first statement.
pub fn find_with_seats(
    conn: &mut AnyConnection,
    id: &str,
    for_update: bool,
    caller: Option<&str>,
) -> QueryResult<Option<Found>> {
    use diesel::dsl::sql;
    use diesel::sql_types::{Nullable, Text};
    let found: Option<(GameRow, Option<String>, i64, Option<String>)> = match conn {
        AnyConnection::Postgresql(pg) => {
            let binds = || vec![Bind::OptText(caller), Bind::Text(id)];
            let mut found = if for_update {
                let mut locked = binds();
                locked.push(Bind::Text(id));
                Prepared::new(&FIND_PG_LOCKED, locked).load::<GameWithSeats>(pg)?
            } else {
                Prepared::new(&FIND_PG, binds()).load::<GameWithSeats>(pg)?
            }
            .pop();
            if found
                .as_ref()
                .is_some_and(|g| g.seen_version != Some(g.game.version))
            {
                // The lock waited for a change that the sub-selects did not see (see
                // `find_pg!`). The row is ours now, so a new statement, with a snapshot
                // taken after that change, reads it all as it stands.
                found = Prepared::new(&FIND_PG, binds())
                    .load::<GameWithSeats>(pg)?
                    .pop();
            }
            found.map(|g| (g.game, g.seats, g.spectators, g.caller))
        }
        AnyConnection::Sqlite(_) => {
            if for_update && !lock(conn, id)? {
                return Ok(None);
            }
            games::table
                .find(id)
                .select((
                    GameRow::as_select(),
                    sql::<Nullable<Text>>(SEATS_SQLITE),
                    super::watchers::count_column(conn),
                    sql::<Nullable<Text>>(CALLER_SQLITE)
                        .bind::<Nullable<Text>, _>(caller)
                        .sql(")"),
                ))
                .first(conn)
                .optional()?
        }
    };
    let Some((row, seats, spectators, caller)) = found else {
        return Ok(None);
    };
    Ok(Some(Found {
        seats: parse_seats(&row.id, seats)?,
        caller: parse_caller(caller)?,
        row,
        spectators,
    }))
}

/// What [`probe`] reads: the little of a game that can change without its version.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The version: a copy at this version is current in everything else.
    pub version: i64,
    /// Its spectators now ([`super::watchers`]).
    pub spectators: i64,
    /// The caller's account, when one was asked for and exists.
    pub caller: Option<CallerState>,
}

/// Keys [`PROBE_PG`] in diesel's statement cache.
enum ProbeKey {}
static PROBE_PG: Sql<ProbeKey> = Sql::new(concat!(
    "SELECT games.version, ",
    super::watchers::count_pg!(),
    " AS spectators, ",
    caller_pg!(),
    " AS caller FROM games WHERE games.id = $2"
));

#[derive(QueryableByName)]
struct ProbeRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    version: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    spectators: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    caller: Option<String>,
}

/// A game's version and spectator count, and the account of `caller` if given, in one query
/// that reads neither the state nor the seats: what a view served from a copy of the game
/// still needs from the database. `None` when there is no such game.
pub fn probe(
    conn: &mut AnyConnection,
    id: &str,
    caller: Option<&str>,
) -> QueryResult<Option<Probe>> {
    use diesel::dsl::sql;
    use diesel::sql_types::{Nullable, Text};
    let found: Option<(i64, i64, Option<String>)> = match conn {
        AnyConnection::Postgresql(pg) => {
            Prepared::new(&PROBE_PG, vec![Bind::OptText(caller), Bind::Text(id)])
                .load::<ProbeRow>(pg)?
                .pop()
                .map(|p| (p.version, p.spectators, p.caller))
        }
        AnyConnection::Sqlite(_) => games::table
            .find(id)
            .select((
                games::version,
                super::watchers::count_column(conn),
                sql::<Nullable<Text>>(CALLER_SQLITE)
                    .bind::<Nullable<Text>, _>(caller)
                    .sql(")"),
            ))
            .first(conn)
            .optional()?,
    };
    found
        .map(|(version, spectators, caller)| {
            Ok(Probe {
                version,
                spectators,
                caller: parse_caller(caller)?,
            })
        })
        .transpose()
}

/// Keys [`PROBE_BATCH_PG`] in diesel's statement cache.
enum ProbeBatchKey {}
static PROBE_BATCH_PG: Sql<ProbeBatchKey> = Sql::new(concat!(
    "SELECT p.i AS asked, games.version, ",
    super::watchers::count_pg!(),
    " AS spectators, ",
    caller_pg!("p.caller"),
    " AS caller FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(game, caller, i) \
     JOIN games ON games.id = p.game"
));

#[derive(QueryableByName)]
struct ProbeBatchRow {
    /// Which probe, from 1 in the order asked.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    asked: i64,
    #[diesel(embed)]
    probe: ProbeRow,
}

/// The texts of the statements the instance's own connections for batches run
/// ([`super::batcher::connect_for_batches`]): the probes, and the group commit's writes, alone
/// and batched. For the test that their plans never read a whole table.
pub fn statements_for_batches() -> [&'static str; 3] {
    [
        PROBE_BATCH_PG.text(),
        COMMIT_PG.text(),
        COMMIT_PG_BATCH.text(),
    ]
}

/// [`probe`] of every (game, caller) asked, in one query: the answers in the order asked,
/// `None` for a game that does not exist. PostgreSQL only (see [`super::probes`]).
///
/// # Errors
/// When the query fails; then nothing is answered.
pub fn probe_batch(
    pg: &mut diesel::PgConnection,
    asked: &[(&str, &str)],
) -> QueryResult<Vec<Option<Probe>>> {
    let rows = Prepared::new(
        &PROBE_BATCH_PG,
        vec![
            Bind::TextArray(asked.iter().map(|a| a.0).collect()),
            Bind::TextArray(asked.iter().map(|a| a.1).collect()),
        ],
    )
    .load::<ProbeBatchRow>(pg)?;
    let mut answers: Vec<Option<Probe>> = vec![None; asked.len()];
    for row in rows {
        let slot = usize::try_from(row.asked - 1)
            .ok()
            .and_then(|i| answers.get_mut(i))
            .ok_or_else(|| {
                diesel::result::Error::DeserializationError("a probe nobody asked".into())
            })?;
        let ProbeRow {
            version,
            spectators,
            caller,
        } = row.probe;
        *slot = Some(Probe {
            version,
            spectators,
            caller: parse_caller(caller)?,
        });
    }
    Ok(answers)
}

/// The caller's account as `caller_pg!` or [`CALLER_SQLITE`] renders it (JSON).
fn parse_caller(caller: Option<String>) -> QueryResult<Option<CallerState>> {
    caller
        .map(|text| serde_json::from_str(&text))
        .transpose()
        .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))
}

/// Inserts a new game and its seats.
pub fn insert(conn: &mut AnyConnection, game: &GameRow, seats: &[SeatRow]) -> QueryResult<()> {
    diesel::insert_into(games::table)
        .values(game)
        .execute(conn)?;
    batch_insert!(conn, game_seats::table, seats);
    Ok(())
}

/// Writes back every mutable column of the game row.
pub fn save(conn: &mut AnyConnection, game: &GameRow) -> QueryResult<()> {
    diesel::update(games::table.find(&game.id))
        .set(game)
        .execute(conn)
        .map(drop)
}

/// What a common change writes, for [`commit_pg`] and [`commit_pg_batch`]. It owns its
/// values, so that it can be handed to the instance's writer
/// ([`crate::db::group_commit::GroupCommit`]).
#[derive(Debug, Clone)]
pub struct PgCommit {
    /// The game row to write back (its id selects it).
    pub row: GameRow,
    /// The version and reminder the row had when loaded: it is written only if they are
    /// unchanged (always so under the game's lock).
    pub loaded: (i64, Option<NaiveDateTime>),
    /// Actions to append.
    pub actions: Vec<ActionRow>,
    /// Events to append.
    pub events: Vec<EventRow>,
    /// The one user notified, with each notification's kind and data (JSON), in order.
    pub notifications: Option<(String, Vec<(&'static str, String)>)>,
    /// A response to keep for an `Idempotency-Key`: user, key, request fingerprint, body.
    pub idempotency: Option<(String, String, String, String)>,
    /// The change's time: `created_at` of every new row.
    pub now: NaiveDateTime,
    /// Account facts the write must still find true (checked only outside the lock).
    pub guard: AccountGuard,
}

/// Account facts a write made without the game's lock must still find true, since they
/// may have changed after the load (or the game came from [`crate::games::HotTables`]).
#[derive(Debug, Clone, Default)]
pub struct AccountGuard {
    /// The acting user, who must be neither banned nor deleted.
    pub caller: Option<String>,
    /// The notified user, who must still have no webhook and no push device (the write
    /// would skip their deliveries).
    pub no_webhook: Option<String>,
}

/// Keys [`COMMIT_PG`] in diesel's statement cache.
enum CommitKey {}

/// The game row, the new actions and events and one user's notifications in a single
/// statement (data-modifying CTEs), so that an action costs one round trip for its writes
/// instead of four or more. It sends no wake-up: the caller announces the change after the
/// commit (`AppState::announce`), batched with others, since a notifying transaction commits
/// under PostgreSQL's one notification lock. The user's feed counter is incremented atomically, as
/// [`crate::notifications::write`] does, so feeds stay contiguous. Placeholders in order,
/// each once (see [`Prepared`]).
static COMMIT_PG: Sql<CommitKey> = Sql::new(
    "WITH g AS (\
    UPDATE games SET status = $1, version = $2, seed = $3, state = $4, to_act = $5, \
    deadline = $6, open_seats = $7, action_count = $8, event_count = $9, result = $10, \
    abort_reason = $11, updated_at = $12, started_at = $13, finished_at = $14, \
    reminder_at = $15, round_plays = $16, wake_at = $17 WHERE id = $18 AND version = $19 \
    AND reminder_at IS NOT DISTINCT FROM $20 \
    AND ($21::text IS NULL OR EXISTS (SELECT 1 FROM users c WHERE c.id = $22 \
      AND c.banned_at IS NULL AND c.deleted_at IS NULL)) \
    AND NOT EXISTS (SELECT 1 FROM users w WHERE w.id = $23 AND (w.webhook_url IS NOT NULL \
      OR EXISTS (SELECT 1 FROM push_devices p WHERE p.user_id = w.id))) \
    RETURNING id, updated_at), \
  a AS (INSERT INTO game_actions (game_id, seq, seat, action, actor, user_id, created_at) \
    SELECT g.id, x.seq, x.seat, x.action, x.actor, x.user_id, g.updated_at FROM g, \
    unnest($24::bigint[], $25::int[], $26::text[], $27::text[], $28::text[]) \
    AS x(seq, seat, action, actor, user_id)), \
  e AS (INSERT INTO game_events (game_id, seq, kind, data, created_at) \
    SELECT g.id, x.seq, x.kind, x.data, g.updated_at FROM g, \
    unnest($29::bigint[], $30::text[], $31::text[]) AS x(seq, kind, data)), \
  k AS (SELECT CAST($32 AS text) AS user_id, CAST($33 AS text[]) AS kinds, \
    CAST($34 AS text[]) AS datas), \
  n AS (UPDATE users SET notification_count = users.notification_count + cardinality(k.kinds) \
    FROM k, g WHERE users.id = k.user_id AND cardinality(k.kinds) > 0 \
    RETURNING users.id, users.notification_count - cardinality(k.kinds) AS base), \
  m AS (INSERT INTO notifications (user_id, seq, kind, game_id, data, created_at) \
    SELECT n.id, n.base + x.ord, x.kind, g.id, x.data, g.updated_at FROM n, g, k, \
    unnest(k.kinds, k.datas) WITH ORDINALITY AS x(kind, data, ord)), \
  q AS (SELECT CAST($35 AS text) AS user_id, CAST($36 AS text) AS key, \
    CAST($37 AS text) AS hash, CAST($38 AS text) AS body), \
  i AS (INSERT INTO idempotency_keys (user_id, key, request_hash, status, body, created_at) \
    SELECT q.user_id, q.key, q.hash, 200, q.body, g.updated_at FROM g, q \
    WHERE q.key IS NOT NULL) \
  SELECT count(*) AS updated FROM g",
);

#[derive(QueryableByName)]
struct Updated {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    updated: i64,
}

/// Writes a common change in one statement (see `COMMIT_PG`); `false` when the row was
/// no longer as loaded, and then nothing is written. A duplicate action or event key, or a
/// stored idempotency key, fails it with a unique violation.
pub fn commit_pg(pg: &mut diesel::PgConnection, c: &PgCommit) -> QueryResult<bool> {
    let row = &c.row;
    let (user, notes) = match &c.notifications {
        Some((user, notes)) => (Some(user.as_str()), notes.as_slice()),
        None => (None, &[][..]),
    };
    let idempotency = c.idempotency.as_ref();
    let query = Prepared::new(
        &COMMIT_PG,
        vec![
            Bind::Text(row.status.as_str()),
            Bind::BigInt(row.version),
            Bind::OptText(row.seed.as_deref()),
            Bind::OptText(row.state.as_deref()),
            Bind::Text(&row.to_act),
            Bind::OptTimestamp(row.deadline),
            Bind::Int(row.open_seats),
            Bind::BigInt(row.action_count),
            Bind::BigInt(row.event_count),
            Bind::OptText(row.result.as_deref()),
            Bind::OptText(row.abort_reason.as_deref()),
            Bind::Timestamp(c.now),
            Bind::OptTimestamp(row.started_at),
            Bind::OptTimestamp(row.finished_at),
            Bind::OptTimestamp(row.reminder_at),
            Bind::Text(&row.round_plays),
            Bind::OptTimestamp(row.wake_at),
            Bind::Text(&row.id),
            Bind::BigInt(c.loaded.0),
            Bind::OptTimestamp(c.loaded.1),
            Bind::OptText(c.guard.caller.as_deref()),
            Bind::OptText(c.guard.caller.as_deref()),
            Bind::OptText(c.guard.no_webhook.as_deref()),
            Bind::BigIntArray(c.actions.iter().map(|a| a.seq).collect()),
            Bind::IntArray(c.actions.iter().map(|a| a.seat).collect()),
            Bind::TextArray(c.actions.iter().map(|a| a.action.as_str()).collect()),
            Bind::TextArray(c.actions.iter().map(|a| a.actor.as_str()).collect()),
            Bind::OptTextArray(c.actions.iter().map(|a| a.user_id.as_deref()).collect()),
            Bind::BigIntArray(c.events.iter().map(|e| e.seq).collect()),
            Bind::TextArray(c.events.iter().map(|e| e.kind.as_str()).collect()),
            Bind::TextArray(c.events.iter().map(|e| e.data.as_str()).collect()),
            Bind::OptText(user),
            Bind::TextArray(notes.iter().map(|(kind, _)| *kind).collect()),
            Bind::TextArray(notes.iter().map(|(_, data)| data.as_str()).collect()),
            Bind::OptText(idempotency.map(|i| i.0.as_str())),
            Bind::OptText(idempotency.map(|i| i.1.as_str())),
            Bind::OptText(idempotency.map(|i| i.2.as_str())),
            Bind::OptText(idempotency.map(|i| i.3.as_str())),
        ],
    );
    let updated: Vec<Updated> = query.load(pg)?;
    Ok(updated.first().map(|u| u.updated) == Some(1))
}

/// Keys [`COMMIT_PG_BATCH`] in diesel's statement cache.
enum CommitBatchKey {}

/// [`COMMIT_PG`] for several games at once: one statement and one commit for a batch of
/// changes, each still guarded by its own game's version, reminder and accounts. Every
/// value is an array with one entry per game (the row and its guard) or per new row
/// (actions, events, notifications, keys: each names its game, and is written only if its
/// game's row was). A user notified in several of the games gets consecutive feed numbers,
/// in the batch's order. Placeholders in order, each once (see [`Prepared`]).
static COMMIT_PG_BATCH: Sql<CommitBatchKey> = Sql::new(
    "WITH x AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], \
    $5::text[], $6::text[], $7::timestamp[], $8::int[], $9::bigint[], $10::bigint[], \
    $11::text[], $12::text[], $13::timestamp[], $14::timestamp[], $15::timestamp[], \
    $16::timestamp[], $17::text[], $18::timestamp[], $19::bigint[], $20::timestamp[], \
    $21::text[], $22::text[]) AS x(id, status, version, seed, state, to_act, deadline, \
    open_seats, action_count, event_count, result, abort_reason, updated_at, started_at, \
    finished_at, reminder_at, round_plays, wake_at, loaded_version, loaded_reminder, caller, \
    no_webhook)), \
  g AS (UPDATE games SET status = x.status, version = x.version, seed = x.seed, \
    state = x.state, to_act = x.to_act, deadline = x.deadline, open_seats = x.open_seats, \
    action_count = x.action_count, event_count = x.event_count, result = x.result, \
    abort_reason = x.abort_reason, updated_at = x.updated_at, started_at = x.started_at, \
    finished_at = x.finished_at, reminder_at = x.reminder_at, round_plays = x.round_plays, \
    wake_at = x.wake_at FROM x WHERE games.id = x.id AND games.version = x.loaded_version \
    AND games.reminder_at IS NOT DISTINCT FROM x.loaded_reminder \
    AND (x.caller IS NULL OR EXISTS (SELECT 1 FROM users c WHERE c.id = x.caller \
      AND c.banned_at IS NULL AND c.deleted_at IS NULL)) \
    AND NOT EXISTS (SELECT 1 FROM users w WHERE w.id = x.no_webhook \
      AND (w.webhook_url IS NOT NULL \
      OR EXISTS (SELECT 1 FROM push_devices p WHERE p.user_id = w.id))) \
    RETURNING games.id, games.updated_at), \
  a AS (INSERT INTO game_actions (game_id, seq, seat, action, actor, user_id, created_at) \
    SELECT y.game_id, y.seq, y.seat, y.action, y.actor, y.user_id, g.updated_at FROM g \
    JOIN unnest($23::text[], $24::bigint[], $25::int[], $26::text[], $27::text[], \
    $28::text[]) AS y(game_id, seq, seat, action, actor, user_id) ON y.game_id = g.id), \
  e AS (INSERT INTO game_events (game_id, seq, kind, data, created_at) \
    SELECT y.game_id, y.seq, y.kind, y.data, g.updated_at FROM g \
    JOIN unnest($29::text[], $30::bigint[], $31::text[], $32::text[]) \
    AS y(game_id, seq, kind, data) ON y.game_id = g.id), \
  k AS (SELECT y.game_id, y.user_id, y.kind, y.data, y.ord, g.updated_at FROM g \
    JOIN unnest($33::text[], $34::text[], $35::text[], $36::text[]) WITH ORDINALITY \
    AS y(game_id, user_id, kind, data, ord) ON y.game_id = g.id), \
  c AS (SELECT k.user_id, count(*) AS cnt FROM k GROUP BY k.user_id), \
  n AS (UPDATE users SET notification_count = users.notification_count + c.cnt FROM c \
    WHERE users.id = c.user_id RETURNING users.id, users.notification_count - c.cnt AS base), \
  m AS (INSERT INTO notifications (user_id, seq, kind, game_id, data, created_at) \
    SELECT n.id, n.base + row_number() OVER (PARTITION BY k.user_id ORDER BY k.ord), \
    k.kind, k.game_id, k.data, k.updated_at FROM k JOIN n ON n.id = k.user_id), \
  i AS (INSERT INTO idempotency_keys (user_id, key, request_hash, status, body, created_at) \
    SELECT y.user_id, y.key, y.hash, 200, y.body, g.updated_at FROM g \
    JOIN unnest($37::text[], $38::text[], $39::text[], $40::text[], $41::text[]) \
    AS y(game_id, user_id, key, hash, body) ON y.game_id = g.id) \
  SELECT id FROM g",
);

#[derive(QueryableByName)]
struct Written {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
}

/// Writes several common changes in one statement (see `COMMIT_PG_BATCH`), each only if
/// its game is still as loaded: for each change, in order, whether it was written. The games
/// must be distinct. A duplicate action or event key, or a stored idempotency key, in any of
/// them fails the whole statement with a unique violation, and then nothing is written.
pub fn commit_pg_batch(
    pg: &mut diesel::PgConnection,
    batch: &[&PgCommit],
) -> QueryResult<Vec<bool>> {
    let rows = || batch.iter().map(|c| &c.row);
    let text = |f: fn(&GameRow) -> &str| Bind::TextArray(rows().map(f).collect());
    let opt_text = |f: fn(&GameRow) -> Option<&str>| Bind::OptTextArray(rows().map(f).collect());
    let big = |f: fn(&GameRow) -> i64| Bind::BigIntArray(rows().map(f).collect());
    let time =
        |f: fn(&GameRow) -> Option<NaiveDateTime>| Bind::OptTimestampArray(rows().map(f).collect());
    let actions = || batch.iter().flat_map(|c| &c.actions);
    let events = || batch.iter().flat_map(|c| &c.events);
    let notes = || {
        batch.iter().flat_map(|c| {
            c.notifications.iter().flat_map(move |(user, notes)| {
                notes
                    .iter()
                    .map(move |(kind, data)| (c.row.id.as_str(), user.as_str(), *kind, data))
            })
        })
    };
    let keys = || {
        batch.iter().filter_map(|c| {
            c.idempotency
                .as_ref()
                .map(|(user, key, hash, body)| (c.row.id.as_str(), user, key, hash, body))
        })
    };
    let query = Prepared::new(
        &COMMIT_PG_BATCH,
        vec![
            text(|r| &r.id),
            text(|r| r.status.as_str()),
            big(|r| r.version),
            opt_text(|r| r.seed.as_deref()),
            opt_text(|r| r.state.as_deref()),
            text(|r| &r.to_act),
            time(|r| r.deadline),
            Bind::IntArray(rows().map(|r| r.open_seats).collect()),
            big(|r| r.action_count),
            big(|r| r.event_count),
            opt_text(|r| r.result.as_deref()),
            opt_text(|r| r.abort_reason.as_deref()),
            Bind::OptTimestampArray(batch.iter().map(|c| Some(c.now)).collect()),
            time(|r| r.started_at),
            time(|r| r.finished_at),
            time(|r| r.reminder_at),
            text(|r| &r.round_plays),
            time(|r| r.wake_at),
            Bind::BigIntArray(batch.iter().map(|c| c.loaded.0).collect()),
            Bind::OptTimestampArray(batch.iter().map(|c| c.loaded.1).collect()),
            Bind::OptTextArray(batch.iter().map(|c| c.guard.caller.as_deref()).collect()),
            Bind::OptTextArray(
                batch
                    .iter()
                    .map(|c| c.guard.no_webhook.as_deref())
                    .collect(),
            ),
            Bind::TextArray(actions().map(|a| a.game_id.as_str()).collect()),
            Bind::BigIntArray(actions().map(|a| a.seq).collect()),
            Bind::IntArray(actions().map(|a| a.seat).collect()),
            Bind::TextArray(actions().map(|a| a.action.as_str()).collect()),
            Bind::TextArray(actions().map(|a| a.actor.as_str()).collect()),
            Bind::OptTextArray(actions().map(|a| a.user_id.as_deref()).collect()),
            Bind::TextArray(events().map(|e| e.game_id.as_str()).collect()),
            Bind::BigIntArray(events().map(|e| e.seq).collect()),
            Bind::TextArray(events().map(|e| e.kind.as_str()).collect()),
            Bind::TextArray(events().map(|e| e.data.as_str()).collect()),
            Bind::TextArray(notes().map(|n| n.0).collect()),
            Bind::TextArray(notes().map(|n| n.1).collect()),
            Bind::TextArray(notes().map(|n| n.2).collect()),
            Bind::TextArray(notes().map(|n| n.3.as_str()).collect()),
            Bind::TextArray(keys().map(|k| k.0).collect()),
            Bind::TextArray(keys().map(|k| k.1.as_str()).collect()),
            Bind::TextArray(keys().map(|k| k.2.as_str()).collect()),
            Bind::TextArray(keys().map(|k| k.3.as_str()).collect()),
            Bind::TextArray(keys().map(|k| k.4.as_str()).collect()),
        ],
    );
    let written: Vec<Written> = query.load(pg)?;
    Ok(batch
        .iter()
        .map(|c| written.iter().any(|w| w.id == c.row.id))
        .collect())
}

/// Writes back one seat.
pub fn save_seat(conn: &mut AnyConnection, seat: &SeatRow) -> QueryResult<()> {
    diesel::update(game_seats::table.find((&seat.game_id, seat.seat)))
        .set(seat)
        .execute(conn)
        .map(drop)
}

/// Appends actions (their `(game_id, seq)` key is unique: a duplicate fails the transaction).
pub fn append_actions(conn: &mut AnyConnection, rows: &[ActionRow]) -> QueryResult<()> {
    if !rows.is_empty() {
        batch_insert!(conn, game_actions::table, rows);
    }
    Ok(())
}

/// Appends events (unique `(game_id, seq)`).
pub fn append_events(conn: &mut AnyConnection, rows: &[EventRow]) -> QueryResult<()> {
    // SQLite limits bound parameters per statement; a round's events fit easily, but chunk
    // anyway so a long bot sequence never hits the limit.
    for chunk in rows.chunks(100) {
        batch_insert!(conn, game_events::table, chunk);
    }
    Ok(())
}

/// Events after `after`, at most `limit`.
pub fn events_after(
    conn: &mut AnyConnection,
    id: &str,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<EventRow>> {
    log_after!(conn, game_events, game_id = id, EventRow, (after, limit))
}

/// Every event of a game.
pub fn all_events(conn: &mut AnyConnection, id: &str) -> QueryResult<Vec<EventRow>> {
    events_after(conn, id, 0, i64::MAX)
}

/// Every action of a game, in order.
pub fn actions(conn: &mut AnyConnection, id: &str) -> QueryResult<Vec<ActionRow>> {
    game_actions::table
        .filter(game_actions::game_id.eq(id))
        .order(game_actions::seq.asc())
        .select(ActionRow::as_select())
        .load(conn)
}

/// The last event number of a game (cheap: for long-polls).
pub fn event_count(conn: &mut AnyConnection, id: &str) -> QueryResult<Option<i64>> {
    games::table
        .find(id)
        .select(games::event_count)
        .first(conn)
        .optional()
}

/// Public waiting games with open seats that `caller` may join (no one seated blocks them),
/// oldest first, after the keyset cursor; `friends_only`: those where a friend of the
/// caller sits.
pub fn lobby(
    conn: &mut AnyConnection,
    caller: &str,
    after: Option<Keyset>,
    friends_only: bool,
    limit: i64,
) -> QueryResult<Vec<Found>> {
    use super::schema::blocks;
    use super::schema::friend_requests as requests;
    // A table where someone who blocks the caller sits would only refuse them; one the
    // caller sits at already is theirs, whoever joined it since.
    let blockers = blocks::table
        .filter(blocks::blocked_id.eq(caller.to_owned()))
        .select(blocks::user_id.nullable());
    let mine = game_seats::table
        .filter(game_seats::user_id.eq(caller.to_owned()))
        .select(game_seats::game_id);
    let barred = game_seats::table
        .filter(game_seats::user_id.eq_any(blockers))
        .select(game_seats::game_id);
    let mut query = games::table
        .filter(games::status.eq(GameStatus::Waiting))
        .filter(games::visibility.eq(Visibility::Public))
        .filter(games::open_seats.gt(0))
        .filter(diesel::dsl::not(games::id.eq_any(barred)).or(games::id.eq_any(mine)))
        .into_boxed();
    if friends_only {
        let me = caller;
        // Friends: each has asked the other.
        let asked = requests::table
            .filter(requests::user_id.eq(me.to_owned()))
            .select(requests::other_id.nullable());
        let asking = requests::table
            .filter(requests::other_id.eq(me.to_owned()))
            .select(requests::user_id.nullable());
        let friends_games = game_seats::table
            .filter(game_seats::user_id.eq_any(asked))
            .filter(game_seats::user_id.eq_any(asking))
            .select(game_seats::game_id);
        query = query.filter(games::id.eq_any(friends_games));
    }
    page_of(conn, query, Direction::OldestFirst, after, limit)
}

/// Where a game stands in a user's list ([`for_user`]): the sort key of that list, so that
/// a page can go on strictly after the last game of the previous one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Urgency {
    /// The user holds the seat themself (not a bot for them) and it must act.
    pub my_turn: bool,
    /// The game's deadline; games without one come after those with one.
    pub deadline: Option<NaiveDateTime>,
    /// The game's last change; later first.
    pub updated_at: NaiveDateTime,
    /// The game's id, which breaks ties.
    pub id: String,
}

/// Where a page of [`for_user`] starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromGame {
    /// At the most urgent game.
    Start,
    /// Strictly after this game in the list's order (games that did not change meanwhile
    /// are neither skipped nor repeated).
    After(Urgency),
    /// After this many games: what cursors of earlier releases held, still honoured.
    Offset(i64),
}

/// 0 where the user's seat must act and the user holds it, else 1: the first key of
/// [`for_user`]'s order.
const TURN_RANK: &str = "CASE WHEN game_seats.user_id IS NOT NULL AND game_seats.bot_level IS NULL \
     AND games.to_act LIKE '%,' || CAST(game_seats.seat AS TEXT) || ',%' THEN 0 ELSE 1 END";
/// 1 for a game without a deadline, else 0: the second key.
const NO_DEADLINE_RANK: &str = "CASE WHEN games.deadline IS NULL THEN 1 ELSE 0 END";

/// The user's games (seated or invited) with the given statuses, most urgent first: the
/// user's turn, then the nearest deadline, then the latest change; each with the user's seat
/// and its place in that order.
pub fn for_user(
    conn: &mut AnyConnection,
    user_id: &str,
    statuses: &[GameStatus],
    from: FromGame,
    limit: i64,
) -> QueryResult<Vec<(Found, i32, Urgency)>> {
    use diesel::dsl::sql;
    use diesel::sql_types::Integer;
    let seats = seats_column(conn);
    let spectators = super::watchers::count_column(conn);
    let turn = || sql::<Integer>(TURN_RANK);
    let no_deadline = || sql::<Integer>(NO_DEADLINE_RANK);
    let mut query = games::table
        .inner_join(game_seats::table)
        .filter(
            game_seats::user_id
                .eq(user_id)
                .or(game_seats::invited_user_id.eq(user_id)),
        )
        .filter(games::status.eq_any(statuses))
        .order_by((
            turn(),
            no_deadline(),
            games::deadline.asc(),
            games::updated_at.desc(),
            games::id.asc(),
        ))
        .into_boxed();
    match from {
        FromGame::Start => {}
        FromGame::Offset(n) => query = query.offset(n),
        FromGame::After(at) => {
            let t = i32::from(!at.my_turn);
            let later_change = games::updated_at
                .lt(at.updated_at)
                .or(games::updated_at.eq(at.updated_at).and(games::id.gt(at.id)));
            // Spelled out key by key: the order mixes directions and a nullable column, which
            // a row-value comparison cannot express.
            query = match at.deadline {
                Some(deadline) => query.filter(
                    turn().gt(t).or(turn().eq(t).and(
                        no_deadline().gt(0).or(no_deadline().eq(0).and(
                            games::deadline
                                .gt(deadline)
                                .or(games::deadline.eq(deadline).and(later_change)),
                        )),
                    )),
                ),
                None => query.filter(
                    turn()
                        .gt(t)
                        .or(turn().eq(t).and(no_deadline().eq(1).and(later_change))),
                ),
            };
        }
    }
    let rows: Vec<(GameRow, Option<String>, i64, i32, i32)> = query
        .limit(limit)
        .select((
            GameRow::as_select(),
            seats,
            spectators,
            game_seats::seat,
            turn(),
        ))
        .load(conn)?;
    rows.into_iter()
        .map(|(row, seats, spectators, seat, turn)| {
            let place = Urgency {
                my_turn: turn == 0,
                deadline: row.deadline,
                updated_at: row.updated_at,
                id: row.id.clone(),
            };
            Ok((Found::listed(row, seats, spectators)?, seat, place))
        })
        .collect()
}

/// Every game id with a seed, for `leekha verify`.
pub fn started_ids(conn: &mut AnyConnection) -> QueryResult<Vec<String>> {
    games::table
        .filter(games::seed.is_not_null())
        .order(games::created_at.asc())
        .select(games::id)
        .load(conn)
}

/// A stored response for an idempotency key.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = idempotency_keys)]
pub struct IdempotentRow {
    /// Caller.
    pub user_id: String,
    /// Key.
    pub key: String,
    /// Fingerprint of the request.
    pub request_hash: String,
    /// Status.
    pub status: i32,
    /// Body.
    pub body: String,
    /// When.
    pub created_at: NaiveDateTime,
}

/// The stored response for this caller and key.
pub fn idempotent(
    conn: &mut AnyConnection,
    user_id: &str,
    key: &str,
) -> QueryResult<Option<IdempotentRow>> {
    idempotency_keys::table
        .find((user_id, key))
        .select(IdempotentRow::as_select())
        .first(conn)
        .optional()
}

/// Stores a response for retries.
pub fn store_idempotent(conn: &mut AnyConnection, row: &IdempotentRow) -> QueryResult<()> {
    diesel::insert_into(idempotency_keys::table)
        .values(row)
        .execute(conn)
        .map(drop)
}

/// Forgets responses older than `before`.
pub fn purge_idempotent(conn: &mut AnyConnection, before: NaiveDateTime) -> QueryResult<usize> {
    diesel::delete(idempotency_keys::table.filter(idempotency_keys::created_at.lt(before)))
        .execute(conn)
}

/// A running game's row with every optional column empty, for unit tests.
#[cfg(test)]
impl GameRow {
    pub(crate) fn sample(id: &str) -> Self {
        let epoch = chrono::DateTime::UNIX_EPOCH.naive_utc();
        Self {
            status: GameStatus::Active,
            version: 1,
            ..Self::new(id, "u", "{}".into(), Visibility::Private, 60, epoch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Option<NaiveDateTime> {
        chrono::DateTime::from_timestamp(secs, 0).map(|t| t.naive_utc())
    }

    fn row(deadline: i64, reminder: Option<i64>, wake: Option<i64>) -> GameRow {
        GameRow {
            deadline: at(deadline),
            reminder_at: reminder.and_then(at),
            wake_at: wake.and_then(at),
            ..GameRow::sample("g")
        }
    }

    #[test]
    fn the_wake_time_is_never_after_a_timer_and_stays_while_it_is_ahead() {
        let now = at(100).unwrap();
        // No wake time yet: the first timer.
        assert_eq!(row(200, Some(180), None).next_wake(now), at(180));
        // A wake time ahead of now and before the timers stays (no index change).
        assert_eq!(row(300, Some(280), Some(150)).next_wake(now), at(150));
        // One after the new timers is pulled in.
        assert_eq!(row(300, Some(280), Some(400)).next_wake(now), at(280));
        // One already past is replaced by the exact time.
        assert_eq!(row(300, Some(280), Some(90)).next_wake(now), at(280));
        // Without a reminder, the deadline.
        assert_eq!(row(300, None, None).next_wake(now), at(300));
        // Without timers, nothing to wake for.
        let mut done = row(0, None, Some(150));
        done.deadline = None;
        assert_eq!(done.next_wake(now), None);
    }
}
