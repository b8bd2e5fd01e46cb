//! Prometheus metrics of one server instance, served as text at `GET /metrics`.
//!
//! [`Metrics`] owns its registry (not the process-wide default), so several apps in one
//! process, as in the tests, each count their own traffic. Labels are bounded: routes are
//! the matched patterns (`/api/v1/games/{id}`), never raw paths, and methods outside the
//! standard set count as `OTHER`.
//!
//! | metric | type | labels |
//! | --- | --- | --- |
//! | `leekha_http_requests_total` | counter | `method`, `route`, `status` |
//! | `leekha_http_request_duration_seconds` | histogram | `method`, `route` |
//! | `leekha_actions_applied_total` | counter | |
//! | `leekha_version_conflicts_total` | counter | |
//! | `leekha_turn_timeouts_total` | counter | |
//! | `leekha_webhook_deliveries_total` | counter | `outcome` |
//! | `leekha_push_deliveries_total` | counter | `provider`, `outcome` |
//! | `leekha_db_pool_connections` | gauge | |
//! | `leekha_db_pool_idle_connections` | gauge | |
//! | `leekha_db_pool_max_connections` | gauge | |
//! | `leekha_db_up` | gauge | |
//! | `leekha_active_games` | gauge | |
//! | `leekha_group_commit_writes_total` | counter | |
//! | `leekha_group_commit_statements_total` | counter | |
//! | `leekha_view_probes_total` | counter | |
//! | `leekha_view_probe_queries_total` | counter | |

use std::time::Duration;

/// The outcomes of a webhook attempt.
const WEBHOOK_OUTCOMES: [&str; 3] = ["delivered", "retry", "failed"];
/// The push services, as `Platform::as_str` names them.
const PUSH_PROVIDERS: [&str; 3] = ["fcm", "apns", "webpush"];
/// The outcomes of a push attempt (`skipped`: the user had the game open live).
const PUSH_OUTCOMES: [&str; 5] = ["delivered", "retry", "failed", "gone", "skipped"];

use prometheus::core::Collector;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

/// The media type of the text exposition format.
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// Route label of requests that matched no route (bounded: never the raw path).
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Latency buckets in seconds: fast reads up to 30 s long-polls.
const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Every metric of the server, in one registry.
#[derive(Debug, Clone)]
pub struct Metrics {
    registry: Registry,
    http_requests: IntCounterVec,
    http_duration: HistogramVec,
    actions_applied: IntCounter,
    version_conflicts: IntCounter,
    turn_timeouts: IntCounter,
    webhook_deliveries: IntCounterVec,
    push_deliveries: IntCounterVec,
    pool_connections: IntGauge,
    pool_idle: IntGauge,
    pool_max: IntGauge,
    db_up: IntGauge,
    active_games: IntGauge,
    open_streams: IntGauge,
    max_streams: IntGauge,
    group_writes: IntCounter,
    group_statements: IntCounter,
    view_probes: IntCounter,
    view_probe_queries: IntCounter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric at zero.
    ///
    /// # Panics
    /// Never in practice: only on a malformed metric definition in this function.
    pub fn new() -> Self {
        let registry = Registry::new();
        // The metrics without labels: just a name and a help text each.
        let counter = |name, help| register(&registry, IntCounter::new(name, help));
        let gauge = |name, help| register(&registry, IntGauge::new(name, help));
        let metrics = Self {
            http_requests: register(
                &registry,
                IntCounterVec::new(
                    Opts::new(
                        "leekha_http_requests_total",
                        "HTTP requests answered, by method, route pattern and status",
                    ),
                    &["method", "route", "status"],
                ),
            ),
            http_duration: register(
                &registry,
                HistogramVec::new(
                    HistogramOpts::new(
                        "leekha_http_request_duration_seconds",
                        "Time to answer HTTP requests (long-polls included), by method and route pattern",
                    )
                    .buckets(LATENCY_BUCKETS.to_vec()),
                    &["method", "route"],
                ),
            ),
            actions_applied: counter(
                "leekha_actions_applied_total",
                "Game actions applied (passes and plays, bots' included)",
            ),
            version_conflicts: counter(
                "leekha_version_conflicts_total",
                "Requests refused with 409 version_conflict",
            ),
            turn_timeouts: counter(
                "leekha_turn_timeouts_total",
                "Turns that timed out and were played by the server",
            ),
            webhook_deliveries: register(
                &registry,
                IntCounterVec::new(
                    Opts::new(
                        "leekha_webhook_deliveries_total",
                        "Webhook delivery attempts, by outcome",
                    ),
                    &["outcome"],
                ),
            ),
            push_deliveries: register(
                &registry,
                IntCounterVec::new(
                    Opts::new(
                        "leekha_push_deliveries_total",
                        "Push attempts, by provider (fcm, apns, webpush) and outcome (delivered, retry, failed, gone, skipped)",
                    ),
                    &["provider", "outcome"],
                ),
            ),
            pool_connections: gauge(
                "leekha_db_pool_connections",
                "Database connections open in the pool",
            ),
            pool_idle: gauge(
                "leekha_db_pool_idle_connections",
                "Database connections open and idle in the pool",
            ),
            pool_max: gauge(
                "leekha_db_pool_max_connections",
                "The most connections the pool opens",
            ),
            db_up: gauge(
                "leekha_db_up",
                "1 when the database answered the last scrape's query, else 0",
            ),
            active_games: gauge(
                "leekha_active_games",
                "Games being played (status active), as of the last successful scrape",
            ),
            open_streams: gauge(
                "leekha_open_streams",
                "Event streams and waiting long-polls open on this instance",
            ),
            max_streams: gauge(
                "leekha_max_streams",
                "The most streams and long-polls this instance admits (LEEKHA_MAX_STREAMS)",
            ),
            group_writes: counter(
                "leekha_group_commit_writes_total",
                "Guarded action writes through the instance's group commit (PostgreSQL)",
            ),
            group_statements: counter(
                "leekha_group_commit_statements_total",
                "Statements (each one commit) that carried those writes",
            ),
            view_probes: counter(
                "leekha_view_probes_total",
                "Version probes of views served from the instance's copies, asked through its prober (PostgreSQL)",
            ),
            view_probe_queries: counter(
                "leekha_view_probe_queries_total",
                "Queries that asked those probes",
            ),
            // Last: the fields above borrow it while they register.
            registry,
        };
        // Every outcome a delivery can have is a series from the start, at 0: a dashboard's
        // rate() over a series that appears with its first increment misses that increment.
        for outcome in WEBHOOK_OUTCOMES {
            metrics.webhook_deliveries.with_label_values(&[outcome]);
        }
        for provider in PUSH_PROVIDERS {
            for outcome in PUSH_OUTCOMES {
                metrics
                    .push_deliveries
                    .with_label_values(&[provider, outcome]);
            }
        }
        metrics
    }

    /// Records one answered HTTP request. `route` is the matched pattern, or
    /// [`UNMATCHED_ROUTE`].
    pub fn http_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let method = bounded_method(method);
        self.http_requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.http_duration
            .with_label_values(&[method, route])
            .observe(elapsed.as_secs_f64());
    }

    /// Counts game actions applied in one committed change.
    pub fn actions_applied(&self, n: u64) {
        self.actions_applied.inc_by(n);
    }

    /// Counts a request refused with `version_conflict`.
    pub fn version_conflict(&self) {
        self.version_conflicts.inc();
    }

    /// Counts a turn that timed out and was played by the server.
    pub fn turn_timeout(&self) {
        self.turn_timeouts.inc();
    }

    /// Counts a webhook delivery attempt; `outcome` should be one of a few fixed words
    /// (e.g. `delivered`, `failed`, `gave_up`), never a URL or a status text.
    pub fn webhook_delivery(&self, outcome: &str) {
        self.webhook_deliveries.with_label_values(&[outcome]).inc();
    }

    /// Counts one push attempt.
    pub fn push_delivery(&self, provider: &str, outcome: &str) {
        self.push_deliveries
            .with_label_values(&[provider, outcome])
            .inc();
    }

    /// Sets the pool gauges: connections open, idle, and the pool's size.
    pub fn set_pool(&self, connections: u32, idle: u32, max: u32) {
        self.pool_connections.set(i64::from(connections));
        self.pool_idle.set(i64::from(idle));
        self.pool_max.set(i64::from(max));
    }

    /// Sets the stream gauges: open now, and the ceiling.
    pub fn set_streams(&self, open: usize, max: usize) {
        self.open_streams
            .set(i64::try_from(open).unwrap_or(i64::MAX));
        self.max_streams.set(i64::try_from(max).unwrap_or(i64::MAX));
    }

    /// Brings the group-commit counters up to the writer's own counts (taken at a scrape).
    pub fn set_group_commit(&self, writes: u64, statements: u64) {
        catch_up(&self.group_writes, writes);
        catch_up(&self.group_statements, statements);
    }

    /// Brings the view-probe counters up to the prober's own counts (taken at a scrape).
    pub fn set_view_probes(&self, probes: u64, queries: u64) {
        catch_up(&self.view_probes, probes);
        catch_up(&self.view_probe_queries, queries);
    }

    /// Sets the database gauges from a scrape's query: the active games, or `None` when the
    /// database did not answer (the last count stays).
    pub fn set_active_games(&self, active: Option<i64>) {
        match active {
            Some(n) => {
                self.active_games.set(n);
                self.db_up.set(1);
            }
            None => self.db_up.set(0),
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Encoding into memory fails only on invalid metric families, which `new` rules out.
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!(error = %e, "cannot encode metrics");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Registers `metric` (built from constants, so its definition is valid) in `registry` and
/// returns it for recording.
fn register<M: Collector + Clone + 'static>(
    registry: &Registry,
    metric: prometheus::Result<M>,
) -> M {
    let metric = metric.expect("valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("unique metric names");
    metric
}

/// The method as a label: the standard ones, anything else as `OTHER`.
fn bounded_method(method: &str) -> &str {
    match method {
        "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" => method,
        _ => "OTHER",
    }
}

/// Raises `counter` to `now`, a count kept elsewhere (never lowers it).
fn catch_up(counter: &IntCounter, now: u64) {
    counter.inc_by(now.saturating_sub(counter.get()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_show_in_the_text_with_their_labels() {
        let m = Metrics::new();
        m.http_request("GET", "/api/v1/games/{id}", 200, Duration::from_millis(3));
        m.http_request("BREW", UNMATCHED_ROUTE, 404, Duration::from_millis(1));
        m.webhook_delivery("delivered");
        m.actions_applied(3);
        let text = m.render();
        assert!(
            text.contains(
                r#"leekha_http_requests_total{method="GET",route="/api/v1/games/{id}",status="200"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"leekha_http_requests_total{method="OTHER",route="unmatched",status="404"} 1"#
            ),
            "{text}"
        );
        assert!(text.contains("leekha_actions_applied_total 3"), "{text}");
        assert!(
            text.contains(r#"leekha_webhook_deliveries_total{outcome="delivered"} 1"#),
            "{text}"
        );
        // The outcomes not seen yet are there, at 0.
        assert!(
            text.contains(r#"leekha_webhook_deliveries_total{outcome="retry"} 0"#),
            "{text}"
        );
        assert!(
            text.contains(r#"leekha_push_deliveries_total{outcome="gone",provider="apns"} 0"#),
            "{text}"
        );
        assert!(text.contains("leekha_http_request_duration_seconds_bucket"));
    }

    #[test]
    fn two_instances_count_apart() {
        let a = Metrics::new();
        let b = Metrics::new();
        a.turn_timeout();
        assert!(a.render().contains("leekha_turn_timeouts_total 1"));
        assert!(b.render().contains("leekha_turn_timeouts_total 0"));
    }
}
