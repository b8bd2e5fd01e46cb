//! The one path of this process's writes to SQLite: a first-come, first-served gate taken
//! before a write transaction begins.
//!
//! SQLite lets a waiting writer retry on a timer (its busy handler, sleeping up to 100 ms
//! between tries), so under a steady stream of writes one waiter can lose every race until its
//! busy timeout runs out, while writers that came later go first. Behind the gate the writers
//! of this process queue in arrival order, and SQLite's own busy timeout only covers other
//! processes on the same file. The queue is bounded by construction: a writer holds a pooled
//! connection while it waits, so at most the pool's size wait at once.
//!
//! The gate is per process, not per file: the server opens one SQLite database. A process
//! holding several (the test suite) only orders their writes among each other, which costs a
//! few milliseconds and is never wrong.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::FairMutex;

static GATE: FairMutex<()> = parking_lot::const_fair_mutex(());

/// How long a writer waits for the gate, in milliseconds: the longest database timeout of
/// the pools this process opened (0: none yet, [`DEFAULT_WAIT`]).
static WAIT_MS: AtomicU64 = AtomicU64::new(0);

/// The wait before any pool set one.
const DEFAULT_WAIT: Duration = Duration::from_secs(5);

thread_local! {
    /// How many write transactions this thread has open inside the gate: a nested one (a
    /// savepoint) must not wait for the gate its own thread holds.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Lets a writer wait at least `wait` for the gate before giving up (the database timeout).
/// Only ever lengthens the wait: with several pools in one process, none cuts another's short.
pub fn set_wait(wait: Duration) {
    WAIT_MS.fetch_max(
        u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

/// The gate was not had within the wait: as if SQLite had answered "database is locked".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateTimedOut;

/// Runs `f` holding the gate (at once when this thread already holds it).
///
/// # Errors
/// [`GateTimedOut`] when other writers held it for longer than the wait.
pub fn hold<T>(f: impl FnOnce() -> T) -> Result<T, GateTimedOut> {
    if DEPTH.get() > 0 {
        return Ok(run_nested(f));
    }
    let wait = match WAIT_MS.load(Ordering::Relaxed) {
        0 => DEFAULT_WAIT,
        ms => Duration::from_millis(ms),
    };
    let Some(_guard) = GATE.try_lock_for(wait) else {
        return Err(GateTimedOut);
    };
    Ok(run_nested(f))
}

fn run_nested<T>(f: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            DEPTH.set(DEPTH.get() - 1);
        }
    }
    DEPTH.set(DEPTH.get() + 1);
    let _leave = Leave;
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_write_does_not_wait_for_its_own_thread() {
        let inner = hold(|| hold(|| 7)).expect("outer");
        assert_eq!(inner, Ok(7));
        assert_eq!(DEPTH.get(), 0);
    }

    #[test]
    fn the_depth_unwinds_when_the_work_panics() {
        let caught = std::panic::catch_unwind(|| hold(|| panic!("inside")));
        assert!(caught.is_err());
        assert_eq!(DEPTH.get(), 0);
        assert_eq!(hold(|| 1), Ok(1));
    }
}
