//! The HTTP layer: [`build_app`] assembles the actix-web application that both `main` and the
//! tests run, and [`openapi`] the document generated from the same routes.

pub mod accounts;
pub mod admin;
pub mod extract;
mod fallback;
pub mod game_views;
pub mod games;
pub mod health;
pub mod metrics;
pub mod notifications;
pub mod notify;

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{App, HttpMessage, HttpRequest, HttpResponse, web};
use futures_util::FutureExt;
use tracing_actix_web::{RequestId, TracingLogger};
use utoipa::OpenApi;
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::SwaggerUi;

use crate::auth::Secret;
use crate::auth::ratelimit::AuthLimits;
use crate::auth::tokens::TokenKeys;
use crate::config::{Backend, Config};
use crate::db::Db;
use crate::error::{ApiError, PROBLEM_JSON};

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
    /// Wakes long-polls of this instance.
    pub notifier: Arc<notify::Notifier>,
    /// Prometheus metrics of this instance (`GET /metrics`).
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The games this instance wrote last (PostgreSQL's action path skips reading them).
    pub hot: Arc<crate::games::HotTables>,
}

impl AppState {
    /// State for the given configuration and database. Resolves the signing secret, which
    /// on SQLite may mean reading or creating it in the database (blocking).
    ///
    /// # Errors
    /// PostgreSQL without `LEEKHA_JWT_SECRET`, or a database that cannot be read.
    pub fn init(config: Config, db: Db) -> Result<Self, String> {
        let secret = match (&config.jwt_secret, db.backend()) {
            (Some(secret), _) => secret.clone(),
            (None, Backend::Postgres) => {
                return Err("LEEKHA_JWT_SECRET is required on PostgreSQL: set it to at least 32 random bytes \
                            (e.g. `openssl rand -hex 32`), the same on every instance"
                    .to_owned());
            }
            (None, Backend::Sqlite) => {
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
        Ok(Self {
            db,
            keys: Arc::new(keys),
            limits: Arc::new(limits),
            notifier: Arc::default(),
            metrics: Arc::default(),
            hot: Arc::default(),
            config: Arc::new(config),
        })
    }
}

impl AppState {
    /// Wakes the long-polls of this instance that wait on the game or on the feeds of the
    /// notified users (other instances find the change by polling the database).
    pub fn announce(&self, game_id: &str, notified_users: &[String]) {
        self.notifier.notify(game_id);
        for user in notified_users {
            self.notifier.notify(&format!("user:{user}"));
        }
    }
}

/// The OpenAPI document's fixed parts; paths are collected from the registered handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Leekha server",
        description = "Asynchronous play of Leekha (ليخة), the Levantine avoid-the-points card game. \
                       Errors are `application/problem+json` with a stable `code`.",
        license(name = "MIT")
    ),
    components(schemas(crate::error::Problem)),
    modifiers(&BearerAuth),
    tags(
        (name = "notifications", description = "The caller's notification feed and webhook"),
        (name = "games", description = "Lobby, seats, actions, views, events, replays"),
        (name = "accounts", description = "Registration, login, tokens and the caller's profile"),
        (name = "operations", description = "Health, readiness, metrics and documentation; no authentication"),
        (name = "admin", description = "Administration, for role `admin` only; every change and every full read of a game is audited"),
    )
)]
pub struct ApiDoc;

/// Declares the bearer scheme that protected operations name in `security`.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "An access token from /api/v1/auth/login, /register, /guest or /refresh",
                    ))
                    .build(),
            ),
        );
    }
}

/// Documents the error statuses any operation can answer, so the document lists every status
/// a client can get: 400 for a malformed parameter or body, 413/415 for a body, 401/403 for a
/// protected operation, 404 for an unknown id, 500 and 503 everywhere a database is used.
struct CommonResponses;

impl utoipa::Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let problem = |description: &str| {
            ResponseBuilder::new()
                .description(description)
                .content(
                    crate::error::PROBLEM_JSON,
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("Problem")))
                        .build(),
                )
                .build()
        };
        for (path, item) in openapi.paths.paths.iter_mut() {
            let api = path.starts_with("/api/");
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                let has_body = op.request_body.is_some();
                let has_params =
                    op.parameters.as_ref().is_some_and(|p| !p.is_empty()) || path.contains('{');
                let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
                let mut add = |status: &str, description: &str| {
                    op.responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| problem(description).into());
                };
                if has_body || has_params {
                    add(
                        "400",
                        "Malformed request: bad JSON, parameter or path id (problem+json)",
                    );
                }
                if has_body {
                    add(
                        "413",
                        "The body is larger than the limit (`payload_too_large`)",
                    );
                    add(
                        "415",
                        "The body is not `application/json` (`unsupported_media_type`)",
                    );
                }
                if secured {
                    add(
                        "401",
                        "Missing, invalid or expired access token (`missing_token`, `invalid_token`)",
                    );
                    add("403", "Not allowed, or banned (`forbidden`, `banned`)");
                }
                if path.contains('{') {
                    add("404", "No such resource (`not_found`)");
                }
                if api || path == "/readyz" {
                    add(
                        "500",
                        "An internal error; the details are in the server log (`internal`)",
                    );
                    add(
                        "503",
                        "The database is unreachable (`database_unavailable`)",
                    );
                }
            }
        }
    }
}

/// Registers every documented route. Shared by the app and by [`openapi`].
fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
    cfg.service(health::healthz)
        .service(health::readyz)
        .service(metrics::metrics)
        .service(
            utoipa_actix_web::scope("/api/v1")
                .configure(accounts::routes)
                .configure(games::routes)
                .configure(notifications::routes)
                .configure(admin::routes),
        );
}

/// The OpenAPI document of this server, as served at `/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut api = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .configure(routes)
        .split_for_parts()
        .1;
    // Paths are collected after ApiDoc's modifiers ran: add the common responses now.
    utoipa::Modify::modify(&CommonResponses, &mut api);
    api
}

/// The request id header set on every response, for correlating a client report with the log.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Builds the application: routes, extractor limits, error envelopes, request tracing.
pub fn build_app(
    state: AppState,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let limit = state.config.max_body_bytes;
    let (app, api) = App::new()
        .into_utoipa_app()
        .openapi(ApiDoc::openapi())
        .app_data(web::Data::new(state))
        .app_data(
            web::JsonConfig::default()
                .limit(limit)
                .error_handler(json_error),
        )
        .app_data(web::PayloadConfig::default().limit(limit))
        .app_data(web::PathConfig::default().error_handler(path_error))
        .app_data(web::QueryConfig::default().error_handler(query_error))
        .configure(routes)
        .split_for_parts();
    let mut api = api;
    utoipa::Modify::modify(&CommonResponses, &mut api);
    let table = fallback::RouteTable::from_openapi(&api);
    app.service(web::redirect("/docs", "/docs/").permanent())
        .service(SwaggerUi::new("/docs/{_:.*}").url("/openapi.json", api))
        .app_data(web::Data::new(table))
        .default_service(web::to(fallback::unmatched))
        .wrap(ErrorHandlers::new().default_handler(problem_safety_net))
        .wrap_fn(metrics::track)
        .wrap_fn(|req, srv| {
            let id = req.extensions().get::<RequestId>().map(ToString::to_string);
            actix_web::dev::Service::call(srv, req).map(move |res| {
                res.map(|mut res| {
                    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
                        res.headers_mut()
                            .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
                    }
                    res
                })
            })
        })
        .wrap(TracingLogger::default())
}

fn json_error(err: JsonPayloadError, _req: &HttpRequest) -> actix_web::Error {
    let api = match &err {
        JsonPayloadError::OverflowKnownLength { length, limit } => ApiError::new(
            actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body has {length} bytes; the limit is {limit}"),
        ),
        JsonPayloadError::Overflow { limit } => ApiError::new(
            actix_web::http::StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is larger than the limit of {limit} bytes"),
        ),
        JsonPayloadError::ContentType => ApiError::new(
            actix_web::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as Content-Type: application/json",
        ),
        JsonPayloadError::Deserialize(e) if e.is_data() => ApiError::validation(e.to_string()),
        JsonPayloadError::Deserialize(e) => ApiError::bad_request(format!("malformed JSON: {e}")),
        other => ApiError::bad_request(other.to_string()),
    };
    api.into()
}

fn path_error(err: PathError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::bad_request(format!("invalid path parameter: {err}")).into()
}

fn query_error(err: QueryPayloadError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::validation(format!("invalid query string: {err}")).into()
}

/// Any error response that some layer produced without a problem body (actix internals,
/// middleware) is rewritten into one, so clients only ever see the one envelope.
fn problem_safety_net<B: MessageBody + 'static>(
    res: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let is_problem = res
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if is_problem {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let (req, _original) = res.into_parts();
    let body: HttpResponse =
        actix_web::ResponseError::error_response(&ApiError::from_status(status));
    Ok(ErrorHandlerResponse::Response(
        ServiceResponse::new(req, body).map_into_right_body(),
    ))
}
