//! What the instance's batching threads share ([`super::group_commit`], [`super::probes`]):
//! a queue whose thread starts with the first job (and again if it stopped), batches of what
//! queued while the last statement ran, and a PostgreSQL connection of the thread's own,
//! opened when needed and again after it was lost.

use std::sync::{Arc, Mutex, mpsc};

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};

use crate::config::DatabaseUrl;

/// Jobs for a batching thread that starts with the first of them, and what the thread does:
/// it takes what queued while its last batch ran, `most` at the most, and hands each batch
/// to `handle` with its own connection and the counts it keeps.
pub(super) struct Batcher<J, C> {
    sender: Mutex<Option<mpsc::Sender<J>>>,
    /// The thread's name, also in log lines.
    name: &'static str,
    url: DatabaseUrl,
    most: usize,
    counts: Arc<C>,
    handle: fn(&mut OwnConnection, Vec<J>, &C),
}

impl<J: Send + 'static, C: Default + Send + Sync + 'static> Batcher<J, C> {
    /// A batcher for the thread `name` on the database at `url`, which is not started yet.
    pub(super) fn new(
        name: &'static str,
        url: DatabaseUrl,
        most: usize,
        handle: fn(&mut OwnConnection, Vec<J>, &C),
    ) -> Self {
        Self {
            sender: Mutex::new(None),
            name,
            url,
            most,
            counts: Arc::default(),
            handle,
        }
    }

    /// What the thread counted so far.
    pub(super) fn counts(&self) -> &C {
        &self.counts
    }

    /// Queues `job`, starting the thread if none takes the jobs (the first job, or its
    /// thread panicked); the job back if no thread could be started.
    pub(super) fn send(&self, job: J) -> Result<(), J> {
        let mut queue = self.sender.lock().unwrap_or_else(|e| e.into_inner());
        let job = match &*queue {
            Some(sender) => match sender.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (sender, jobs) = mpsc::channel();
        let (name, most, handle) = (self.name, self.most, self.handle);
        let (url, counts) = (self.url.clone(), self.counts.clone());
        let started = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut conn = OwnConnection::new(url, name);
                while let Some(batch) = next_batch(&jobs, most) {
                    handle(&mut conn, batch, &counts);
                }
            });
        if let Err(e) = started {
            tracing::warn!(error = %e, thread = self.name, "cannot start a batching thread");
            return Err(job);
        }
        let sent = sender.send(job).map_err(|mpsc::SendError(job)| job);
        *queue = Some(sender);
        sent
    }
}

impl<J, C> std::fmt::Debug for Batcher<J, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher")
            .field("thread", &self.name)
            .finish()
    }
}

/// Waits for a job, then takes what else is queued, `most` at the most; `None` once every
/// sender is gone.
fn next_batch<J>(jobs: &mpsc::Receiver<J>, most: usize) -> Option<Vec<J>> {
    let mut batch = vec![jobs.recv().ok()?];
    while batch.len() < most
        && let Ok(job) = jobs.try_recv()
    {
        batch.push(job);
    }
    Some(batch)
}

/// A batching thread's own connection, opened with [`connect_for_batches`] when needed.
pub(super) struct OwnConnection {
    url: DatabaseUrl,
    conn: Option<PgConnection>,
    name: &'static str,
}

impl OwnConnection {
    /// Not connected yet; `name` is the thread's, for log lines.
    pub(super) fn new(url: DatabaseUrl, name: &'static str) -> Self {
        Self {
            url,
            conn: None,
            name,
        }
    }

    /// The connection, opened now if there is none; `None` when it cannot be.
    pub(super) fn get(&mut self) -> Option<&mut PgConnection> {
        if self.conn.is_none() {
            match connect_for_batches(&self.url) {
                Ok(c) => self.conn = Some(c),
                Err(e) => tracing::warn!(error = %e, thread = self.name, "cannot connect"),
            }
        }
        self.conn.as_mut()
    }

    /// After a failed statement: forgets the connection if it no longer answers, so that the
    /// next batch opens another.
    pub(super) fn check(&mut self) {
        if let Some(pg) = &mut self.conn
            && pg.batch_execute("SELECT 1").is_err()
        {
            self.conn = None;
        }
    }
}

/// Opens a connection of its own for a thread that runs prepared statements over arrays, one
/// row per element ([`super::games::statements_for_batches`]). PostgreSQL plans a prepared
/// statement anew on each execution for as long as a plan for the bound values looks cheaper
/// than the generic plan, and for arrays of a few elements it always does: planning then costs
/// more than running. These statements find every row by its key whatever the values, so the
/// connection always takes the generic plan.
///
/// That plan is made once, at the first execution, for the tables as they are then, and kept
/// until their statistics change. On a young database the tables are a page or two, where
/// reading a whole table beats an index, and the plan went on reading whole tables as they
/// grew (a load run's probes and writes spent most of PostgreSQL's time scanning `games`).
/// So the connection plans without whole-table reads: no sequential scans, and nested loops
/// rather than hash or merge joins, which would read a table whole to build or walk one side.
///
/// # Errors
/// When it cannot connect or set the planner's settings.
pub fn connect_for_batches(url: &DatabaseUrl) -> Result<PgConnection, String> {
    let mut pg = PgConnection::establish(url.expose()).map_err(|e| e.to_string())?;
    pg.batch_execute(
        "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; \
         SET enable_hashjoin = off; SET enable_mergejoin = off",
    )
    .map_err(|e| e.to_string())?;
    Ok(pg)
}
