//! The HTTP layer: [`build_app`] assembles the actix-web application that both `main` and the
//! tests run, and [`openapi()`] the document generated from the same routes.

/// Declares a module's `routes`, which registers the documented handlers it names, module by
/// module and in the order given (the order of the OpenAPI document).
macro_rules! routes {
    ($($module:ident::{$($handler:ident),+ $(,)?}),+ $(,)?) => {
        /// Registers the routes of this module.
        pub fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
            $($(cfg.service($module::$handler);)+)+
        }
    };
}

pub mod accounts;
pub mod adjust;
pub mod admin;
pub mod away;
pub mod chat;
pub mod compression;
mod content_coding;
pub mod cors;
pub mod docs;
pub mod extract;
mod fallback;
pub mod games;
pub mod health;
pub mod instant;
pub mod json_body;
pub mod long_poll;
pub mod metrics;
pub mod notifications;
pub mod openapi;
pub mod pagination;
pub mod preconditions;
pub mod problem;
pub mod problem_catalog;
pub mod problem_page;
pub mod push;
pub mod query;
pub mod rate_limit;
pub mod ratings;
pub mod reply;
mod slow_body;
pub mod social;
pub mod streams;
pub mod transport;
pub mod views;
pub mod webapp;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::{Compress, ErrorHandlerResponse, ErrorHandlers};
use actix_web::{App, HttpMessage, HttpRequest, HttpResponse, web};
use futures_util::FutureExt;
use tracing_actix_web::{RequestId, TracingLogger};
use utoipa::OpenApi;
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::SwaggerUi;

use crate::app::AppState;
use crate::error::Error;
use problem::{ApiError, PROBLEM_JSON};

/// Registers every documented route. Shared by the app and by [`openapi`].
fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
    cfg.service(health::healthz)
        .service(health::healthz_head)
        .service(health::readyz)
        .service(health::readyz_head)
        .service(metrics::metrics)
        .service(docs::document)
        .service(docs::docs)
        .service(problem_page::problem_type)
        .service(
            utoipa_actix_web::scope("/api/v1")
                .configure(accounts::routes)
                .configure(games::routes)
                .configure(notifications::routes)
                .configure(social::routes)
                .configure(chat::routes)
                .configure(away::routes)
                .configure(ratings::routes)
                .configure(push::routes)
                .configure(streams::routes)
                .configure(admin::routes),
        );
}

/// The OpenAPI document of this server, as served at `/openapi.json`.
pub fn openapi() -> serde_json::Value {
    let api = App::new()
        .into_utoipa_app()
        .openapi(openapi::ApiDoc::openapi())
        .configure(routes)
        .split_for_parts()
        .1;
    // Paths are collected after ApiDoc's modifiers ran: finish the document now.
    openapi::finish(api)
}

/// The request id header set on every response, for correlating a client report with the log.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Builds the application: routes, extractor limits, CORS, compression, error envelopes,
/// request tracing.
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
    let cors = cors::cors(&state.config.cors_origins);
    let body_timeout = state.config.client_request_timeout;
    let (app, api) = App::new()
        .into_utoipa_app()
        .openapi(openapi::ApiDoc::openapi())
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
    // Other methods on these pages answer 405 with `Allow`, as on the documented paths.
    let table = fallback::RouteTable::from_openapi(&api).with_pages(&["/", "/sw.js"]);
    let document = docs::Document(web::Bytes::from(openapi::finish(api).to_string()));
    app.app_data(web::Data::new(document))
        .service(SwaggerUi::new("/docs/{_:.*}").config(
            // The default validator is a third-party site: the docs must work offline
            // and send nothing elsewhere.
            utoipa_swagger_ui::Config::from("/openapi.json").validator_url("none"),
        ))
        .configure(webapp::routes)
        .app_data(web::Data::new(table))
        .default_service(web::to(fallback::unmatched))
        .wrap_fn(fallback::head_as_get)
        .wrap_fn(move |req, srv| slow_body::deadline(req, srv, body_timeout))
        .wrap_fn(content_coding::refuse_unknown)
        // Inside compression, so that its `Vary` comes before compression's.
        .wrap(cors)
        .wrap_fn(|req, srv| adjust::each_response(req, srv, cors::only_for_allowed_origins))
        .wrap_fn(|req, srv| adjust::each_response(req, srv, compression::mark_plain))
        .wrap(Compress::default())
        .wrap_fn(|req, srv| adjust::each_response(req, srv, compression::unmark))
        // Outside compression, whose bodies are streams.
        .wrap_fn(|req, srv| adjust::each_response(req, srv, transport::http10_without_chunks))
        // Outside CORS and compression: their refusals (a preflight from another origin, no
        // acceptable encoding) get the problem envelope too, and keep their headers.
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

fn json_error(err: JsonPayloadError, req: &HttpRequest) -> actix_web::Error {
    let api = match &err {
        JsonPayloadError::OverflowKnownLength { length, limit } => Error::new(
            crate::error::Kind::PayloadTooLarge,
            "payload_too_large",
            format!("the body has {length} bytes; the limit is {limit}"),
        ),
        JsonPayloadError::Overflow { limit } => Error::new(
            crate::error::Kind::PayloadTooLarge,
            "payload_too_large",
            format!("the body is larger than the limit of {limit} bytes"),
        ),
        JsonPayloadError::ContentType => extract::unsupported_media_type(),
        JsonPayloadError::Deserialize(e) => extract::json_problem(e),
        JsonPayloadError::Payload(e) => extract::unreadable_body(e, extract::body_limit(req)),
        other => Error::bad_request(other.to_string()),
    };
    ApiError::from(api).into()
}

fn path_error(err: PathError, _req: &HttpRequest) -> actix_web::Error {
    // Every id in a path is a UUID; serde's message about one names its parser's internals.
    let detail = if err.to_string().contains("UUID parsing failed") {
        "an id in the path is not a UUID".to_owned()
    } else {
        format!("invalid path parameter: {err}")
    };
    ApiError::from(Error::bad_request(detail)).into()
}

fn query_error(err: QueryPayloadError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::from(Error::validation(format!("invalid query string: {err}"))).into()
}

/// Any error response that some layer produced without a problem body (actix internals,
/// middleware) is rewritten into one, so clients only ever see the one envelope. The headers
/// other layers set (CORS, `Vary`, `Allow`) stay; those of the old body go.
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
    let (req, original) = res.into_parts();
    let mut body: HttpResponse =
        actix_web::ResponseError::error_response(&ApiError::from_status(status));
    let own: Vec<HeaderName> = body.headers().keys().cloned().collect();
    for (name, value) in original.headers() {
        let of_the_old_body = [
            header::CONTENT_TYPE,
            header::CONTENT_LENGTH,
            header::CONTENT_ENCODING,
        ]
        .contains(name);
        if !of_the_old_body && !own.contains(name) {
            body.headers_mut().append(name.clone(), value.clone());
        }
    }
    Ok(ErrorHandlerResponse::Response(
        ServiceResponse::new(req, body).map_into_right_body(),
    ))
}
