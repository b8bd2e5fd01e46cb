//! Application state and wiring: what the HTTP handlers and the background workers (the
//! scheduler, webhook delivery) share. It sits below `http`, so workers never import the
//! HTTP layer.

pub mod listen;
pub mod listen_tail;
pub mod notifier;
pub mod pg_tls;
pub mod presence;

use std::sync::Arc;

use crate::auth::Secret;
use crate::auth::ratelimit::AuthLimits;
use crate::auth::tokens::TokenKeys;
use crate::config::{Backend, Config};
use crate::db::Db;

pub use notifier::Notifier;
pub use presence::Presence;

/// What every handler can reach: cheap to clone, shared by all workers.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The database pool.
    pub db: Db,
    /// The configuration the server started with.
    pub config: Arc<Config>,
    /// Access-token keys.
    pub keys: Arc<TokenKeys>,
    /// Rate limits of the account endpoints.
    pub limits: Arc<AuthLimits>,
    /// Wakes long-polls and streams of this instance (on PostgreSQL also for changes made
    /// through other instances, by [`listen`]).
    pub notifier: Arc<Notifier>,
    /// Open streams and long-polls: the ceiling, and who watches what.
    pub presence: Arc<Presence>,
    /// The recent events of watched games, read once for all their waiters.
    pub tails: Arc<listen_tail::EventTails>,
    /// What the PostgreSQL listener did (nothing on SQLite).
    pub listen: Arc<listen::ListenStatus>,
    /// Prometheus metrics of this instance (`GET /metrics`).
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The games this instance wrote last (PostgreSQL's action path skips reading them).
    pub hot: Arc<crate::games::HotTables>,
}

impl AppState {
    /// Whether the configuration names a signing secret where one is needed: on PostgreSQL
    /// every instance must sign with the same one, so it cannot be made up here. Checked
    /// before the server touches the database.
    ///
    /// # Errors
    /// PostgreSQL without `LEEKHA_JWT_SECRET`.
    pub fn check_secret(config: &Config) -> Result<(), String> {
        if config.jwt_secret.is_none() && config.database_url.backend() == Backend::Postgres {
            return Err(
                "LEEKHA_JWT_SECRET is required on PostgreSQL: set it to at least 32 random bytes \
                        (e.g. `openssl rand -hex 32`), the same on every instance"
                    .to_owned(),
            );
        }
        Ok(())
    }

    /// Whether the wake-up listener can connect as `DATABASE_URL` says (its TLS parameters
    /// and files; PostgreSQL only). Checked before the server touches the database, so a
    /// start it would refuse leaves the database as it was.
    ///
    /// # Errors
    /// A sentence naming `DATABASE_URL` and what in it cannot be honoured.
    pub fn check_listener(config: &Config) -> Result<(), String> {
        if config.database_url.backend() == Backend::Postgres {
            pg_tls::target(config.database_url.expose())?;
        }
        Ok(())
    }

    /// State for the given configuration and database. Resolves the signing secret, which
    /// on SQLite may mean reading or creating it in the database (blocking).
    ///
    /// # Errors
    /// PostgreSQL without `LEEKHA_JWT_SECRET`, or a database that cannot be read.
    pub fn init(config: Config, db: Db) -> Result<Self, String> {
        Self::check_secret(&config)?;
        let secret = match &config.jwt_secret {
            Some(secret) => secret.clone(),
            // SQLite, as checked: one process, so the secret may live in its database.
            None => {
                let mut conn = db.conn().map_err(|e| e.to_string())?;
                let fresh = hex::encode(rand::random::<[u8; 32]>());
                let stored = crate::db::settings::get_or_insert(&mut conn, "jwt_secret", &fresh)
                    .map_err(|e| {
                        format!("cannot read the signing secret from the database: {e}")
                    })?;
                Secret::new(stored)
            }
        };
        let keys = TokenKeys::new(
            &secret,
            config.jwt_previous_secret.as_ref(),
            config.access_ttl_secs,
        );
        let limits = AuthLimits::new(config.auth_rate_per_minute);
        let notifier = Arc::<Notifier>::default();
        let listen = Arc::<listen::ListenStatus>::default();
        if db.backend() == Backend::Postgres {
            listen::spawn(config.database_url.expose(), &notifier, listen.clone())
                .map_err(|e| format!("cannot start the wake-up listener: {e}"))?;
        }
        Ok(Self {
            db,
            keys: Arc::new(keys),
            limits: Arc::new(limits),
            notifier,
            presence: Arc::new(Presence::new(config.max_streams)),
            tails: Arc::default(),
            listen,
            metrics: Arc::default(),
            hot: Arc::default(),
            config: Arc::new(config),
        })
    }
}

impl AppState {
    /// After a use case committed: wakes the long-polls it concerns and counts its actions.
    pub fn published(&self, done: &crate::games::Committed) {
        self.announce(&done.table.row.id, &done.table.notified_users);
        self.metrics.actions_applied(done.applied);
    }

    /// Wakes the long-polls and streams that wait on the game or on the feeds of the
    /// notified users: this instance's at once, the others' through their listeners, in the
    /// next batch this instance's listener sends ([`listen::ListenStatus::send`]). Called
    /// after every commit that changed a game.
    pub fn announce(&self, game_id: &str, notified_users: &[String]) {
        let topics = crate::db::wake::game_topics(game_id, notified_users);
        for topic in &topics {
            self.notifier.notify(topic);
        }
        self.listen.send(topics.iter().map(String::as_str));
    }

    /// Wakes the long-polls and streams of this instance that wait on the feeds of these
    /// users (`notifications::write` sent the same topics to the other instances).
    pub fn announce_users(&self, notified_users: &[String]) {
        for user in notified_users {
            self.notifier.notify(&crate::db::wake::feed_topic(user));
        }
    }

    /// Ends the open streams of `user_id` on this instance, after a ban or a deletion
    /// committed (other instances hear of it from their listener). Each stream re-checks
    /// the account and ends when it is no longer allowed.
    pub fn end_streams_of(&self, user_id: &str) {
        self.notifier
            .notify(&crate::db::wake::account_topic(user_id));
    }

    /// Ends the streams the session `sid` opened on this instance, after its logout
    /// committed (other instances hear of it from their listener).
    pub fn end_streams_of_session(&self, sid: &str) {
        self.notifier.notify(&crate::db::wake::session_topic(sid));
    }
}

impl From<AppState> for crate::services::Services {
    fn from(state: AppState) -> Self {
        Self {
            db: state.db,
            config: state.config,
            metrics: state.metrics,
            watching: state.presence,
        }
    }
}
