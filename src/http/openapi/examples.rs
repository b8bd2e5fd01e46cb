//! An example for every request body and response: curated real messages where there are
//! some, composed from the schema elsewhere.

use serde_json::{Map, Value, json};

use super::for_each_operation;

/// Real messages, captured from a running server, for the schemas a newcomer meets first;
/// keyed by schema name, then by example name. Redocly checks them against the schemas.
const CURATED_EXAMPLES: &str = include_str!("examples.json");

/// Gives every request body and response an example, so that Swagger UI and generated
/// clients' docs show a plausible message rather than `"string"`. Curated examples win;
/// otherwise one is composed from the schema's and its properties' examples, enums,
/// formats and bounds. Examples of named schemas live once in `components/examples`.
pub(super) fn examples(doc: &mut Value) {
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
    use serde_json::json;

    use super::*;

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
