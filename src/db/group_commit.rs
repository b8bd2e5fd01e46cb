//! Group commit of the action path's guarded writes on PostgreSQL.
//!
//! Most actions commit in one guarded statement without the game's lock
//! ([`super::games::commit_pg`]). Each such statement costs PostgreSQL a round trip, an
//! executor start and a commit, which is more than the writing itself. So an instance hands
//! these writes to one writer thread with a connection of its own: the writer takes every
//! write that queued while its last statement ran and writes them in one statement
//! ([`super::games::commit_pg_batch`]), one round trip and one commit for all. A write that
//! arrives alone goes out alone at once: nothing waits for a batch to fill.
//!
//! What a write means does not change: each game in a batch is written only if it is still
//! as loaded, exactly as its own statement would be, and a caller hears per game whether it
//! was. Whatever the writer cannot do as one batch (the same game twice, a batch that fails,
//! a writer that cannot connect) it hands back untaken, and the caller writes on its own
//! connection as it did before there was a writer.
//!
//! A batch locks several rows in one transaction. Its games are locked in the order of their
//! ids, the same in every instance; the feed counters of the users it notifies are not, so
//! two instances' batches notifying the same two users could deadlock: PostgreSQL then ends
//! one of them, whose writes are handed back like any failed batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use diesel::{PgConnection, QueryResult};
use tokio::sync::oneshot;

use super::batcher::{Batcher, OwnConnection};
use super::games::{self as store, PgCommit};
use crate::config::DatabaseUrl;

/// The most writes in one statement: bounds the statement's size and its time.
const MOST: usize = 64;
/// The writer thread's name.
const NAME: &str = "leekha-group-commit";

/// The instance's writer of guarded action writes (PostgreSQL only).
#[derive(Debug)]
pub struct GroupCommit {
    /// The writer's thread, which starts with the first write.
    batcher: Batcher<Job, Counts>,
}

/// How many writes went through the writer, in how many statements, and the most in one.
#[derive(Debug, Default)]
pub struct Counts {
    writes: AtomicU64,
    statements: AtomicU64,
    largest: AtomicU64,
}

impl Counts {
    /// (writes, statements, the most writes in one statement) so far.
    pub fn get(&self) -> (u64, u64, u64) {
        (
            self.writes.load(Ordering::Relaxed),
            self.statements.load(Ordering::Relaxed),
            self.largest.load(Ordering::Relaxed),
        )
    }
}

/// One write waiting for the writer.
struct Job {
    commit: Box<PgCommit>,
    reply: ReplyTo,
}

/// The writer's answer to one write.
#[derive(Debug)]
pub enum Reply {
    /// Written in a batch (`true`), or not because its game was no longer as loaded.
    Done(bool),
    /// Not written: the caller writes it itself.
    Untaken(Box<PgCommit>),
}

/// Who waits for a write's answer.
enum ReplyTo {
    /// A thread, in [`GroupCommit::commit`].
    Thread(mpsc::SyncSender<Reply>),
    /// A task, in [`GroupCommit::commit_async`].
    Task(oneshot::Sender<Reply>),
}

impl ReplyTo {
    /// Answers; a caller that went away needs no answer.
    fn send(self, reply: Reply) {
        match self {
            Self::Thread(to) => drop(to.send(reply)),
            Self::Task(to) => drop(to.send(reply)),
        }
    }
}

/// The writer stopped holding a write (it panicked): whether it was written is unknown, so
/// the caller must not write it again.
fn stopped() -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError("the group-commit writer stopped".into())
}

impl GroupCommit {
    /// A writer for the PostgreSQL database at `url`.
    pub fn new(url: DatabaseUrl) -> Self {
        Self {
            batcher: Batcher::new(NAME, url, MOST, write),
        }
    }

    /// What went through the writer so far.
    pub fn counts(&self) -> &Counts {
        self.batcher.counts()
    }

    /// Writes `commit` as [`store::commit_pg`] would on `pg`, batched with the instance's other
    /// writes of the moment: `false` when its game was no longer as loaded, and then nothing
    /// of it is written.
    ///
    /// # Errors
    /// Those of [`store::commit_pg`] on `pg`, when the write falls back to it.
    pub fn commit(&self, pg: &mut PgConnection, commit: PgCommit) -> QueryResult<bool> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job = Job {
            commit: Box::new(commit),
            reply: ReplyTo::Thread(reply),
        };
        let commit = match self.batcher.send(job) {
            Ok(()) => match answer.recv().map_err(|_| stopped())? {
                Reply::Done(written) => return Ok(written),
                Reply::Untaken(commit) => commit,
            },
            Err(job) => job.commit,
        };
        store::commit_pg(pg, &commit)
    }

    /// [`Self::commit`] for a task, which awaits the writer without holding a thread: a write
    /// the writer hands back, or cannot take, comes back [`Reply::Untaken`], not written, for
    /// the caller to write itself.
    ///
    /// # Errors
    /// When the writer stopped holding the write: whether it was written is unknown.
    pub async fn commit_async(&self, commit: PgCommit) -> QueryResult<Reply> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            commit: Box::new(commit),
            reply: ReplyTo::Task(reply),
        };
        match self.batcher.send(job) {
            Ok(()) => answer.await.map_err(|_| stopped()),
            Err(job) => Ok(Reply::Untaken(job.commit)),
        }
    }
}

/// The writer's work: writes what queued in one statement.
fn write(conn: &mut OwnConnection, queued: Vec<Job>, counts: &Counts) {
    let mut batch: Vec<Job> = Vec::with_capacity(queued.len());
    for job in queued {
        if batch.iter().any(|b| b.commit.row.id == job.commit.row.id) {
            // At most one of two writes loaded at the same game's version can succeed;
            // the second is left to its caller, whose guard decides.
            untaken(job);
        } else {
            batch.push(job);
        }
    }
    // Rows are locked in the order of the games' ids, so that two instances' batches
    // over the same games wait for each other rather than deadlock.
    batch.sort_by(|a, b| a.commit.row.id.cmp(&b.commit.row.id));
    let Some(pg) = conn.get() else {
        batch.into_iter().for_each(untaken);
        return;
    };
    let written = match batch.as_slice() {
        [one] => store::commit_pg(pg, &one.commit).map(|w| vec![w]),
        many => {
            let commits: Vec<&PgCommit> = many.iter().map(|j| &*j.commit).collect();
            store::commit_pg_batch(pg, &commits)
        }
    };
    match written {
        Ok(written) => {
            let size = batch.len() as u64;
            counts.writes.fetch_add(size, Ordering::Relaxed);
            counts.statements.fetch_add(1, Ordering::Relaxed);
            counts.largest.fetch_max(size, Ordering::Relaxed);
            for (job, written) in batch.into_iter().zip(written) {
                job.reply.send(Reply::Done(written));
            }
        }
        Err(e) => {
            // A unique violation fails every write of the batch; the callers write
            // alone and each hears its own outcome. A lost connection is opened anew.
            tracing::debug!(error = %e, writes = batch.len(), "a group commit failed");
            conn.check();
            batch.into_iter().for_each(untaken);
        }
    }
}

/// Hands `job` back to its caller.
fn untaken(job: Job) {
    job.reply.send(Reply::Untaken(job.commit));
}
