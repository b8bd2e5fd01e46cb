//! What the background workers below `app` (push and webhook delivery) use of the
//! application: the database, the configuration, the metrics and who is watching what
//! ([`Watching`]). `app` hands them these
//! instead of its whole state, so that they never import `app` (which imports `games`,
//! which writes the notifications those workers deliver).

use std::sync::Arc;

use crate::config::Config;
use crate::db::Db;
use crate::metrics::Metrics;

/// The database, the configuration, the metrics and the presence of this instance.
#[derive(Clone, Debug)]
pub struct Services {
    /// The database pool.
    pub db: Db,
    /// The configuration the server started with.
    pub config: Arc<Config>,
    /// This instance's metrics.
    pub metrics: Arc<Metrics>,
    /// Who has a game open live here (`app::presence` provides it).
    pub watching: Arc<dyn Watching>,
}

/// Whether a user has a game open live on this instance: an event stream or a waiting
/// long-poll. Push delivery asks it before sending what the open game already shows.
pub trait Watching: Send + Sync + std::fmt::Debug {
    /// Whether `user_id` watches the game `game_id` live here now.
    fn is_watching(&self, user_id: &str, game_id: &str) -> bool;
}
