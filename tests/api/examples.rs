//! Every example in the OpenAPI document is a valid instance of its schema. The curated
//! examples (`src/http/openapi/examples.json`) are messages captured from a running server: a field
//! added to a view since then, or a pattern tightened, would otherwise leave them stale, and
//! a generated client's documentation would show a message the server never sends.
//!
//! The validator covers the part of JSON Schema the generated document uses (`$ref`, `type`,
//! `properties`, `required`, `additionalProperties`, `items`, `enum`, `oneOf`, `allOf`,
//! `anyOf`, `pattern`, lengths, bounds, and the `uuid` and `date-time` formats); a keyword it
//! does not know fails the test, so that it never passes by ignoring one.

use serde_json::Value;

/// Schema keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
    "description",
    "example",
    "examples",
    "discriminator",
    "x-enum-varnames",
    "title",
    "default",
    "deprecated",
];

struct Checker<'a> {
    doc: &'a Value,
}

impl Checker<'_> {
    /// The errors of `value` against `schema`, each with where it is (`at`).
    fn errors(&self, schema: &Value, value: &Value, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.check(schema, value, at, &mut out);
        out
    }

    fn check(&self, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
        let Some(schema) = schema.as_object() else {
            if schema != &Value::Bool(true) {
                out.push(format!("{at}: schema {schema} is not an object"));
            }
            return;
        };
        for (keyword, rule) in schema {
            match keyword.as_str() {
                "$ref" => {
                    let pointer = rule.as_str().and_then(|r| r.strip_prefix('#'));
                    match pointer.and_then(|p| self.doc.pointer(p)) {
                        Some(target) => self.check(target, value, at, out),
                        None => out.push(format!("{at}: unresolved {rule}")),
                    }
                }
                "allOf" => {
                    for member in rule.as_array().into_iter().flatten() {
                        self.check(member, value, at, out);
                    }
                }
                "oneOf" | "anyOf" => {
                    let members = rule.as_array().map(Vec::as_slice).unwrap_or_default();
                    let fits: Vec<Vec<String>> =
                        members.iter().map(|m| self.errors(m, value, at)).collect();
                    let matched = fits.iter().filter(|e| e.is_empty()).count();
                    let ok = if keyword == "oneOf" {
                        matched == 1
                    } else {
                        matched >= 1
                    };
                    if !ok {
                        let why: Vec<String> = fits.into_iter().flatten().collect();
                        out.push(format!(
                            "{at}: {matched} members of {keyword} match ({})",
                            why.join("; ")
                        ));
                    }
                }
                "type" => {
                    let types: Vec<&str> = match rule {
                        Value::String(t) => vec![t.as_str()],
                        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                        _ => vec![],
                    };
                    if !types.iter().any(|t| is_type(value, t)) {
                        out.push(format!("{at}: {value} is not of type {rule}"));
                    }
                }
                "enum" => {
                    if !rule.as_array().is_some_and(|e| e.contains(value)) {
                        out.push(format!("{at}: {value} is not one of {rule}"));
                    }
                }
                "required" => {
                    if let Some(object) = value.as_object() {
                        for name in rule.as_array().into_iter().flatten() {
                            let name = name.as_str().unwrap_or_default();
                            if !object.contains_key(name) {
                                out.push(format!("{at}: required `{name}` is missing"));
                            }
                        }
                    }
                }
                "properties" => {
                    if let (Some(object), Some(props)) = (value.as_object(), rule.as_object()) {
                        for (name, sub) in props {
                            if let Some(v) = object.get(name) {
                                self.check(sub, v, &format!("{at}.{name}"), out);
                            }
                        }
                    }
                }
                "additionalProperties" => {
                    if let Some(object) = value.as_object() {
                        let declared = schema.get("properties").and_then(Value::as_object);
                        for (name, v) in object {
                            if declared.is_some_and(|d| d.contains_key(name)) {
                                continue;
                            }
                            match rule {
                                Value::Bool(false) => {
                                    out.push(format!("{at}: `{name}` is not a declared field"))
                                }
                                Value::Bool(true) => {}
                                sub => self.check(sub, v, &format!("{at}.{name}"), out),
                            }
                        }
                    }
                }
                "items" => {
                    for (i, v) in value.as_array().into_iter().flatten().enumerate() {
                        self.check(rule, v, &format!("{at}[{i}]"), out);
                    }
                }
                "minItems" | "maxItems" => {
                    if let (Some(items), Some(bound)) = (value.as_array(), rule.as_u64()) {
                        let n = items.len() as u64;
                        if (keyword == "minItems" && n < bound)
                            || (keyword == "maxItems" && n > bound)
                        {
                            out.push(format!("{at}: {n} items breaks {keyword} {bound}"));
                        }
                    }
                }
                "minLength" | "maxLength" => {
                    if let (Some(s), Some(bound)) = (value.as_str(), rule.as_u64()) {
                        let n = s.chars().count() as u64;
                        if (keyword == "minLength" && n < bound)
                            || (keyword == "maxLength" && n > bound)
                        {
                            out.push(format!("{at}: {s:?} breaks {keyword} {bound}"));
                        }
                    }
                }
                "minimum" | "maximum" => {
                    if let (Some(n), Some(bound)) = (value.as_f64(), rule.as_f64())
                        && ((keyword == "minimum" && n < bound)
                            || (keyword == "maximum" && n > bound))
                    {
                        out.push(format!("{at}: {n} breaks {keyword} {bound}"));
                    }
                }
                "pattern" => {
                    if let Some(s) = value.as_str() {
                        let re = regex::Regex::new(rule.as_str().unwrap_or_default())
                            .unwrap_or_else(|e| panic!("{at}: pattern {rule}: {e}"));
                        if !re.is_match(s) {
                            out.push(format!("{at}: {s:?} does not match {rule}"));
                        }
                    }
                }
                "format" => {
                    if let Some(s) = value.as_str() {
                        let ok = match rule.as_str().unwrap_or_default() {
                            "uuid" => uuid::Uuid::parse_str(s).is_ok(),
                            "date-time" => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
                            _ => true,
                        };
                        if !ok {
                            out.push(format!("{at}: {s:?} is not a {rule}"));
                        }
                    }
                }
                k if ANNOTATIONS.contains(&k) => {}
                // Formats of numbers (`int32`, `int64`) and the like sit under `format`
                // above; anything else is a keyword this validator would wrongly ignore.
                other => panic!("{at}: the example check does not know the keyword `{other}`"),
            }
        }
    }
}

/// The frames of an event stream's text as an SSE parser reads them (`id`, `event`, `data`,
/// `retry`); comments are skipped, and a frame of comments only is none.
fn frames(text: &Value) -> Vec<Value> {
    let text = text.as_str().expect("a stream example is text");
    let mut out = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.is_empty()) {
        let mut frame = serde_json::Map::new();
        for line in block.lines().filter(|l| !l.starts_with(':')) {
            let (field, value) = line.split_once(": ").unwrap_or((line, ""));
            let value = match field {
                "retry" => Value::from(value.parse::<u64>().expect("retry is a number")),
                _ => Value::from(value),
            };
            frame.insert(field.to_owned(), value);
        }
        if !frame.is_empty() {
            out.push(Value::Object(frame));
        }
    }
    assert!(!out.is_empty(), "no frame in {text:?}");
    out
}

fn is_type(value: &Value, t: &str) -> bool {
    match t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => false,
    }
}

/// Every `example` in a schema, with the schema it illustrates and where it is.
fn schema_examples<'a>(
    schema: &'a Value,
    at: String,
    out: &mut Vec<(String, &'a Value, &'a Value)>,
) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(example) = object.get("example") {
        out.push((at.clone(), schema, example));
    }
    for (name, sub) in object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        schema_examples(sub, format!("{at}.{name}"), out);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = object.get(key) {
            schema_examples(sub, format!("{at}/{key}"), out);
        }
    }
    for key in ["oneOf", "allOf", "anyOf"] {
        for (i, sub) in object
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            schema_examples(sub, format!("{at}/{key}/{i}"), out);
        }
    }
}

#[test]
fn every_example_in_the_openapi_document_fits_its_schema() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    let checker = Checker { doc: &doc };
    let mut errors = Vec::new();
    let mut checked = 0;

    // Request and response bodies: named examples (`components/examples`) and inline ones.
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let bodies = std::iter::once(("request".to_owned(), &op["requestBody"])).chain(
                op["responses"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(status, r)| (status.clone(), r)),
            );
            for (which, body) in bodies {
                for (media, content) in body["content"].as_object().into_iter().flatten() {
                    let at = format!("{method} {path} {which} {media}");
                    let schema = &content["schema"];
                    let mut examples: Vec<(String, &Value)> = Vec::new();
                    if let Some(example) = content.get("example") {
                        examples.push((at.clone(), example));
                    }
                    for (label, example) in content["examples"].as_object().into_iter().flatten() {
                        let example = match example["$ref"].as_str() {
                            Some(r) => doc
                                .pointer(r.trim_start_matches('#'))
                                .unwrap_or_else(|| panic!("{at}: unresolved example {r}")),
                            None => example,
                        };
                        examples.push((format!("{at} ({label})"), &example["value"]));
                    }
                    if media == "text/event-stream" {
                        // The example is one frame, as the schema; the stream's text is in
                        // the description, and each of its frames must fit too.
                        let description = body["description"].as_str().unwrap_or_default();
                        let wire = description
                            .split_once("```\n")
                            .and_then(|(_, rest)| rest.split_once("\n```"))
                            .map(|(text, _)| Value::from(format!("{text}\n\n")))
                            .unwrap_or_else(|| panic!("{at}: no stream text in {description:?}"));
                        for (i, frame) in frames(&wire).iter().enumerate() {
                            checked += 1;
                            errors.extend(checker.errors(
                                schema,
                                frame,
                                &format!("{at} wire #{i}"),
                            ));
                        }
                    }
                    for (at, example) in examples {
                        checked += 1;
                        errors.extend(checker.errors(schema, example, &at));
                    }
                }
            }
        }
    }

    // Examples of single fields and schemas.
    let mut found = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        schema_examples(schema, name.clone(), &mut found);
    }
    for (at, schema, example) in found {
        checked += 1;
        errors.extend(checker.errors(schema, example, &at));
    }

    assert!(checked > 100, "only {checked} examples found");
    assert!(
        errors.is_empty(),
        "{} examples do not fit their schemas:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn the_example_check_catches_what_it_is_for() {
    let doc = serde_json::json!({"components": {"schemas": {"Seat": {
        "type": "object",
        "required": ["seat", "id"],
        "additionalProperties": false,
        "properties": {
            "seat": {"type": "integer", "minimum": 0, "maximum": 3},
            "id": {"type": "string", "format": "uuid"},
            "key": {"type": ["string", "null"], "pattern": "^[a-z]{3}$"},
            "kind": {"oneOf": [{"type": "null"}, {"type": "string", "enum": ["bot"]}]}
        }
    }}}});
    let checker = Checker { doc: &doc };
    let schema = serde_json::json!({"$ref": "#/components/schemas/Seat"});
    let good = serde_json::json!({"seat": 1, "id": "6f1c8e0e-8c1c-4f7e-9f2a-1f2b3c4d5e6f", "key": null, "kind": "bot"});
    assert_eq!(checker.errors(&schema, &good, "x"), Vec::<String>::new());
    for bad in [
        serde_json::json!({"seat": 1}),
        serde_json::json!({"seat": 4, "id": "6f1c8e0e-8c1c-4f7e-9f2a-1f2b3c4d5e6f"}),
        serde_json::json!({"seat": 1, "id": "nope"}),
        serde_json::json!({"seat": 1, "id": "6f1c8e0e-8c1c-4f7e-9f2a-1f2b3c4d5e6f", "key": "xxxx"}),
        serde_json::json!({"seat": 1, "id": "6f1c8e0e-8c1c-4f7e-9f2a-1f2b3c4d5e6f", "kind": "human"}),
        serde_json::json!({"seat": 1, "id": "6f1c8e0e-8c1c-4f7e-9f2a-1f2b3c4d5e6f", "extra": 1}),
    ] {
        assert!(
            !checker.errors(&schema, &bad, "x").is_empty(),
            "{bad} passed"
        );
    }
}

/// Fitting the schema is not enough for a device: which fields go together, and whether a
/// key is a real P-256 point, are the server's checks. A client that sends the documented
/// example must not be refused.
#[test]
fn the_device_examples_are_registrations_the_server_accepts() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    let examples = doc["components"]["examples"].as_object().unwrap();
    let devices: Vec<&Value> = examples
        .iter()
        .filter(|(name, _)| name.starts_with("DeviceRequest"))
        .map(|(_, e)| &e["value"])
        .collect();
    assert!(devices.len() >= 2, "{:?}", examples.keys());
    for device in devices {
        match device["platform"].as_str() {
            Some("webpush") => {
                assert!(device.get("token").is_none(), "{device}");
                let keys = &device["subscription"]["keys"];
                let checked = leekha::push::webpush::check_keys(
                    keys["p256dh"].as_str().unwrap(),
                    keys["auth"].as_str().unwrap(),
                );
                assert_eq!(checked, Ok(()), "{device}");
            }
            Some("fcm" | "apns") => {
                assert!(device["token"].is_string(), "{device}");
                assert!(device.get("subscription").is_none(), "{device}");
            }
            other => panic!("platform {other:?}"),
        }
    }
    let key = &doc["components"]["schemas"]["SubscriptionKeys"]["properties"];
    let checked = leekha::push::webpush::check_keys(
        key["p256dh"]["example"].as_str().unwrap(),
        key["auth"]["example"].as_str().unwrap(),
    );
    assert_eq!(checked, Ok(()));
}

/// Every object a request body holds is read with `deny_unknown_fields`, so the document
/// must say so (`additionalProperties: false`): a generated client then refuses the body
/// the server would refuse. The browser's push subscription is the one open object: browsers
/// add fields to it (`expirationTime`), and the server ignores them.
#[test]
fn request_bodies_are_closed_objects_as_the_server_reads_them() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    fn walk(
        doc: &Value,
        schema: &Value,
        at: String,
        open: &mut Vec<String>,
        seen: &mut Vec<String>,
    ) {
        if let Some(r) = schema["$ref"].as_str() {
            let name = r.rsplit('/').next().unwrap().to_owned();
            if name == "Subscription" || seen.contains(&name) {
                return;
            }
            seen.push(name.clone());
            let target = doc.pointer(r.trim_start_matches('#')).unwrap();
            return walk(doc, target, name, open, seen);
        }
        if let Some(properties) = schema["properties"].as_object() {
            if schema["additionalProperties"] != false {
                open.push(at.clone());
            }
            for (name, property) in properties {
                walk(doc, property, format!("{at}.{name}"), open, seen);
            }
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            for (i, member) in schema[key].as_array().into_iter().flatten().enumerate() {
                walk(doc, member, format!("{at}/{key}/{i}"), open, seen);
            }
        }
        if schema["items"].is_object() {
            walk(doc, &schema["items"], format!("{at}[]"), open, seen);
        }
    }
    let (mut open, mut seen) = (Vec::new(), Vec::new());
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (media, content) in op["requestBody"]["content"]
                .as_object()
                .into_iter()
                .flatten()
            {
                walk(
                    &doc,
                    &content["schema"],
                    format!("{method} {path} {media}"),
                    &mut open,
                    &mut seen,
                );
            }
        }
    }
    assert!(seen.len() > 15, "only {seen:?}");
    assert!(seen.iter().any(|s| s == "ActionRequestPlay"), "{seen:?}");
    assert_eq!(
        open,
        Vec::<String>::new(),
        "request objects that allow unknown fields"
    );
}
