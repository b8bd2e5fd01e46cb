//! Players' use cases on their own accounts: register, log in, guests, rotating refresh
//! tokens, log out, change or delete one's account. Administrators' use cases are in
//! [`crate::admin`].
//!
//! Each function blocks: argon2 takes a core for tens of milliseconds, so callers run them on
//! the blocking pool (`Db::run`). The hashing and checking of passwords happen before the
//! transaction opens, so no transaction waits on them. Rate limits key on the client's
//! address and stay with the HTTP layer, which checks them first.

use std::sync::Arc;

use crate::auth::tokens::{TokenKeys, hash_refresh_token, new_refresh_token};
use crate::auth::{Password, Role, Secret, Username, banned, verify_password};
use crate::db::users::{self, NewUser, RefreshTokenRow, Tokens, UserChange, UserRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;

/// What issues sessions: the keys that sign access tokens, and how long a refresh token
/// lives.
#[derive(Debug, Clone)]
pub struct Issuer {
    keys: Arc<TokenKeys>,
    refresh_ttl: chrono::Duration,
}

impl Issuer {
    /// Sessions signed with `keys`, whose refresh tokens expire after `refresh_ttl_days`.
    pub fn new(keys: Arc<TokenKeys>, refresh_ttl_days: i64) -> Self {
        Self {
            keys,
            refresh_ttl: chrono::Duration::days(refresh_ttl_days),
        }
    }

    /// Stores a new refresh token of `family` (a new family for a new login) and signs the
    /// pair; inside the caller's transaction.
    fn open(
        &self,
        conn: &mut AnyConnection,
        user: UserRow,
        family: Option<&str>,
    ) -> Result<Session, Error> {
        let now = db::now();
        let refresh_token = new_refresh_token();
        let id = uuid::Uuid::new_v4().to_string();
        let token = RefreshTokenRow {
            family_id: family.map_or_else(|| id.clone(), str::to_owned),
            id,
            user_id: user.id.clone(),
            token_hash: hash_refresh_token(&refresh_token),
            created_at: now,
            expires_at: now + self.refresh_ttl,
            spent_at: None,
            revoked_at: None,
        };
        users::insert_refresh(conn, &token)?;
        let role = Role::parse(&user.role).unwrap_or(Role::Player);
        Ok(Session {
            access_token: self.keys.issue(
                &user.id,
                role,
                now.and_utc().timestamp(),
                Some(&token.family_id),
            ),
            refresh_token,
            expires_in: self.keys.access_ttl_secs(),
            user,
        })
    }
}

/// A session just opened: the account and its token pair.
pub struct Session {
    /// The account, as stored when the session opened.
    pub user: UserRow,
    /// The signed access token (JWT).
    pub access_token: String,
    /// The refresh token in the clear; only its hash is stored, so this is the one copy.
    pub refresh_token: String,
    /// Seconds until the access token expires.
    pub expires_in: i64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tokens are credentials: keep them out of logs.
        f.debug_struct("Session")
            .field("user_id", &self.user.id)
            .finish_non_exhaustive()
    }
}

/// A new account with a password.
#[derive(Debug)]
pub struct NewAccount {
    /// Its username.
    pub username: Username,
    /// Its password.
    pub password: Password,
}

/// Changes to one's own account: a new username, a new password, or both.
#[derive(Debug)]
pub struct ProfileChange {
    username: Option<Username>,
    password: Option<Password>,
    current_password: Option<Secret>,
    refresh_token: Option<Secret>,
    session: Option<String>,
}

impl ProfileChange {
    /// A change of the username and/or the password; `current_password` proves the caller
    /// knows the password it replaces; `refresh_token`, the caller's own, names the session
    /// that a password change keeps.
    ///
    /// # Errors
    /// 400 `validation_failed` when it changes nothing.
    pub fn new(
        username: Option<Username>,
        password: Option<Password>,
        current_password: Option<String>,
        refresh_token: Option<String>,
    ) -> Result<Self, Error> {
        if username.is_none() && password.is_none() {
            return Err(Error::validation(
                "nothing to change: give username and/or password",
            ));
        }
        Ok(Self {
            username,
            password,
            current_password: current_password.map(Secret::new),
            refresh_token: refresh_token.map(Secret::new),
            session: None,
        })
    }

    /// The session the caller's access token names: a password change kept by a
    /// `refresh_token` of another session reports `session_kept: false`, as the caller's own
    /// session then ends.
    #[must_use]
    pub fn in_session(mut self, session: Option<String>) -> Self {
        self.session = session;
        self
    }

    /// Whether the change needs `current_password` checked: a new password for an account
    /// that has one.
    pub fn checks_password(&self, user: &UserRow) -> bool {
        self.password.is_some() && user.password_hash.is_some()
    }
}

/// The account after a [`ProfileChange`], and what became of its sessions.
#[derive(Debug)]
pub struct ProfileUpdate {
    /// The account as it is now.
    pub user: UserRow,
    /// How many sessions (refresh-token families) a password change ended; 0 otherwise.
    pub sessions_revoked: usize,
    /// Whether the caller's own session survives: `false` when a password change had no
    /// live refresh token of the caller to tell its session from the others, so it ended
    /// them all.
    pub session_kept: bool,
    /// The sessions (refresh-token families) the change ended, whose open streams end.
    pub ended_sessions: Vec<String>,
}

/// A taken username (ignoring case) is the unique key refusing the row.
fn username_taken(e: diesel::result::Error) -> Error {
    match e {
        diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        ) => Error::conflict("username_taken", "this username is taken"),
        other => other.into(),
    }
}

/// Inserts a player's account and opens its first session, in one transaction. An account
/// without a password is a guest.
fn open_account(
    conn: &mut AnyConnection,
    issuer: &Issuer,
    username: &str,
    username_key: &str,
    password_hash: Option<&str>,
) -> Result<Session, Error> {
    let now = db::now();
    let id = uuid::Uuid::new_v4().to_string();
    db::write_transaction(conn, |conn| {
        let account = NewUser {
            id: &id,
            username,
            username_key,
            password_hash,
            role: Role::Player.as_str(),
            is_guest: password_hash.is_none(),
            created_at: now,
            updated_at: now,
        };
        users::insert(conn, &account).map_err(username_taken)?;
        let user = users::by_id(conn, &id)?.ok_or_else(|| Error::internal("user vanished"))?;
        issuer.open(conn, user, None)
    })
}

/// Creates an account and logs it in.
///
/// # Errors
/// 409 `username_taken` (ignoring case).
pub fn register(
    conn: &mut AnyConnection,
    issuer: &Issuer,
    account: NewAccount,
) -> Result<Session, Error> {
    let hash = account.password.hash()?;
    let name = &account.username;
    open_account(conn, issuer, name.as_str(), &name.key(), Some(&hash))
}

/// A random guest username: `guest_` and 10 letters and digits, without the look-alikes
/// `l`, `o`, `0` and `1`, so a player can read it out.
fn guest_name() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let suffix: String = (0..10)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{}{suffix}", crate::auth::GUEST_PREFIX)
}

/// Creates a guest account with a random username and no password, and logs it in.
///
/// # Errors
/// 500 when five random names in a row are taken.
pub fn guest(conn: &mut AnyConnection, issuer: &Issuer) -> Result<Session, Error> {
    for _ in 0..5 {
        let name = guest_name();
        match open_account(conn, issuer, &name, &name, None) {
            Err(e) if e.code() == "username_taken" => continue,
            other => return other,
        }
    }
    Err(Error::internal("could not pick a free guest name"))
}

/// Logs in with a username (in any case) and a password, both as typed: a name that breaks
/// the rules matches no account. An unknown user and a wrong password get the same answer,
/// in the same time.
///
/// # Errors
/// 401 `invalid_credentials`; 403 `banned`.
pub fn login(
    conn: &mut AnyConnection,
    issuer: &Issuer,
    username: &str,
    password: &str,
) -> Result<Session, Error> {
    let user = users::by_username(conn, &username.to_ascii_lowercase())?;
    let hash = user.as_ref().and_then(|u| u.password_hash.as_deref());
    if !verify_password(password, hash) {
        return Err(Error::unauthorized(
            "invalid_credentials",
            "wrong username or password",
        ));
    }
    let user = user.ok_or_else(|| Error::internal("verified without a user"))?;
    if user.banned_at.is_some() {
        return Err(banned());
    }
    db::write_transaction(conn, |conn| issuer.open(conn, user, None))
}

/// Spends a refresh token for a new pair of the same family (rotation). A token presented
/// after it was spent revokes its whole family.
///
/// # Errors
/// 401 `invalid_token` for an unknown, revoked, spent or expired token or a deleted
/// account; 403 `banned`.
pub fn refresh(
    conn: &mut AnyConnection,
    issuer: &Issuer,
    refresh_token: &str,
) -> Result<Session, Error> {
    let hash = hash_refresh_token(refresh_token);
    // The inner error is a refusal that commits what it wrote (the token spent, a family
    // revoked); the outer one rolls back.
    db::write_transaction(conn, |conn| rotate(conn, issuer, &hash))?
}

/// The transaction of [`refresh`].
fn rotate(
    conn: &mut AnyConnection,
    issuer: &Issuer,
    hash: &str,
) -> Result<Result<Session, Error>, Error> {
    let now = db::now();
    let invalid = |detail: &str| Err(Error::unauthorized("invalid_token", detail));
    let Some(token) = users::refresh_by_hash(conn, hash)? else {
        return Ok(invalid("unknown refresh token"));
    };
    let Some(user) = users::by_id(conn, &token.user_id)?.filter(|u| u.deleted_at.is_none()) else {
        return Ok(invalid("the account no longer exists"));
    };
    // Before the token's own state: a ban revokes every token of the account, and the client
    // must learn to stop (403 `banned`), not to log in again.
    if user.banned_at.is_some() {
        return Ok(Err(banned()));
    }
    if token.revoked_at.is_some() {
        return Ok(invalid("this refresh token was revoked; log in again"));
    }
    if token.spent_at.is_some() || !users::spend_refresh(conn, &token.id, now)? {
        // A spent token presented again means it leaked or was replayed: end the whole
        // session, the copy in the thief's hands included.
        users::revoke(conn, Tokens::Family(&token.family_id), now)?;
        // Its streams end with it, the thief's included.
        db::wake::notify(conn, &[db::wake::session_topic(&token.family_id)])?;
        tracing::warn!(family = %token.family_id, user = %token.user_id, "refresh token reuse; family revoked");
        return Ok(invalid(
            "this refresh token was already used; the session is revoked, log in again",
        ));
    }
    if token.expires_at <= now {
        return Ok(invalid("this refresh token has expired; log in again"));
    }
    issuer.open(conn, user, Some(&token.family_id)).map(Ok)
}

/// Ends the session of this refresh token (its whole family), if the token is known; an
/// unknown one is no error, so a logout can be retried. Answers the session (its family id), whose
/// open streams end.
///
/// # Errors
/// Database errors only.
pub fn logout(conn: &mut AnyConnection, refresh_token: &str) -> Result<Option<String>, Error> {
    // One write, and revoking twice is revoking: no transaction needed.
    let Some(token) = users::refresh_by_hash(conn, &hash_refresh_token(refresh_token))? else {
        return Ok(None);
    };
    users::revoke(conn, Tokens::Family(&token.family_id), db::now())?;
    // Ends the session's open streams on every instance.
    db::wake::notify(conn, &[db::wake::session_topic(&token.family_id)])?;
    Ok(Some(token.family_id))
}

/// The session (refresh-token family) of `refresh_token` when it has ended: after a refusal
/// of a refresh, the caller ends that session's streams on this instance (a replayed token
/// revoked its family in the refusal's transaction).
///
/// # Errors
/// Database errors.
pub fn ended_session_of(
    conn: &mut AnyConnection,
    refresh_token: &str,
) -> Result<Option<String>, Error> {
    let Some(token) = users::refresh_by_hash(conn, &hash_refresh_token(refresh_token))? else {
        return Ok(None);
    };
    Ok((!users::family_open(conn, &token.family_id)?).then_some(token.family_id))
}

/// Whether the session (refresh-token family) `sid` is still open: not logged out, not
/// revoked by a ban, a deletion, a password change or a replayed refresh token.
///
/// # Errors
/// Database errors.
pub fn session_open(conn: &mut AnyConnection, sid: &str) -> Result<bool, Error> {
    Ok(users::family_open(conn, sid)?)
}

/// Applies a [`ProfileChange`] to `user`'s account and answers the account as it is now. A
/// guest that sets a password becomes a full account; an account that has a password needs
/// it to set another, and the change ends every other session of the account (a password
/// is changed when it may have leaked, and the sessions opened with it must not outlive
/// it). The caller's session is the family of the refresh token it sent; without one (or
/// with one that is not a live token of this account) every session ends.
///
/// # Errors
/// 400 `validation_failed` without `current_password` where one is needed; 403
/// `invalid_credentials` when it is wrong; 409 `username_taken`.
pub fn update_me(
    conn: &mut AnyConnection,
    user: &UserRow,
    change: ProfileChange,
) -> Result<ProfileUpdate, Error> {
    let replaces_password = change.checks_password(user);
    let new_hash = match &change.password {
        None => None,
        Some(password) => {
            if let Some(old) = user.password_hash.as_deref() {
                let current = change.current_password.as_ref().ok_or_else(|| {
                    Error::validation("current_password is required to change the password")
                })?;
                if !verify_password(current.expose(), Some(old)) {
                    return Err(Error::forbidden("the current password is wrong")
                        .with_code("invalid_credentials"));
                }
            }
            Some(password.hash()?)
        }
    };
    let own_hash = change
        .refresh_token
        .as_ref()
        .map(|t| hash_refresh_token(t.expose()));
    db::write_transaction(conn, |conn| {
        let now = db::now();
        // The password was judged against the account as read before this transaction (the
        // hash takes long, and no lock is held meanwhile). A password set since, by another
        // request at the same moment (a guest's upgrade sent twice), is judged as it would
        // be a moment later: without `current_password`, or with the old one, refused.
        if new_hash.is_some() {
            db::admin::lock_user(conn, &user.id)?;
            let hash_now = users::by_id(conn, &user.id)?.and_then(|u| u.password_hash);
            if hash_now != user.password_hash {
                return Err(match user.password_hash {
                    None => {
                        Error::validation("current_password is required to change the password")
                    }
                    Some(_) => Error::forbidden("the current password is wrong")
                        .with_code("invalid_credentials"),
                });
            }
        }
        if let Some(name) = &change.username {
            let key = name.key();
            let renamed = UserChange {
                username: Some(name.as_str()),
                username_key: Some(&key),
                ..UserChange::at(now)
            };
            users::update(conn, &user.id, &renamed).map_err(username_taken)?;
        }
        let mut sessions_revoked = 0;
        let mut session_kept = true;
        let mut ended_sessions = Vec::new();
        if let Some(hash) = &new_hash {
            users::set_password(conn, &user.id, hash, now)?;
            if replaces_password {
                let keep = match &own_hash {
                    Some(h) => users::refresh_by_hash(conn, h)?.filter(|t| {
                        t.user_id == user.id
                            && t.revoked_at.is_none()
                            && t.spent_at.is_none()
                            && t.expires_at > now
                    }),
                    None => None,
                }
                .map(|t| t.family_id);
                let live = users::live_families(conn, &user.id, now)?;
                let open = users::open_families(conn, &user.id)?;
                let others = Tokens::User {
                    user_id: &user.id,
                    except: keep.as_deref(),
                };
                users::revoke(conn, others, now)?;
                // The ended sessions' streams end too: on the other instances by this
                // wake-up, on this one by the caller's after the commit.
                ended_sessions = open
                    .into_iter()
                    .filter(|f| Some(f) != keep.as_ref())
                    .collect();
                let topics: Vec<String> = ended_sessions
                    .iter()
                    .map(|f| db::wake::session_topic(f))
                    .collect();
                db::wake::notify(conn, &topics)?;
                sessions_revoked = live.iter().filter(|f| Some(*f) != keep.as_ref()).count();
                session_kept = match (&keep, &change.session) {
                    (Some(kept), Some(mine)) => kept == mine,
                    (kept, None) => kept.is_some(),
                    (None, Some(_)) => false,
                };
                tracing::info!(user = %user.id, sessions_revoked, session_kept, "password changed; other sessions revoked");
            }
        }
        let user = users::by_id(conn, &user.id)?.ok_or_else(|| Error::internal("user vanished"))?;
        Ok(ProfileUpdate {
            user,
            sessions_revoked,
            session_kept,
            ended_sessions,
        })
    })
}

/// Deletes the account `user_id`: its sessions end, its username is freed, its past games
/// keep their record, and it withdraws from the games not over yet ([`crate::games::withdraw`]):
/// what those games committed, to announce.
///
/// # Errors
/// Database errors only.
pub fn delete_me(
    conn: &mut AnyConnection,
    user_id: &str,
) -> Result<Vec<crate::games::Committed>, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        users::mark_deleted(conn, user_id, now)?;
        users::revoke(conn, Tokens::of_user(user_id), now)?;
        db::wake::notify(conn, &[db::wake::account_topic(user_id)])?;
        Ok::<_, Error>(())
    })?;
    // After the account's commit: a game's lock is never taken while holding the user's.
    crate::games::withdraw(conn, user_id)
}
