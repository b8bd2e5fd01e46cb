//! serde's internally tagged enums as discriminated unions of named members.

use serde_json::{Map, Value, json};

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
pub(super) fn discriminated_unions(doc: &mut Value) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
}
