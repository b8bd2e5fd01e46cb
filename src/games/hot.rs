//! The games this instance wrote or read last, so that the next action on one of them can
//! skip reading it, and the next view can skip all but a version probe.
//!
//! This is a cache, never a source of truth: an action judged against a cached table is
//! written only if the game's version and reminder in the database are still the cached ones
//! and the acting account is still in good standing (see [`crate::db::games::AccountGuard`]);
//! otherwise, and whenever the cached table does not lead to a clean success, the action runs
//! again from the database. A view is served from a cached table only when the database,
//! asked in the same request, has the game at the cached version ([`super::view`]). Other
//! instances' writes therefore cost this instance a cache miss, nothing more. A table is
//! given out for a few seconds after it was read from the database, however often it was
//! written back since: that bounds how stale the one thing no version covers can be, the
//! usernames shown.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Table;

/// A bounded map from game id to the latest table this instance wrote or read.
pub struct HotTables {
    entries: Mutex<lru::LruCache<String, Arc<Table>>>,
    ttl: Duration,
}

impl HotTables {
    /// At most `capacity` games (at least one), each given out until `ttl` after its read.
    #[must_use]
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Self {
            entries: Mutex::new(lru::LruCache::new(capacity)),
            ttl,
        }
    }

    /// Takes the game out of the cache if it is there and fresh: one action at a time works
    /// on a cached table, and the one that commits puts the new table back.
    pub fn take(&self, id: &str) -> Option<Table> {
        let table = self.lock().pop(id)?;
        self.fresh(&table)
            .then(|| Arc::try_unwrap(table).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// The game as cached, if it is there and fresh, left in the cache (for a view).
    pub fn peek(&self, id: &str) -> Option<Arc<Table>> {
        let mut entries = self.lock();
        let table = entries.get(id)?;
        if self.fresh(table) {
            return Some(Arc::clone(table));
        }
        entries.pop(id);
        None
    }

    /// Keeps the table as just written or read, unless a later version of the game is held
    /// already (a read that overtook a write, or another instance's write seen first).
    pub fn put(&self, table: Table) {
        let mut entries = self.lock();
        if entries
            .peek(&table.row.id)
            .is_some_and(|held| held.row.version > table.row.version)
        {
            return;
        }
        entries.put(table.row.id.clone(), Arc::new(table));
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

    fn fresh(&self, table: &Table) -> bool {
        table.loaded_at.elapsed() < self.ttl
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, lru::LruCache<String, Arc<Table>>> {
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
    /// 4,096 games, each for 5 s after its read: a few MiB at most.
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
            loaded_at: std::time::Instant::now(),
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

    #[test]
    fn a_peeked_table_stays_and_an_older_version_does_not_replace_a_newer() {
        let hot = HotTables::new(8, Duration::from_secs(60));
        hot.put(table("a", 5));
        assert_eq!(hot.peek("a").map(|t| t.row.version), Some(5));
        hot.put(table("a", 4));
        assert_eq!(hot.peek("a").map(|t| t.row.version), Some(5));
        hot.put(table("a", 6));
        assert_eq!(hot.take("a").map(|t| t.row.version), Some(6));
        assert!(hot.peek("a").is_none());
    }

    #[test]
    fn freshness_counts_from_the_read_not_the_last_write() {
        let hot = HotTables::new(8, Duration::from_millis(50));
        let mut old = table("a", 1);
        old.loaded_at = std::time::Instant::now() - Duration::from_millis(60);
        hot.put(old);
        assert!(hot.peek("a").is_none());
        assert!(hot.is_empty());
    }
}
