//! Liveness and readiness probes.

use std::time::Duration;

use actix_web::body::None as NoBody;
use actix_web::{HttpResponse, get, head, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::app::AppState;
use crate::error::Error;
use crate::http::reply::{Reply, State};

/// The answer of a probe.
#[derive(Debug, Serialize, serde::Deserialize, ToSchema)]
pub struct HealthView {
    /// `ok` for liveness, `ready` for readiness.
    #[schema(value_type = crate::http::views::schema::HealthStatus)]
    pub status: String,
    /// The database engine (`postgresql` or `sqlite`); readiness only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::http::views::schema::DatabaseEngine>)]
    pub database: Option<String>,
}

/// Liveness.
///
/// Answers 200 while the process can answer HTTP at all; it does not touch the database, so
/// a database outage does not restart the server.
#[utoipa::path(operation_id = "healthz", tag = "operations",
    responses((status = 200, description = "The process is alive", body = HealthView)))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    alive()
}

fn alive() -> HttpResponse {
    HttpResponse::Ok().json(HealthView {
        status: "ok".into(),
        database: None,
    })
}

/// Liveness, without a body.
///
/// The status and headers of `GET /healthz`, for probes that send `HEAD`.
#[utoipa::path(operation_id = "healthz_head", tag = "operations",
    responses((status = 200, description = "The process is alive")))]
#[head("/healthz")]
pub async fn healthz_head() -> HttpResponse {
    without_body(alive())
}

/// How long readiness waits for a connection: a probe must answer well before a load
/// balancer gives up on it.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Readiness.
///
/// Readiness: the database answers and carries every migration this binary knows. A load
/// balancer sends traffic only while this answers 200. 503 while the database is
/// unreachable or lacks a migration this binary needs.
#[utoipa::path(operation_id = "readyz", tag = "operations",
    responses(
        (status = 200, description = "Ready to serve", body = HealthView),
        (status = 503, description = "The database is unreachable or not migrated")))]
#[get("/readyz")]
pub async fn readyz(state: State) -> Reply {
    ready(&state).await
}

async fn ready(state: &AppState) -> Reply {
    let db = state.db.clone();
    let migrated = web::block(move || {
        let mut conn = db.conn_within(READY_TIMEOUT)?;
        let migrated = db.is_migrated(&mut conn);
        if migrated.as_ref().is_err_and(Error::lost_connection) {
            drop(conn);
            db.sweep_dead();
        }
        migrated
    })
    .await??;
    if !migrated {
        return Err(Error::new(
            crate::error::Kind::Unavailable,
            "not_migrated",
            "the database is reachable but not migrated; run `leekha migrate`",
        )
        .into());
    }
    Ok(HttpResponse::Ok().json(HealthView {
        status: "ready".into(),
        database: Some(state.db.backend().to_string()),
    }))
}

/// Readiness, without a body.
///
/// The status and headers of `GET /readyz`, for load balancers that probe with `HEAD`.
#[utoipa::path(operation_id = "readyz_head", tag = "operations",
    responses(
        (status = 200, description = "Ready to serve"),
        (status = 503, description = "The database is unreachable or not migrated")))]
#[head("/readyz")]
pub async fn readyz_head(state: State) -> Reply {
    ready(&state).await.map(without_body)
}

/// A response to `HEAD`. Over HTTP/1 actix-web would drop the body itself; a body of no
/// size also keeps it out of HTTP/2, in-process callers, and `Content-Length: 0`, which
/// would misstate the length of the `GET` body.
fn without_body(res: HttpResponse) -> HttpResponse {
    res.set_body(NoBody::new()).map_into_boxed_body()
}
