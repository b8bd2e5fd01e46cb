//! Rate limits on the account endpoints, per client IP and per username (governor's
//! keyed GCRA limiter, in the memory of each instance).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::{Quota, RateLimiter, state::keyed::DefaultKeyedStateStore};

use crate::error::{Error, RateLimit};

/// A keyed limiter that reports the state of the key it checked.
type Limiter =
    RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock, StateInformationMiddleware>;

/// Keyed limiters for the account endpoints.
pub struct AuthLimits {
    limiter: Limiter,
    quota: Quota,
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
        let quota = Quota::per_minute(n);
        Self {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            quota,
            clock: DefaultClock::default(),
        }
    }

    /// Counts one attempt for each key; refuses when any is over its quota. Reports the
    /// tightest of the keys' limits.
    ///
    /// # Errors
    /// 429 `rate_limited` with the wait until the next attempt is allowed, and the limit.
    pub fn check(&self, keys: &[String]) -> Result<RateLimit, Error> {
        if self.limiter.len() > 100_000 {
            self.limiter.retain_recent();
        }
        let mut tightest = self.standing(self.quota.burst_size().get());
        for key in keys {
            match self.limiter.check_key(key) {
                Ok(snapshot) => {
                    tightest =
                        tightest.tightest(self.standing(snapshot.remaining_burst_capacity()));
                }
                Err(not_until) => {
                    let wait = not_until.wait_time_from(self.clock.now());
                    // Full again one replenishment per missing attempt after the next one.
                    let full = wait + self.missing(self.quota.burst_size().get() - 1);
                    let limit = RateLimit {
                        limit: self.quota.burst_size().get(),
                        remaining: 0,
                        reset_secs: whole_secs(full),
                    };
                    return Err(Error::rate_limited(wait.as_secs() + 1).with_rate_limit(limit));
                }
            }
        }
        Ok(tightest)
    }

    /// The limit with `remaining` attempts left. The reset is an upper bound: GCRA
    /// replenishes one attempt per interval, and the one under way may be partly done.
    fn standing(&self, remaining: u32) -> RateLimit {
        let limit = self.quota.burst_size().get();
        RateLimit {
            limit,
            remaining,
            reset_secs: whole_secs(self.missing(limit.saturating_sub(remaining))),
        }
    }

    /// How long `attempts` take to come back.
    fn missing(&self, attempts: u32) -> Duration {
        self.quota.replenish_interval() * attempts
    }
}

/// Whole seconds, rounded up: a client that waits that long finds what was promised.
fn whole_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_attempt_spends_one_and_the_refusal_reports_an_empty_quota() {
        let limits = AuthLimits::new(3);
        let keys = ["login:ip:1".to_owned(), "login:user:a".to_owned()];
        let first = limits.check(&keys).unwrap();
        assert_eq!((first.limit, first.remaining), (3, 2));
        // One attempt spent of three a minute: back within 20 s.
        assert!((1..=20).contains(&first.reset_secs), "{first:?}");
        assert_eq!(limits.check(&keys).unwrap().remaining, 1);
        let last = limits.check(&keys).unwrap();
        assert_eq!(last.remaining, 0);
        assert!((41..=60).contains(&last.reset_secs), "{last:?}");

        let refused = limits.check(&keys).unwrap_err();
        assert_eq!(refused.code(), "rate_limited");
        let limit = refused.rate_limit().unwrap();
        assert_eq!((limit.limit, limit.remaining), (3, 0));
        assert!(
            refused.retry_after().unwrap() <= limit.reset_secs,
            "{limit:?}"
        );
    }

    #[test]
    fn the_tightest_key_is_reported() {
        let limits = AuthLimits::new(5);
        let ip = "login:ip:1".to_owned();
        for _ in 0..3 {
            limits.check(std::slice::from_ref(&ip)).unwrap();
        }
        let both = limits.check(&[ip, "login:user:fresh".to_owned()]).unwrap();
        assert_eq!(both.remaining, 1, "{both:?}");
    }
}
