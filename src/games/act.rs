//! A player's pass or play, and the concurrency strategy of the busiest use case.
//!
//! The action is judged against the latest state: the four passes of a round may arrive at
//! the same instant and all succeed, while two copies of one play apply once. Bots whose turn
//! follows act in the same commit. On PostgreSQL the common case commits in one guarded
//! statement without the game's lock ([`Change::commit_unlocked`]): first against the copy
//! this instance wrote last ([`HotTables`], no read at all), then against a fresh read; when
//! that does not fit or the game changed meanwhile, the action runs again under the lock, and
//! that run decides. The guarded statements of concurrent actions go out together through
//! the instance's writer ([`GroupCommit`]), one commit for all. SQLite always takes the lock
//! (its writers are serialized anyway), and under it reads the game only when this
//! instance's copy is not at the stored version.

use diesel::Connection;

use crate::db::games::{self as store, IdempotentRow};
use crate::db::group_commit::{GroupCommit, Reply};
use crate::db::{self, AnyConnection};
use crate::error::{Error, Kind};
use crate::rules::{Action, Card, RuleError};

use super::{Actor, Change, GameStatus, HotTables, Table, seat_of};

/// The action a player asks for; the seat is the caller's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Pass these cards.
    Pass(Vec<Card>),
    /// Play this card.
    Play(Card),
}

/// A retry key and the fingerprint of the request it was first sent with.
#[derive(Debug, Clone)]
pub struct Idempotency {
    /// The `Idempotency-Key`.
    pub key: String,
    /// A hash of the request; the same key with another request is refused.
    pub fingerprint: String,
}

/// A player's action on a game.
#[derive(Debug, Clone)]
pub struct Act {
    /// The game.
    pub game_id: String,
    /// The caller.
    pub user_id: String,
    /// Pass or play.
    pub wanted: Wanted,
    /// Refuse with `version_conflict` unless the game is at this version.
    pub expected_version: Option<i64>,
    /// Makes retries safe.
    pub idempotency: Option<Idempotency>,
}

/// Renders the response body of a committed action for the caller's seat. It runs before
/// the commit, since with an idempotency key the body is stored in the same statement.
pub type Render = fn(&Table, crate::rules::Seat) -> Result<String, Error>;

/// Renders a refusal as its caller heard it, status and body, to be kept for a retry with the
/// same `Idempotency-Key`.
pub type RenderRefusal = fn(&Error) -> (u16, String);

/// A player's action as it reaches the service: who, on which game, what they asked (or
/// why the request could not be read), and how its answer and a kept refusal are rendered.
#[derive(Debug)]
pub struct Submission {
    /// The game.
    pub game_id: String,
    /// The caller.
    pub user_id: String,
    /// The action, or the request's own error: answered only after the caller's account is
    /// checked, so a banned caller hears 403 whatever it sent.
    pub command: Result<Act, Error>,
    /// Renders the caller's view after a change.
    pub render: Render,
    /// Renders a refusal kept for a retry with the same `Idempotency-Key`.
    pub refusal: RenderRefusal,
}

/// What an action answered.
#[derive(Debug)]
pub enum Acted {
    /// Applied now.
    Fresh {
        /// The rendered view.
        body: String,
        /// The new version.
        version: i64,
        /// The game id and whose feeds were written, for waking long-polls.
        notified: Vec<String>,
        /// Actions applied (bots' included).
        applied: u64,
    },
    /// A retry: the first response, unchanged.
    Replayed {
        /// Its status.
        status: u16,
        /// Its body.
        body: String,
    },
}

/// What an instance keeps to make its actions cheap: the games it wrote last, and on
/// PostgreSQL its writer, which commits the guarded writes of concurrent actions together.
#[derive(Debug, Clone, Copy)]
pub struct Shortcuts<'a> {
    /// The games this instance wrote last.
    pub hot: &'a HotTables,
    /// The instance's group commit (PostgreSQL).
    pub group: Option<&'a GroupCommit>,
}

/// How [`judge`] may commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Inside a transaction holding the game's lock.
    Locked,
    /// Without the lock, against a table just read.
    Unlocked,
    /// Without the lock, against a table from [`HotTables`].
    Cached,
}

/// Applies a player's action. Its command is `Err` when the request itself was malformed:
/// that is answered only after the caller's account is checked, so a banned caller hears
/// 403 whatever it sent.
///
/// With an `Idempotency-Key`, a refusal judged on the game's state (409, 422) is kept like
/// a success: a retry hears it again even once the game would allow the action, since a
/// retry must never apply what its first attempt did not.
///
/// # Errors
/// 404, 403 `not_seated`, 409 `version_conflict`/`game_not_active`/`seat_controlled_by_bot`,
/// 422 with the rule's code, and the request's own error.
pub fn act(
    conn: &mut AnyConnection,
    shortcuts: Shortcuts<'_>,
    submission: Submission,
) -> Result<Acted, Error> {
    let Submission {
        game_id,
        user_id,
        command: act,
        render,
        refusal,
    } = submission;
    let (game_id, user_id) = (game_id.as_str(), user_id.as_str());
    let hot = shortcuts.hot;
    let idempotency = act.as_ref().ok().and_then(|a| a.idempotency.clone());
    // One attempt; a refusal it ends in is kept below.
    let acted = (|| {
        if matches!(conn, AnyConnection::Postgresql(_)) {
            // A game this instance just wrote needs no read: the write checks that the game and
            // the caller's account are still as cached. Anything but a clean commit (an error
            // included: it may come from a stale table) is judged again from the database.
            if let Ok(act) = &act
                && let Some(table) = hot.take(game_id)
                && let Ok(Some(outcome)) = judge(act, table, conn, Mode::Cached, shortcuts, render)
            {
                return Ok(outcome);
            }
            let table = Table::load_for(conn, game_id, false, user_id)?;
            let act = act?;
            if let Some(outcome) = judge(&act, table, conn, Mode::Unlocked, shortcuts, render)? {
                return Ok(outcome);
            }
            return conn.transaction(|conn| {
                let table = Table::load_for(conn, game_id, true, user_id)?;
                judge(&act, table, conn, Mode::Locked, shortcuts, render)?.ok_or_else(|| {
                    Error::internal("an action under the lock did not commit").into()
                })
            });
        }
        crate::db::write_transaction(conn, |conn| {
            let table = match hot.take(game_id) {
                // Under SQLite's write lock nothing else changes the game: the copy this instance
                // wrote or read last is current when the version in the database is its version.
                Some(copy) => match store::probe(conn, game_id, Some(user_id))? {
                    Some(probe) if probe.version == copy.row.version => {
                        crate::auth::judge(probe.caller)?;
                        copy
                    }
                    _ => Table::load_for(conn, game_id, true, user_id)?,
                },
                None => Table::load_for(conn, game_id, true, user_id)?,
            };
            judge(&act?, table, conn, Mode::Locked, shortcuts, render)?
                .ok_or_else(|| Error::internal("an action under the lock did not commit").into())
        })
    })();
    let (error, refused) = match acted {
        Ok(acted) => return Ok(acted),
        Err(Failure::Refused(e)) => (e, true),
        Err(Failure::Failed(e)) => (e, false),
    };
    let Some(idem) = idempotency else {
        return Err(error);
    };
    if refused && matches!(error.kind(), Kind::Conflict | Kind::Unprocessable) {
        if keep_refusal(conn, user_id, &idem, refusal(&error))? {
            return Err(error);
        }
    } else if error.kind() != Kind::Conflict {
        return Err(error);
    }
    // A twin request with the same key answered first (its key met this one's write, or
    // this one's refusal): that answer is this one's too, so every copy hears the same.
    stored_answer(conn, user_id, &idem)?.ok_or(error)
}

/// Applies a player's action as [`act`] does, on the caller's task. On PostgreSQL, an action
/// on a game this instance holds a copy of is first judged against the copy and written
/// through the instance's writer, awaited without a blocking thread or a pooled connection
/// (`act_on_copy`); whatever that does not commit cleanly, [`act`] decides from the
/// database on the blocking pool, as it does after its own attempt on the copy.
///
/// # Errors
/// As [`act`].
pub async fn submit(
    db: &db::Db,
    hot: &std::sync::Arc<HotTables>,
    submission: Submission,
) -> Result<Acted, Error> {
    if let (Ok(wanted), Some(group)) = (&submission.command, db.group_commit())
        && let Some(done) = act_on_copy(db, hot, group, wanted, submission.render).await
    {
        return done;
    }
    let (hot, group) = (hot.clone(), db.group_commit().cloned());
    db.run(move |conn| {
        let shortcuts = Shortcuts {
            hot: &hot,
            group: group.as_deref(),
        };
        act(conn, shortcuts, submission)
    })
    .await
}

/// [`judge`] in [`Mode::Cached`], awaiting the writer: `None` whenever it does not end in a
/// clean commit (no copy, a bot that would act in the same change, a refusal, a change that
/// needs more than one guarded statement, a write the writer hands back or finds stale), and
/// then nothing was written. Bots are left to the blocking pool: an expert thinks for up to
/// tens of milliseconds, which must not stall the HTTP worker.
async fn act_on_copy(
    db: &db::Db,
    hot: &HotTables,
    group: &GroupCommit,
    act: &Act,
    render: Render,
) -> Option<Result<Acted, Error>> {
    let table = hot.take(&act.game_id)?;
    if crate::rules::Seat::ALL
        .iter()
        .any(|&seat| table.bot_of(seat).is_some())
    {
        hot.put(table);
        return None;
    }
    let (seat, change, actions_before) = decide(act, table).ok()?;
    let user_id = act.user_id.as_str();
    let idempotency = act
        .idempotency
        .as_ref()
        .map(|i| (user_id, i.key.as_str(), i.fingerprint.as_str()));
    let unlocked = change
        .unlocked(|table| render(table, seat), idempotency, user_id)
        .ok()??;
    match group.commit_async(unlocked.commit).await {
        Ok(Reply::Done(true)) => {}
        Ok(Reply::Done(false) | Reply::Untaken(_)) => return None,
        Err(e) => return Some(Err(e.into())),
    }
    let (table, body) = unlocked.written.done();
    // Keep the table small: forget keys older than 48 h now and then.
    if act.idempotency.is_some() && rand::random_range(0..100) == 0 {
        let purged = db
            .run(|conn| {
                store::purge_idempotent(conn, db::now() - chrono::Duration::hours(48))
                    .map_err(Error::from)
            })
            .await;
        if let Err(e) = purged {
            tracing::warn!(error = %e, "could not forget old idempotency keys");
        }
    }
    Some(Ok(fresh(hot, table, body, actions_before)))
}

/// The answer kept for `idem`'s key, if any; 422 `idempotency_key_reused` when the key was
/// first sent with another request.
fn stored_answer(
    conn: &mut AnyConnection,
    user_id: &str,
    idem: &Idempotency,
) -> Result<Option<Acted>, Error> {
    let Some(stored) = store::idempotent(conn, user_id, &idem.key)? else {
        return Ok(None);
    };
    if stored.request_hash != idem.fingerprint {
        return Err(Error::unprocessable(
            "idempotency_key_reused",
            "this Idempotency-Key was used for another request",
        ));
    }
    Ok(Some(Acted::Replayed {
        status: u16::try_from(stored.status).unwrap_or(200),
        body: stored.body,
    }))
}

/// Stores a refusal (status, body) as the answer to `idem`'s key; `false` when the key
/// has an answer already.
fn keep_refusal(
    conn: &mut AnyConnection,
    user_id: &str,
    idem: &Idempotency,
    (status, body): (u16, String),
) -> Result<bool, Error> {
    let row = IdempotentRow {
        user_id: user_id.to_owned(),
        key: idem.key.clone(),
        request_hash: idem.fingerprint.clone(),
        status: i32::from(status),
        body,
        created_at: db::now(),
    };
    match db::write_transaction(conn, |conn| store::store_idempotent(conn, &row)) {
        Ok(()) => Ok(true),
        Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        )) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Judges the action against `table` and commits it; a committed table goes to `hot`.
/// Under [`Mode::Locked`] it always answers (`Some`); otherwise, outside any transaction, it
/// answers `None` when the lock is needed (see [`Change::commit_unlocked`]), having written
/// nothing.
fn judge(
    act: &Act,
    table: Table,
    conn: &mut AnyConnection,
    mode: Mode,
    Shortcuts { hot, group }: Shortcuts<'_>,
    render: Render,
) -> Result<Option<Acted>, Failure> {
    let user_id = act.user_id.as_str();
    // A cached attempt leaves stored keys to the write: storing the key again fails it.
    if let (Some(idem), false) = (&act.idempotency, mode == Mode::Cached)
        && let Some(stored) = stored_answer(conn, user_id, idem)?
    {
        return Ok(Some(stored));
    }
    let (seat, change, actions_before) = decide(act, table).map_err(Failure::Refused)?;
    let respond = |table: &Table| render(table, seat);
    let (table, body) = if mode == Mode::Locked {
        let table = change.commit(conn)?;
        let body = respond(&table)?;
        if let Some(idem) = &act.idempotency {
            store::store_idempotent(
                conn,
                &IdempotentRow {
                    user_id: user_id.to_owned(),
                    key: idem.key.clone(),
                    request_hash: idem.fingerprint.clone(),
                    status: 200,
                    body: body.clone(),
                    created_at: table.row.updated_at,
                },
            )?;
        }
        (table, body)
    } else {
        let idempotency = act
            .idempotency
            .as_ref()
            .map(|i| (user_id, i.key.as_str(), i.fingerprint.as_str()));
        match change.commit_unlocked(conn, respond, idempotency, user_id, group)? {
            Some(done) => done,
            None => return Ok(None),
        }
    };
    // Keep the table small: forget keys older than 48 h now and then.
    if act.idempotency.is_some() && rand::random_range(0..100) == 0 {
        store::purge_idempotent(conn, db::now() - chrono::Duration::hours(48))?;
    }
    Ok(Some(fresh(hot, table, body, actions_before)))
}

/// The answer to an action just committed, whose game had `actions_before` actions; the
/// game goes to `hot` while it is active.
fn fresh(hot: &HotTables, mut table: Table, body: String, actions_before: i64) -> Acted {
    let applied = (table.row.action_count - actions_before).max(0) as u64;
    let (version, notified) = (table.row.version, std::mem::take(&mut table.notified_users));
    if table.status() == GameStatus::Active {
        hot.put(table);
    }
    Acted::Fresh {
        body,
        version,
        notified,
        applied,
    }
}

/// Judges the action against `table` without writing: the seat, the change with the bots
/// that follow, and the action count before it. Its errors are refusals of this request on
/// the game's state.
fn decide(act: &Act, table: Table) -> Result<(crate::rules::Seat, Change, i64), Error> {
    let user_id = act.user_id.as_str();
    let seat = seat_of(&table, user_id)?;
    match table.status() {
        GameStatus::Active => {}
        GameStatus::Finished => return Err(RuleError::GameOver.into()),
        GameStatus::Waiting => {
            return Err(Error::conflict(
                "game_not_active",
                "the game has not started yet",
            ));
        }
        GameStatus::Aborted => {
            return Err(Error::conflict("game_not_active", "the game was aborted"));
        }
    }
    if let Some(v) = act.expected_version
        && v != table.row.version
    {
        return Err(Error::conflict(
            "version_conflict",
            format!(
                "the game is at version {}, not {v}; reload it",
                table.row.version
            ),
        )
        .with_current_version(table.row.version));
    }
    if table.bot_of(seat).is_some() {
        return Err(Error::conflict(
            "seat_controlled_by_bot",
            "a bot plays this seat now",
        ));
    }
    let action = match &act.wanted {
        Wanted::Pass(cards) => Action::Pass {
            seat,
            cards: cards.clone(),
        },
        Wanted::Play(card) => Action::Play { seat, card: *card },
    };
    let actions_before = table.row.action_count;
    let mut change = Change::new(table)?;
    change.apply(&action, Actor::Player(user_id))?;
    if change.table.seats[seat.index()].timeouts_in_row != 0 {
        change.seat_mut(seat).timeouts_in_row = 0;
    }
    change.run_bots()?;
    Ok((seat, change, actions_before))
}

/// How an attempt at an action failed: refused on the game's state ([`decide`]), which an
/// `Idempotency-Key` keeps, or failed otherwise (the request, the account, the database),
/// which a retry must try again.
#[derive(Debug)]
enum Failure {
    Refused(Error),
    Failed(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Self::Failed(e)
    }
}

impl From<diesel::result::Error> for Failure {
    fn from(e: diesel::result::Error) -> Self {
        Self::Failed(e.into())
    }
}
