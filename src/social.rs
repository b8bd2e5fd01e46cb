//! Friends and blocks: who plays with whom.
//!
//! Two requests make friends: each user asks the other (`PUT /me/friends/{username}`), in
//! either order; the second request turns both into a friendship. A block keeps a user away
//! from the blocker: the blocked user cannot join a game where the blocker sits, invite the
//! blocker, or send them a friend request. Blocking ends any friendship or request between
//! the two; the game service then withdraws the blocked user's invitations to the blocker's
//! waiting tables ([`crate::games::block`]). Games already under way are left alone.

use chrono::NaiveDateTime;
use serde_json::json;

use crate::db::{self, AnyConnection, social as store};
use crate::error::{Error, Kind};
use crate::notifications::{self, Kind as NotificationKind, Pending};

/// How many friend requests (made or received, friendships included) a user may have.
pub const MAX_FRIEND_REQUESTS: i64 = 500;

/// How many users a user may block.
pub const MAX_BLOCKS: i64 = 1000;

/// Another user as the caller's lists show them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// Their id.
    pub id: String,
    /// Their username.
    pub username: String,
    /// Since when the relation holds (for a friendship: when the second request came).
    pub since: NaiveDateTime,
}

impl From<store::Related> for Person {
    fn from((id, username, since): store::Related) -> Self {
        Self {
            id,
            username,
            since,
        }
    }
}

/// The caller's friends and pending requests.
#[derive(Debug, Clone, Default)]
pub struct Friends {
    /// Both asked.
    pub friends: Vec<Person>,
    /// They asked the caller.
    pub incoming: Vec<Person>,
    /// The caller asked them.
    pub outgoing: Vec<Person>,
}

/// Where a friend request left the two users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The caller has asked; the other has not (yet).
    Requested,
    /// Both have asked.
    Friends,
}

/// The outcome of a friend request or a block.
#[derive(Debug, Clone)]
pub struct Changed<T> {
    /// What holds now.
    pub value: T,
    /// Whether the request changed anything (`false`: it held already).
    pub created: bool,
    /// The other user.
    pub other: Person,
    /// Users whose feed got a notification (wake their long-polls after the commit).
    pub notified: Vec<String>,
}

/// 403 `blocked`.
pub fn blocked(detail: impl Into<String>) -> Error {
    Error::new(Kind::Forbidden, "blocked", detail)
}

/// The live account named `username`, not the caller's own.
fn other_user(
    conn: &mut AnyConnection,
    me: &str,
    username: &str,
) -> Result<db::users::UserRow, Error> {
    let user = db::users::by_username(conn, &username.to_ascii_lowercase())?
        .ok_or_else(|| Error::not_found(format!("no user named {username:?}")))?;
    if user.id == me {
        return Err(Error::validation("that is your own account"));
    }
    Ok(user)
}

/// The live account named `username` ([`other_user`]), with both accounts' locks taken in
/// id order, as every transaction that holds several takes them: what passes between two
/// users (requests both ways, a block meeting a request) is then judged one after the
/// other, and each user's counts stay true until the write. On SQLite the write lock
/// serializes them already.
fn locked_pair(
    conn: &mut AnyConnection,
    me: &str,
    username: &str,
) -> Result<db::users::UserRow, Error> {
    let other = other_user(conn, me, username)?;
    db::admin::lock_in_id_order(conn, [me, other.id.as_str()], db::admin::Accounts::Any)?;
    Ok(other)
}

/// `me` asks `username` to be friends; when they had asked `me`, the two are friends now.
/// A new request notifies the other user (`friend_request`), unless `me`'s request
/// notified them within [`REQUEST_QUIET`] (withdrawn or declined since): asking, withdrawing
/// and asking again must not become a way to flood someone's feed and phone.
///
/// # Errors
/// 404 for an unknown or banned user; 400 for the caller's own name; 403 `blocked` when
/// either blocks the other; 409 `too_many_friends` beyond [`MAX_FRIEND_REQUESTS`].
pub fn request_friend(
    conn: &mut AnyConnection,
    me: &str,
    username: &str,
) -> Result<Changed<Relation>, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        let other = locked_pair(conn, me, username)?;
        // A banned account is out of sight, as its profile is: a request would wait for
        // someone who cannot answer it, and would tell the asker that the account exists.
        if other.banned_at.is_some() {
            return Err(Error::not_found(format!("no user named {username:?}")));
        }
        if store::blocks(conn, &other.id, me)? {
            return Err(blocked(format!("{} blocks you", other.username)));
        }
        if store::blocks(conn, me, &other.id)? {
            return Err(blocked(format!(
                "you block {}: unblock them first",
                other.username
            )));
        }
        let earlier = store::requested_at(conn, me, &other.id)?;
        let already = earlier.is_some();
        if !already && store::request_count(conn, me)? >= MAX_FRIEND_REQUESTS {
            return Err(Error::conflict(
                "too_many_friends",
                format!("at most {MAX_FRIEND_REQUESTS} friends and requests"),
            ));
        }
        let created = store::insert_request(conn, me, &other.id, now)?;
        let mine = earlier.unwrap_or(now);
        // Friends since the later of the two requests, as the list of friends says.
        let (value, since) = match store::requested_at(conn, &other.id, me)? {
            Some(theirs) => (Relation::Friends, mine.max(theirs)),
            None => (Relation::Requested, mine),
        };
        let mut notified = Vec::new();
        let friends = value == Relation::Friends;
        if created && (friends || !asked_lately(conn, me, &other.id, now)?) {
            let my_name = db::users::by_id(conn, me)?
                .map(|u| u.username)
                .ok_or_else(|| Error::internal("the caller's account is gone"))?;
            notified = notifications::write(
                conn,
                vec![Pending {
                    user_id: other.id.clone(),
                    kind: NotificationKind::FriendRequest,
                    game_id: None,
                    data: json!({
                        "user_id": me,
                        "username": my_name,
                        "friends": friends,
                    }),
                    silent: false,
                }],
                now,
            )?;
        }
        Ok(Changed {
            value,
            created,
            other: Person {
                id: other.id,
                username: other.username,
                since,
            },
            notified,
        })
    })
}

/// How long after a `friend_request` notification another request from the same user to
/// the same user stays silent (it is still recorded, and still makes friends).
pub const REQUEST_QUIET: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// Whether `me` asked `other` (a notification saying so, not an answer that made friends)
/// within [`REQUEST_QUIET`] before `now`.
fn asked_lately(
    conn: &mut AnyConnection,
    me: &str,
    other: &str,
    now: NaiveDateTime,
) -> Result<bool, Error> {
    // The latest thousand notifications: a feed busier than that in a day may let one
    // request through again, which is all that is lost.
    let recent = db::outbox::recent_data(
        conn,
        other,
        NotificationKind::FriendRequest.as_str(),
        now - REQUEST_QUIET,
        1000,
    )?;
    Ok(recent.iter().any(|data| {
        serde_json::from_str::<serde_json::Value>(data).is_ok_and(|v| {
            v.get("user_id").and_then(|u| u.as_str()) == Some(me)
                && v.get("friends").and_then(|f| f.as_bool()) == Some(false)
        })
    }))
}

/// Ends a friendship, withdraws the caller's request or declines theirs: whatever holds
/// between `me` and `username` goes.
///
/// # Errors
/// 404 for an unknown user; 400 for the caller's own name.
pub fn remove_friend(conn: &mut AnyConnection, me: &str, username: &str) -> Result<(), Error> {
    db::write_transaction(conn, |conn| {
        let other = locked_pair(conn, me, username)?;
        store::delete_requests(conn, me, &other.id)?;
        Ok(())
    })
}

/// The caller's friends, and the requests either way that are still pending.
///
/// # Errors
/// Database errors.
pub fn friends(conn: &mut AnyConnection, me: &str) -> Result<Friends, Error> {
    let asked = store::asked_by(conn, me)?;
    let asking = store::asking(conn, me)?;
    let mut out = Friends::default();
    for (id, username, at) in &asked {
        match asking.iter().find(|(other, ..)| other == id) {
            Some((_, _, their_at)) => out.friends.push(Person {
                id: id.clone(),
                username: username.clone(),
                since: (*at).max(*their_at),
            }),
            None => out.outgoing.push(Person {
                id: id.clone(),
                username: username.clone(),
                since: *at,
            }),
        }
    }
    out.incoming = asking
        .into_iter()
        .filter(|(id, ..)| !asked.iter().any(|(other, ..)| other == id))
        .map(Person::from)
        .collect();
    Ok(out)
}

/// `me` blocks `username`, which ends any friendship or request between them.
///
/// # Errors
/// 404 for an unknown user; 400 for the caller's own name; 409 `too_many_blocks` beyond
/// [`MAX_BLOCKS`].
pub fn block(conn: &mut AnyConnection, me: &str, username: &str) -> Result<Changed<()>, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        let other = locked_pair(conn, me, username)?;
        let already = store::blocks(conn, me, &other.id)?;
        if !already && store::block_count(conn, me)? >= MAX_BLOCKS {
            return Err(Error::conflict(
                "too_many_blocks",
                format!("at most {MAX_BLOCKS} blocked users"),
            ));
        }
        let created = store::insert_block(conn, me, &other.id, now)?;
        let since = store::blocked_at(conn, me, &other.id)?.unwrap_or(now);
        store::delete_requests(conn, me, &other.id)?;
        Ok(Changed {
            value: (),
            created,
            other: Person {
                id: other.id,
                username: other.username,
                since,
            },
            notified: Vec::new(),
        })
    })
}

/// `me` no longer blocks `username` (nothing happens when it did not).
///
/// # Errors
/// 404 for an unknown user; 400 for the caller's own name.
pub fn unblock(conn: &mut AnyConnection, me: &str, username: &str) -> Result<(), Error> {
    db::write_transaction(conn, |conn| {
        let other = locked_pair(conn, me, username)?;
        store::delete_block(conn, me, &other.id)?;
        Ok(())
    })
}

/// Up to `limit` of the users the caller blocks, the latest blocked first, before the
/// keyset `before` (when they were blocked, their id) when given.
///
/// # Errors
/// Database errors.
pub fn blocks(
    conn: &mut AnyConnection,
    me: &str,
    before: Option<(NaiveDateTime, String)>,
    limit: i64,
) -> Result<Vec<Person>, Error> {
    Ok(store::blocked_by(conn, me, before, limit)?
        .into_iter()
        .map(Person::from)
        .collect())
}

/// Whether a block stands between `a` and `b`, either way.
///
/// # Errors
/// Database errors.
pub fn blocks_either_way(conn: &mut AnyConnection, a: &str, b: &str) -> Result<bool, Error> {
    Ok(store::blocks(conn, a, b)? || store::blocks(conn, b, a)?)
}

/// Refuses `me` a table with `others` when one of them blocks `me`.
///
/// # Errors
/// 403 `blocked`; database errors.
pub fn check_not_blocked_by(
    conn: &mut AnyConnection,
    me: &str,
    others: &[String],
) -> Result<(), Error> {
    if store::blockers_among(conn, me, others)?.is_empty() {
        Ok(())
    } else {
        Err(blocked("a player at this table blocks you"))
    }
}
