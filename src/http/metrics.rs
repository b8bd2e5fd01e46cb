//! `GET /metrics` (Prometheus text) and the middleware that counts every HTTP request.

use std::future::Future;
use std::time::{Duration, Instant};

use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::{HttpResponse, get, web};
use futures_util::FutureExt;

use crate::error::Error;
use crate::http::problem::ApiError;
use crate::http::reply::State;
use crate::metrics::{CONTENT_TYPE, UNMATCHED_ROUTE};

/// How long a scrape waits for a database connection to count the active games: a scrape
/// must answer even while the database is down (then `leekha_db_up` is 0).
const SCRAPE_DB_TIMEOUT: Duration = Duration::from_secs(1);

/// Prometheus metrics.
///
/// The server's metrics in the Prometheus text format: HTTP requests by route pattern and
/// status with latency histograms, game actions, version conflicts, turn timeouts, webhook
/// deliveries, the database pool, the group commit of actions and the active games.
#[utoipa::path(operation_id = "metrics", tag = "operations",
    responses(
        (status = 200, description = "Prometheus text exposition format 0.0.4", body = String,
         content_type = "text/plain; version=0.0.4",
         example = json!("# HELP leekha_actions_applied_total Game actions applied.\n# TYPE leekha_actions_applied_total counter\nleekha_actions_applied_total 1234\n"))))]
#[get("/metrics")]
pub async fn metrics(state: State) -> HttpResponse {
    let (connections, idle) = state.db.pool_state();
    state
        .metrics
        .set_pool(connections, idle, state.config.pool_size);
    state
        .metrics
        .set_streams(state.presence.open(), state.presence.max());
    if let Some(group) = state.db.group_commit() {
        let (writes, statements, _) = group.counts().get();
        state.metrics.set_group_commit(writes, statements);
    }
    if let Some(probes) = state.db.probes() {
        let (probes, queries) = probes.counts().get();
        state.metrics.set_view_probes(probes, queries);
    }
    let db = state.db.clone();
    let active = web::block(move || {
        let mut conn = db.conn_within(SCRAPE_DB_TIMEOUT)?;
        Ok::<_, Error>(crate::db::admin::active_games(&mut conn)?)
    })
    .await
    .map_err(|e| Error::internal(e.to_string()))
    .and_then(|r| r);
    if let Err(e) = &active {
        tracing::warn!(error = %e, "metrics: cannot count active games");
    }
    state.metrics.set_active_games(active.ok());
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, CONTENT_TYPE))
        .body(state.metrics.render())
}

/// Middleware (for `App::wrap_fn`): counts each request by method, matched route pattern
/// and status, observes its latency, and counts `version_conflict` refusals, whichever
/// handler gave them.
pub fn track<S, B>(
    req: ServiceRequest,
    srv: &S,
) -> impl Future<Output = Result<ServiceResponse<B>, actix_web::Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    S::Future: 'static,
    B: 'static,
{
    // Not named `metrics`: that is the handler above.
    let recorder = req.app_data::<State>().map(|s| s.metrics.clone());
    let method = req.method().clone();
    let started = Instant::now();
    srv.call(req).map(move |res| {
        if let Some(recorder) = recorder {
            let (route, status, conflict) = match &res {
                Ok(r) => (
                    r.request().match_pattern(),
                    r.status(),
                    r.response()
                        .error()
                        .and_then(|e| e.as_error::<ApiError>())
                        .is_some_and(|e| e.code() == "version_conflict"),
                ),
                Err(e) => (None, e.as_response_error().status_code(), false),
            };
            recorder.http_request(
                method.as_str(),
                route.as_deref().unwrap_or(UNMATCHED_ROUTE),
                status.as_u16(),
                started.elapsed(),
            );
            if conflict {
                recorder.version_conflict();
            }
        }
        res
    })
}
