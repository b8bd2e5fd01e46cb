//! Rate limits on the account endpoints, per client IP and per username (governor's
//! keyed GCRA limiter, in the memory of each instance).

use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::{Quota, RateLimiter, state::keyed::DefaultKeyedStateStore};

use crate::error::Error;

/// Keyed limiters for the account endpoints.
pub struct AuthLimits {
    limiter: RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock>,
    clock: DefaultClock,
}

impl std::fmt::Debug for AuthLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthLimits")
    }
}

impl AuthLimits {
    /// `per_minute` attempts per key per minute, all of them available at once.
    pub fn new(per_minute: u32) -> Self {
        let n = NonZeroU32::new(per_minute.max(1)).expect("at least one");
        Self {
            limiter: RateLimiter::keyed(Quota::per_minute(n)),
            clock: DefaultClock::default(),
        }
    }

    /// Counts one attempt for each key; refuses when any is over its quota.
    ///
    /// # Errors
    /// 429 `rate_limited` with the wait until the next attempt is allowed.
    pub fn check(&self, keys: &[String]) -> Result<(), Error> {
        if self.limiter.len() > 100_000 {
            self.limiter.retain_recent();
        }
        for key in keys {
            if let Err(not_until) = self.limiter.check_key(key) {
                let wait = not_until.wait_time_from(self.clock.now());
                return Err(Error::rate_limited(wait.as_secs() + 1));
            }
        }
        Ok(())
    }
}
