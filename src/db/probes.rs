//! Batched version probes of the views served from this instance's copies, on PostgreSQL.
//!
//! A view served from a copy of the game still asks the database one small question
//! ([`super::games::probe`]): is the game at the copy's version, how many watch it, is the
//! caller's account in good standing. Each such query costs PostgreSQL a round trip and an
//! executor start, which is most of what it costs; when phones open their games before
//! every turn, these probes are most of the statements the database runs. So an instance
//! hands them to one prober thread with a connection of its own, which asks everything that
//! queued while its last query ran in one query ([`super::games::probe_batch`]). A probe that
//! arrives alone goes out alone at once: nothing waits for a batch to fill.
//!
//! The answers mean what the single probe's mean: each row is read in the same statement, so
//! a view is still never older than the request. A probe the prober cannot answer (it cannot
//! connect, or its query failed) is handed back unanswered, and the caller asks on its own
//! connection.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::oneshot;

use super::batcher::{Batcher, OwnConnection};
use super::games::{self as store, Probe};
use crate::config::DatabaseUrl;

/// The most probes in one query: bounds the query's size and its time.
const MOST: usize = 128;
/// The prober thread's name.
const NAME: &str = "leekha-probes";

/// The instance's prober of views (PostgreSQL only).
#[derive(Debug)]
pub struct Probes {
    /// The prober's thread, which starts with the first probe.
    batcher: Batcher<Job, Counts>,
}

/// How many probes the prober answered, and in how many queries.
#[derive(Debug, Default)]
pub struct Counts {
    probes: AtomicU64,
    queries: AtomicU64,
}

impl Counts {
    /// (probes, queries) so far.
    pub fn get(&self) -> (u64, u64) {
        (
            self.probes.load(Ordering::Relaxed),
            self.queries.load(Ordering::Relaxed),
        )
    }
}

/// One probe waiting for the prober: `None` in the reply when it could not be answered.
struct Job {
    game: String,
    caller: String,
    reply: oneshot::Sender<Option<Option<Probe>>>,
}

impl Probes {
    /// A prober for the PostgreSQL database at `url`.
    pub fn new(url: DatabaseUrl) -> Self {
        Self {
            batcher: Batcher::new(NAME, url, MOST, ask),
        }
    }

    /// What the prober answered so far.
    pub fn counts(&self) -> &Counts {
        self.batcher.counts()
    }

    /// [`store::probe`] of `game` for `caller`, asked together with the instance's other
    /// probes of the moment: `Some(None)` when there is no such game, and `None` when the
    /// prober could not ask (the caller then asks itself). It waits without holding a thread.
    pub async fn probe(&self, game: &str, caller: &str) -> Option<Option<Probe>> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            game: game.to_owned(),
            caller: caller.to_owned(),
            reply,
        };
        self.batcher.send(job).ok()?;
        answer.await.ok().flatten()
    }
}

/// The prober's work: asks what queued in one query.
fn ask(conn: &mut OwnConnection, mut batch: Vec<Job>, counts: &Counts) {
    // A caller that went away (its request was cancelled) needs no answer.
    batch.retain(|job| !job.reply.is_closed());
    if batch.is_empty() {
        return;
    }
    let Some(pg) = conn.get() else {
        batch.into_iter().for_each(|job| drop(job.reply.send(None)));
        return;
    };
    let asked: Vec<(&str, &str)> = batch
        .iter()
        .map(|j| (j.game.as_str(), j.caller.as_str()))
        .collect();
    match store::probe_batch(pg, &asked) {
        Ok(answers) => {
            counts
                .probes
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            counts.queries.fetch_add(1, Ordering::Relaxed);
            for (job, answer) in batch.into_iter().zip(answers) {
                let _ = job.reply.send(Some(answer));
            }
        }
        Err(e) => {
            // Each caller asks again on its own connection and hears its own error. A lost
            // connection is opened anew.
            tracing::debug!(error = %e, probes = batch.len(), "a batch of probes failed");
            conn.check();
            batch.into_iter().for_each(|job| drop(job.reply.send(None)));
        }
    }
}
