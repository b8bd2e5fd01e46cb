//! Wakes long-polls in this instance as soon as a game changes. Changes made by other
//! instances are found by the long-poll's periodic database check, so this is an
//! optimization, never the only path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// Per-topic wake-ups (a game id, or a user's notification feed).
#[derive(Debug, Default)]
pub struct Notifier {
    topics: Mutex<HashMap<String, Arc<Notify>>>,
}

impl Notifier {
    /// A handle to wait on for `topic`. Take it before checking the database, then wait:
    /// a change in between still wakes the waiter.
    pub fn subscribe(&self, topic: &str) -> Arc<Notify> {
        let mut topics = self.topics.lock().unwrap_or_else(|e| e.into_inner());
        if topics.len() > 10_000 {
            // Forget topics nobody waits on.
            topics.retain(|_, n| Arc::strong_count(n) > 1);
        }
        topics.entry(topic.to_owned()).or_default().clone()
    }

    /// Wakes every waiter of `topic`.
    pub fn notify(&self, topic: &str) {
        let topics = self.topics.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = topics.get(topic) {
            n.notify_waiters();
        }
    }
}
