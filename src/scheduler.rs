//! The background work of every instance: turns whose deadline passed (the server acts for
//! the late seats with a bot), turn reminders, and webhook deliveries.
//!
//! Several instances may run against one PostgreSQL: each due game is claimed with
//! `FOR UPDATE SKIP LOCKED` and re-checked under the lock, so one deadline is acted on once.
//! SQLite is single-instance; its write lock serializes the same steps.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::app::AppState;
use crate::bots::{self, BotLevel};
use crate::db::schema::games;
use crate::db::{self, AnyConnection, games as store};
use crate::error::Error;
use crate::games::{Actor, Change, GameStatus, ServerEvent, Table};
use crate::notifications::{self, Kind, Pending};
use crate::rules::Seat;

/// What one pass of the scheduler did.
#[derive(Debug, Default, Clone)]
pub struct TickReport {
    /// Deadlines acted on.
    pub timeouts: usize,
    /// For each, how late the action came after its deadline (ms).
    pub lags_ms: Vec<i64>,
    /// Reminders sent (games).
    pub reminders: usize,
    /// Webhook attempts made.
    pub webhook_attempts: usize,
}

/// A running scheduler thread; stops when dropped or on [`Scheduler::stop`].
pub struct Scheduler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Scheduler {
    /// Starts the loop: every `config.scheduler_interval`, one [`tick`].
    pub fn spawn(state: AppState) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("leekha-scheduler".into())
            .spawn(move || {
                let agent = crate::webhooks::agent();
                while !flag.load(Ordering::Relaxed) {
                    if let Err(e) = tick(&state, &agent) {
                        tracing::warn!(error = %e, "scheduler tick failed");
                    }
                    std::thread::sleep(state.config.scheduler_interval);
                }
            })
            .expect("spawn the scheduler thread");
        Self {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops the loop after its current tick.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One pass: due turns, due reminders, due webhooks. Blocking.
///
/// # Errors
/// Database errors (the next tick tries again).
pub fn tick(state: &AppState, agent: &ureq::Agent) -> Result<TickReport, Error> {
    let mut report = TickReport::default();
    let mut conn = state.db.conn()?;
    let now = db::now();
    let due: Vec<String> = games::table
        .filter(games::wake_at.le(now))
        .order(games::wake_at.asc())
        .limit(100)
        .select(games::id)
        .load(&mut *conn)?;
    for id in due {
        match conn.transaction(|conn| wake(conn, &id)) {
            Ok(Woken::TimedOut {
                lag,
                notified,
                applied,
            }) => {
                report.timeouts += 1;
                state.metrics.turn_timeout();
                state.metrics.actions_applied(applied);
                report.lags_ms.push(lag);
                state.announce(&id, &notified);
                tracing::info!(game.id = %id, lag_ms = lag, "turn timed out; the server acted");
            }
            Ok(Woken::Reminded(notified)) => {
                report.reminders += 1;
                state.announce(&id, &notified);
            }
            Ok(Woken::Early) => {}
            Err(e) => tracing::warn!(game.id = %id, error = %e, "scheduled work failed"),
        }
    }
    drop(conn);
    report.webhook_attempts = crate::webhooks::deliver_due(state, agent)?;
    Ok(report)
}

/// What waking a game did.
enum Woken {
    /// A deadline passed: the server acted for the late seats.
    TimedOut {
        /// How late the action came after the deadline (ms).
        lag: i64,
        /// Users whose feeds were written.
        notified: Vec<String>,
        /// Actions applied.
        applied: u64,
    },
    /// A reminder went out to these users.
    Reminded(Vec<String>),
    /// Nothing was due (another instance got there first, or actions moved the timers
    /// since): only the wake time was corrected.
    Early,
}

/// Claims a game whose wake time passed and does what is due: the timeout if the deadline
/// passed, else the reminder if its time came; then stores the exact next wake time.
fn wake(conn: &mut AnyConnection, id: &str) -> Result<Woken, Error> {
    let now = db::now();
    if !claim(conn, id, now)? {
        return Ok(Woken::Early);
    }
    let mut table = Table::load(conn, id)?;
    let active = table.status() == GameStatus::Active;
    if let (Some(deadline), true, true) = (table.row.deadline, active, table.row.state.is_some())
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
    diesel::update(games::table.find(id))
        .set((
            games::reminder_at.eq(table.row.reminder_at),
            games::wake_at.eq(table.row.next_wake(now)),
        ))
        .execute(conn)?;
    Ok(woken)
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    #[allow(dead_code, reason = "only the row count matters")]
    id: String,
}

/// Takes the game's lock if its wake time has still passed, skipping a game another
/// instance holds. On SQLite the write lock serializes everything, so a plain lock does.
fn claim(conn: &mut AnyConnection, id: &str, now: NaiveDateTime) -> Result<bool, Error> {
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
        AnyConnection::Sqlite(_) => Ok(store::lock(conn, id)?),
    }
}

/// Acts for every late seat of a claimed, dealt game whose deadline passed, and commits.
fn time_out(
    conn: &mut AnyConnection,
    table: Table,
    deadline: NaiveDateTime,
    now: NaiveDateTime,
) -> Result<Woken, Error> {
    let id = table.row.id.clone();
    let before = table.row.action_count;
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
            let level = BotLevel::takeover();
            row.bot_level = Some(level.as_str().into());
            row.bot_reason = Some("timeout".into());
            let user = row.user_id.clone();
            change.push_server_event(&ServerEvent::SeatChanged {
                seat: seat.number(),
                user_id: user.clone(),
                username: user
                    .as_deref()
                    .and_then(|u| change.table.name(u))
                    .map(str::to_owned),
                bot: Some(level.as_str().into()),
                reason: "timeout".into(),
            });
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
    let table = change.commit(conn)?;
    let applied = (table.row.action_count - before).max(0) as u64;
    Ok(Woken::TimedOut {
        lag: (now - deadline).num_milliseconds(),
        notified: table.notified_users,
        applied,
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
                data: serde_json::json!({ "seat": seat.number(), "deadline": table.row.deadline.map(|d| d.and_utc()) }),
            })
        })
        .collect();
    notifications::write(conn, pending, now)
}
