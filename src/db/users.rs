//! Accounts and refresh tokens.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::schema::{refresh_tokens, users};

/// A row of `users`.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = users)]
pub struct UserRow {
    /// UUID.
    pub id: String,
    /// As entered.
    pub username: String,
    /// Lower-cased.
    pub username_key: String,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// `player` / `admin`.
    pub role: String,
    /// A guest not upgraded yet.
    pub is_guest: bool,
    /// Banned since.
    pub banned_at: Option<NaiveDateTime>,
    /// Ban reason.
    pub ban_reason: Option<String>,
    /// Deleted since.
    pub deleted_at: Option<NaiveDateTime>,
    /// Finished games.
    pub games_played: i32,
    /// Games won.
    pub games_won: i32,
    /// Created.
    pub created_at: NaiveDateTime,
    /// Updated.
    pub updated_at: NaiveDateTime,
    /// Away until then (bots play the user's seats); may lie in the past until the scheduler
    /// clears it.
    pub away_until: Option<NaiveDateTime>,
    /// Muted (no chat) until then.
    pub muted_until: Option<NaiveDateTime>,
    /// Why.
    pub mute_reason: Option<String>,
}

/// A new account.
#[derive(Debug, Insertable)]
#[diesel(table_name = users)]
pub struct NewUser<'a> {
    /// UUID.
    pub id: &'a str,
    /// As entered.
    pub username: &'a str,
    /// Lower-cased.
    pub username_key: &'a str,
    /// Hash, if any.
    pub password_hash: Option<&'a str>,
    /// Role.
    pub role: &'a str,
    /// Guest?
    pub is_guest: bool,
    /// Now.
    pub created_at: NaiveDateTime,
    /// Now.
    pub updated_at: NaiveDateTime,
}

/// Inserts an account; a taken username is a unique violation.
pub fn insert(conn: &mut AnyConnection, user: &NewUser<'_>) -> QueryResult<()> {
    diesel::insert_into(users::table)
        .values(user)
        .execute(conn)
        .map(drop)
}

/// The account with this id, deleted or not.
pub fn by_id(conn: &mut AnyConnection, id: &str) -> QueryResult<Option<UserRow>> {
    users::table
        .find(id)
        .select(UserRow::as_select())
        .first(conn)
        .optional()
}

/// The live (not deleted) account with this username, ignoring case.
pub fn by_username(conn: &mut AnyConnection, username_key: &str) -> QueryResult<Option<UserRow>> {
    users::table
        .filter(users::username_key.eq(username_key))
        .filter(users::deleted_at.is_null())
        .select(UserRow::as_select())
        .first(conn)
        .optional()
}

/// A row of `refresh_tokens`.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = refresh_tokens)]
pub struct RefreshTokenRow {
    /// UUID.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// Family.
    pub family_id: String,
    /// Hash.
    pub token_hash: String,
    /// Issued.
    pub created_at: NaiveDateTime,
    /// Expiry.
    pub expires_at: NaiveDateTime,
    /// Spent by rotation.
    pub spent_at: Option<NaiveDateTime>,
    /// Revoked.
    pub revoked_at: Option<NaiveDateTime>,
}

/// Stores a refresh token.
pub fn insert_refresh(conn: &mut AnyConnection, token: &RefreshTokenRow) -> QueryResult<()> {
    diesel::insert_into(refresh_tokens::table)
        .values(token)
        .execute(conn)
        .map(drop)
}

/// The refresh token with this hash.
pub fn refresh_by_hash(
    conn: &mut AnyConnection,
    hash: &str,
) -> QueryResult<Option<RefreshTokenRow>> {
    refresh_tokens::table
        .filter(refresh_tokens::token_hash.eq(hash))
        .select(RefreshTokenRow::as_select())
        .first(conn)
        .optional()
}

/// Marks a token spent if nobody spent it first; `false` when another request won.
pub fn spend_refresh(conn: &mut AnyConnection, id: &str, now: NaiveDateTime) -> QueryResult<bool> {
    let n = diesel::update(refresh_tokens::table)
        .filter(refresh_tokens::id.eq(id))
        .filter(refresh_tokens::spent_at.is_null())
        .filter(refresh_tokens::revoked_at.is_null())
        .set(refresh_tokens::spent_at.eq(now))
        .execute(conn)?;
    Ok(n == 1)
}

/// Which refresh tokens [`revoke`] revokes.
#[derive(Debug, Clone, Copy)]
pub enum Tokens<'a> {
    /// Every token of a family: one login and its rotations.
    Family(&'a str),
    /// Every token of a user (a ban, a deletion), but those of the family `except` (a
    /// password change keeps the session that made it).
    User {
        /// The user.
        user_id: &'a str,
        /// The family kept.
        except: Option<&'a str>,
    },
}

impl<'a> Tokens<'a> {
    /// Every token of the user.
    pub fn of_user(user_id: &'a str) -> Self {
        Self::User {
            user_id,
            except: None,
        }
    }
}

/// Revokes the tokens `which` names that are not revoked yet; how many.
pub fn revoke(
    conn: &mut AnyConnection,
    which: Tokens<'_>,
    now: NaiveDateTime,
) -> QueryResult<usize> {
    let live = diesel::update(refresh_tokens::table)
        .filter(refresh_tokens::revoked_at.is_null())
        .into_boxed();
    let chosen = match which {
        Tokens::Family(family_id) => live.filter(refresh_tokens::family_id.eq(family_id)),
        Tokens::User { user_id, except } => {
            let of_user = live.filter(refresh_tokens::user_id.eq(user_id));
            match except {
                Some(keep) => of_user.filter(refresh_tokens::family_id.ne(keep)),
                None => of_user,
            }
        }
    };
    chosen.set(refresh_tokens::revoked_at.eq(now)).execute(conn)
}

/// Whether a refresh-token family still has a token that is not revoked.
pub fn family_open(conn: &mut AnyConnection, family_id: &str) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        refresh_tokens::table
            .filter(refresh_tokens::family_id.eq(family_id))
            .filter(refresh_tokens::revoked_at.is_null()),
    ))
    .get_result(conn)
}

/// The families of `user_id` with a token not revoked: the sessions whose access tokens
/// and streams are still good.
pub fn open_families(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<String>> {
    refresh_tokens::table
        .filter(refresh_tokens::user_id.eq(user_id))
        .filter(refresh_tokens::revoked_at.is_null())
        .select(refresh_tokens::family_id)
        .distinct()
        .load(conn)
}

/// The families of `user_id` that can still refresh (a token neither spent, revoked nor
/// expired): the user's live sessions.
pub fn live_families(
    conn: &mut AnyConnection,
    user_id: &str,
    now: NaiveDateTime,
) -> QueryResult<Vec<String>> {
    refresh_tokens::table
        .filter(refresh_tokens::user_id.eq(user_id))
        .filter(refresh_tokens::revoked_at.is_null())
        .filter(refresh_tokens::spent_at.is_null())
        .filter(refresh_tokens::expires_at.gt(now))
        .select(refresh_tokens::family_id)
        .distinct()
        .load(conn)
}

/// The columns of `users` an update sets (`None`: left as it is) besides `updated_at`, which
/// every update sets. A username's key is its lower-cased form, unique.
#[derive(Debug, AsChangeset)]
#[diesel(table_name = users)]
pub struct UserChange<'a> {
    /// As entered.
    pub username: Option<&'a str>,
    /// Lower-cased.
    pub username_key: Option<&'a str>,
    /// Argon2id PHC string.
    pub password_hash: Option<&'a str>,
    /// A guest not upgraded yet.
    pub is_guest: Option<bool>,
    /// `player` / `admin`.
    pub role: Option<&'a str>,
    /// Deleted since.
    pub deleted_at: Option<NaiveDateTime>,
    /// Away until then (`Some(None)`: back).
    pub away_until: Option<Option<NaiveDateTime>>,
    /// Muted until then (`Some(None)`: not muted).
    pub muted_until: Option<Option<NaiveDateTime>>,
    /// Why.
    pub mute_reason: Option<Option<&'a str>>,
    /// Where notifications are POSTed (`Some(None)`: nowhere).
    pub webhook_url: Option<Option<&'a str>>,
    /// The webhook's signing secret.
    pub webhook_secret: Option<Option<&'a str>>,
    /// When the change is made.
    pub updated_at: NaiveDateTime,
}

impl UserChange<'_> {
    /// A change of nothing but `updated_at`, to fill in.
    pub fn at(now: NaiveDateTime) -> Self {
        Self {
            username: None,
            username_key: None,
            password_hash: None,
            is_guest: None,
            role: None,
            deleted_at: None,
            away_until: None,
            muted_until: None,
            mute_reason: None,
            webhook_url: None,
            webhook_secret: None,
            updated_at: now,
        }
    }
}

/// Writes `change` to the user `id`; how many rows it changed (0: no such user).
pub fn update(conn: &mut AnyConnection, id: &str, change: &UserChange<'_>) -> QueryResult<usize> {
    diesel::update(users::table.find(id))
        .set(change)
        .execute(conn)
}

/// Sets a user's password hash; a guest with a password is a full account.
pub fn set_password(
    conn: &mut AnyConnection,
    id: &str,
    hash: &str,
    now: NaiveDateTime,
) -> QueryResult<()> {
    let change = UserChange {
        password_hash: Some(hash),
        is_guest: Some(false),
        ..UserChange::at(now)
    };
    update(conn, id, &change).map(drop)
}

/// Marks a user deleted and frees the username.
pub fn mark_deleted(conn: &mut AnyConnection, id: &str, now: NaiveDateTime) -> QueryResult<()> {
    let freed_key = format!("deleted:{id}");
    let change = UserChange {
        deleted_at: Some(now),
        username_key: Some(&freed_key),
        ..UserChange::at(now)
    };
    update(conn, id, &change).map(drop)
}

/// Counts a finished game in a player's statistics.
pub fn record_result(conn: &mut AnyConnection, id: &str, won: bool) -> QueryResult<()> {
    diesel::update(users::table.find(id))
        .set((
            users::games_played.eq(users::games_played + 1),
            users::games_won.eq(users::games_won + i32::from(won)),
        ))
        .execute(conn)
        .map(drop)
}

/// Sets or clears the time the user is away until.
pub fn set_away(
    conn: &mut AnyConnection,
    user_id: &str,
    until: Option<NaiveDateTime>,
    now: NaiveDateTime,
) -> QueryResult<usize> {
    let change = UserChange {
        away_until: Some(until),
        ..UserChange::at(now)
    };
    update(conn, user_id, &change)
}

/// Which of `among` are away at `now`.
pub fn away_among(
    conn: &mut AnyConnection,
    among: &[String],
    now: NaiveDateTime,
) -> QueryResult<Vec<String>> {
    if among.is_empty() {
        return Ok(Vec::new());
    }
    users::table
        .filter(users::id.eq_any(among))
        .filter(users::away_until.gt(now))
        .select(users::id)
        .load(conn)
}

/// Users whose time away has passed by `now`, at most `limit`.
pub fn back_from_away(
    conn: &mut AnyConnection,
    now: NaiveDateTime,
    limit: i64,
) -> QueryResult<Vec<String>> {
    users::table
        .filter(users::away_until.le(now))
        .order(users::away_until.asc())
        .limit(limit)
        .select(users::id)
        .load(conn)
}

/// Mutes the user until `until` (`None`: lifts the mute).
pub fn set_muted(
    conn: &mut AnyConnection,
    user_id: &str,
    until: Option<NaiveDateTime>,
    reason: Option<&str>,
    now: NaiveDateTime,
) -> QueryResult<usize> {
    let change = UserChange {
        muted_until: Some(until),
        mute_reason: Some(reason),
        ..UserChange::at(now)
    };
    // A deleted account is no one to mute (0 rows: the caller's 404).
    diesel::update(
        users::table
            .find(user_id)
            .filter(users::deleted_at.is_null()),
    )
    .set(&change)
    .execute(conn)
}
