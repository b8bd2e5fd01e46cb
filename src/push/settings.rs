//! Each user's push settings: which kinds are pushed, and quiet hours in the user's time
//! zone (pushes then go out silent).

use std::collections::BTreeMap;

use chrono::{NaiveDateTime, NaiveTime, TimeZone};
use serde::{Deserialize, Serialize};

use crate::db::AnyConnection;
use crate::db::push as store;
use crate::error::Error;

/// The kinds a user can switch, with their defaults: everything about the user's own
/// games is on; chat is off, as a table's banter would buzz the phone all day.
pub const KINDS: [(&str, bool); 8] = [
    ("your_turn", true),
    ("turn_reminder", true),
    ("game_started", true),
    ("game_finished", true),
    ("invited", true),
    ("seat_taken_by_bot", true),
    ("chat_message", false),
    ("friend_request", true),
];

/// Which kinds are pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PushKinds {
    /// The user must act (default on).
    pub your_turn: bool,
    /// 80 % of the turn time has passed (default on).
    pub turn_reminder: bool,
    /// A game of the user started (default on).
    pub game_started: bool,
    /// A game of the user ended (default on).
    pub game_finished: bool,
    /// An invitation (default on).
    pub invited: bool,
    /// A bot took the user's seat (default on).
    pub seat_taken_by_bot: bool,
    /// A message at the table (default off).
    pub chat_message: bool,
    /// A friend request (default on).
    pub friend_request: bool,
}

impl PushKinds {
    fn from_map(map: &BTreeMap<String, bool>) -> Self {
        let get = |k: &str| {
            map.get(k)
                .copied()
                .unwrap_or_else(|| KINDS.iter().find(|(n, _)| *n == k).is_some_and(|(_, d)| *d))
        };
        Self {
            your_turn: get("your_turn"),
            turn_reminder: get("turn_reminder"),
            game_started: get("game_started"),
            game_finished: get("game_finished"),
            invited: get("invited"),
            seat_taken_by_bot: get("seat_taken_by_bot"),
            chat_message: get("chat_message"),
            friend_request: get("friend_request"),
        }
    }

    fn to_map(&self) -> BTreeMap<String, bool> {
        KINDS
            .iter()
            .map(|(k, _)| ((*k).to_owned(), self.enabled(k)))
            .collect()
    }

    /// Whether notifications of `kind` are pushed (kinds unknown here are).
    pub fn enabled(&self, kind: &str) -> bool {
        match kind {
            "your_turn" => self.your_turn,
            "turn_reminder" => self.turn_reminder,
            "game_started" => self.game_started,
            "game_finished" => self.game_finished,
            "invited" => self.invited,
            "seat_taken_by_bot" => self.seat_taken_by_bot,
            "chat_message" => self.chat_message,
            "friend_request" => self.friend_request,
            _ => true,
        }
    }
}

impl Default for PushKinds {
    fn default() -> Self {
        Self::from_map(&BTreeMap::new())
    }
}

/// Quiet hours: from `start` to `end` (local time of `time_zone`; across midnight when
/// `start` is later than `end`), pushes are delivered without sound or alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuietHours {
    /// "HH:MM", 24-hour clock.
    #[schema(example = "22:00", pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub start: String,
    /// "HH:MM", 24-hour clock; not equal to `start`.
    #[schema(example = "08:00", pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub end: String,
    /// An IANA time zone.
    #[schema(example = "Europe/Berlin", pattern = "^[A-Za-z0-9_+/-]{1,64}$")]
    pub time_zone: String,
}

/// A user's push settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotificationSettings {
    /// Which notification kinds are pushed to the user's devices.
    pub push: PushKinds,
    /// Quiet hours, or null for none (the default). Required in a request too.
    #[schema(required = true)]
    // Without a `default`, a missing field is an error rather than null: a PUT replaces the
    // settings, and leaving the field out must not silently clear it.
    #[serde(deserialize_with = "Option::deserialize")]
    pub quiet_hours: Option<QuietHours>,
}

fn clock(raw: &str, field: &str) -> Result<NaiveTime, Error> {
    let ok = raw.len() == 5 && raw.as_bytes()[2] == b':';
    ok.then(|| NaiveTime::parse_from_str(raw, "%H:%M").ok())
        .flatten()
        .ok_or_else(|| {
            Error::validation(format!(
                "quiet_hours.{field} must be \"HH:MM\" (00:00–23:59)"
            ))
        })
}

fn zone(raw: &str) -> Result<chrono_tz::Tz, Error> {
    raw.parse::<chrono_tz::Tz>().map_err(|_| {
        Error::validation(format!(
            "quiet_hours.time_zone must be an IANA time zone such as \"Europe/Berlin\"; {:?} is not one",
            raw.chars().take(64).collect::<String>()
        ))
    })
}

impl QuietHours {
    /// Checks the clock times and the zone.
    ///
    /// # Errors
    /// `validation_failed` naming the field.
    pub fn check(&self) -> Result<(), Error> {
        let start = clock(&self.start, "start")?;
        let end = clock(&self.end, "end")?;
        zone(&self.time_zone)?;
        if start == end {
            return Err(Error::validation(
                "quiet_hours.start and quiet_hours.end must differ",
            ));
        }
        Ok(())
    }

    /// Whether the UTC instant `now` falls in these quiet hours.
    pub fn contains(&self, now: NaiveDateTime) -> bool {
        let (Ok(start), Ok(end), Ok(tz)) = (
            clock(&self.start, "start"),
            clock(&self.end, "end"),
            zone(&self.time_zone),
        ) else {
            return false;
        };
        let local = tz.from_utc_datetime(&now).time();
        if start < end {
            start <= local && local < end
        } else {
            local >= start || local < end
        }
    }
}

/// The user's settings (the defaults until saved).
///
/// # Errors
/// Database errors.
pub fn load(conn: &mut AnyConnection, user_id: &str) -> Result<NotificationSettings, Error> {
    let Some((kinds, start, end, time_zone)) = store::settings(conn, user_id)? else {
        return Ok(NotificationSettings::default());
    };
    let map: BTreeMap<String, bool> = serde_json::from_str(&kinds).unwrap_or_default();
    let quiet_hours = match (start, end, time_zone) {
        (Some(start), Some(end), Some(time_zone)) => Some(QuietHours {
            start,
            end,
            time_zone,
        }),
        _ => None,
    };
    Ok(NotificationSettings {
        push: PushKinds::from_map(&map),
        quiet_hours,
    })
}

/// Checks and saves the user's settings; returns what is stored. Takes the user's lock
/// first, in the caller's write transaction: two first saves at once then update and insert
/// one after the other, rather than both inserting.
///
/// # Errors
/// `validation_failed` for bad quiet hours; database errors.
pub fn save(
    conn: &mut AnyConnection,
    user_id: &str,
    settings: NotificationSettings,
    now: NaiveDateTime,
) -> Result<NotificationSettings, Error> {
    if let Some(q) = &settings.quiet_hours {
        q.check()?;
    }
    let kinds = serde_json::to_string(&settings.push.to_map())?;
    let q = settings.quiet_hours.clone();
    let row = (
        kinds,
        q.as_ref().map(|q| q.start.clone()),
        q.as_ref().map(|q| q.end.clone()),
        q.map(|q| q.time_zone),
    );
    crate::db::admin::lock_user(conn, user_id)?;
    store::save_settings(conn, user_id, &row, now)?;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn quiet_hours_follow_the_users_zone_across_midnight() {
        let q = QuietHours {
            start: "22:00".into(),
            end: "08:00".into(),
            time_zone: "Europe/Berlin".into(),
        };
        q.check().unwrap();
        // Berlin is UTC+1 in January, UTC+2 in July.
        assert!(q.contains(at("2026-01-10 21:00")));
        assert!(!q.contains(at("2026-01-10 20:59")));
        assert!(q.contains(at("2026-01-10 06:59")));
        assert!(!q.contains(at("2026-01-10 07:00")));
        assert!(q.contains(at("2026-07-10 20:00")));
        assert!(!q.contains(at("2026-07-10 06:00")));
        let day = QuietHours {
            start: "09:00".into(),
            end: "17:00".into(),
            time_zone: "UTC".into(),
        };
        assert!(day.contains(at("2026-07-10 09:00")) && !day.contains(at("2026-07-10 17:00")));
    }

    #[test]
    fn bad_quiet_hours_are_refused() {
        for (s, e, z) in [
            ("24:00", "08:00", "UTC"),
            ("7:00", "08:00", "UTC"),
            ("22:00", "22:00", "UTC"),
            ("22:00", "08:00", "Mars/Olympus"),
        ] {
            let q = QuietHours {
                start: s.into(),
                end: e.into(),
                time_zone: z.into(),
            };
            assert_eq!(
                q.check().unwrap_err().code(),
                "validation_failed",
                "{s} {e} {z}"
            );
        }
    }
}
