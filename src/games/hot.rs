//! The games this instance wrote last, so that the next action on one of them can skip
//! reading it.
//!
//! This is a cache, never a source of truth: an action judged against a cached table is
//! written only if the game's version and reminder in the database are still the cached ones
//! and the acting account is still in good standing (see [`crate::db::games::AccountGuard`]);
//! otherwise, and whenever the cached table does not lead to a clean success, the action runs
//! again from the database. Other instances' writes therefore cost this instance a cache miss,
//! nothing more. Entries expire after a few seconds, which bounds how stale the one thing no
//! version covers can be: the usernames shown in a response.

use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Table;

/// A bounded, short-lived map from game id to the table as this instance last wrote it.
pub struct HotTables {
    entries: Mutex<lru::LruCache<String, (Instant, Table)>>,
    ttl: Duration,
}

impl HotTables {
    /// At most `capacity` games (at least one), each kept for `ttl`.
    #[must_use]
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Self {
            entries: Mutex::new(lru::LruCache::new(capacity)),
            ttl,
        }
    }

    /// Takes the game out of the cache if it is there and fresh: one request at a time works
    /// on a cached table, and the one that commits puts the new table back.
    pub fn take(&self, id: &str) -> Option<Table> {
        let (at, table) = self.lock().pop(id)?;
        (at.elapsed() < self.ttl).then_some(table)
    }

    /// Keeps the table as just written.
    pub fn put(&self, table: Table) {
        let id = table.row.id.clone();
        self.lock().put(id, (Instant::now(), table));
    }

    /// Games held now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no game is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, lru::LruCache<String, (Instant, Table)>> {
        // A panic while holding the lock cannot leave the map inconsistent for our use.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for HotTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HotTables")
            .field("games", &self.len())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl Default for HotTables {
    /// 4,096 games for 5 s each: a few MiB at most.
    fn default() -> Self {
        Self::new(4096, Duration::from_secs(5))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::games::GameRow;

    fn table(id: &str, version: i64) -> Table {
        Table {
            row: GameRow {
                version,
                ..GameRow::sample(id)
            },
            seats: Vec::new(),
            names: Default::default(),
            webhook_users: Vec::new(),
            notified_users: Vec::new(),
            parsed: None,
            spectators: 0,
        }
    }

    #[test]
    fn a_table_is_taken_once() {
        let hot = HotTables::new(8, Duration::from_secs(60));
        hot.put(table("a", 3));
        assert_eq!(hot.take("a").map(|t| t.row.version), Some(3));
        assert!(hot.take("a").is_none());
    }

    #[test]
    fn expired_tables_are_not_given_out() {
        let hot = HotTables::new(8, Duration::ZERO);
        hot.put(table("a", 1));
        assert!(hot.take("a").is_none());
        assert!(hot.is_empty());
    }

    #[test]
    fn the_least_recently_written_game_goes_first() {
        let hot = HotTables::new(2, Duration::from_secs(60));
        hot.put(table("a", 1));
        hot.put(table("b", 1));
        hot.put(table("c", 1));
        assert_eq!(hot.len(), 2);
        assert!(hot.take("a").is_none());
        assert!(hot.take("b").is_some() && hot.take("c").is_some());
    }
}
