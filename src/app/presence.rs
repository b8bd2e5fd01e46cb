//! Who is watching what, and the ceiling on open streams and long-polls.
//!
//! Every event stream and every waiting long-poll holds a [`Watch`] for as long as it is
//! open: it counts against `LEEKHA_MAX_STREAMS`. A stream also records that its user is
//! watching its topic (a game id, or the user's feed), and push delivery asks
//! [`Presence::is_watching`] to skip a `your_turn` push to a user who has the game open
//! right now. A long-poll does not: the server learns that its client went away (an app
//! sent to the background, a dropped connection) only when it answers, up to 30 s later,
//! and a push skipped for a client that is gone is lost. A stream's end is seen at once.
//!
//! Presence is per instance: a user watching through another instance is not seen here. A
//! push sent in that case is a duplicate the phone collapses, not a lost message, which is
//! why a cross-instance registry (one more write per stream) is not worth it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Open streams and long-polls of this instance, by user and topic.
#[derive(Debug)]
pub struct Presence {
    max: usize,
    open: AtomicUsize,
    watching: Mutex<HashMap<(String, String), u32>>,
}

/// One open stream or waiting long-poll; dropping it ends its presence.
#[derive(Debug)]
pub struct Watch {
    presence: Arc<Presence>,
    /// A stream's user and topic; none for a long-poll.
    key: Option<(String, String)>,
}

/// What holds a [`Watch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follower {
    /// An event stream: its user watches the topic live.
    Stream,
    /// A waiting long-poll: it counts against the ceiling only.
    LongPoll,
}

impl Presence {
    /// A registry admitting at most `max` watches at once.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            open: AtomicUsize::new(0),
            watching: Mutex::default(),
        }
    }

    /// Admits one more watch of `topic` by `user_id`; `None` when the ceiling is reached.
    pub fn enter(self: &Arc<Self>, user_id: &str, topic: &str, by: Follower) -> Option<Watch> {
        let admitted = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok();
        if !admitted {
            return None;
        }
        let key = (by == Follower::Stream).then(|| (user_id.to_owned(), topic.to_owned()));
        if let Some(key) = &key {
            *self.lock().entry(key.clone()).or_insert(0) += 1;
        }
        Some(Watch {
            presence: self.clone(),
            key,
        })
    }

    /// Whether `user_id` has a stream open on the game `game_id` in this instance.
    pub fn is_watching(&self, user_id: &str, game_id: &str) -> bool {
        self.lock()
            .contains_key(&(user_id.to_owned(), game_id.to_owned()))
    }

    /// Whether `user_id` follows their notification feed by a stream in this instance.
    pub fn is_watching_feed(&self, user_id: &str) -> bool {
        self.lock()
            .contains_key(&(user_id.to_owned(), crate::db::wake::feed_topic(user_id)))
    }

    /// Open watches now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// The ceiling.
    pub fn max(&self) -> usize {
        self.max
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), u32>> {
        self.watching.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(key) = &self.key {
            let mut watching = self.presence.lock();
            if let Some(n) = watching.get_mut(key) {
                *n -= 1;
                if *n == 0 {
                    watching.remove(key);
                }
            }
        }
        self.presence.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl crate::services::Watching for Presence {
    fn is_watching(&self, user_id: &str, game_id: &str) -> bool {
        Presence::is_watching(self, user_id, game_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_admits_max_and_presence_ends_with_the_last_watch() {
        let p = Arc::new(Presence::new(2));
        let a = p.enter("u", "g", Follower::Stream).unwrap();
        let b = p.enter("u", "g", Follower::Stream).unwrap();
        assert!(
            p.enter("v", "g", Follower::Stream).is_none(),
            "a third is refused"
        );
        assert!(p.is_watching("u", "g"));
        assert!(!p.is_watching("v", "g"));
        drop(a);
        assert!(p.is_watching("u", "g"), "one stream still open");
        drop(b);
        assert!(!p.is_watching("u", "g"));
        assert_eq!(p.open(), 0);
        assert!(p.enter("v", "g", Follower::Stream).is_some());
    }

    #[test]
    fn a_long_poll_counts_against_the_ceiling_but_watches_nothing() {
        let p = Arc::new(Presence::new(1));
        let poll = p.enter("u", "g", Follower::LongPoll).unwrap();
        assert!(!p.is_watching("u", "g"));
        assert!(p.enter("u", "g", Follower::Stream).is_none());
        drop(poll);
        assert_eq!(p.open(), 0);
    }
}
