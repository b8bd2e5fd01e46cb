//! The PostgreSQL listener: one dedicated connection per instance (not from the pool) that
//! `LISTEN`s on [`crate::db::wake::CHANNEL`] and wakes the [`Notifier`] for each topic a
//! writer on any instance sent with `pg_notify` (see `db::wake`). Waiters therefore never
//! poll the database.
//!
//! It runs on a thread of its own with a small runtime, so that it works the same under the
//! server, the tests and the benchmarks, whatever runtime (if any) built the state. Diesel
//! has no way to wait for a notification, hence `tokio-postgres` for this one connection.
//!
//! A lost connection is re-opened with backoff (0.1 s doubling to 5 s). Notifications sent
//! while it was down are lost, so after every (re)connect, once `LISTEN` is in place, it wakes
//! every topic: each waiter re-reads once and nothing is missed. A cheap ping every
//! [`PING_EVERY`] finds a connection that died silently. The thread ends when the
//! [`Notifier`] it serves is dropped (its state went away).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio_postgres::{AsyncMessage, NoTls};

use super::Notifier;
use crate::db::wake::CHANNEL;

/// How often the listener pings its connection (one query per instance, not per waiter).
pub const PING_EVERY: Duration = Duration::from_secs(30);

/// The pause after sending wake-ups, so that the next send carries all that came meanwhile.
const GATHER: Duration = Duration::from_millis(2);

/// What the listener did so far, for readiness checks in tests and benchmarks, and the
/// wake-ups this instance has yet to send to the others.
#[derive(Debug, Default)]
pub struct ListenStatus {
    connects: AtomicU64,
    received: AtomicU64,
    sent: AtomicU64,
    /// Set once a listener runs: only then are topics queued for sending.
    running: AtomicBool,
    /// Topics to send with the next batch.
    outgoing: Mutex<BTreeSet<String>>,
    ready: tokio::sync::Notify,
}

impl ListenStatus {
    /// Queues wake-ups of these topics for every instance, after the transaction that
    /// concerns them committed. The listener sends whatever is queued in one statement
    /// (`pg_notify` over an array, without waiting for the flush of its commit) as soon as
    /// it is free, so a burst of actions costs one notification transaction, not one each.
    /// That is why the action's own transaction does not notify: PostgreSQL serializes the
    /// commits of notifying transactions under one lock, flushes included, which capped
    /// actions at about half of what the same transaction does without a notification.
    /// Does nothing without a listener (SQLite: one process).
    pub fn send<'a>(&self, topics: impl IntoIterator<Item = &'a str>) {
        if !self.running.load(Ordering::Acquire) {
            return;
        }
        let mut outgoing = self
            .outgoing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        outgoing.extend(topics.into_iter().map(str::to_owned));
        drop(outgoing);
        self.ready.notify_one();
    }

    /// How many topics were sent to the other instances.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    fn take_outgoing(&self) -> Vec<String> {
        let mut outgoing = self
            .outgoing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut *outgoing).into_iter().collect()
    }

    /// How many times `LISTEN` was established (1 after the first connect; more after
    /// reconnects).
    pub fn connects(&self) -> u64 {
        self.connects.load(Ordering::Acquire)
    }

    /// How many notifications arrived from other connections (its own are skipped).
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Acquire)
    }
}

/// Starts the listener thread for `database_url`, serving `notifier` while it lives.
///
/// # Errors
/// When the thread or its runtime cannot be made.
pub fn spawn(
    database_url: &str,
    notifier: &Arc<Notifier>,
    status: Arc<ListenStatus>,
) -> std::io::Result<()> {
    let mut config: tokio_postgres::Config = database_url
        .parse()
        .map_err(|e| std::io::Error::other(format!("the database URL: {e}")))?;
    config
        .application_name("leekha-listen")
        .connect_timeout(Duration::from_secs(5))
        .keepalives_idle(Duration::from_secs(30));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let notifier = Arc::downgrade(notifier);
    status.running.store(true, Ordering::Release);
    std::thread::Builder::new()
        .name("leekha-listen".into())
        .spawn(move || runtime.block_on(run(config, notifier, status)))?;
    Ok(())
}

async fn run(config: tokio_postgres::Config, notifier: Weak<Notifier>, status: Arc<ListenStatus>) {
    let mut backoff = Duration::from_millis(100);
    loop {
        match session(&config, &notifier, &status).await {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = %e, retry_ms = backoff.as_millis() as u64, "the listener lost its connection")
            }
        }
        tokio::time::sleep(backoff).await;
        if notifier.strong_count() == 0 {
            return;
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// One connection's life: `Ok` when the notifier is gone, `Err` when the connection is lost.
async fn session(
    config: &tokio_postgres::Config,
    notifier: &Weak<Notifier>,
    status: &ListenStatus,
) -> Result<(), String> {
    let (client, mut connection) = config.connect(NoTls).await.map_err(|e| e.to_string())?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(i32, String)>();
    // The connection is driven by its own task: it carries the replies of `client` and
    // hands over notifications.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send((n.process_id(), n.payload().to_owned())).is_err() {
                        return Ok(());
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    });
    let result: Result<bool, tokio_postgres::Error> = async {
        // The wake-ups this connection sends need no durability of their own: a wake-up
        // lost to a crash is a waiter that re-reads at its next timeout.
        client
            .batch_execute(&format!("SET synchronous_commit = off; LISTEN {CHANNEL}"))
            .await?;
        let send = client
            .prepare("SELECT pg_notify($1, t) FROM unnest($2::text[]) AS t")
            .await?;
        // What this connection sends comes back to it too; this instance already woke its
        // own waiters when it queued those topics, and a second wake-up would make each of
        // them re-read for nothing.
        let own_pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await?
            .get(0);
        status.connects.fetch_add(1, Ordering::AcqRel);
        tracing::info!("listening for wake-ups");
        // Catch-up: whatever was sent while no connection listened is re-read by everyone.
        match notifier.upgrade() {
            Some(n) => n.notify_all(),
            None => return Ok(true),
        }
        loop {
            let outgoing = status.take_outgoing();
            if !outgoing.is_empty() {
                client.execute(&send, &[&CHANNEL, &outgoing]).await?;
                status
                    .sent
                    .fetch_add(outgoing.len() as u64, Ordering::AcqRel);
                // Lets the next batch gather: under load, a few milliseconds' wait for the
                // other instances turns thousands of notifying commits a second into hundreds.
                tokio::time::sleep(GATHER).await;
                continue;
            }
            let next = tokio::select! {
                topic = rx.recv() => Ok(topic),
                () = status.ready.notified() => continue,
                () = tokio::time::sleep(PING_EVERY) => Err(()),
            };
            match next {
                Ok(Some((pid, _))) if pid == own_pid => {}
                Ok(Some((_, topic))) => {
                    status.received.fetch_add(1, Ordering::AcqRel);
                    let Some(n) = notifier.upgrade() else {
                        return Ok(true);
                    };
                    n.notify(&topic);
                }
                // The driver ended: the connection is closed.
                Ok(None) => return Ok(false),
                Err(_) => {
                    if notifier.strong_count() == 0 {
                        return Ok(true);
                    }
                    client.simple_query("").await?;
                }
            }
        }
    }
    .await;
    drop(client);
    let driven = driver.await;
    match (result, driven) {
        (Ok(true), _) => Ok(()),
        (Err(e), _) | (Ok(false), Ok(Err(e))) => Err(e.to_string()),
        (Ok(false), _) => Err("the server closed the connection".to_owned()),
    }
}
