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

use crate::bots::{self, BotLevel};
use crate::db::schema::games;
use crate::db::{self, AnyConnection, games as store};
use crate::error::ApiError;
use crate::games::{Actor, Change, GameStatus, ServerEvent, Table};
use crate::http::AppState;
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
pub fn tick(state: &AppState, agent: &ureq::Agent) -> Result<TickReport, ApiError> {
    let mut report = TickReport::default();
    let mut conn = state.db.conn()?;
    let now = db::now();
    let due: Vec<String> = games::table
        .filter(games::status.eq("active"))
        .filter(games::deadline.le(now))
        .order(games::deadline.asc())
        .limit(100)
        .select(games::id)
        .load(&mut *conn)?;
    for id in due {
        match conn.transaction(|conn| time_out(conn, &id)) {
            Ok(Some((lag, notified, applied))) => {
                report.timeouts += 1;
                state.metrics.turn_timeout();
                state.metrics.actions_applied(applied);
                report.lags_ms.push(lag);
                state.announce(&id, &notified);
                tracing::info!(game.id = %id, lag_ms = lag, "turn timed out; the server acted");
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(game.id = %id, error = %e, "timeout failed"),
        }
    }
    let now = db::now();
    let reminders: Vec<String> = games::table
        .filter(games::status.eq("active"))
        .filter(games::reminder_at.le(now))
        .limit(100)
        .select(games::id)
        .load(&mut *conn)?;
    for id in reminders {
        match conn.transaction(|conn| remind(conn, &id)) {
            Ok(Some(notified)) => {
                report.reminders += 1;
                state.announce(&id, &notified);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(game.id = %id, error = %e, "reminder failed"),
        }
    }
    drop(conn);
    report.webhook_attempts = crate::webhooks::deliver_due(state, agent)?;
    Ok(report)
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    #[allow(dead_code, reason = "only the row count matters")]
    id: String,
}

/// Takes the game's lock if `column <= now` still holds, skipping a game another instance
/// holds. On SQLite the write lock serializes everything, so a plain lock does.
fn claim(
    conn: &mut AnyConnection,
    id: &str,
    column: &str,
    now: NaiveDateTime,
) -> Result<bool, ApiError> {
    match conn {
        AnyConnection::Postgresql(pg) => {
            let rows: Vec<IdRow> = diesel::sql_query(format!(
                "SELECT id FROM games WHERE id = $1 AND status = 'active' AND {column} <= $2 FOR UPDATE SKIP LOCKED"
            ))
            .bind::<diesel::sql_types::Text, _>(id)
            .bind::<diesel::sql_types::Timestamp, _>(now)
            .load(pg)?;
            Ok(rows.len() == 1)
        }
        AnyConnection::Sqlite(_) => Ok(store::lock(conn, id)?),
    }
}

/// Acts for every late seat of one game; `None` if nothing was due any more.
fn time_out(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<(i64, Vec<String>, u64)>, ApiError> {
    let now = db::now();
    if !claim(conn, id, "deadline", now)? {
        return Ok(None);
    }
    let table = Table::load(conn, id)?;
    let deadline = match table.row.deadline {
        Some(d) if d <= now && table.status() == GameStatus::Active => d,
        _ => return Ok(None),
    };
    let before = table.row.action_count;
    let mut change = Change::new(table)?;
    let Some(late) = change
        .game
        .as_ref()
        .map(|g| g.to_act().iter().collect::<Vec<Seat>>())
    else {
        return Ok(None);
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
            .ok_or_else(|| ApiError::internal(format!("no action for late seat {seat}")))?;
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
    let lag = (now - deadline).num_milliseconds();
    Ok(Some((lag, table.notified_users, applied)))
}

/// Sends `turn_reminder` to the humans who still must act; `None` if not due any more.
fn remind(conn: &mut AnyConnection, id: &str) -> Result<Option<Vec<String>>, ApiError> {
    let now = db::now();
    if !claim(conn, id, "reminder_at", now)? {
        return Ok(None);
    }
    let table = Table::load(conn, id)?;
    match table.row.reminder_at {
        Some(at) if at <= now && table.status() == GameStatus::Active => {}
        _ => return Ok(None),
    }
    diesel::update(games::table.find(id))
        .set(games::reminder_at.eq(None::<NaiveDateTime>))
        .execute(conn)?;
    let Some(game) = table.game()? else {
        return Ok(None);
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
    Ok(Some(notifications::write(conn, pending, now)?))
}
