//! The background work of every instance on its games: turns whose deadline passed (the
//! server acts for the late seats with a bot), turn reminders, and the end of players' time
//! away. Deliveries (webhooks, pushes) have loops of their own ([`crate::background`]), so
//! that a slow receiver never holds up a deadline.
//!
//! What is done to a due game is the game service's [`games::wake`]; this module is the
//! loop around it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{JoinHandle, Thread};

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
    /// Seats given back to players whose time away ran out.
    pub returned_from_away: usize,
}

/// A running scheduler thread; stops when dropped or on [`Scheduler::stop`].
pub struct Scheduler {
    stopper: Stopper,
    handle: Option<JoinHandle<()>>,
}

/// Asks a [`Scheduler`] to stop, from anywhere (a signal handler's task), without waiting.
#[derive(Clone)]
pub struct Stopper {
    flag: Arc<AtomicBool>,
    thread: Option<Thread>,
}

impl Stopper {
    /// Sets the flag and wakes the thread from its sleep between ticks; a tick in progress
    /// returns after the game it is handling.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::Relaxed);
        if let Some(t) = &self.thread {
            t.unpark();
        }
    }

    /// Whether a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

impl Scheduler {
    /// Starts the loop: every `config.scheduler_interval`, one [`tick`]; at once again while
    /// bots play on games with no human left to act, so those finish promptly (each of their
    /// steps is a short transaction of its own, so other requests interleave).
    pub fn spawn(state: AppState) -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        let handle = std::thread::Builder::new()
            .name("leekha-scheduler".into())
            .spawn(move || {
                while !seen.load(Ordering::Relaxed) {
                    let bots_busy = match tick_unless_stopped(&state, &seen) {
                        Ok(report) => report.bot_steps > 0,
                        Err(e) => {
                            tracing::warn!(error = %e, "scheduler tick failed");
                            false
                        }
                    };
                    // Parked rather than slept, so that a stop does not wait out the interval
                    // (up to a minute). A spurious wake only makes one tick early.
                    if bots_busy {
                        std::thread::yield_now();
                    } else if !seen.load(Ordering::Relaxed) {
                        std::thread::park_timeout(state.config.scheduler_interval);
                    }
                }
            })
            .expect("spawn the scheduler thread");
        Self {
            stopper: Stopper {
                flag,
                thread: Some(handle.thread().clone()),
            },
            handle: Some(handle),
        }
    }

    /// A handle that asks this scheduler to stop without waiting for it.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Stops the loop and waits for it: at most the game it is handling.
    pub fn stop(mut self) {
        self.stopper.stop();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.stopper.stop();
    }
}

/// One pass: due turns, due reminders, ended times away. Blocking.
///
/// # Errors
/// Database errors (the next tick tries again).
pub fn tick(state: &AppState) -> Result<TickReport, Error> {
    tick_unless_stopped(state, &AtomicBool::new(false))
}

/// [`tick`], returning early once `stop` is set: it is looked at before each game, so a
/// stop waits for the game in hand only, never for the rest of the up to 100 claimed (each
/// game is its own transaction: what was not reached is simply still due next time).
///
/// # Errors
/// Database errors (the next tick tries again).
pub fn tick_unless_stopped(state: &AppState, stop: &AtomicBool) -> Result<TickReport, Error> {
    let mut report = TickReport::default();
    let mut conn = state.db.conn()?;
    for id in games::due(&mut conn, 100)? {
        if stop.load(Ordering::Relaxed) {
            return Ok(report);
        }
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
                // No pause between steps, even on SQLite: writers queue at the writer gate
                // (db::writer) in arrival order, so a request waiting there goes next.
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
    if stop.load(Ordering::Relaxed) {
        return Ok(report);
    }
    for done in games::away::end_due(&mut conn, 100)? {
        report.returned_from_away += 1;
        state.published(&done);
    }
    Ok(report)
}
