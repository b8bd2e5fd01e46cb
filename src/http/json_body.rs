//! A JSON body read as a value whose objects name each key once.
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

#[cfg(test)]
mod tests {
    use super::*;

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
