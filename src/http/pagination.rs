//! Pagination shared by every list: a page size with its bounds, and one opaque cursor type
//! (base64url of a keyset: `(time, id)`, or the whole sort key of the caller's games).

use base64::Engine;
use chrono::NaiveDateTime;

use crate::error::Error;
use crate::games::lists::{FromGame, Urgency};
use crate::http::query::Query;

const TIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.f";

/// A page size: `default` when absent, else 1..=`max`.
///
/// # Errors
/// `validation_failed` outside the bounds.
pub fn limit(raw: Option<i64>, default: i64, max: i64) -> Result<i64, Error> {
    match raw {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(Error::validation(format!(
            "limit must be 1..={max}, got {n}"
        ))),
    }
}

/// Where a page starts: after a row of a list ordered by `(time, id)`, or after a game of
/// the caller's games (ordered by urgency).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    /// After (or before, for newest-first lists) this row.
    Keyset(NaiveDateTime, String),
    /// After this game in the caller's games.
    Urgency(Urgency),
    /// Skip this many rows: the caller's games' cursor of earlier releases, still read so
    /// that a client paging across an upgrade goes on; no longer made.
    Offset(i64),
}

impl Cursor {
    /// The opaque form clients pass back.
    pub fn encode(&self) -> String {
        opaque(&match self {
            Cursor::Keyset(at, id) => format!("{}|{id}", at.format(TIME_FORMAT)),
            Cursor::Urgency(u) => format!(
                "u:{}|{}|{}|{}",
                u8::from(u.my_turn),
                u.deadline
                    .map(|d| d.format(TIME_FORMAT).to_string())
                    .unwrap_or_default(),
                u.updated_at.format(TIME_FORMAT),
                u.id
            ),
            Cursor::Offset(n) => format!("o:{n}"),
        })
    }

    /// Parses a cursor this server made.
    ///
    /// # Errors
    /// `validation_failed` for anything else.
    pub fn decode(cursor: &str) -> Result<Self, Error> {
        let invalid = || Error::validation("cursor is not valid");
        let raw = from_opaque(cursor).ok_or_else(invalid)?;
        if let Some(n) = raw.strip_prefix("o:") {
            return n
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 0)
                .map(Cursor::Offset)
                .ok_or_else(invalid);
        }
        // Only the years of times this server makes: PostgreSQL's timestamps end at 4713 BC,
        // and a forged cursor before that was a 500 there (SQLite compares it as text).
        let time = |t: &str| {
            NaiveDateTime::parse_from_str(t, TIME_FORMAT)
                .ok()
                .filter(|at| (1..=9999).contains(&chrono::Datelike::year(at)))
                .ok_or_else(invalid)
        };
        // Every list is ordered by a UUID last: anything else in that place was not made here.
        let uuid = |id: &str| {
            uuid::Uuid::parse_str(id)
                .map(|id| id.to_string())
                .map_err(|_| invalid())
        };
        if let Some(key) = raw.strip_prefix("u:") {
            let mut parts = key.split('|');
            let (Some(turn), Some(deadline), Some(updated_at), Some(id), None) = (
                parts.next(),
                parts.next(),
                parts.next(),
                parts.next(),
                parts.next(),
            ) else {
                return Err(invalid());
            };
            let my_turn = match turn {
                "0" => false,
                "1" => true,
                _ => return Err(invalid()),
            };
            let deadline = match deadline {
                "" => None,
                d => Some(time(d)?),
            };
            return Ok(Cursor::Urgency(Urgency {
                my_turn,
                deadline,
                updated_at: time(updated_at)?,
                id: uuid(id)?,
            }));
        }
        let (at, id) = raw.split_once('|').ok_or_else(invalid)?;
        Ok(Cursor::Keyset(time(at)?, uuid(id)?))
    }

    /// A keyset cursor from the query, if any.
    ///
    /// # Errors
    /// `validation_failed` for an invalid or an offset cursor.
    pub fn keyset(cursor: Option<&str>) -> Result<Option<(NaiveDateTime, String)>, Error> {
        match cursor.map(Cursor::decode).transpose()? {
            None => Ok(None),
            Some(Cursor::Keyset(at, id)) => Ok(Some((at, id))),
            Some(_) => Err(Error::validation("cursor is not valid")),
        }
    }

    /// Where a page of the caller's games starts, from the query.
    ///
    /// # Errors
    /// `validation_failed` for an invalid cursor or one of another list.
    pub fn my_games(cursor: Option<&str>) -> Result<FromGame, Error> {
        match cursor.map(Cursor::decode).transpose()? {
            None => Ok(FromGame::Start),
            Some(Cursor::Urgency(after)) => Ok(FromGame::After(after)),
            Some(Cursor::Offset(n)) => Ok(FromGame::Offset(n)),
            Some(Cursor::Keyset(..)) => Err(Error::validation("cursor is not valid")),
        }
    }
}

/// The opaque form of a cursor's text, as clients see it: base64url, so that they treat it
/// as a token to pass back rather than something to build.
pub fn opaque(text: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

/// The text of an opaque cursor ([`opaque`]); `None` when it is not one.
pub fn from_opaque(cursor: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// One page of a keyset list fetched with `limit + 1` rows: the rows and the next cursor.
pub fn keyset_page<R>(
    rows: Vec<R>,
    limit: i64,
    key: impl Fn(&R) -> (NaiveDateTime, &str),
) -> (Vec<R>, Option<String>) {
    let (rows, more) = first(rows, limit);
    let next = more.then(|| rows.last()).flatten().map(|r| {
        let (at, id) = key(r);
        Cursor::Keyset(at, id.to_owned()).encode()
    });
    (rows, next)
}

/// One page of the caller's games fetched with `limit + 1` rows: the rows and the cursor
/// after the last of them.
pub fn urgency_page<R>(
    rows: Vec<R>,
    limit: i64,
    place: impl Fn(&R) -> &Urgency,
) -> (Vec<R>, Option<String>) {
    let (rows, more) = first(rows, limit);
    let next = more
        .then(|| rows.last())
        .flatten()
        .map(|r| Cursor::Urgency(place(r).clone()).encode());
    (rows, next)
}

/// The first `limit` of `rows`, and whether there were more.
fn first<R>(mut rows: Vec<R>, limit: i64) -> (Vec<R>, bool) {
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    (rows, more)
}

/// What a keyset-paginated list takes besides its filters: the page size and where the page
/// starts. Declared once so that every such list documents and checks them alike; an
/// operation names it in `params(...)` beside its own query.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// 1..=200, default 50.
    #[param(minimum = 1, maximum = 200, default = 50)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// What a paginated list with filters of its own reads from the query string: its filters
/// `Q`, then the page.
pub type Paged<Q> = (Query<Q>, Query<PageQuery>);

impl PageQuery {
    /// The page size: 50 when absent.
    ///
    /// # Errors
    /// `validation_failed` outside 1..=200.
    pub fn size(&self) -> Result<i64, Error> {
        limit(self.limit, 50, 200)
    }

    /// The page size and the row of a `(time, id)` keyset the page starts after, if any.
    ///
    /// # Errors
    /// `validation_failed` for a size outside 1..=200 or a cursor that is not a keyset one.
    pub fn keyset(&self) -> Result<(i64, Option<(NaiveDateTime, String)>), Error> {
        let size = self.size()?;
        let after = Cursor::keyset(self.cursor.as_deref())?;
        Ok((size, after))
    }
}

/// Declares the page type of a list, written as the struct it makes without the derives and
/// without the type of `next_cursor`, which every list answers alike: an `Option<String>`,
/// always present, documented by a standard sentence unless the declaration documents a
/// `pub next_cursor,` of its own. `items` are in the list's order; their doc says which.
macro_rules! page {
    (
        $(#[doc = $doc:literal])*
        pub struct $page:ident {
            $(#[doc = $items_doc:literal])*
            pub items: Vec<$item:ty>,
        }
    ) => {
        $crate::http::pagination::page! {
            $(#[doc = $doc])*
            pub struct $page {
                $(#[doc = $items_doc])*
                pub items: Vec<$item>,
                /// Pass as `cursor` for the next page; null on the last page.
                pub next_cursor,
            }
        }
    };
    (
        $(#[doc = $doc:literal])*
        pub struct $page:ident {
            $(#[doc = $items_doc:literal])*
            pub items: Vec<$item:ty>,
            $(#[doc = $next_doc:literal])*
            pub next_cursor,
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        pub struct $page {
            $(#[doc = $items_doc])*
            pub items: Vec<$item>,
            $(#[doc = $next_doc])*
            #[schema(required = true)]
            pub next_cursor: Option<String>,
        }
    };
}
pub(crate) use page;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let at = NaiveDateTime::parse_from_str("2026-12-01T10:00:00.123456", TIME_FORMAT).unwrap();
        let id = "0b6f5c1e-6a43-4f7e-9a53-3b1f4f3c2d10";
        let urgent = |deadline| {
            Cursor::Urgency(Urgency {
                my_turn: true,
                deadline,
                updated_at: at,
                id: id.into(),
            })
        };
        for c in [
            Cursor::Keyset(at, id.into()),
            urgent(Some(at)),
            urgent(None),
            Cursor::Offset(40),
        ] {
            assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        }
        for junk in [
            "u:2||2026-12-01T10:00:00|x",
            "u:1|||",
            "u:1|x|y|z|w",
            "-5000-01-01T00:00:00|0b6f5c1e-6a43-4f7e-9a53-3b1f4f3c2d10",
            "u:1|-5000-01-01T00:00:00|2026-12-01T10:00:00|0b6f5c1e-6a43-4f7e-9a53-3b1f4f3c2d10",
            "12026-12-01T10:00:00|0b6f5c1e-6a43-4f7e-9a53-3b1f4f3c2d10",
        ] {
            assert!(Cursor::decode(&opaque(junk)).is_err(), "{junk}");
        }
        assert!(Cursor::decode("!!").is_err());
        // A keyset's id is a UUID: a tampered one is refused, not used as a position.
        for id in ["zzz", ""] {
            assert!(Cursor::decode(&Cursor::Keyset(at, id.into()).encode()).is_err());
        }
        assert!(Cursor::my_games(Some(&Cursor::Keyset(at, id.into()).encode())).is_err());
        assert!(Cursor::keyset(Some(&urgent(None).encode())).is_err());
        assert_eq!(limit(None, 50, 200).unwrap(), 50);
        assert!(limit(Some(0), 50, 200).is_err());
    }
}
