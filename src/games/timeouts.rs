//! The scheduler's use case: a game whose wake time passed. If only bots must act (no human
//! is left to act), they play on for a bounded number of actions. If its turn's deadline
//! passed, the server acts for the late seats with the takeover bot (a seat that times out twice in
//! a row is handed to the bot); else, if the reminder is due, the late players get a
//! `turn_reminder`. Either way the exact next wake time is stored.
//!
//! Several instances may run against one PostgreSQL: each game is claimed with
//! `FOR UPDATE SKIP LOCKED` and re-checked under the lock, so one deadline is acted on once.

use chrono::NaiveDateTime;

use crate::bots::{self, BotLevel};
use crate::db::{self, AnyConnection, games as store};
use crate::error::Error;
use crate::notifications::{self, Kind, Pending};
use crate::rules::Seat;

use super::{Actor, BotReason, Change, Committed, GameStatus, ServerEvent, Table};

/// What waking a game did.
#[derive(Debug)]
pub enum Woken {
    /// A deadline passed: the server acted for the late seats.
    TimedOut {
        /// How late the action came after the deadline (ms).
        lag_ms: i64,
        /// The committed game.
        done: Box<Committed>,
    },
    /// Only bots had to act (no human is left to act in the game): they played on, at most
    /// `BOT_ACTIONS_PER_COMMIT` actions, and the game is due again at once
    /// if they still must act.
    BotsPlayed(Box<Committed>),
    /// A reminder went out to these users.
    Reminded(Vec<String>),
    /// Nothing was due (another instance got there first, or actions moved the timers
    /// since): only the wake time was corrected.
    Early,
}

/// Ids of games whose wake time passed, most overdue first.
///
/// # Errors
/// Database errors.
pub fn due(conn: &mut AnyConnection, limit: i64) -> Result<Vec<String>, Error> {
    Ok(store::due(conn, db::now(), limit)?)
}

/// Claims a game whose wake time passed and does what is due, in one transaction.
///
/// # Errors
/// Database errors; the next tick tries again.
pub fn wake(conn: &mut AnyConnection, id: &str) -> Result<Woken, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        if !store::claim_due(conn, id, now)? {
            return Ok(Woken::Early);
        }
        let mut table = Table::load(conn, id)?;
        let active = table.status() == GameStatus::Active;
        if active {
            let mut change = Change::new(table)?;
            if change.bots_must_act() {
                change.run_bots()?;
                return Ok(Woken::BotsPlayed(Box::new(change.commit_for(conn, None)?)));
            }
            table = change.into_table();
        }
        if let (Some(deadline), true, true) =
            (table.row.deadline, active, table.row.state.is_some())
            && deadline <= now
        {
            // The commit stores the new timers and their wake time.
            return time_out(conn, table, deadline, now);
        }
        let mut woken = Woken::Early;
        if let (Some(at), true) = (table.row.reminder_at, active)
            && at <= now
        {
            woken = Woken::Reminded(remind(conn, &table, now)?);
            table.row.reminder_at = None;
        }
        store::set_timers(conn, id, table.row.reminder_at, table.row.next_wake(now))?;
        Ok(woken)
    })
}

/// Acts for every late seat of a claimed, dealt game whose deadline passed, and commits.
fn time_out(
    conn: &mut AnyConnection,
    table: Table,
    deadline: NaiveDateTime,
    now: NaiveDateTime,
) -> Result<Woken, Error> {
    let id = table.row.id.clone();
    let mut change = Change::new(table)?;
    let Some(late) = change
        .game
        .as_ref()
        .map(|g| g.to_act().iter().collect::<Vec<Seat>>())
    else {
        return Err(Error::internal("a dealt game without rules state"));
    };
    let mut rng = rand::rng();
    for seat in late {
        // A bot seat acts by itself; only humans time out.
        if change.table.bot_of(seat).is_some() {
            continue;
        }
        let Some(view) = change.game.as_ref().map(|g| g.view(seat)) else {
            break;
        };
        change.push_server_event(&ServerEvent::TurnTimedOut {
            seat: seat.number(),
            deadline: deadline.and_utc(),
        });
        let action = bots::choose(BotLevel::takeover(), &view, change.plays(), &mut rng)
            .ok_or_else(|| Error::internal(format!("no action for late seat {seat}")))?;
        change.apply(&action, Actor::Timeout)?;
        let row = change.seat_mut(seat);
        row.timeouts_in_row += 1;
        if row.timeouts_in_row >= 2 && row.bot_level.is_none() {
            let user = row.user_id.clone();
            change.hand_to_bot(seat, BotReason::Timeout);
            if let Some(user) = user {
                change.notify(
                    &user,
                    Kind::SeatTakenByBot,
                    serde_json::json!({ "seat": seat.number(), "reason": "timeout", "reclaim": format!("/api/v1/games/{id}/reclaim") }),
                );
            }
        }
    }
    change.run_bots()?;
    let done = change.commit_for(conn, None)?;
    Ok(Woken::TimedOut {
        lag_ms: (now - deadline).num_milliseconds(),
        done: Box::new(done),
    })
}

/// Sends `turn_reminder` to the humans of a claimed game who still must act; the caller
/// clears the reminder.
fn remind(
    conn: &mut AnyConnection,
    table: &Table,
    now: NaiveDateTime,
) -> Result<Vec<String>, Error> {
    let id = table.row.id.as_str();
    let Some(game) = table.game()? else {
        return Ok(Vec::new());
    };
    let pending: Vec<Pending> = game
        .to_act()
        .iter()
        .filter(|seat| table.bot_of(*seat).is_none())
        .filter_map(|seat| {
            let user = table.seats[seat.index()].user_id.clone()?;
            Some(Pending {
                user_id: user,
                kind: Kind::TurnReminder,
                game_id: Some(id.to_owned()),
                // The phase as in `your_turn`: a reminder while passing asks for a pass.
                data: serde_json::json!({
                    "seat": seat.number(),
                    "deadline": table.row.deadline.map(|d| d.and_utc()),
                    "phase": game.phase().to_string(),
                }),
                silent: false,
            })
        })
        .collect();
    let notified = notifications::write(conn, pending, now)?;
    // Wakes the reminded feeds on every instance when the transaction commits.
    crate::db::wake::notify(conn, &crate::db::wake::game_topics(id, &notified))?;
    Ok(notified)
}
