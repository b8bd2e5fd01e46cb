//! What the background workers below `app` (push and webhook delivery) use of the
//! application: the database, the configuration and the metrics. `app` hands them these
//! instead of its whole state, so that they never import `app` (which imports `games`,
//! which writes the notifications those workers deliver).

use std::sync::Arc;

use crate::config::Config;
use crate::db::Db;
use crate::metrics::Metrics;

/// The database, the configuration and the metrics of this instance.
#[derive(Clone, Debug)]
pub struct Services {
    /// The database pool.
    pub db: Db,
    /// The configuration the server started with.
    pub config: Arc<Config>,
    /// This instance's metrics.
    pub metrics: Arc<Metrics>,
}
