//! Times in request bodies. chrono's own deserializer answers a malformed time with "input
//! contains invalid characters", which does not say what a time must look like. A time is
//! kept to the microsecond, and a leap second is refused, so that both databases keep and
//! answer the same time.

use chrono::{DateTime, SubsecRound, Timelike, Utc};
use serde::{Deserialize, Deserializer, de::Error as _};

/// An RFC 3339 time (`2026-12-24T18:00:00Z`, any offset), as UTC.
///
/// # Errors
/// Anything else, in words.
pub fn rfc3339<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = String::deserialize(d)?;
    parse(&text).map_err(D::Error::custom)
}

/// [`rfc3339`], or `null`.
///
/// # Errors
/// As [`rfc3339`].
pub fn rfc3339_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|text| parse(&text).map_err(D::Error::custom))
        .transpose()
}

fn parse(text: &str) -> Result<DateTime<Utc>, String> {
    let time = DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("{text:?} is not an RFC 3339 time, e.g. 2026-12-24T18:00:00Z"))?;
    // chrono keeps a leap second (`…:60`) as such, which SQLite would store and answer back
    // to clients that cannot read it, while PostgreSQL rolls it into the next second.
    if time.nanosecond() >= 1_000_000_000 {
        return Err(format!(
            "{text:?} is a leap second; give the second before or after it"
        ));
    }
    // Kept to the microsecond, as PostgreSQL keeps times: the time answered now is the one
    // read back later, on either database.
    Ok(time.trunc_subsecs(6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Body {
        #[serde(deserialize_with = "rfc3339")]
        at: DateTime<Utc>,
        #[serde(deserialize_with = "rfc3339_or_null")]
        until: Option<DateTime<Utc>>,
    }

    #[test]
    fn a_time_that_is_not_one_is_said_so() {
        let ok: Body =
            serde_json::from_str(r#"{"at":"2026-12-24T19:00:00+01:00","until":null}"#).unwrap();
        assert_eq!(ok.at.to_rfc3339(), "2026-12-24T18:00:00+00:00");
        assert!(ok.until.is_none());
        let err = serde_json::from_str::<Body>(r#"{"at":"tomorrow","until":null}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(r#""tomorrow" is not an RFC 3339 time"#),
            "{err}"
        );
        assert!(serde_json::from_str::<Body>(r#"{"at":"2026-12-24T18:00:00Z"}"#).is_err());
    }

    #[test]
    fn a_time_is_kept_to_the_microsecond_and_a_leap_second_is_refused() {
        let at = |text: &str| parse(text).map(|t| t.to_rfc3339());
        assert_eq!(
            at("2026-12-24T18:00:00.123456789Z").unwrap(),
            "2026-12-24T18:00:00.123456+00:00"
        );
        assert_eq!(
            at("2026-12-24T18:00:00.123456789012Z").unwrap(),
            "2026-12-24T18:00:00.123456+00:00"
        );
        let leap = at("2016-12-31T23:59:60Z").unwrap_err();
        assert!(leap.contains("leap second"), "{leap}");
    }
}
