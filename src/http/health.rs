//! Liveness and readiness probes.

use std::time::Duration;

use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::app::AppState;
use crate::error::Error;
use crate::http::problem::ApiError;

/// The answer of a probe.
#[derive(Debug, Serialize, serde::Deserialize, ToSchema)]
pub struct HealthView {
    /// `ok` for liveness, `ready` for readiness.
    #[schema(example = "ready")]
    pub status: String,
    /// The database engine (`postgresql` or `sqlite`); readiness only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "postgresql")]
    pub database: Option<String>,
}

/// Liveness: the process answers HTTP.
#[utoipa::path(
    tag = "operations",
    responses((status = 200, description = "The process is alive", body = HealthView))
)]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(HealthView {
        status: "ok".into(),
        database: None,
    })
}

/// How long readiness waits for a connection: a probe must answer well before a load
/// balancer gives up on it.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Readiness: the database answers and carries every migration this binary knows.
#[utoipa::path(
    tag = "operations",
    responses(
        (status = 200, description = "Ready to serve", body = HealthView),
        (status = 503, description = "The database is unreachable or not migrated",
         body = crate::http::problem::Problem, content_type = "application/problem+json"),
    )
)]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let db = state.db.clone();
    let migrated = web::block(move || {
        let mut conn = db.conn_within(READY_TIMEOUT)?;
        db.is_migrated(&mut conn)
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
