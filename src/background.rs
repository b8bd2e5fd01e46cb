//! A background loop of an instance: one thread that runs a pass every interval, and at once
//! again while a pass finds work; stopped when asked, after the item in hand. Pushes and
//! webhook deliveries each have one, so that a slow push service or receiver holds up only
//! its own kind of delivery, never the turns' deadlines (the scheduler's loop); and they send
//! on several lanes, one user at a time each, so that it holds up only its own user's.
//!
//! May import: `error`. Nothing else.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

    /// Starts the thread `name` that claims items one at a time and sends each on a thread of
    /// its own, at most `lanes` at once and never two of one key (a user) at once: a
    /// receiver that takes its time (up to the sender's timeout) then holds up only its own
    /// user's items, not everyone's. `claim(busy)` claims the next item of a key not in
    /// `busy` (or says there is none); `run` sends it. The claimer waits `interval` while
    /// nothing is due or every lane is taken, and comes round at once when a lane frees.
    /// Stopping waits for the items in hand.
    ///
    /// # Errors
    /// When the thread cannot be made.
    pub fn spawn_lanes<J: Send + 'static>(
        name: &str,
        lanes: usize,
        interval: Duration,
        mut claim: impl FnMut(&[String]) -> Result<Option<(String, J)>, Error> + Send + 'static,
        run: impl Fn(J) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Result<Self, String> {
        let flag = Arc::new(AtomicBool::new(false));
        let seen = flag.clone();
        let label = name.to_owned();
        let run = Arc::new(run);
        let handle = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let busy: Arc<Mutex<HashSet<String>>> = Arc::default();
                let mut running: Vec<JoinHandle<()>> = Vec::new();
                while !seen.load(Ordering::Relaxed) {
                    running.retain(|h| !h.is_finished());
                    let keys: Vec<String> = lock(&busy).iter().cloned().collect();
                    if keys.len() >= lanes {
                        std::thread::park_timeout(interval);
                        continue;
                    }
                    let job = match claim(&keys) {
                        Ok(Some(job)) => job,
                        Ok(None) => {
                            std::thread::park_timeout(interval);
                            continue;
                        }
                        Err(e) => {
                            tracing::warn!(worker = %label, error = %e, "a background claim failed");
                            std::thread::park_timeout(interval);
                            continue;
                        }
                    };
                    let (key, item) = job;
                    lock(&busy).insert(key.clone());
                    // Released however the lane ends (a panic, a thread that could not be
                    // made): the key's next item must not wait forever.
                    let lane = Lane {
                        busy: busy.clone(),
                        key,
                        claimer: std::thread::current(),
                    };
                    let run = run.clone();
                    let lane_label = label.clone();
                    let spawned = std::thread::Builder::new()
                        .name(format!("{label}-lane"))
                        .spawn(move || {
                            if let Err(e) = run(item) {
                                tracing::warn!(worker = %lane_label, error = %e, "a background item failed");
                            }
                            drop(lane);
                        });
                    match spawned {
                        Ok(h) => running.push(h),
                        // The item keeps its lease and is claimed again when it runs out.
                        Err(e) => {
                            tracing::warn!(worker = %label, error = %e, "no thread for a background item");
                            std::thread::park_timeout(interval);
                        }
                    }
                }
                for h in running {
                    let _ = h.join();
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

/// A lane's hold on its key, given back (and the claimer woken) when the lane ends.
struct Lane {
    busy: Arc<Mutex<HashSet<String>>>,
    key: String,
    claimer: std::thread::Thread,
}

impl Drop for Lane {
    fn drop(&mut self) {
        lock(&self.busy).remove(&self.key);
        self.claimer.unpark();
    }
}

/// The set of busy keys; a lane that panicked while holding it left it whole.
fn lock(busy: &Mutex<HashSet<String>>) -> std::sync::MutexGuard<'_, HashSet<String>> {
    busy.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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

    /// Waits for `done` (10 s at the most: a generous bound, not a measurement).
    fn wait_until(done: impl Fn() -> bool, stalled: &str) {
        let started = std::time::Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(10), "{stalled}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

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
        wait_until(|| passes.load(Ordering::SeqCst) >= 6, "the loop stalled");
        worker.stop();
        assert_eq!(
            passes.load(Ordering::SeqCst),
            6,
            "an idle pass waits its interval"
        );
    }

    #[test]
    fn lanes_run_items_side_by_side_never_two_of_one_key_and_a_stop_waits_for_them() {
        // Twelve items of three keys, each taking 50 ms, on four lanes.
        let queue: Arc<Mutex<Vec<(String, usize)>>> = Arc::new(Mutex::new(
            (0..12).map(|i| (format!("user{}", i % 3), i)).collect(),
        ));
        let running: Arc<Mutex<Vec<String>>> = Arc::default();
        let overlaps = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let claimed = queue.clone();
        let (inside, twice, peak, finished) = (
            running.clone(),
            overlaps.clone(),
            most.clone(),
            done.clone(),
        );
        let worker = Worker::spawn_lanes(
            "test-lanes",
            4,
            Duration::from_millis(10),
            move |busy| {
                let mut queue = claimed.lock().unwrap();
                let next = queue.iter().position(|(key, _)| !busy.contains(key));
                Ok(next.map(|i| {
                    let (key, item) = queue.remove(i);
                    (key.clone(), (key, item))
                }))
            },
            move |(key, _item): (String, usize)| {
                {
                    let mut now = inside.lock().unwrap();
                    if now.contains(&key) {
                        twice.fetch_add(1, Ordering::SeqCst);
                    }
                    now.push(key.clone());
                    peak.fetch_max(now.len(), Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(50));
                let mut now = inside.lock().unwrap();
                let at = now.iter().position(|k| *k == key).unwrap();
                now.remove(at);
                finished.fetch_add(1, Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
        wait_until(|| done.load(Ordering::SeqCst) >= 12, "the lanes stalled");
        worker.stop();
        assert_eq!(
            overlaps.load(Ordering::SeqCst),
            0,
            "one item of a key at a time"
        );
        // Side by side, and never beyond the three keys (the fourth lane has none to take).
        let most = most.load(Ordering::SeqCst);
        assert!((2..=3).contains(&most), "{most} at once");
        assert!(queue.lock().unwrap().is_empty());
    }
}
