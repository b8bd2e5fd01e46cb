//! Administration: the audit log, user and game searches, bans and roles, statistics.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::keyset::{self, Direction, Keyset};
use super::schema::{audit_log, game_actions, game_seats, games, users};
use super::types::GameStatus;
use super::users::UserRow;

diesel::define_sql_function! {
    /// SQL `lower(text)`: the same on both engines for ASCII.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

/// A row of `audit_log`.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_log)]
pub struct AuditRow {
    /// UUID.
    pub id: String,
    /// The administrator.
    pub admin_id: String,
    /// What was done.
    pub action: String,
    /// `user` or `game`.
    pub target_type: String,
    /// The user or game id.
    pub target_id: String,
    /// Why.
    pub reason: Option<String>,
    /// JSON object.
    pub details: String,
    /// When.
    pub created_at: NaiveDateTime,
}

/// Appends an audit entry. Call it inside the transaction of the action it records.
pub fn insert_audit(conn: &mut AnyConnection, row: &AuditRow) -> QueryResult<()> {
    diesel::insert_into(audit_log::table)
        .values(row)
        .execute(conn)
        .map(drop)
}

/// Audit entries, newest first, strictly before the keyset position.
pub fn audit_page(
    conn: &mut AnyConnection,
    action: Option<&str>,
    target_id: Option<&str>,
    before: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<AuditRow>> {
    let mut query = audit_log::table.into_boxed();
    if let Some(action) = action {
        query = query.filter(audit_log::action.eq(action.to_owned()));
    }
    if let Some(target) = target_id {
        query = query.filter(audit_log::target_id.eq(target.to_owned()));
    }
    keyset::page(
        query,
        audit_log::created_at,
        audit_log::id,
        Direction::NewestFirst,
        before,
    )
    .limit(limit)
    .select(AuditRow::as_select())
    .load(conn)
}

/// Escapes `%`, `_` and `\` for a `LIKE … ESCAPE '\'` pattern.
fn like_pattern(needle: &str) -> String {
    let mut out = String::with_capacity(needle.len() + 2);
    out.push('%');
    for c in needle.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// Accounts whose username contains `needle` (ignoring case), deleted ones included, newest
/// first, strictly before the keyset position.
pub fn search_users(
    conn: &mut AnyConnection,
    needle: Option<&str>,
    before: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<UserRow>> {
    let mut query = users::table.into_boxed();
    if let Some(needle) = needle.filter(|n| !n.is_empty()) {
        query = query.filter(
            lower(users::username)
                .like(like_pattern(needle))
                .escape('\\'),
        );
    }
    keyset::page(
        query,
        users::created_at,
        users::id,
        Direction::NewestFirst,
        before,
    )
    .limit(limit)
    .select(UserRow::as_select())
    .load(conn)
}

/// Takes the account's write lock for the rest of the transaction: a row lock on PostgreSQL,
/// the database write lock on SQLite. Like [`super::games::lock`], it must be the
/// transaction's first statement on SQLite, unless the transaction is a
/// [`super::write_transaction`], which takes that lock first. A transaction that also
/// locks a game takes the game's lock first, and several accounts' in id order. Returns
/// whether the account exists.
pub fn lock_user(conn: &mut AnyConnection, id: &str) -> QueryResult<bool> {
    let n = diesel::update(users::table.find(id))
        .set(users::updated_at.eq(users::updated_at))
        .execute(conn)?;
    Ok(n == 1)
}

/// Which accounts [`lock_in_id_order`] locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accounts {
    /// Every one that exists ([`lock_user`]).
    Any,
    /// Only live, unbanned ones ([`lock_live_user`]).
    Live,
}

/// Takes the locks of several accounts in id order, after the game's when the transaction
/// holds one: the order of every transaction that holds several (a creation, a join, a
/// start, a rematch, friends and blocks, ratings, an administrator's action), so that two
/// which meet the same accounts wait for each other instead of deadlocking, and a ban, a
/// deletion, a block or going away, which take the account's lock, comes wholly before or
/// wholly after. Returns the accounts it did not lock (unknown, or not live with
/// [`Accounts::Live`]).
pub fn lock_in_id_order<'a>(
    conn: &mut AnyConnection,
    ids: impl IntoIterator<Item = &'a str>,
    which: Accounts,
) -> QueryResult<Vec<&'a str>> {
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    let mut missed = Vec::new();
    for id in ids {
        let locked = match which {
            Accounts::Any => lock_user(conn, id)?,
            Accounts::Live => lock_live_user(conn, id)?,
        };
        if !locked {
            missed.push(id);
        }
    }
    Ok(missed)
}

/// Locks the row of a live, unbanned account until the end of the transaction; `false`
/// (and no lock) when the account is banned, deleted or unknown. A ban takes the same lock,
/// so a change made under it either commits before the ban (which then sees it) or sees
/// the ban.
pub fn lock_live_user(conn: &mut AnyConnection, id: &str) -> QueryResult<bool> {
    let n = diesel::update(
        users::table
            .find(id)
            .filter(users::banned_at.is_null())
            .filter(users::deleted_at.is_null()),
    )
    .set(users::updated_at.eq(users::updated_at))
    .execute(conn)?;
    Ok(n == 1)
}

/// Bans a live account that is not banned yet; `false` when there is none such.
pub fn ban(
    conn: &mut AnyConnection,
    id: &str,
    reason: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    let n = diesel::update(users::table.find(id))
        .filter(users::banned_at.is_null())
        .filter(users::deleted_at.is_null())
        .set((
            users::banned_at.eq(now),
            users::ban_reason.eq(reason),
            users::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(n == 1)
}

/// Lifts the ban of a banned account; `false` when it was not banned.
pub fn unban(conn: &mut AnyConnection, id: &str, now: NaiveDateTime) -> QueryResult<bool> {
    let n = diesel::update(users::table.find(id))
        .filter(users::banned_at.is_not_null())
        .set((
            users::banned_at.eq(None::<NaiveDateTime>),
            users::ban_reason.eq(None::<String>),
            users::updated_at.eq(now),
        ))
        .execute(conn)?;
    Ok(n == 1)
}

/// Games with one of `statuses` (all when empty) in which `player` holds or held a seat,
/// newest first, strictly before the keyset position.
pub fn search_games(
    conn: &mut AnyConnection,
    statuses: &[GameStatus],
    player: Option<&str>,
    before: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<super::games::Found>> {
    let mut query = games::table.into_boxed();
    if !statuses.is_empty() {
        query = query.filter(games::status.eq_any(statuses.to_vec()));
    }
    if let Some(player) = player {
        let seated = game_seats::table
            .filter(game_seats::user_id.eq(player.to_owned()))
            .select(game_seats::game_id);
        query = query.filter(games::id.eq_any(seated));
    }
    super::games::page_of(conn, query, Direction::NewestFirst, before, limit)
}

/// Counts for the statistics page.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Live (not deleted) accounts.
    pub users: i64,
    /// Of those, banned.
    pub banned: i64,
    /// Of those, administrators.
    pub admins: i64,
    /// Of those, guests.
    pub guests: i64,
    /// Games by stored status.
    pub games_by_status: Vec<(GameStatus, i64)>,
    /// Actions applied since the given hour mark.
    pub actions_last_hour: i64,
    /// Actions applied since the given day mark.
    pub actions_last_day: i64,
}

/// The statistics as of `now`.
pub fn stats(conn: &mut AnyConnection, now: NaiveDateTime) -> QueryResult<Stats> {
    let live = users::table.filter(users::deleted_at.is_null());
    let users_n: i64 = live.count().get_result(conn)?;
    let banned: i64 = live
        .filter(users::banned_at.is_not_null())
        .count()
        .get_result(conn)?;
    let admins: i64 = live
        .filter(users::role.eq("admin"))
        .count()
        .get_result(conn)?;
    let guests: i64 = live
        .filter(users::is_guest.eq(true))
        .count()
        .get_result(conn)?;
    let games_by_status: Vec<(GameStatus, i64)> = games::table
        .group_by(games::status)
        .select((games::status, diesel::dsl::count_star()))
        .load(conn)?;
    let since = |d: chrono::Duration| {
        game_actions::table
            .filter(game_actions::created_at.gt(now - d))
            .count()
    };
    let actions_last_hour: i64 = since(chrono::Duration::hours(1)).get_result(conn)?;
    let actions_last_day: i64 = since(chrono::Duration::days(1)).get_result(conn)?;
    Ok(Stats {
        users: users_n,
        banned,
        admins,
        guests,
        games_by_status,
        actions_last_hour,
        actions_last_day,
    })
}

/// How many games are being played now (a cheap `COUNT`, for the metrics scrape).
pub fn active_games(conn: &mut AnyConnection) -> QueryResult<i64> {
    games::table
        .filter(games::status.eq(GameStatus::Active))
        .count()
        .get_result(conn)
}
