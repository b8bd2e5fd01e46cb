//! The background work of every instance: turns whose deadline passed (the server acts for
//! the late seats with a bot), turn reminders, and webhook deliveries.
//!
//! What is done to a due game is the game service's [`games::wake`]; this module is the
//! loop around it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crate::app::AppState;
use crate::error::Error;
use crate::games::{self, Woken};

/// What one pass of the scheduler did.
#[derive(Debug, Default, Clone)]
pub struct TickReport {
    /// Deadlines acted on.
    pub timeouts: usize,
    /// For each, how late the action came after its deadline (ms).
    pub lags_ms: Vec<i64>,
    /// Reminders sent (games).
    pub reminders: usize,
    /// Transactions in which bots played on in a game with no human left to act.
    pub bot_steps: usize,
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
                let agent = crate::webhooks::agent(state.config.webhook_allow_private);
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
    for id in games::due(&mut conn, 100)? {
        match games::wake(&mut conn, &id) {
            Ok(Woken::TimedOut { lag_ms, done }) => {
                report.timeouts += 1;
                state.metrics.turn_timeout();
                report.lags_ms.push(lag_ms);
                state.published(&done);
                tracing::info!(game.id = %id, lag_ms, "turn timed out; the server acted");
            }
            Ok(Woken::BotsPlayed(done)) => {
                report.bot_steps += 1;
                state.published(&done);
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
