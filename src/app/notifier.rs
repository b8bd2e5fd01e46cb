//! Wakes long-polls and streams as soon as a topic changes: a game (its id), a user's feed
//! or a user's account (a ban, a logout or a deletion ends their streams); `db::wake` names
//! the topics. Writers of this instance wake it directly after their commit; on
//! PostgreSQL every instance's listener (`listen.rs`) wakes it for the changes of the
//! others, so waiters never poll the database.
//!
//! Each topic counts its wake-ups (its generation), so that many waiters woken by one change
//! can tell whether a read made after the wake-up already covers it (see
//! `http::streams::cache`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// One topic's waiters and wake-up count.
#[derive(Debug, Default)]
pub struct Topic {
    notify: Notify,
    generation: AtomicU64,
    targeted: AtomicU64,
}

impl Topic {
    /// How many times this topic was woken. Read it (after arming [`Topic::notified`])
    /// before a database read: the read then sees every change up to that wake-up.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A future that completes at the next wake-up. Arm it (`enable`) before reading, so a
    /// change in between still wakes the waiter.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }

    /// How many of the wake-ups named this topic ([`Notifier::notify`]), as opposed to
    /// waking everyone ([`Notifier::notify_all`]): a stream ends on a targeted wake-up of
    /// its account, but only re-checks the account after a catch-up.
    pub fn targeted(&self) -> u64 {
        self.targeted.load(Ordering::Acquire)
    }

    fn wake(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.notify.notify_waiters();
    }
}

/// Per-topic wake-ups, and the shutdown flag every waiter checks when woken.
#[derive(Debug, Default)]
pub struct Notifier {
    topics: Mutex<HashMap<String, Arc<Topic>>>,
    shutting_down: AtomicBool,
}

impl Notifier {
    /// A handle to wait on for `topic`. Take it before checking the database, then wait:
    /// a change in between still wakes the waiter.
    pub fn subscribe(&self, topic: &str) -> Arc<Topic> {
        let mut topics = self.topics.lock().unwrap_or_else(|e| e.into_inner());
        if topics.len() > 20_000 {
            // Forget topics nobody waits on (a waiter holds its handle).
            topics.retain(|_, t| Arc::strong_count(t) > 1);
        }
        topics.entry(topic.to_owned()).or_default().clone()
    }

    /// Wakes every waiter of `topic`.
    pub fn notify(&self, topic: &str) {
        let topics = self.topics.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = topics.get(topic) {
            t.targeted.fetch_add(1, Ordering::AcqRel);
            t.wake();
        }
    }

    /// Wakes every waiter of every topic: after the listener lost its connection (changes
    /// may have been missed, so everyone re-reads) and at shutdown.
    pub fn notify_all(&self) {
        let topics = self.topics.lock().unwrap_or_else(|e| e.into_inner());
        for t in topics.values() {
            t.wake();
        }
    }

    /// Marks the instance as shutting down and wakes everyone: streams end, long-polls
    /// answer with what they have, so the HTTP drain does not wait for them.
    pub fn shut_down(&self) {
        self.shutting_down.store(true, Ordering::Release);
        self.notify_all();
    }

    /// Whether [`Notifier::shut_down`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn a_wake_up_counts_and_wakes_an_armed_waiter() {
        let n = Notifier::default();
        let t = n.subscribe("g");
        let notified = t.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let before = t.generation();
        n.notify("g");
        assert_eq!(t.generation(), before + 1);
        tokio::time::timeout(std::time::Duration::from_secs(1), notified)
            .await
            .expect("woken");
        n.shut_down();
        assert!(n.is_shutting_down());
        assert_eq!(t.generation(), before + 2);
    }
}
