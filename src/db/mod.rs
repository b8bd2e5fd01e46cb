//! The database layer: one connection type for PostgreSQL and SQLite, the pool, migrations and
//! the helper that runs blocking database work off the async workers.
//!
//! Queries are written once against [`AnyConnection`]; only what diesel cannot express on a
//! multi-backend connection (row locks, upserts, advisory locks) matches on the variant.

/// Multi-row INSERT: diesel offers it per backend only, not on the multi connection.
macro_rules! batch_insert {
    ($conn:expr, $table:expr, $rows:expr) => {
        match $conn {
            AnyConnection::Postgresql(c) => diesel::insert_into($table).values($rows).execute(c)?,
            AnyConnection::Sqlite(c) => diesel::insert_into($table).values($rows).execute(c)?,
        }
    };
}

/// INSERT … ON CONFLICT DO NOTHING (diesel offers it per backend only): whether the row was
/// inserted, `false` when it was there already.
macro_rules! insert_or_skip {
    ($conn:expr, $table:expr, $row:expr) => {
        match $conn {
            AnyConnection::Postgresql(c) => diesel::insert_into($table)
                .values($row)
                .on_conflict_do_nothing()
                .execute(c),
            AnyConnection::Sqlite(c) => diesel::insert_into($table)
                .values($row)
                .on_conflict_do_nothing()
                .execute(c),
        }
        .map(|n| n > 0)
    };
}

/// Records an attempt on a row of an outbox table (`webhook_deliveries`, `push_deliveries`,
/// alike in these columns): its number, status and error, and where it leaves the row
/// ([`outbox::AttemptEnd`]).
macro_rules! record_end {
    ($conn:expr, $table:ident, $id:expr, ($n:expr, $status:expr, $error:expr), $now:expr, $end:expr) => {{
        use $crate::db::outbox::AttemptEnd;
        let target = $table::table.find($id);
        let attempt = (
            $table::attempts.eq($n),
            $table::last_status.eq($status),
            $table::last_error.eq($error),
        );
        match $end {
            AttemptEnd::Delivered => diesel::update(target)
                .set((attempt, $table::delivered_at.eq($now)))
                .execute($conn),
            AttemptEnd::Failed => diesel::update(target)
                .set((attempt, $table::failed_at.eq($now)))
                .execute($conn),
            AttemptEnd::RetryAt(at) => diesel::update(target)
                .set((attempt, $table::next_attempt_at.eq(at)))
                .execute($conn),
        }
        .map(drop)
    }};
}

/// Claims the rows of an outbox table (`webhook_deliveries`, `push_deliveries`) that its
/// `due` query selects ([`outbox::due_ids`]) as a [`outbox::Claim`] asks, and loads them as
/// `$row`s, oldest first (a user's notifications of one moment go out as their feed has
/// them). When none is due it returns `Ok(Vec::new())` at once, so an idle poll costs one
/// query.
macro_rules! claim_due {
    ($conn:expr, $table:ident, $due:expr, $row:ty, $claim:expr) => {{
        let claim: &$crate::db::outbox::Claim<'_> = $claim;
        let ids = $crate::db::outbox::due_ids($conn, $due, claim)?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        diesel::update($table::table.filter($table::id.eq_any(&ids)))
            .set($table::next_attempt_at.eq(claim.lease))
            .execute($conn)?;
        $table::table
            .filter($table::id.eq_any(ids))
            .order(($table::created_at.asc(), $table::seq.asc()))
            .select(<$row>::as_select())
            .load($conn)
    }};
}

/// The rows of a per-owner log (`game_events` by game, `notifications` by user) whose `seq`
/// comes after `after`, in `seq` order, at most `limit`: how both logs are read on.
macro_rules! log_after {
    ($conn:expr, $table:ident, $owner:ident = $id:expr, $row:ty, ($after:expr, $limit:expr)) => {
        $table::table
            .filter($table::$owner.eq($id))
            .filter($table::seq.gt($after))
            .order($table::seq.asc())
            .limit($limit)
            .select(<$row>::as_select())
            .load($conn)
    };
}

pub mod admin;
pub mod batcher;
pub mod chat;
pub mod games;
pub mod group_commit;
mod keyset;
pub mod outbox;
pub mod prepared;
pub mod probes;
pub mod push;
pub mod ratings;
pub mod schema;
pub mod settings;
pub mod social;
pub mod tickets;
pub mod types;
pub mod users;
pub mod wake;
pub mod watchers;
pub mod writer;

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{Pool, PooledConnection, R2D2Connection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::config::{Backend, Config, DatabaseUrl};
use crate::error::Error;

const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

// The MultiConnection derive generates undocumented public items.
#[allow(missing_docs)]
mod any {
    /// A connection to either database engine.
    #[derive(diesel::MultiConnection)]
    pub enum AnyConnection {
        /// PostgreSQL.
        Postgresql(diesel::PgConnection),
        /// SQLite.
        Sqlite(diesel::SqliteConnection),
    }
}
pub use any::AnyConnection;

/// An r2d2 manager that picks the engine from the URL, so a failed connection reports its
/// real cause ("connection refused") rather than diesel's generic "invalid URL", and that
/// applies the SQLite pragmas on every new connection.
#[derive(Debug, Clone)]
pub struct Manager {
    url: DatabaseUrl,
    busy_timeout: Duration,
}

impl Manager {
    /// A manager for the given database. On SQLite, a statement waits at most
    /// `busy_timeout` for a lock another connection holds; then it fails, answered 503.
    pub fn new(url: DatabaseUrl, busy_timeout: Duration) -> Self {
        Self { url, busy_timeout }
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = AnyConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<AnyConnection, Self::Error> {
        use diesel::r2d2::Error;
        match self.url.backend() {
            Backend::Postgres => diesel::PgConnection::establish(self.url.expose())
                .map(AnyConnection::Postgresql)
                .map_err(Error::ConnectionError),
            Backend::Sqlite => {
                let mut conn = diesel::SqliteConnection::establish(self.url.expose())
                    .map_err(Error::ConnectionError)?;
                // busy_timeout must come first: switching to WAL takes a lock that another
                // pooled connection may hold at the same instant.
                // The same bound as the wait for a pooled connection: a request waits that
                // long for the database, whichever of the two is scarce.
                conn.batch_execute(&format!(
                    "PRAGMA busy_timeout = {};
                     PRAGMA journal_mode = WAL;
                     PRAGMA foreign_keys = ON;
                     PRAGMA synchronous = NORMAL;",
                    self.busy_timeout.as_millis()
                ))
                .map_err(Error::QueryError)?;
                Ok(AnyConnection::Sqlite(conn))
            }
        }
    }

    fn is_valid(&self, conn: &mut AnyConnection) -> Result<(), Self::Error> {
        conn.ping().map_err(diesel::r2d2::Error::QueryError)
    }

    fn has_broken(&self, conn: &mut AnyConnection) -> bool {
        conn.is_broken()
    }
}

/// A pooled connection.
pub type Conn = PooledConnection<Manager>;

/// The shared database handle: a pool plus what the service needs to know about it.
#[derive(Clone)]
pub struct Db {
    pool: Pool<Manager>,
    backend: Backend,
    latest_migration: String,
    group: Option<std::sync::Arc<group_commit::GroupCommit>>,
    probes: Option<std::sync::Arc<probes::Probes>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

/// Why the database could not be opened at start.
#[derive(Debug, thiserror::Error)]
pub enum DbInitError {
    /// The pool could not open its first connection.
    #[error("cannot connect to the database: {0}")]
    Connect(#[from] r2d2::Error),
    /// A migration failed.
    #[error("cannot migrate the database: {0}")]
    Migrate(String),
}

impl Db {
    /// Opens a pool. It does not wait for the database: a server that starts while the
    /// database is down reports 503 on `/readyz` until it returns.
    pub fn open(config: &Config) -> Self {
        let backend = config.database_url.backend();
        if backend == Backend::Sqlite {
            writer::set_wait(config.db_timeout);
        }
        let pool = Pool::builder()
            .max_size(config.pool_size)
            // On SQLite none is opened ahead: the first connection switches a new file to WAL,
            // which takes a lock that a second one opening at the same instant gets refused
            // (no busy wait for it), and r2d2 logged that as an ERROR at every first start.
            .min_idle(Some(u32::from(backend == Backend::Postgres)))
            .connection_timeout(config.db_timeout)
            // No ping at check-out: it would cost every request a round trip. A connection that
            // PostgreSQL dropped fails its first query (answered 503) and is then discarded
            // as broken, so the pool heals by itself.
            .test_on_check_out(false)
            .idle_timeout(Some(Duration::from_secs(300)))
            .build_unchecked(Manager::new(config.database_url.clone(), config.db_timeout));
        let latest_migration = latest_version(backend);
        let group = (backend == Backend::Postgres).then(|| {
            std::sync::Arc::new(group_commit::GroupCommit::new(config.database_url.clone()))
        });
        let probes = (backend == Backend::Postgres)
            .then(|| std::sync::Arc::new(probes::Probes::new(config.database_url.clone())));
        Self {
            pool,
            backend,
            latest_migration,
            group,
            probes,
        }
    }

    /// The instance's writer of guarded action writes (PostgreSQL only).
    pub fn group_commit(&self) -> Option<&std::sync::Arc<group_commit::GroupCommit>> {
        self.group.as_ref()
    }

    /// The instance's prober of views (PostgreSQL only).
    pub fn probes(&self) -> Option<&std::sync::Arc<probes::Probes>> {
        self.probes.as_ref()
    }

    /// The engine behind this pool.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Pool counters: (connections open, connections idle).
    pub fn pool_state(&self) -> (u32, u32) {
        let state = self.pool.state();
        (state.connections, state.idle_connections)
    }

    /// A connection from the pool, waiting at most the configured timeout.
    ///
    /// # Errors
    /// [`Error::unavailable`] when the database does not answer in time.
    pub fn conn(&self) -> Result<Conn, Error> {
        self.pool.get().map_err(|e| {
            tracing::warn!(error = %e, "database connection unavailable");
            Error::unavailable()
        })
    }

    /// A connection from the pool, waiting at most `timeout`.
    ///
    /// # Errors
    /// [`Error::unavailable`] when the database does not answer in time.
    pub fn conn_within(&self, timeout: Duration) -> Result<Conn, Error> {
        self.pool.get_timeout(timeout).map_err(|e| {
            tracing::warn!(error = %e, "database connection unavailable");
            Error::unavailable()
        })
    }

    /// Tries every idle pooled connection once, so that the pool replaces the dead ones now
    /// rather than each failing one request (503) later. Called when one connection turned
    /// out dead: after PostgreSQL restarts or drops this instance's sessions, the others
    /// are dead too, and at a health check a second that was 16 s of 503s for 16 connections.
    /// Connections are not pinged at check-out, which would cost every request a round trip.
    pub fn sweep_dead(&self) {
        let mut tried = Vec::new();
        let mut dead = 0;
        while let Some(mut conn) = self.pool.try_get() {
            // A failed ping leaves the connection broken: the pool drops it when it returns.
            if conn.ping().is_err() {
                dead += 1;
            }
            tried.push(conn);
        }
        drop(tried);
        if dead > 0 {
            tracing::warn!(dead, "dropped dead database connections");
        }
    }

    /// Runs blocking database work on the blocking thread pool, so async workers keep
    /// serving, and carries the current tracing span into it.
    ///
    /// # Errors
    /// Whatever `f` returns, or 503 when no connection could be had.
    pub async fn run<T, F>(&self, f: F) -> Result<T, Error>
    where
        F: FnOnce(&mut AnyConnection) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        let db = self.clone();
        let span = tracing::Span::current();
        // actix-web's blocking pool is tokio's: the same bounded threads as `web::block`.
        tokio::task::spawn_blocking(move || {
            let _entered = span.enter();
            let mut conn = db.conn()?;
            let done = f(&mut conn);
            if done.as_ref().is_err_and(Error::lost_connection) {
                drop(conn);
                db.sweep_dead();
            }
            done
        })
        .await
        .map_err(|e| Error::internal(format!("blocking database work: {e}")))?
    }

    /// Applies every pending migration. On PostgreSQL an advisory lock makes instances that
    /// start together take turns.
    ///
    /// # Errors
    /// When the database is unreachable or a migration fails.
    pub fn migrate(&self) -> Result<usize, DbInitError> {
        let mut conn = self.pool.get()?;
        let applied = match &mut *conn {
            AnyConnection::Postgresql(pg) => {
                pg.batch_execute("SELECT pg_advisory_lock(7424981)")
                    .map_err(|e| DbInitError::Migrate(e.to_string()))?;
                let result = pg.run_pending_migrations(PG_MIGRATIONS).map(|v| v.len());
                let unlock = pg.batch_execute("SELECT pg_advisory_unlock(7424981)");
                let applied = result.map_err(|e| DbInitError::Migrate(e.to_string()))?;
                unlock.map_err(|e| DbInitError::Migrate(e.to_string()))?;
                applied
            }
            AnyConnection::Sqlite(lite) => lite
                .run_pending_migrations(SQLITE_MIGRATIONS)
                .map(|v| v.len())
                .map_err(|e| DbInitError::Migrate(e.to_string()))?,
        };
        Ok(applied)
    }

    /// Whether the database answers and carries the latest migration this binary knows.
    ///
    /// # Errors
    /// 503 when it does not answer; `Ok(false)` when it answers but is not migrated.
    pub fn is_migrated(&self, conn: &mut AnyConnection) -> Result<bool, Error> {
        #[derive(QueryableByName)]
        struct Count {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let query = diesel::sql_query(
            "SELECT COUNT(*) AS n FROM __diesel_schema_migrations WHERE version = ",
        );
        let result = match conn {
            AnyConnection::Postgresql(pg) => query
                .sql("$1")
                .bind::<diesel::sql_types::Text, _>(&self.latest_migration)
                .get_result::<Count>(pg),
            AnyConnection::Sqlite(lite) => query
                .sql("?")
                .bind::<diesel::sql_types::Text, _>(&self.latest_migration)
                .get_result::<Count>(lite),
        };
        match result {
            Ok(count) => Ok(count.n == 1),
            // The table itself is missing: reachable but never migrated.
            Err(diesel::result::Error::DatabaseError(_, info))
                if info.message().contains("__diesel_schema_migrations") =>
            {
                Ok(false)
            }
            Err(e) => Err(Error::from(e)),
        }
    }
}

/// The current time in UTC, at the microsecond precision both engines store.
pub fn now() -> chrono::NaiveDateTime {
    use chrono::{SubsecRound, Utc};
    Utc::now().naive_utc().trunc_subsecs(6)
}

fn latest_version(backend: Backend) -> String {
    use diesel::migration::MigrationSource;
    let versions: Vec<String> = match backend {
        Backend::Postgres => MigrationSource::<diesel::pg::Pg>::migrations(&PG_MIGRATIONS)
            .expect("embedded migrations are readable")
            .iter()
            .map(|m| m.name().version().to_string())
            .collect(),
        Backend::Sqlite => {
            MigrationSource::<diesel::sqlite::Sqlite>::migrations(&SQLITE_MIGRATIONS)
                .expect("embedded migrations are readable")
                .iter()
                .map(|m| m.name().version().to_string())
                .collect()
        }
    };
    versions
        .into_iter()
        .max()
        .expect("at least one migration is embedded")
}

/// A transaction that will write. On SQLite it waits its turn at this process's writer gate
/// ([`writer`]: first come, first served, at most the database timeout), then its first
/// statement takes the database's write lock (a write that changes nothing), so the
/// transaction never holds a read snapshot that a concurrent writer makes stale, which
/// SQLite refuses at once with "database is locked" instead of waiting. On PostgreSQL it is
/// a plain transaction. Every write transaction goes through here.
///
/// # Errors
/// `f`'s errors and database errors; on SQLite "database is locked" (answered 503) when the
/// gate was not had in time.
pub fn write_transaction<T, E>(
    conn: &mut AnyConnection,
    f: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<diesel::result::Error>,
{
    use diesel::Connection;
    if matches!(conn, AnyConnection::Sqlite(_)) {
        return writer::hold(|| {
            conn.transaction(|conn| {
                if let AnyConnection::Sqlite(lite) = conn {
                    diesel::sql_query("UPDATE server_settings SET key = key WHERE 0")
                        .execute(lite)?;
                }
                f(conn)
            })
        })
        .unwrap_or_else(|writer::GateTimedOut| {
            Err(E::from(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::Unknown,
                Box::new(
                    "database is locked (waiting for this process's earlier writes)".to_owned(),
                ),
            )))
        });
    }
    conn.transaction(f)
}

/// A transaction that reads, from one snapshot of the database, everything it reads: what
/// other transactions commit meanwhile stays out of it (PostgreSQL: `REPEATABLE READ`,
/// read-only; SQLite: a transaction's reads share the snapshot of its first one). For
/// checks that compare rows written together, such as `leekha verify` on a running server.
///
/// # Errors
/// `f`'s errors and database errors.
pub fn snapshot<T, E>(
    conn: &mut AnyConnection,
    f: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<diesel::result::Error>,
{
    conn.transaction(|conn| {
        if let AnyConnection::Postgresql(pg) = conn {
            pg.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")?;
        }
        f(conn)
    })
}
