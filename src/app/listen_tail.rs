//! The tail of each watched game's events, shared by all its streams and long-polls on this
//! instance: when a change wakes a thousand waiters of one game, the first to get the lock
//! reads the new events once and the others take them from here. Rows are stored as
//! written (private parts included); each caller's copy is redacted in memory
//! (`EventView::of`), so one read serves every seat and spectator.
//!
//! A tail knows which wake-up of its topic it is complete for (the topic's generation taken
//! before the read that filled it): a waiter woken by that wake-up or an earlier one reads
//! from memory; a later wake-up needs a new read.

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

use crate::db::Db;
use crate::db::games::{self as store, EventRow};
use crate::error::Error;

/// Events kept per game: a few rounds' worth, enough for every waiter that keeps up.
const TAIL_EVENTS: usize = 256;
/// Games whose tails are kept.
const GAMES: usize = 4096;
/// Rendered copies of recent events kept (a few hundred bytes each): enough for the
/// latest events of the busiest games, in each of five copies (four seats, spectators).
const RENDERED: usize = 4096;

/// Whose copy of an event: a seat's (0..=3) or the spectators' (4).
pub type CopyOf = u8;

#[derive(Debug, Default)]
struct Tail {
    events: VecDeque<EventRow>,
    /// The last seq known; `None` before the first read.
    last_seq: Option<i64>,
    /// The tail holds every event of the game up to `last_seq` as of this wake-up count.
    complete_at: Option<u64>,
}

impl Tail {
    /// The seq before the first event kept.
    fn base(&self) -> Option<i64> {
        let last = self.last_seq?;
        Some(self.events.front().map_or(last, |e| e.seq - 1))
    }

    fn covers(&self, after: i64) -> bool {
        matches!((self.base(), self.last_seq), (Some(b), Some(l)) if b <= after && after <= l)
    }

    fn slice(&self, after: i64, limit: usize) -> Vec<EventRow> {
        self.events
            .iter()
            .filter(|e| e.seq > after)
            .take(limit)
            .cloned()
            .collect()
    }

    /// Adds what a read of the events after `after` found; whether the tail now ends where
    /// that read ended.
    fn merge(&mut self, after: i64, rows: &[EventRow]) -> bool {
        let Some(last) = rows.last().map(|e| e.seq) else {
            return self.last_seq == Some(after);
        };
        if self.covers(after) {
            let known = self.last_seq.unwrap_or(after);
            self.events
                .extend(rows.iter().filter(|e| e.seq > known).cloned());
        } else if self.last_seq.is_none_or(|l| last >= l) {
            self.events = rows.iter().cloned().collect();
        } else {
            return false;
        }
        self.last_seq = Some(last.max(self.last_seq.unwrap_or(last)));
        while self.events.len() > TAIL_EVENTS {
            self.events.pop_front();
        }
        self.last_seq == Some(last)
    }
}

/// The tails of the games watched on this instance.
#[derive(Debug)]
pub struct EventTails {
    games: Mutex<LruCache<String, Arc<tokio::sync::Mutex<Tail>>>>,
    /// The frames streams wrote, by game, seq and copy: when one event reaches ten thousand
    /// streams of a game, each copy is redacted and serialized once, not once per stream.
    rendered: Mutex<LruCache<(String, i64, CopyOf), bytes::Bytes>>,
}

impl Default for EventTails {
    fn default() -> Self {
        Self {
            games: Mutex::new(LruCache::new(NonZeroUsize::new(GAMES).expect("not zero"))),
            rendered: Mutex::new(LruCache::new(
                NonZeroUsize::new(RENDERED).expect("not zero"),
            )),
        }
    }
}

impl EventTails {
    /// The rendering of event `seq` of `game_id` in the copy `copy`: from memory when a
    /// stream already made it, else made by `render` (outside the lock) and kept. An
    /// event's copies never change once written (a moderator's hide rewrites a chat event,
    /// and chat events are rendered per reader, never through here).
    ///
    /// # Errors
    /// `render`'s.
    pub fn rendered<E>(
        &self,
        game_id: &str,
        seq: i64,
        copy: CopyOf,
        render: impl FnOnce() -> Result<bytes::Bytes, E>,
    ) -> Result<bytes::Bytes, E> {
        let key = (game_id.to_owned(), seq, copy);
        if let Some(frame) = self.lock_rendered().get(&key) {
            return Ok(frame.clone());
        }
        let frame = render()?;
        self.lock_rendered().put(key, frame.clone());
        Ok(frame)
    }

    fn lock_rendered(
        &self,
    ) -> std::sync::MutexGuard<'_, LruCache<(String, i64, CopyOf), bytes::Bytes>> {
        self.rendered.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// At most `limit` events of `game_id` after `after`, as stored. `generation` is the
    /// game topic's wake-up count the caller took (after arming its wait) before calling:
    /// the answer includes every event committed before that wake-up. Also the game's last
    /// seq when the tail knows it (it is complete up to the newest event).
    ///
    /// A wake-up from another instance arrives a few milliseconds after that instance's
    /// commit, so a read that will not wait for it (`current`) checks the tail against the
    /// game's event count first: one small query instead of the read of the events.
    ///
    /// # Errors
    /// Database errors.
    pub async fn after(
        &self,
        db: &Db,
        game_id: &str,
        (after, limit): (i64, i64),
        generation: u64,
        current: bool,
    ) -> Result<(Vec<EventRow>, Option<i64>), Error> {
        let tail = {
            let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
            games
                .get_or_insert(game_id.to_owned(), Arc::default)
                .clone()
        };
        let mut tail = tail.lock().await;
        let limit_n = usize::try_from(limit).unwrap_or(usize::MAX);
        if tail.complete_at.is_some_and(|g| g >= generation) && tail.covers(after) {
            let known = tail.last_seq;
            let gid = game_id.to_owned();
            if !current
                || db
                    .run(move |conn| Ok(store::event_count(conn, &gid)?))
                    .await?
                    == known
            {
                return Ok((tail.slice(after, limit_n), known));
            }
        }
        let gid = game_id.to_owned();
        let rows = db
            .run(move |conn| Ok(store::events_after(conn, &gid, after, limit)?))
            .await?;
        let ends = tail.merge(after, &rows);
        if ends && rows.len() < limit_n {
            tail.complete_at = Some(tail.complete_at.map_or(generation, |g| g.max(generation)));
            return Ok((rows, tail.last_seq));
        }
        Ok((rows, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: i64) -> EventRow {
        EventRow {
            game_id: "g".into(),
            seq,
            kind: "card_played".into(),
            data: "{}".into(),
            created_at: chrono::NaiveDateTime::default(),
        }
    }

    #[test]
    fn each_copy_of_an_event_is_rendered_once() {
        let tails = EventTails::default();
        let renders = std::cell::Cell::new(0);
        let render = |text: &'static str| {
            renders.set(renders.get() + 1);
            Ok::<_, ()>(bytes::Bytes::from_static(text.as_bytes()))
        };
        for _ in 0..3 {
            assert_eq!(
                tails.rendered("g", 1, 0, || render("seat 0")).unwrap(),
                "seat 0"
            );
            assert_eq!(
                tails.rendered("g", 1, 4, || render("spectators")).unwrap(),
                "spectators"
            );
        }
        assert_eq!(renders.get(), 2, "one render per copy");
        assert_eq!(
            tails.rendered("h", 1, 0, || render("other game")).unwrap(),
            "other game"
        );
        assert_eq!(renders.get(), 3);
        assert!(
            tails.rendered("g", 2, 0, || Err(())).is_err(),
            "a failed render is not kept"
        );
    }

    #[test]
    fn a_tail_grows_by_contiguous_reads_and_serves_slices() {
        let mut t = Tail::default();
        assert!(!t.covers(0));
        assert!(t.merge(0, &[row(1), row(2)]));
        assert!(t.covers(0) && t.covers(2) && !t.covers(3));
        assert!(t.merge(2, &[row(3)]));
        assert_eq!(
            t.slice(1, 10).iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3]
        );
        // An empty read at the end confirms the tail; elsewhere it says nothing.
        assert!(t.merge(3, &[]));
        assert!(!t.merge(1, &[]));
        // A read far ahead replaces it.
        assert!(t.merge(10, &[row(11)]));
        assert!(t.covers(10) && !t.covers(9));
    }
}
