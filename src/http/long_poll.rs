//! Long-polls: read, and if there is nothing yet, wait for a wake-up of this instance (or the
//! next database check, for changes made through other instances) until the wait runs out.

use std::future::Future;
use std::time::Duration;

use crate::app::AppState;
use crate::error::Error;

/// How often a long-poll re-reads the database, for changes made by other instances.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The longest wait a client may ask for, in seconds.
pub const MAX_WAIT_SECS: u64 = 30;

/// Checks `after` and `wait` of a long-poll query.
///
/// # Errors
/// `validation_failed` for a negative `after` or a wait above [`MAX_WAIT_SECS`].
pub fn check(after: Option<i64>, wait: Option<u64>) -> Result<(i64, u64), Error> {
    let after = after.unwrap_or(0);
    if after < 0 {
        return Err(Error::validation("after must be ≥ 0"));
    }
    let wait = wait.unwrap_or(0);
    if wait > MAX_WAIT_SECS {
        return Err(Error::validation("wait must be 0..=30 seconds"));
    }
    Ok((after, wait))
}

/// Runs `read` until it returns something non-empty (as `is_empty` judges) or `wait`
/// seconds pass, waking early when `topic` is notified in this instance.
///
/// # Errors
/// `read`'s errors.
pub async fn poll<T, F, Fut>(
    state: &AppState,
    topic: &str,
    wait: u64,
    is_empty: impl Fn(&T) -> bool,
    mut read: F,
) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    let notify = state.notifier.subscribe(topic);
    loop {
        // Armed before the read: a change in between still wakes this waiter.
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let found = read().await?;
        let now = tokio::time::Instant::now();
        if !is_empty(&found) || now >= deadline {
            return Ok(found);
        }
        let _ = tokio::time::timeout(POLL_INTERVAL.min(deadline - now), notified).await;
    }
}
