//! Long-polls: read, and if there is nothing yet, wait for a wake-up of the topic until the
//! wait runs out. Wake-ups come from writers of this instance and, on PostgreSQL, from the
//! listener for every other instance (`app::listen`), so a waiting client costs no database
//! query: one read when it arrives and one per wake-up. A wait that runs out answers the
//! empty read it has (the client asks again and reads then); the listener's catch-up after a
//! reconnect wakes every waiter, so none sleeps through a change it missed.

use std::future::Future;
use std::time::Duration;

use serde::Deserialize;
use utoipa::IntoParams;

use crate::app::AppState;
use crate::app::presence::{Follower, MAX_PER_USER, Refused, Watch};
use crate::error::{Error, Kind};
use crate::http::extract::{AuthUser, Caller};
use crate::http::pagination;

/// The longest wait a client may ask for, in seconds.
pub const MAX_WAIT_SECS: u64 = 30;

/// The query of a long-polled list numbered by `seq` (a game's events, the caller's feed).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Query {
    /// Items with `seq` greater than this (default 0: from the start).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Long-poll: wait up to this many seconds (0..=30) for an item when there is none yet.
    #[param(minimum = 0, maximum = 30)]
    pub wait: Option<u64>,
    /// 1..=200, default 50.
    #[param(minimum = 1, maximum = 200, default = 50)]
    pub limit: Option<i64>,
}

impl Query {
    /// `after`, `wait` (seconds) and `limit`, checked, with their defaults filled in.
    ///
    /// # Errors
    /// `validation_failed` for a negative `after`, a wait above [`MAX_WAIT_SECS`] or a
    /// limit outside 1..=200.
    pub fn checked(&self) -> Result<(i64, u64, i64), Error> {
        let after = self.after.unwrap_or(0);
        if after < 0 {
            return Err(Error::validation("after must be ≥ 0"));
        }
        let wait = self.wait.unwrap_or(0);
        if wait > MAX_WAIT_SECS {
            return Err(Error::validation("wait must be 0..=30 seconds"));
        }
        Ok((after, wait, pagination::limit(self.limit, 50, 200)?))
    }
}

/// A stream or long-poll refused because its caller holds the per-user ceiling
/// ([`MAX_PER_USER`], 32), as each such operation documents it.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 429,
    description = "The caller already holds 32 open streams and long-polls on this instance (`rate_limited`): close one"
)]
pub struct TooManyOfMine;

/// Admits one more stream or long-poll of `user_id` on `topic` under `LEEKHA_MAX_STREAMS`
/// and the per-user ceiling.
///
/// # Errors
/// 503 `too_many_streams` with `Retry-After` when the instance holds its ceiling; 429
/// `rate_limited` when the user holds [`MAX_PER_USER`].
pub fn admit(state: &AppState, user_id: &str, topic: &str, by: Follower) -> Result<Watch, Error> {
    state
        .presence
        .enter(user_id, topic, by)
        .map_err(|refused| {
            match refused {
        Refused::Full => Error::new(
            Kind::Unavailable,
            "too_many_streams",
            format!(
                "this instance holds its ceiling of {} open streams and long-polls; retry shortly",
                state.presence.max()
            ),
        )
        .with_retry_after(5),
        Refused::UserFull => Error::new(
            Kind::RateLimited,
            "rate_limited",
            format!(
                "you hold {MAX_PER_USER} open streams and long-polls on this instance; close \
                 one you no longer need"
            ),
        )
        .with_retry_after(5),
    }
        })
}

/// Runs `read(generation)` until it returns something non-empty (as `is_empty` judges) or
/// `wait` seconds pass, waking when `topic` is woken. `generation` is the topic's wake-up
/// count taken before the read (for the shared event cache). `user` waits on `topic`:
/// the wait counts against the ceiling and as presence.
///
/// # Errors
/// `read`'s errors; 503 `too_many_streams` when the ceiling is reached; 401 or 403
/// `banned` when the account was deleted or banned, or its session ended, while the call
/// waited.
pub async fn poll<T, F, Fut>(
    state: &AppState,
    user: &AuthUser,
    topic: &str,
    wait: u64,
    is_empty: impl Fn(&T) -> bool,
    mut read: F,
) -> Result<T, Error>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    let handle = state.notifier.subscribe(topic);
    if wait == 0 {
        // A plain read: nothing to wait on, nothing to watch.
        return read(handle.generation()).await;
    }
    // A ban or a deletion wakes the account's topic, a logout (or a password change, a
    // replayed refresh token) the session's: the wait then ends at once, and the check
    // below refuses the answer.
    let account = state
        .notifier
        .subscribe(&crate::db::wake::account_topic(user.id()));
    // A token without a session (from before 1.1) waits on the account's topic twice.
    let session = user.session.as_deref().map_or_else(
        || account.clone(),
        |sid| {
            state
                .notifier
                .subscribe(&crate::db::wake::session_topic(sid))
        },
    );
    // Only a wake-up that names them ends the wait; one that wakes every topic (a shutdown,
    // a listener's catch-up) leaves it to run its course.
    let targeted = (account.targeted(), session.targeted());
    let _watch = admit(state, user.id(), topic, Follower::LongPoll)?;
    let mut waited = false;
    let found = loop {
        // Armed before the read: a change in between still wakes this waiter.
        let notified = handle.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let ended = account.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        let session_ended = session.notified();
        tokio::pin!(session_ended);
        session_ended.as_mut().enable();
        let found = read(handle.generation()).await?;
        // A shutdown leaves long-polls to run their course (at most 30 s, within the
        // drain): only streams, which never end on their own, are cut short.
        if !is_empty(&found) {
            break found;
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            break found;
        }
        waited = true;
        let ended_now = || (account.targeted(), session.targeted()) != targeted;
        if ended_now() {
            break found;
        }
        tokio::select! {
            woken = tokio::time::timeout(deadline - now, notified) => {
                if woken.is_err() {
                    break found;
                }
            }
            () = &mut ended => {}
            () = &mut session_ended => {}
        }
        if ended_now() {
            break found;
        }
    };
    if waited {
        // The account and the session were judged when the call came; a ban, a deletion or
        // the session's end during the wait must not let its answer through.
        let caller = Caller {
            user_id: user.id().to_owned(),
            session: user.session.clone(),
        };
        state
            .db
            .run(move |conn| caller.check(conn).map(drop))
            .await?;
    }
    Ok(found)
}
