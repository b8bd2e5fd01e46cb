//! The OpenAPI document: [`ApiDoc`] holds its fixed parts, the handlers' annotations its
//! operations, and [`finish`] applies the conventions that hold for every operation, so that
//! they are stated once rather than on each handler: the common error responses, `security:
//! []` on public operations, the headers every response of a kind carries, discriminated
//! unions, and an example for every request and response.

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

mod examples;
mod responses;
mod unions;

use examples::examples;
use responses::{
    common_responses, errors_are_problems, optional_parameters_are_not_null, public_unless_secured,
    response_headers, strip_null, transport_errors,
};
use unions::discriminated_unions;

/// The OpenAPI document's fixed parts; paths are collected from the registered handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Leekha server",
        // The contract's version (API.md), not the crate's: clients code against this one.
        version = "1.1.0",
        description = "Asynchronous play of Leekha (ليخة), the Levantine avoid-the-points card game, \
                       for four players or bots. Sign up or play as a guest, create or join a game, \
                       then act when `legal_actions` says so; the long-poll `events` and `notifications` \
                       feeds tell when something happened. Errors are `application/problem+json` with \
                       a stable `code`, explained at `/problems/{code}`.",
        license(name = "MIT", identifier = "MIT"),
        contact(name = "The Leekha server maintainers")
    ),
    servers((url = "/", description = "The server that serves this document")),
    components(schemas(crate::http::problem::Problem, crate::http::ratings::AroundMe)),
    modifiers(&BearerAuth),
    tags(
        (name = "accounts", description = "Registration, login, tokens and the caller's profile"),
        (name = "games", description = "Lobby, seats, actions, views, events, replays"),
        (name = "notifications", description = "The caller's notification feed and webhook"),
        (name = "chat", description = "Table talk and its reports"),
        (name = "social", description = "Friends, blocks and away mode"),
        (name = "ratings", description = "Weng-Lin ratings per mode: boards, public profiles, the caller's history"),
        (name = "push", description = "Push to the caller's devices (FCM, Web Push) and notification settings"),
        (name = "admin", description = "Administration, for role `admin` only; every change and every full read of a game is audited"),
        (name = "operations", description = "Health, readiness, metrics and documentation; no authentication"),
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
        // Only the two stream endpoints accept it (`auth::tickets`).
        components.add_security_scheme(
            "stream_ticket",
            SecurityScheme::ApiKey(utoipa::openapi::security::ApiKey::Query(
                utoipa::openapi::security::ApiKeyValue::with_description(
                    "ticket",
                    "A single-use ticket from POST /api/v1/auth/stream-ticket, for clients \
                     that cannot send Authorization (browser EventSource)",
                ),
            )),
        );
    }
}

/// Completes the document once every path is collected (paths are added after
/// [`ApiDoc`]'s own modifiers ran). The result is plain JSON: utoipa's types have no room
/// for `components/examples` or a header's `required`.
///
/// # Panics
/// Never in practice: utoipa's types always serialize.
pub fn finish(api: utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(api).expect("the document serializes");
    for_each_operation(&mut doc, |method, path, op| {
        if method != "head" {
            errors_are_problems(op);
        }
        common_responses(path, op);
        transport_errors(method, op);
        public_unless_secured(op);
        optional_parameters_are_not_null(op);
        if let Some(Value::Object(content)) =
            op.get_mut("requestBody").and_then(|b| b.get_mut("content"))
        {
            // An optional body is one that may be left out (`required: false`), not a null.
            for media in content.values_mut() {
                if let Some(schema) = media.get_mut("schema") {
                    strip_null(schema);
                }
            }
        }
        response_headers(path, op);
    });
    discriminated_unions(&mut doc);
    stream_event_types(&mut doc);
    examples(&mut doc);
    doc
}

/// A stream frame's `event` is an event type (the tags of `EventView`) on a game's stream
/// and a notification type on the feed's: one closed set, listed from those two schemas so
/// that it cannot fall behind them.
fn stream_event_types(doc: &mut Value) {
    let schemas = &doc["components"]["schemas"];
    let events = schemas["EventView"]["discriminator"]["mapping"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys().cloned());
    let notifications = schemas["NotificationType"]["enum"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned));
    let mut types: Vec<String> = events.chain(notifications).collect();
    types.sort();
    types.dedup();
    let mut values: Vec<Value> = types.into_iter().map(Value::String).collect();
    // Frames without an event (the first, which sets `retry`) have none.
    values.push(Value::Null);
    if let Some(event) = doc.pointer_mut("/components/schemas/SseEvent/properties/event") {
        event["enum"] = Value::Array(values);
    }
}

const METHODS: [&str; 6] = ["get", "put", "post", "delete", "patch", "head"];

fn for_each_operation(doc: &mut Value, mut f: impl FnMut(&str, &str, &mut Map<String, Value>)) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        for method in METHODS {
            if let Some(Value::Object(op)) = item.get_mut(method) {
                f(method, path, op);
            }
        }
    }
}

/// The operations whose `security` names a scheme (`security(())` declares an operation
/// public with one empty requirement, `[{}]`).
fn is_secured(op: &Map<String, Value>) -> bool {
    op.get("security")
        .and_then(Value::as_array)
        .is_some_and(|s| {
            s.iter()
                .any(|r| r.as_object().is_some_and(|r| !r.is_empty()))
        })
}

fn responses(op: &mut Map<String, Value>) -> &mut Map<String, Value> {
    op.entry("responses")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("responses is an object")
}
