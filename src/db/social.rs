//! Friend requests and blocks between users.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::keyset::{self, Direction, Keyset};
use super::schema::{blocks, friend_requests, users};

/// Another user as a list shows them: id, username, since when.
pub type Related = (String, String, NaiveDateTime);

/// Adds the row (`user_id`, `$other` = `$other_id`, `created_at`) to a relation table;
/// `false` when the pair was there already (a concurrent twin included).
macro_rules! relate {
    ($conn:expr, $table:ident, $user_id:expr, $other:ident = $other_id:expr, $now:expr) => {{
        let row = (
            $table::user_id.eq($user_id),
            $table::$other.eq($other_id),
            $table::created_at.eq($now),
        );
        insert_or_skip!($conn, $table::table, row)
    }};
}

/// The live users a relation table (`user_id`, the other user's id, `created_at`) links to
/// one user, by username, as [`Related`]: the users in column `$them` of the rows whose
/// column `$me` is `$user_id`.
macro_rules! related {
    ($conn:expr, $table:ident, $me:ident = $user_id:expr, listing $them:ident) => {
        $table::table
            .inner_join(users::table.on(users::id.eq($table::$them)))
            .filter($table::$me.eq($user_id))
            .filter(users::deleted_at.is_null())
            .order(users::username_key.asc())
            .select((users::id, users::username, $table::created_at))
            .load($conn)
    };
}

/// Records `user_id`'s request to `other_id`; `false` when it was there already (a
/// concurrent twin included).
pub fn insert_request(
    conn: &mut AnyConnection,
    user_id: &str,
    other_id: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    relate!(conn, friend_requests, user_id, other_id = other_id, now)
}

/// When `user_id` asked `other_id`, if they did.
pub fn requested_at(
    conn: &mut AnyConnection,
    user_id: &str,
    other_id: &str,
) -> QueryResult<Option<NaiveDateTime>> {
    friend_requests::table
        .find((user_id, other_id))
        .select(friend_requests::created_at)
        .first(conn)
        .optional()
}

/// When `user_id` blocked `blocked_id`, if they do.
pub fn blocked_at(
    conn: &mut AnyConnection,
    user_id: &str,
    blocked_id: &str,
) -> QueryResult<Option<NaiveDateTime>> {
    blocks::table
        .find((user_id, blocked_id))
        .select(blocks::created_at)
        .first(conn)
        .optional()
}

/// Removes the requests between the two users, both ways; how many there were.
pub fn delete_requests(conn: &mut AnyConnection, a: &str, b: &str) -> QueryResult<usize> {
    diesel::delete(
        friend_requests::table.filter(
            (friend_requests::user_id
                .eq(a)
                .and(friend_requests::other_id.eq(b)))
            .or(friend_requests::user_id
                .eq(b)
                .and(friend_requests::other_id.eq(a))),
        ),
    )
    .execute(conn)
}

/// How many requests `user_id` has made (friendships included) or received.
pub fn request_count(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    friend_requests::table
        .filter(
            friend_requests::user_id
                .eq(user_id)
                .or(friend_requests::other_id.eq(user_id)),
        )
        .count()
        .get_result(conn)
}

/// The users `user_id` has asked (the request's time), live accounts only, by username.
pub fn asked_by(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<Related>> {
    related!(conn, friend_requests, user_id = user_id, listing other_id)
}

/// The users who asked `user_id` (the request's time), live accounts only, by username.
pub fn asking(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<Related>> {
    related!(conn, friend_requests, other_id = user_id, listing user_id)
}

/// Records that `user_id` blocks `blocked_id`; `false` when it did already.
pub fn insert_block(
    conn: &mut AnyConnection,
    user_id: &str,
    blocked_id: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    relate!(conn, blocks, user_id, blocked_id = blocked_id, now)
}

/// Lifts `user_id`'s block of `blocked_id`; whether there was one.
pub fn delete_block(
    conn: &mut AnyConnection,
    user_id: &str,
    blocked_id: &str,
) -> QueryResult<bool> {
    diesel::delete(blocks::table.find((user_id, blocked_id)))
        .execute(conn)
        .map(|n| n > 0)
}

/// How many users `user_id` blocks.
pub fn block_count(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    blocks::table
        .filter(blocks::user_id.eq(user_id))
        .count()
        .get_result(conn)
}

/// A page of the users `user_id` blocks (live accounts), the latest blocked first, strictly
/// before the keyset `(blocked at, their id)` when given.
pub fn blocked_by(
    conn: &mut AnyConnection,
    user_id: &str,
    before: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<Related>> {
    let query = blocks::table
        .inner_join(users::table.on(users::id.eq(blocks::blocked_id)))
        .filter(blocks::user_id.eq(user_id))
        .filter(users::deleted_at.is_null())
        .into_boxed();
    keyset::page(
        query,
        blocks::created_at,
        blocks::blocked_id,
        Direction::NewestFirst,
        before,
    )
    .limit(limit)
    .select((users::id, users::username, blocks::created_at))
    .load(conn)
}

/// Which of `users` block `user_id`.
pub fn blockers_among(
    conn: &mut AnyConnection,
    user_id: &str,
    among: &[String],
) -> QueryResult<Vec<String>> {
    if among.is_empty() {
        return Ok(Vec::new());
    }
    blocks::table
        .filter(blocks::blocked_id.eq(user_id))
        .filter(blocks::user_id.eq_any(among))
        .select(blocks::user_id)
        .load(conn)
}

/// Whether `user_id` blocks `other_id`.
pub fn blocks(conn: &mut AnyConnection, user_id: &str, other_id: &str) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(blocks::table.find((user_id, other_id)))).get_result(conn)
}
