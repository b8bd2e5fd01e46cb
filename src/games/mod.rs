//! The game service: one function per use case (create, join, leave, act, resign, reclaim,
//! time out, hand a seat to a bot, the creator's seat changes, abort), each taking a typed command, owning its
//! transaction and its concurrency strategy, and returning the committed game. Handlers in
//! `http` parse requests into commands and render views after the commit; the scheduler
//! calls the same functions.
//!
//! May import: `db`, `rules`, `bots`, `notifications`, `error`. Never `http` or `app`.

pub mod act;
pub mod away;
mod change;
pub mod create;
pub mod events;
pub mod hint;
mod host;
pub mod hot;
mod lifecycle;
pub mod lists;
pub mod record;
pub mod rematch;
mod seats;
mod table;
mod timeouts;
pub mod verify;
mod view;

pub use crate::db::types::{BotReason, GameStatus, Visibility};
pub use act::{Act, Acted, Shortcuts, Submission, act, submit};
pub use change::Change;
pub use create::{NewGame, SeatPlan, create};
pub use events::ServerEvent;
pub use host::set_seat;
pub use hot::HotTables;
pub use lifecycle::{abort, inspect};
pub use record::{Record, replay};
pub use rematch::{Rematch, rematch};
pub use seats::{block, join, leave, leave_waiting, reclaim, resign, seat_to_bot, withdraw};
pub use table::{Table, decode_plays, encode_plays, encode_to_act};
pub use timeouts::{Woken, due, wake};
pub use view::view;

use crate::db::AnyConnection;
use crate::error::Error;
use crate::rules::Seat;

/// Who sent an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor<'a> {
    /// A player, through the API.
    Player(&'a str),
    /// A bot acting for its seat.
    Bot,
    /// The scheduler, for a seat whose turn timed out.
    Timeout,
}

/// A committed use case: the game as written, the seat of the caller (if any), and how many
/// actions were applied (bots' included), for metrics.
#[derive(Debug)]
pub struct Committed {
    /// The game as committed; `notified_users` says whose feeds were written.
    pub table: Table,
    /// The caller's seat, for the caller's view.
    pub seat: Option<Seat>,
    /// Actions applied by this change.
    pub applied: u64,
}

impl Committed {
    pub(crate) fn new(table: Table, seat: Option<Seat>, actions_before: i64) -> Self {
        let applied = (table.row.action_count - actions_before).max(0) as u64;
        Self {
            table,
            seat,
            applied,
        }
    }
}

/// Runs `f` in one transaction that starts by taking the game's lock and loading it
/// ([`Table::load_locked`]: one query on PostgreSQL).
fn locked<T>(
    conn: &mut AnyConnection,
    id: &str,
    f: impl FnOnce(&mut AnyConnection, Table) -> Result<T, Error>,
) -> Result<T, Error> {
    crate::db::write_transaction(conn, |conn| {
        let table = Table::load_locked(conn, id)?;
        f(conn, table)
    })
}

/// The live accounts of `users` locked in id order
/// ([`crate::db::admin::lock_in_id_order`]); returns those not live (banned, deleted).
///
/// # Errors
/// Database errors.
fn lock_accounts<'a>(
    conn: &mut AnyConnection,
    users: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<&'a str>, Error> {
    use crate::db::admin::{Accounts, lock_in_id_order};
    Ok(lock_in_id_order(conn, users, Accounts::Live)?)
}

/// [`locked`], for a use case on the seat of `user_id` ([`seat_of`]).
fn locked_seat<T>(
    conn: &mut AnyConnection,
    id: &str,
    user_id: &str,
    f: impl FnOnce(&mut AnyConnection, Table, Seat) -> Result<T, Error>,
) -> Result<T, Error> {
    locked(conn, id, |conn, table| {
        let seat = seat_of(&table, user_id)?;
        f(conn, table, seat)
    })
}

/// The seat a visible game gives `user_id`: 404 when the game is hidden from them, 403
/// `not_seated` when they hold no seat.
fn seat_of(table: &Table, user_id: &str) -> Result<Seat, Error> {
    if !table.visible_to(user_id) {
        return Err(Error::not_found("no such game"));
    }
    table
        .seat_of(user_id)
        .ok_or_else(|| Error::forbidden("you have no seat in this game").with_code("not_seated"))
}

/// Counts `user_id`, who has no seat in the game, as one of its spectators for the next
/// minute (the game view's `spectators`); returns the spectators now, the caller included.
///
/// # Errors
/// Database errors.
pub fn spectate(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> Result<u32, Error> {
    let watching = crate::db::watchers::renew(conn, game_id, user_id)?;
    Ok(u32::try_from(watching).unwrap_or(u32::MAX))
}
