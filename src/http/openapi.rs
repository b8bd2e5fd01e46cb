//! The OpenAPI document: [`ApiDoc`] holds its fixed parts, the handlers' annotations its
//! operations, and [`finish`] applies the conventions that hold for every operation, so that
//! they are stated once rather than on each handler: the common error responses, `security:
//! []` on public operations, the headers every response of a kind carries, discriminated
//! unions, and an example for every request and response.

use serde_json::{Map, Value, json};
use utoipa::OpenApi;

use crate::http::problem::PROBLEM_JSON;

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

/// The error statuses any operation can answer, so the document lists every status a client
/// can get: 400 for a malformed parameter or body, 413/415 for a body, 401/403 for a protected
/// operation, 404 for an unknown id, 500 and 503 everywhere a database is used.
fn common_responses(path: &str, op: &mut Map<String, Value>) {
    let has_body = op.contains_key("requestBody");
    let has_params = op
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|p| !p.is_empty())
        || path.contains('{');
    let secured = is_secured(op);
    let api = path.starts_with("/api/");
    let responses = responses(op);
    let add = |responses: &mut Map<String, Value>, status: &str, description: &str| {
        responses.entry(status).or_insert_with(|| {
            json!({
                "description": description,
                "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
            })
        });
    };
    if has_body || has_params {
        add(
            responses,
            "400",
            "Malformed request: bad JSON, parameter or path id (problem+json)",
        );
    }
    if has_body {
        add(
            responses,
            "413",
            "The body is larger than the limit (`payload_too_large`)",
        );
        add(
            responses,
            "415",
            "The body is not `application/json`, or its `Content-Encoding` is not one the server \
             reads (`unsupported_media_type`)",
        );
    }
    if secured {
        add(
            responses,
            "401",
            "Missing, invalid or expired access token (`missing_token`, `invalid_token`)",
        );
        if path.starts_with("/api/v1/admin") {
            add(
                responses,
                "403",
                "Not an administrator (`forbidden`), or banned (`banned`)",
            );
        } else {
            add(
                responses,
                "403",
                "Not allowed, or banned (`forbidden`, `banned`)",
            );
        }
    }
    if path.contains('{') {
        add(responses, "404", "No such resource (`not_found`)");
    }
    if api || path == "/readyz" {
        add(
            responses,
            "500",
            "An internal error; the details are in the server log (`internal`)",
        );
        add(
            responses,
            "503",
            "The database is unreachable (`database_unavailable`)",
        );
    }
    if !responses.keys().any(|status| status.starts_with('4')) {
        add(
            responses,
            "405",
            "The path does not take this method (`method_not_allowed`); `Allow` lists those it takes",
        );
    }
}

/// The statuses the HTTP layer answers before any handler runs, on any operation: declared
/// once as each operation's `default`, so that a strict generated client reads them as
/// problems rather than as statuses the document never named.
fn transport_errors(method: &str, op: &mut Map<String, Value>) {
    let mut response = json!({
        "description": "A refusal by the HTTP layer, before the operation runs: 406 \
            (`not_acceptable`) when `Accept-Encoding` allows no encoding the server has, 408 \
            (`request_timeout`) when the request's head or body comes too slowly, 431 \
            (`headers_too_large`) for too many or too large headers",
    });
    if method != "head" {
        response["content"] =
            json!({PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}});
    }
    responses(op).entry("default").or_insert(response);
}

/// An error response is `application/problem+json` with a [`Problem`](crate::http::problem::Problem)
/// body, so handlers name only its status and what it means (a `HEAD` answer has no body).
fn errors_are_problems(op: &mut Map<String, Value>) {
    for (status, response) in responses(op).iter_mut() {
        if (status.starts_with('4') || status.starts_with('5'))
            && let Some(response) = response.as_object_mut()
        {
            response.entry("content").or_insert_with(
                || json!({PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}),
            );
        }
    }
}

/// An operation that names no scheme is public: say so with `security: []`, so that a
/// document-wide default can never make it look protected.
fn public_unless_secured(op: &mut Map<String, Value>) {
    if !is_secured(op) {
        op.insert("security".into(), json!([]));
    }
}

/// A parameter that may be left out is not "nullable": a query string or header has no null.
/// utoipa types `Option<T>` parameters as `T | null`, which makes generated clients send
/// `None` literally; drop the null.
fn optional_parameters_are_not_null(op: &mut Map<String, Value>) {
    let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
        return;
    };
    for param in params {
        if let Some(schema) = param.get_mut("schema") {
            strip_null(schema);
        }
    }
}

fn strip_null(schema: &mut Value) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types[0].clone();
            schema["type"] = only;
        }
    }
    let one_of = schema.get("oneOf").and_then(Value::as_array).cloned();
    if let Some(members) = one_of {
        let rest: Vec<Value> = members
            .into_iter()
            .filter(|m| m.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if rest.len() == 1 {
            let obj = schema.as_object_mut().expect("a schema");
            obj.remove("oneOf");
            if let Some(Value::Object(inner)) = rest.into_iter().next() {
                for (k, v) in inner {
                    obj.entry(k).or_insert(v);
                }
            }
        }
    }
}

fn header(description: &str, schema: Value, required: bool) -> Value {
    json!({"description": description, "required": required, "schema": schema})
}

/// The 201s whose creation has no address to read it back at. A stream ticket is a
/// single-use secret: there is no `GET` for it, and a `Location` would only repeat it.
const CREATED_WITHOUT_ADDRESS: &[&str] = &["/api/v1/auth/stream-ticket"];

/// The headers that every response of a kind carries: `Location` on a 201, `ETag` with a
/// game view, `Cache-Control: no-store` with credentials, `Retry-After` on 429 and 503,
/// `RateLimit-*` on the answers of the rate-limited operations.
fn response_headers(path: &str, op: &mut Map<String, Value>) {
    // A quota's 429 (accounts, chat) comes with its `RateLimit-*` state; the per-user ceiling
    // on open streams (`long_poll::TooManyOfMine`) is a count, not a quota, and has none.
    let rate_limited = op
        .get("responses")
        .and_then(|r| r.get("429"))
        .and_then(|r| r.get("description"))
        .and_then(Value::as_str)
        .is_some_and(|d| !d.contains("open streams and long-polls"));
    for (status, response) in responses(op).iter_mut() {
        let Some(response) = response.as_object_mut() else {
            continue;
        };
        let body = response
            .get("content")
            .and_then(|c| c.get("application/json"))
            .and_then(|m| m.get("schema"))
            .and_then(|s| s.get("$ref"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let headers = response
            .entry("headers")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("headers is an object");
        if status == "201" && !CREATED_WITHOUT_ADDRESS.contains(&path) {
            headers.entry("Location").or_insert_with(|| {
                header(
                    "Where the created resource is read (`/api/v1/games/{id}` for a game, \
                     `/api/v1/me` for an account)",
                    json!({"type": "string", "format": "uri-reference"}),
                    true,
                )
            });
        }
        if body.as_deref() == Some("#/components/schemas/GameView") {
            headers.entry("ETag").or_insert_with(|| {
                header(
                    "The game's version as an entity tag, e.g. `\"12\"`: send it as \
                     `If-None-Match` to get 304 while nothing changed, or as `If-Match` with an \
                     action",
                    json!({"type": "string", "example": "\"12\""}),
                    true,
                )
            });
        }
        let credentials = matches!(
            body.as_deref(),
            Some("#/components/schemas/TokenResponse" | "#/components/schemas/StreamTicket")
        );
        if credentials && status.starts_with('2') {
            headers.entry("Cache-Control").or_insert_with(|| {
                header(
                    "`no-store`: the answer carries credentials, which no cache may keep",
                    json!({"type": "string", "enum": ["no-store"]}),
                    true,
                )
            });
        }
        if status == "401" {
            headers.entry("WWW-Authenticate").or_insert_with(|| {
                header(
                    "The challenge: `Bearer realm=\"leekha\"`, with `error=\"invalid_token\"` when a \
                     token was sent and refused",
                    json!({"type": "string", "example": "Bearer realm=\"leekha\", error=\"invalid_token\""}),
                    true,
                )
            });
        }
        if status == "429" || status == "503" {
            headers.entry("Retry-After").or_insert_with(|| {
                header(
                    "Seconds to wait before trying again",
                    json!({"type": "integer", "minimum": 1}),
                    true,
                )
            });
        }
        // Every attempt the limiter counted carries them, refusals included; a body refused
        // before it is read (413, 415, malformed JSON) is not counted and has none, so they
        // are declared optional.
        if rate_limited && status != "413" && status != "415" {
            for (name, description) in [
                (
                    "RateLimit-Limit",
                    "Attempts allowed per window for this client",
                ),
                ("RateLimit-Remaining", "Attempts left in the current window"),
                (
                    "RateLimit-Reset",
                    "Seconds until the window allows the next attempt in full",
                ),
            ] {
                headers.entry(name).or_insert_with(|| {
                    header(description, json!({"type": "integer", "minimum": 0}), false)
                });
            }
        }
        if headers.is_empty() {
            response.remove("headers");
        }
    }
    let _ = path;
}

/// The value of a schema's `type` tag when it is an object whose `type` property admits one
/// string only.
fn tag_of(schema: &Value) -> Option<String> {
    let values = schema
        .get("properties")?
        .get("type")?
        .get("enum")?
        .as_array()?;
    match values.as_slice() {
        [Value::String(tag)] => Some(tag.clone()),
        _ => None,
    }
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The tagged unions that serde reads with `deny_unknown_fields`: utoipa marks such structs
/// `additionalProperties: false` but not the members of such enums, so a document would
/// otherwise allow a body the server refuses.
const CLOSED_UNIONS: &[&str] = &["ActionRequest"];

/// serde's internally tagged enums come out of utoipa as a `oneOf` of inline objects. Name
/// each member (`ActionRequestPass`, …) and add a `discriminator` on `type`, so that generated
/// clients get one type per member and narrow on `type`.
fn discriminated_unions(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let mut hoisted = Vec::new();
    for (name, schema) in schemas.iter_mut() {
        let Some(members) = schema.get("oneOf").and_then(Value::as_array) else {
            continue;
        };
        let tags: Option<Vec<String>> = members.iter().map(tag_of).collect();
        let Some(tags) = tags else { continue };
        let mut refs = Vec::new();
        let mut mapping = Map::new();
        for (member, tag) in members.iter().zip(&tags) {
            let member_name = format!("{name}{}", pascal(tag));
            let reference = format!("#/components/schemas/{member_name}");
            let mut member = member.clone();
            let required = member
                .as_object_mut()
                .expect("an object member")
                .entry("required")
                .or_insert_with(|| json!([]));
            if let Some(list) = required.as_array_mut()
                && !list.iter().any(|r| r == "type")
            {
                list.insert(0, json!("type"));
            }
            if CLOSED_UNIONS.contains(&name.as_str()) {
                member["additionalProperties"] = json!(false);
            }
            hoisted.push((member_name, member));
            refs.push(json!({"$ref": reference}));
            mapping.insert(tag.clone(), json!(reference));
        }
        schema["oneOf"] = Value::Array(refs);
        schema["discriminator"] = json!({"propertyName": "type", "mapping": mapping});
    }
    for (name, member) in hoisted {
        schemas.insert(name, member);
    }
}

/// Real messages, captured from a running server, for the schemas a newcomer meets first;
/// keyed by schema name, then by example name. Redocly checks them against the schemas.
const CURATED_EXAMPLES: &str = include_str!("examples.json");

/// Gives every request body and response an example, so that Swagger UI and generated
/// clients' docs show a plausible message rather than `"string"`. Curated examples win;
/// otherwise one is composed from the schema's and its properties' examples, enums,
/// formats and bounds. Examples of named schemas live once in `components/examples`.
fn examples(doc: &mut Value) {
    let schemas = doc
        .pointer("/components/schemas")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let curated: Value = serde_json::from_str(CURATED_EXAMPLES).expect("examples.json parses");
    let mut named = Map::new();
    let mut fill = |media: &mut Map<String, Value>| {
        if media.contains_key("example") || media.contains_key("examples") {
            return;
        }
        let Some(schema) = media.get("schema").cloned() else {
            return;
        };
        match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
        {
            Some(name) => {
                // Curated examples of real messages where there are some, else one composed.
                let chosen = curated
                    .get(name)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_else(|| {
                        let mut one = Map::new();
                        one.insert(
                            "example".into(),
                            json!({"value": example_of(&schema, &schemas, 0)}),
                        );
                        one
                    });
                let mut refs = Map::new();
                for (label, example) in chosen {
                    let key = if label == "example" {
                        name.to_owned()
                    } else {
                        format!("{name}_{label}")
                    };
                    refs.insert(
                        label,
                        json!({"$ref": format!("#/components/examples/{key}")}),
                    );
                    named.entry(key).or_insert(example);
                }
                media.insert("examples".into(), Value::Object(refs));
            }
            None => {
                media.insert("example".into(), example_of(&schema, &schemas, 0));
            }
        }
    };
    for_each_operation(doc, |_, _, op| {
        let mut op = op.iter_mut();
        let (mut request, mut responses) = (None, None);
        for (key, value) in &mut op {
            match key.as_str() {
                "requestBody" => request = Some(value),
                "responses" => responses = value.as_object_mut(),
                _ => {}
            }
        }
        let contents = request
            .into_iter()
            .chain(responses.into_iter().flat_map(|r| r.values_mut()))
            .filter_map(|r| r.get_mut("content").and_then(Value::as_object_mut));
        contents
            .flat_map(|content| content.values_mut())
            .filter_map(Value::as_object_mut)
            .for_each(&mut fill);
    });
    if !named.is_empty() {
        let components = doc
            .get_mut("components")
            .and_then(Value::as_object_mut)
            .expect("components exist");
        let examples = components
            .entry("examples")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("examples is an object");
        for (name, example) in named {
            examples.entry(name).or_insert(example);
        }
    }
}

/// A value that `schema` accepts, from its examples, enums, formats and bounds.
fn example_of(schema: &Value, schemas: &Value, depth: usize) -> Value {
    if depth > 40 {
        return Value::Null;
    }
    if let Some(example) = schema.get("example") {
        return example.clone();
    }
    if let Some(examples) = schema.get("examples").and_then(Value::as_array)
        && let Some(first) = examples.first()
    {
        return first.clone();
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/components/schemas/");
        return schemas
            .get(name)
            .map_or(Value::Null, |s| example_of(s, schemas, depth + 1));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && let Some(first) = values.first()
    {
        return first.clone();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(members) = schema.get(key).and_then(Value::as_array) {
            // The first member that is not null: a nullable field's example shows a value.
            let member = members
                .iter()
                .find(|m| m.get("type").and_then(Value::as_str) != Some("null"))
                .or(members.first());
            return member.map_or(Value::Null, |m| example_of(m, schemas, depth + 1));
        }
    }
    if let Some(members) = schema.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for member in members {
            if let Value::Object(part) = example_of(member, schemas, depth + 1) {
                merged.extend(part);
            }
        }
        return Value::Object(merged);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "",
    };
    match kind {
        "object" => {
            let mut object = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    let mut value = example_of(property, schemas, depth + 1);
                    if let Some(text) = value.as_str()
                        && text.bytes().all(|b| b == b'x')
                        && let Some(named) = text_for(name)
                    {
                        // A plain string: a plausible one for its name, within its bounds.
                        if named.chars().count() >= text.len() {
                            value = json!(named);
                        }
                    }
                    object.insert(name.clone(), value);
                }
            }
            Value::Object(object)
        }
        "array" => {
            let item = schema
                .get("items")
                .map_or(Value::Null, |i| example_of(i, schemas, depth + 1));
            let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            let mut items = vec![item; usize::try_from(count).unwrap_or(1)];
            // Distinct items for arrays that demand them, where the item is an enum.
            if schema.get("uniqueItems") == Some(&Value::Bool(true))
                && let Some(values) = schema
                    .get("items")
                    .and_then(|i| resolve(i, schemas))
                    .and_then(|i| i.get("enum"))
                    .and_then(Value::as_array)
            {
                items = values.iter().take(items.len()).cloned().collect();
            }
            Value::Array(items)
        }
        "integer" | "number" => {
            let low = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
            json!(
                low.max(0).min(
                    schema
                        .get("maximum")
                        .and_then(Value::as_i64)
                        .unwrap_or(i64::MAX)
                )
            )
        }
        "boolean" => json!(false),
        "string" => match schema.get("format").and_then(Value::as_str) {
            Some("uuid") => json!("5b0c7d4e-8f7a-4a8e-9c1d-2e3f4a5b6c7d"),
            Some("date-time") => json!("2026-12-01T12:00:00Z"),
            Some("uri") => json!("https://example.org/leekha-hook"),
            Some("uri-reference") => json!("/api/v1/games/5b0c7d4e-8f7a-4a8e-9c1d-2e3f4a5b6c7d"),
            _ => {
                let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                json!("x".repeat(usize::try_from(min.max(3)).unwrap_or(3)))
            }
        },
        _ => Value::Null,
    }
}

/// A plausible text for a string property of this name, where its schema gives none.
fn text_for(name: &str) -> Option<&'static str> {
    Some(match name {
        "username" => "layla_k",
        "text" => "Well played!",
        "reason" | "ban_reason" | "mute_reason" | "abort_reason" => "abusive language in chat",
        "next_cursor" => "u:MCwxNzY1MTIzMjAwLDVi",
        "seed" => "9f2c4e1a7b3d5f60c8e2a4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5",
        "last_error" => "410 Gone: the subscription expired",
        "password" | "current_password" => "correct horse battery staple",
        "refresh_token" => "rt_4kq7Xw9pZ2mN8vB5cL1dF6gH3jK0sT",
        "secret" => "a-long-random-shared-secret",
        "target_id" => "5b0c7d4e-8f7a-4a8e-9c1d-2e3f4a5b6c7d",
        "explanation" => "It is another seat's turn to act, so this action cannot be taken now.",
        "advice" => "Wait for your turn: the events feed or stream says when it comes.",
        _ => return None,
    })
}

fn resolve<'a>(schema: &'a Value, schemas: &'a Value) -> Option<&'a Value> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => schemas.get(r.trim_start_matches("#/components/schemas/")),
        None => Some(schema),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_enum_becomes_a_discriminated_union_of_named_members() {
        let mut doc = json!({"components": {"schemas": {"Act": {"oneOf": [
            {"type": "object", "required": ["card"], "properties": {"type": {"type": "string", "enum": ["play"]}, "card": {"type": "string"}}},
            {"type": "object", "properties": {"type": {"type": "string", "enum": ["pass_cards"]}}},
        ]}}}});
        discriminated_unions(&mut doc);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["Act"]["discriminator"],
            json!({"propertyName": "type", "mapping": {
                "play": "#/components/schemas/ActPlay",
                "pass_cards": "#/components/schemas/ActPassCards"}})
        );
        assert_eq!(schemas["ActPlay"]["required"], json!(["type", "card"]));
        assert_eq!(schemas["ActPassCards"]["required"], json!(["type"]));
    }

    #[test]
    fn optional_parameters_lose_their_null() {
        let mut op = json!({"parameters": [
            {"name": "a", "schema": {"type": ["integer", "null"]}},
            {"name": "b", "schema": {"oneOf": [{"type": "null"}, {"$ref": "#/x"}]}},
        ]});
        optional_parameters_are_not_null(op.as_object_mut().unwrap());
        assert_eq!(op["parameters"][0]["schema"], json!({"type": "integer"}));
        assert_eq!(op["parameters"][1]["schema"], json!({"$ref": "#/x"}));
    }

    #[test]
    fn examples_follow_enums_formats_and_bounds() {
        let schemas = json!({"Card": {"type": "string", "enum": ["2C", "3C", "4C"]}});
        let schema = json!({"type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"},
            "cards": {"type": "array", "minItems": 3, "uniqueItems": true, "items": {"$ref": "#/components/schemas/Card"}},
            "seat": {"type": ["integer", "null"], "minimum": 0, "maximum": 3},
            "named": {"type": "string", "example": "amira"},
        }});
        assert_eq!(
            example_of(&schema, &schemas, 0),
            json!({"id": "5b0c7d4e-8f7a-4a8e-9c1d-2e3f4a5b6c7d", "cards": ["2C", "3C", "4C"], "seat": 0, "named": "amira"})
        );
    }
}
