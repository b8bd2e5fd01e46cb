//! A background loop of an instance: one thread that runs a pass every interval, and at once
//! again while a pass finds work; stopped when asked, after the item in hand. Pushes and
//! webhook deliveries each have one, so that a slow push service or receiver holds up only
//! its own kind of delivery, never the turns' deadlines (the scheduler's loop).
//!
//! May import: `error`. Nothing else.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::Error;

/// A running loop; stops when dropped or on [`Worker::stop`].
pub struct Worker {
    flag: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the thread `name`: `pass(stop)` every `interval`, at once again while it says
    /// it did something (a count above 0). A failed pass is logged and tried again at the
    /// next interval. `pass` should look at `stop` between items.
    ///
    /// # Errors
    /// When the thread cannot be made.
    pub fn spawn(
        name: &str,
        interval: Duration,
        mut pass: impl FnMut(&AtomicBool) -> Result<usize, Error> + Send + 'static,
    ) -> Result<Self, String> {
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        let label = name.to_owned();
        let handle = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                while !seen.load(Ordering::Relaxed) {
                    let busy = match pass(&seen) {
                        Ok(n) => n > 0,
                        Err(e) => {
                            tracing::warn!(worker = %label, error = %e, "a background pass failed");
                            false
                        }
                    };
                    // Parked rather than slept, so that a stop does not wait out the interval.
                    if !busy && !seen.load(Ordering::Relaxed) {
                        std::thread::park_timeout(interval);
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(Self {
            flag,
            handle: Some(handle),
        })
    }

    /// Stops the loop and waits for the item in hand.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.flag.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn a_busy_loop_comes_round_at_once_an_idle_one_waits_and_a_stop_ends_it() {
        let passes = Arc::new(AtomicUsize::new(0));
        let counted = passes.clone();
        // Busy for its first 5 passes, then idle: with an hour's interval, only the busy
        // passes come round before the stop.
        let worker = Worker::spawn("test-loop", Duration::from_secs(3600), move |_| {
            Ok(usize::from(counted.fetch_add(1, Ordering::SeqCst) < 5))
        })
        .unwrap();
        let started = std::time::Instant::now();
        while passes.load(Ordering::SeqCst) < 6 {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the loop stalled"
            );
            std::thread::yield_now();
        }
        worker.stop();
        assert_eq!(
            passes.load(Ordering::SeqCst),
            6,
            "an idle pass waits its interval"
        );
    }
}
