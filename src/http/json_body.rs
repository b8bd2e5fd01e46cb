//! A JSON body read as a value whose objects name each key once, then as the request's
//! type ([`object`]), a refusal naming the field at fault in a client's words.
//!
//! serde_json keeps the last of two equal keys (`{"visibility":"public","visibility":"private"}`
//! is a private game), and another parser in front of the server (a gateway, a WAF) may keep
//! the first: the two would judge different requests. RFC 8259 leaves duplicate names to
//! the reader, so every body is refused with a duplicate anywhere in it.
//!
//! Nor may a string hold a NUL character (`\u0000`): no field of the API means one,
//! PostgreSQL cannot store one in text (its query fails), and SQLite and C libraries end the
//! string there. Refusing it here answers one way on both databases, for every field.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::Error;

/// A JSON value in which no object names a key twice.
#[derive(Debug, Clone)]
pub struct UniqueKeys(pub Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(UniqueKeys)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        no_nul(v)?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        no_nul(&v)?;
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            no_nul(&key)?;
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key {key:?} appears twice in one object"
                )));
            }
            let UniqueKeys(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Refuses a string with a NUL character (see the module's doc).
fn no_nul<E: de::Error>(text: &str) -> Result<(), E> {
    if text.contains('\0') {
        return Err(E::custom(
            "a string holds a NUL character (\\u0000), which no field accepts",
        ));
    }
    Ok(())
}

/// A request body that is JSON, read as `T`: only an object will do, and a wrong value in it
/// is `validation_failed`.
///
/// serde would also fill a struct from an array of its fields in order, which no schema of
/// the API allows; and serde_json calls a wrong token where an enum belongs (`null` for a
/// platform) a syntax error, although the body is JSON. Reading the body as a JSON value
/// first settles both: what fails after that is a wrong value.
///
/// # Errors
/// `validation_failed` for anything but an object, or an object that is not a `T`.
pub fn object<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, Error> {
    let kind = match &value {
        serde_json::Value::Object(_) => None,
        serde_json::Value::Array(_) => Some("an array"),
        serde_json::Value::String(_) => Some("a string"),
        serde_json::Value::Number(_) => Some("a number"),
        serde_json::Value::Bool(_) => Some("a boolean"),
        serde_json::Value::Null => Some("null"),
    };
    if let Some(kind) = kind {
        return Err(Error::validation(format!(
            "the body must be a JSON object, not {kind}"
        )));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let why = plain_words(&e.into_inner().to_string());
        Error::validation(if at == "." {
            why
        } else {
            format!("{at}: {why}")
        })
    })
}

/// serde's words for a wrong value, in a client's: the JSON type expected where serde names
/// a Rust one (`u8`, `struct QuietHours with 3 elements`, `string or map`), and no more of a
/// UUID parser's complaint than that the value is not a UUID.
fn plain_words(message: &str) -> String {
    let mut text = message.to_owned();
    if let Some(at) = text.find("UUID parsing failed") {
        text.truncate(at);
        text.push_str("not a UUID");
    }
    for (rust, json) in [
        ("u8", "an integer 0..=255"),
        ("u16", "an integer 0..=65535"),
        ("u32", "a non-negative integer"),
        ("u64", "a non-negative integer"),
        ("usize", "a non-negative integer"),
        ("i16", "an integer"),
        ("i32", "an integer"),
        ("i64", "an integer"),
        ("f32", "a number"),
        ("f64", "a number"),
        ("string or map", "a string"),
    ] {
        let from = format!("expected {rust}");
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(&from) {
            let end = at + from.len();
            let whole = !rest[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
            out.push_str(&rest[..at]);
            out.push_str(if whole { "expected " } else { &from });
            if whole {
                out.push_str(json);
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        text = out;
    }
    // `struct Name`, maybe `with N elements` (serde's word for an array read as a struct).
    while let Some(at) = text.find("struct ") {
        let after = &text[at + "struct ".len()..];
        let name = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let mut end = at + "struct ".len() + name;
        let tail = &text[end..];
        if let Some(elements) = tail.strip_prefix(" with ") {
            let digits = elements.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
            let unit = &elements[digits..];
            if digits > 0 && (unit.starts_with(" elements") || unit.starts_with(" element")) {
                let word = if unit.starts_with(" elements") {
                    " elements"
                } else {
                    " element"
                };
                end += " with ".len() + digits + word.len();
            }
        }
        text.replace_range(at..end, "an object");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Hours {
        start: String,
        end: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Body {
        seat: Option<u8>,
        limit: Option<i64>,
        id: Option<uuid::Uuid>,
        hours: Option<Hours>,
        seats: Option<Vec<Hours>>,
    }

    fn refusal(body: serde_json::Value) -> String {
        object::<Body>(body).unwrap_err().detail().to_owned()
    }

    #[test]
    fn a_wrong_value_is_named_by_its_field_in_json_words() {
        assert_eq!(
            refusal(serde_json::json!({"seat": -1})),
            "seat: invalid value: integer `-1`, expected an integer 0..=255"
        );
        assert_eq!(
            refusal(serde_json::json!({"limit": "5"})),
            "limit: invalid type: string \"5\", expected an integer"
        );
        assert_eq!(refusal(serde_json::json!({"id": "x"})), "id: not a UUID");
        assert_eq!(
            refusal(serde_json::json!({"hours": 5})),
            "hours: invalid type: integer `5`, expected an object"
        );
        assert_eq!(
            refusal(serde_json::json!({"seats": [{"start": "a"}]})),
            "seats[0]: missing field `end`"
        );
        for detail in [
            refusal(serde_json::json!({"seat": "x"})),
            refusal(serde_json::json!({"hours": []})),
        ] {
            assert!(
                !detail.contains("u8") && !detail.contains("struct") && !detail.contains("Hours"),
                "{detail}"
            );
        }
    }

    fn read(text: &str) -> Result<Value, serde_json::Error> {
        serde_json::from_str::<UniqueKeys>(text).map(|v| v.0)
    }

    #[test]
    fn values_read_as_serde_json_reads_them_but_a_repeated_key_is_refused() {
        for text in [
            r#"{"a":1,"b":[true,null,"x",-2,1.5,{"c":{}}],"d":18446744073709551615}"#,
            "[]",
            "\"s\"",
            "0",
        ] {
            assert_eq!(
                read(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
        }
        for text in [r#"{"a":1,"a":2}"#, r#"{"x":[{"b":1,"b":1}]}"#] {
            let e = read(text).unwrap_err();
            assert!(e.is_data() && e.to_string().contains("twice"), "{e}");
        }
        for text in [r#"{"a":"x\u0000y"}"#, r#"{"a\u0000":1}"#, r#"["\u0000"]"#] {
            let e = read(text).unwrap_err();
            assert!(e.is_data() && e.to_string().contains("NUL"), "{e}");
        }
        // An escaped backslash before "u0000" is text, not a NUL.
        assert_eq!(read(r#"{"a":"\\u0000"}"#).unwrap()["a"], "\\u0000");
        // The nesting limit of serde_json holds as for its own values.
        assert!(read(&"[".repeat(10_000)).is_err());
    }
}
