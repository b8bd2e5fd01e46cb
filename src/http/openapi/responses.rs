//! The error responses, `security` and headers that every operation of a kind has, added to
//! each operation rather than written on each handler.

use serde_json::{Map, Value, json};

use super::{is_secured, responses};
use crate::http::problem::PROBLEM_JSON;

/// The error statuses any operation can answer, so the document lists every status a client
/// can get: 400 for a malformed parameter or body, 413/415 for a body, 401/403 for a protected
/// operation, 404 for an unknown id, 500 and 503 everywhere a database is used.
pub(super) fn common_responses(path: &str, op: &mut Map<String, Value>) {
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
pub(super) fn transport_errors(method: &str, op: &mut Map<String, Value>) {
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
pub(super) fn errors_are_problems(op: &mut Map<String, Value>) {
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
pub(super) fn public_unless_secured(op: &mut Map<String, Value>) {
    if !is_secured(op) {
        op.insert("security".into(), json!([]));
    }
}

/// A parameter that may be left out is not "nullable": a query string or header has no null.
/// utoipa types `Option<T>` parameters as `T | null`, which makes generated clients send
/// `None` literally; drop the null.
pub(super) fn optional_parameters_are_not_null(op: &mut Map<String, Value>) {
    let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
        return;
    };
    for param in params {
        if let Some(schema) = param.get_mut("schema") {
            strip_null(schema);
        }
    }
}

pub(super) fn strip_null(schema: &mut Value) {
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
pub(super) fn response_headers(path: &str, op: &mut Map<String, Value>) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
}
