//! The PostgreSQL listener: one dedicated connection per instance (not from the pool) that
//! `LISTEN`s on [`crate::db::wake::CHANNEL`] and wakes the [`Notifier`] for each topic a
//! writer on any instance sent with `pg_notify` (see `db::wake`). Waiters therefore never
//! poll the database.
//!
//! It runs on a thread of its own with a small runtime, so that it works the same under the
//! server, the tests and the benchmarks, whatever runtime (if any) built the state. Diesel
//! has no way to wait for a notification, hence `tokio-postgres` for this one connection.
//!
//! Wake-ups go out only while another instance listens: an instance alone in its database
//! would pay PostgreSQL's notification queue (and read every wake-up back) for nobody, which
//! cost about an eighth of the actions it commits under load. It counts the other listeners
//! when it connects and every [`RECOUNT_EVERY`], and an instance that starts says `hello`
//! ([`HELLO`]), answered with an [`ACK`]. Either makes the receiver start sending and wake
//! all its waiters once: a change committed before its writer knew of the receiver went
//! unannounced, and the re-read finds it. The writer decides whether to announce only after
//! its commit, and it sends its `hello` or `ack` only after it has started sending, so any
//! change it left unannounced committed before that message, and the re-read it causes
//! comes after the change.
//!
//! A lost connection is re-opened with backoff (0.1 s doubling to 5 s while the database
//! cannot be reached; after a connection that listened, from 0.1 s again). Notifications sent
//! while it was down are lost, so after every (re)connect, once `LISTEN` is in place, it wakes
//! every topic: each waiter re-reads once and nothing is missed. The count of the other
//! listeners doubles as a ping that finds a connection that died silently. The thread ends
//! when the [`Notifier`] it serves is dropped (its state went away).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::Notifier;
use crate::db::wake::CHANNEL;

/// How often the listener counts the other instances' listeners, so that an instance left
/// alone stops sending (an instance that arrives says [`HELLO`] at once). The count, one
/// small query per instance, is also the ping that finds a connection that died silently.
pub const RECOUNT_EVERY: Duration = Duration::from_secs(10);

/// The topic a listener sends once its `LISTEN` is in place: "I am here, announce to me".
pub const HELLO: &str = "instance:hello";

/// The answer to [`HELLO`]: "I announce to you from now on".
pub const ACK: &str = "instance:ack";

/// The name the listener's connection carries, by which the instances count each other.
const APPLICATION_NAME: &str = "leekha-listen";

/// The pause after sending wake-ups, so that the next send carries all that came meanwhile.
const GATHER: Duration = Duration::from_millis(2);

/// What the listener did so far, for readiness checks in tests and benchmarks, and the
/// wake-ups this instance has yet to send to the others.
#[derive(Debug, Default)]
pub struct ListenStatus {
    connects: AtomicU64,
    received: AtomicU64,
    sent: AtomicU64,
    /// Set while another instance listens: only then are topics queued for sending.
    others: AtomicBool,
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
    /// Does nothing while no other instance listens (and without a listener at all: SQLite,
    /// one process).
    pub fn send<'a>(&self, topics: impl IntoIterator<Item = &'a str>) {
        if !self.others.load(Ordering::SeqCst) {
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

    /// Whether another instance listens, so that this one sends its wake-ups.
    pub fn sends(&self) -> bool {
        self.others.load(Ordering::SeqCst)
    }

    /// Starts or stops sending; on a change, says so in the log.
    fn set_others(&self, others: bool) {
        if self.others.swap(others, Ordering::SeqCst) != others {
            tracing::info!(
                sending = others,
                "{}",
                if others {
                    "another instance listens: wake-ups are sent"
                } else {
                    "no other instance listens: wake-ups are not sent"
                }
            );
        }
    }

    /// How many times `LISTEN` was established and this instance made itself known (1 after
    /// the first connect; more after reconnects).
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
    let (mut config, tls) = super::pg_tls::target(database_url).map_err(std::io::Error::other)?;
    config
        .application_name(APPLICATION_NAME)
        .connect_timeout(Duration::from_secs(5))
        .keepalives_idle(Duration::from_secs(30));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let notifier = Arc::downgrade(notifier);
    std::thread::Builder::new()
        .name("leekha-listen".into())
        .spawn(move || runtime.block_on(run(config, tls, notifier, status)))?;
    Ok(())
}

async fn run(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    notifier: Weak<Notifier>,
    status: Arc<ListenStatus>,
) {
    const FIRST_RETRY: Duration = Duration::from_millis(100);
    let mut backoff = FIRST_RETRY;
    loop {
        let connects = status.connects();
        let lost = session(&config, &tls, &notifier, &status).await;
        // A connection that got as far as listening was a success: the backoff is for a
        // database that cannot be reached, so the next loss starts it over. Otherwise each
        // drop in a long life (a restart, a failover, an idle-connection killer) would cost
        // the 5 s of the longest wait.
        if status.connects() != connects {
            backoff = FIRST_RETRY;
        }
        match lost {
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

/// Counts the other instances' listeners (`count`) and sends wake-ups only while there are any.
async fn recount_others(
    client: &tokio_postgres::Client,
    count: &tokio_postgres::Statement,
    status: &ListenStatus,
) -> Result<(), tokio_postgres::Error> {
    let others = client.query_one(count, &[]).await?.get::<_, i64>(0) > 0;
    status.set_others(others);
    Ok(())
}

/// One connection's life: `Ok` when the notifier is gone, `Err` when the connection is lost.
async fn session(
    config: &tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    notifier: &Weak<Notifier>,
    status: &ListenStatus,
) -> Result<(), String> {
    let (client, mut connection) = config
        .connect(tls.clone())
        .await
        .map_err(|e| with_causes(&e))?;
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
        // lost to a crash is a waiter whose client finds the change at its next request.
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
        let count = client
            .prepare(&format!(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}' \
                 AND datname = current_database() AND pid <> pg_backend_pid()"
            ))
            .await?;
        recount_others(&client, &count, status).await?;
        client.execute(&send, &[&CHANNEL, &vec![HELLO]]).await?;
        status.connects.fetch_add(1, Ordering::AcqRel);
        tracing::info!("listening for wake-ups");
        // Catch-up: whatever was sent while no connection listened is re-read by everyone.
        match notifier.upgrade() {
            Some(n) => n.notify_all(),
            None => return Ok(true),
        }
        let mut recount = tokio::time::interval(RECOUNT_EVERY);
        recount.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        recount.tick().await;
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
                _ = recount.tick() => Err(()),
            };
            match next {
                Ok(Some((pid, _))) if pid == own_pid => {}
                Ok(Some((_, topic))) if topic == HELLO || topic == ACK => {
                    status.set_others(true);
                    if topic == HELLO {
                        client.execute(&send, &[&CHANNEL, &vec![ACK]]).await?;
                    }
                    let Some(n) = notifier.upgrade() else {
                        return Ok(true);
                    };
                    n.notify_all();
                }
                Ok(Some((_, topic))) => {
                    status.received.fetch_add(1, Ordering::AcqRel);
                    let Some(n) = notifier.upgrade() else {
                        return Ok(true);
                    };
                    n.notify(&topic);
                }
                // The driver ended: the connection is closed.
                Ok(None) => return Ok(false),
                Err(()) => {
                    if notifier.strong_count() == 0 {
                        return Ok(true);
                    }
                    // A newcomer that this count misses says hello later, and that message,
                    // handled after the count, turns sending on again.
                    recount_others(&client, &count, status).await?;
                }
            }
        }
    }
    .await;
    drop(client);
    let driven = driver.await;
    match (result, driven) {
        (Ok(true), _) => Ok(()),
        (Err(e), _) | (Ok(false), Ok(Err(e))) => Err(with_causes(&e)),
        (Ok(false), _) => Err("the server closed the connection".to_owned()),
    }
}

/// An error and its causes, as one line: tokio-postgres says only "db error" of an error the
/// server reported, and keeps the server's words in its source.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        line.push_str(": ");
        line.push_str(&e.to_string());
        cause = e.source();
    }
    line
}
