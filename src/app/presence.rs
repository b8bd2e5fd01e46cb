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

/// How many streams and long-polls one user may hold open at once on one instance: a
/// phone, a tablet and a few browser tabs each following a game and the feed fit, with room
/// for the streams of reloaded tabs, whose end the server sees only at a heartbeat (up to
/// 30 s later); and one account (a guest is one request away) cannot take the instance's
/// whole ceiling.
pub const MAX_PER_USER: u32 = 32;

/// Open streams and long-polls of this instance, by user and topic.
#[derive(Debug)]
pub struct Presence {
    max: usize,
    open: AtomicUsize,
    lists: Mutex<Lists>,
}

/// What [`Presence`] keeps under its lock.
#[derive(Debug, Default)]
struct Lists {
    /// Streams by user and topic.
    watching: HashMap<(String, String), u32>,
    /// Streams and long-polls by user.
    per_user: HashMap<String, u32>,
}

/// One open stream or waiting long-poll; dropping it ends its presence.
#[derive(Debug)]
pub struct Watch {
    presence: Arc<Presence>,
    user_id: String,
    /// A stream's topic; none for a long-poll.
    topic: Option<String>,
}

/// Why [`Presence::enter`] refused a watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The instance holds its ceiling (`LEEKHA_MAX_STREAMS`).
    Full,
    /// The user holds [`MAX_PER_USER`].
    UserFull,
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
            lists: Mutex::default(),
        }
    }

    /// Admits one more watch of `topic` by `user_id`, or says why not.
    ///
    /// # Errors
    /// [`Refused`], when the instance or the user holds its ceiling.
    pub fn enter(
        self: &Arc<Self>,
        user_id: &str,
        topic: &str,
        by: Follower,
    ) -> Result<Watch, Refused> {
        let mut lists = self.lock();
        let mine = lists.per_user.get(user_id).copied().unwrap_or(0);
        if mine >= MAX_PER_USER {
            return Err(Refused::UserFull);
        }
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .map_err(|_| Refused::Full)?;
        *lists.per_user.entry(user_id.to_owned()).or_insert(0) += 1;
        let topic = (by == Follower::Stream).then(|| topic.to_owned());
        if let Some(topic) = &topic {
            *lists
                .watching
                .entry((user_id.to_owned(), topic.clone()))
                .or_insert(0) += 1;
        }
        Ok(Watch {
            presence: self.clone(),
            user_id: user_id.to_owned(),
            topic,
        })
    }

    /// Whether `user_id` has a stream open on the game `game_id` in this instance.
    pub fn is_watching(&self, user_id: &str, game_id: &str) -> bool {
        self.lock()
            .watching
            .contains_key(&(user_id.to_owned(), game_id.to_owned()))
    }

    /// Whether `user_id` follows their notification feed by a stream in this instance.
    pub fn is_watching_feed(&self, user_id: &str) -> bool {
        self.lock()
            .watching
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Lists> {
        self.lists.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts one fewer under `key`, forgetting it at zero.
fn release<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, u32>, key: &K) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut lists = self.presence.lock();
        release(&mut lists.per_user, &self.user_id);
        if let Some(topic) = self.topic.take() {
            release(
                &mut lists.watching,
                &(std::mem::take(&mut self.user_id), topic),
            );
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
        assert_eq!(
            p.enter("v", "g", Follower::Stream).unwrap_err(),
            Refused::Full,
            "a third is refused"
        );
        assert!(p.is_watching("u", "g"));
        assert!(!p.is_watching("v", "g"));
        drop(a);
        assert!(p.is_watching("u", "g"), "one stream still open");
        drop(b);
        assert!(!p.is_watching("u", "g"));
        assert_eq!(p.open(), 0);
        assert!(p.enter("v", "g", Follower::Stream).is_ok());
    }

    #[test]
    fn a_long_poll_counts_against_the_ceiling_but_watches_nothing() {
        let p = Arc::new(Presence::new(1));
        let poll = p.enter("u", "g", Follower::LongPoll).unwrap();
        assert!(!p.is_watching("u", "g"));
        assert!(p.enter("u", "g", Follower::Stream).is_err());
        drop(poll);
        assert_eq!(p.open(), 0);
    }

    #[test]
    fn one_user_holds_at_most_max_per_user_and_leaves_the_rest_to_others() {
        let p = Arc::new(Presence::new(100));
        let mine: Vec<Watch> = (0..MAX_PER_USER)
            .map(|i| {
                let by = if i % 2 == 0 {
                    Follower::Stream
                } else {
                    Follower::LongPoll
                };
                p.enter("u", &format!("g{i}"), by).unwrap()
            })
            .collect();
        assert_eq!(
            p.enter("u", "feed", Follower::LongPoll).unwrap_err(),
            Refused::UserFull
        );
        let other = p.enter("v", "g0", Follower::Stream).unwrap();
        assert_eq!(p.open(), MAX_PER_USER as usize + 1);
        drop(mine);
        assert!(!p.is_watching("u", "g0"));
        assert!(p.is_watching("v", "g0"));
        assert!(p.enter("u", "feed", Follower::Stream).is_ok());
        drop(other);
        assert_eq!(p.open(), 0);
        assert!(p.lock().per_user.is_empty() && p.lock().watching.is_empty());
    }
}
