//! Table talk: the seated players of a game write free text or quick phrases; each message
//! is also a `chat_message` event of the game and a feed notification for the other
//! players. Moderators hide messages (then gone for everyone, the event included) and mute
//! users (who still play). A user never sees the messages of users they block.

use chrono::NaiveDateTime;
use serde_json::json;
use unicode_normalization::UnicodeNormalization;

use crate::audit::{self, Entry};
use crate::db::chat::{self as store, Listed, MessageRow};
use crate::db::{self, AnyConnection};
use crate::error::{Error, Kind};
use crate::games::{Change, Committed, GameStatus, ServerEvent, Table};
use crate::notifications::Kind as NotificationKind;
use crate::rules::Seat;
use crate::text::{check_reason, has_stray_tags, is_disguise, is_visible};

/// The most characters of a message, after trimming.
pub const MAX_CHARS: usize = 200;

/// The longest a moderator may mute a user for, in days.
pub const MAX_MUTE_DAYS: i64 = 365;

/// A quick phrase: its key and its texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phrase {
    /// The key a message names.
    pub key: &'static str,
    /// In English.
    pub en: &'static str,
    /// In Arabic.
    pub ar: &'static str,
}

/// The quick phrases, in the order a client shows them.
pub const PHRASES: &[Phrase] = &[
    Phrase {
        key: "hello",
        en: "Hello!",
        ar: "مرحبا!",
    },
    Phrase {
        key: "good_luck",
        en: "Good luck!",
        ar: "بالتوفيق!",
    },
    Phrase {
        key: "well_played",
        en: "Well played!",
        ar: "لعب حلو!",
    },
    Phrase {
        key: "nice_pass",
        en: "Nice pass.",
        ar: "تمريرة حلوة.",
    },
    Phrase {
        key: "oops",
        en: "Oops!",
        ar: "أوبس!",
    },
    Phrase {
        key: "sorry",
        en: "Sorry!",
        ar: "آسف!",
    },
    Phrase {
        key: "thanks",
        en: "Thanks!",
        ar: "شكرا!",
    },
    Phrase {
        key: "think",
        en: "Let me think…",
        ar: "خليني فكر…",
    },
    Phrase {
        key: "hurry",
        en: "Your turn, take your time.",
        ar: "دورك، خذ وقتك.",
    },
    Phrase {
        key: "leekha",
        en: "The Leekha!",
        ar: "الليخة!",
    },
    Phrase {
        key: "good_game",
        en: "Good game!",
        ar: "لعبة حلوة!",
    },
    Phrase {
        key: "bye",
        en: "Bye!",
        ar: "مع السلامة!",
    },
];

/// What a message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Free text, checked and normalized ([`check_text`]).
    Text(String),
    /// A key of [`PHRASES`].
    Phrase(&'static str),
}

/// Checks and normalizes free text: trimmed, Unicode NFC, 1..=[`MAX_CHARS`] characters, no
/// control characters, no line or paragraph separators (a message is one line), no
/// bidirectional overrides or interlinear annotations (which make a line read as something
/// else), no tag characters but in a region's flag (they spell text nobody sees), and at
/// least one visible character. The direction marks that Arabic text needs (U+200E, U+200F, U+061C)
/// are kept.
///
/// # Errors
/// `validation_failed` saying what is wrong.
pub fn check_text(raw: &str) -> Result<String, Error> {
    let text: String = raw.trim().nfc().collect();
    let n = text.chars().count();
    if n == 0 {
        return Err(Error::validation("text is empty"));
    }
    if n > MAX_CHARS {
        return Err(Error::validation(format!(
            "text has {n} characters; at most {MAX_CHARS}"
        )));
    }
    if text.chars().any(|c| c.is_control() || is_disguise(c)) || has_stray_tags(&text) {
        return Err(Error::validation(
            "text must not contain control characters, line breaks, direction overrides, \
             annotation marks or tag characters (a region's flag aside)",
        ));
    }
    if !text.chars().any(is_visible) {
        return Err(Error::validation("text has no visible character"));
    }
    Ok(text)
}

/// The phrase with key `key`.
///
/// # Errors
/// `validation_failed` for an unknown key.
pub fn phrase(key: &str) -> Result<&'static Phrase, Error> {
    PHRASES.iter().find(|p| p.key == key).ok_or_else(|| {
        Error::validation(format!("no phrase {key:?}: see GET /api/v1/chat/phrases"))
    })
}

/// A posted message and the game as committed with its event.
#[derive(Debug)]
pub struct Posted {
    /// The message.
    pub message: Listed,
    /// The game with the new event.
    pub done: Committed,
}

/// 403 `muted`.
fn muted(until: NaiveDateTime) -> Error {
    Error::new(
        Kind::Forbidden,
        "muted",
        format!(
            "a moderator muted you until {}",
            until
                .and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        ),
    )
}

/// `user_id`, seated in `game_id`, says `content`: a message, an event of the game and a
/// notification for each other seated player.
///
/// # Errors
/// 404 for a game the user cannot see; 403 `not_seated`, `muted`; 409 `chat_closed` once the
/// game is over.
pub fn post(
    conn: &mut AnyConnection,
    game_id: &str,
    user_id: &str,
    content: Content,
) -> Result<Posted, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        let table = Table::load_locked(conn, game_id)?;
        let author = db::users::by_id(conn, user_id)?
            .ok_or_else(|| Error::internal("the caller's account is gone"))?;
        if let Some(until) = author.muted_until.filter(|t| *t > now) {
            return Err(muted(until));
        }
        if !table.visible_to(user_id) {
            return Err(Error::not_found("no such game"));
        }
        // A player whose seat a bot holds for good watches the running game as a spectator
        // does, and so reads its chat but does not post.
        let seat = table.seen_from(table.seat_of(user_id)).ok_or_else(|| {
            Error::new(
                Kind::Forbidden,
                "not_seated",
                "only the seated players chat",
            )
        })?;
        if matches!(table.status(), GameStatus::Finished | GameStatus::Aborted) {
            return Err(Error::conflict(
                "chat_closed",
                "the game is over: its chat is read-only",
            ));
        }
        let mut change = Change::new(table)?;
        let (body, phrase) = match &content {
            Content::Text(t) => (Some(t.clone()), None),
            Content::Phrase(p) => (None, Some((*p).to_owned())),
        };
        let id = uuid::Uuid::new_v4().to_string();
        change.push_server_event(&ServerEvent::ChatMessage {
            message_id: id.clone(),
            seat: seat.number(),
            user_id: user_id.to_owned(),
            username: author.username.clone(),
            text: body.clone(),
            phrase: phrase.clone(),
            hidden: false,
        });
        let row = MessageRow {
            id: id.clone(),
            game_id: game_id.to_owned(),
            seq: change.table.row.event_count,
            seat: i32::from(seat.number()),
            user_id: user_id.to_owned(),
            body,
            phrase,
            created_at: now,
            hidden_at: None,
            hidden_by: None,
            hidden_reason: None,
        };
        let table = &change.table;
        let others: Vec<String> = Seat::ALL
            .into_iter()
            .filter(|&s| table.seen_from(Some(s)).is_some())
            .filter_map(|s| table.seats[s.index()].user_id.clone())
            .filter(|u| u != user_id)
            .collect();
        for other in others {
            // Whoever blocks the author hears nothing of their messages, not even who spoke.
            if db::social::blocks(conn, &other, user_id)? {
                continue;
            }
            change.notify(
                &other,
                NotificationKind::ChatMessage,
                json!({"seat": seat.number(), "message_id": id, "username": author.username}),
            );
        }
        let done = change.commit_for(conn, Some(seat))?;
        store::insert(conn, &row)?;
        Ok(Posted {
            message: (row, author.username),
            done,
        })
    })
}

/// A page of chat: the messages listed, and the game's last event `seq` when read.
#[derive(Debug)]
pub struct Page {
    /// Oldest first.
    pub messages: Vec<Listed>,
    /// The `seq` of the game's last event, read with the messages: every message posted
    /// later has a greater one.
    pub last_event: i64,
}

/// The messages of `game_id` after `after` that `viewer` may read, oldest first.
///
/// # Errors
/// 404 for a game the viewer cannot see; 403 `not_seated`.
pub fn list(
    conn: &mut AnyConnection,
    game_id: &str,
    viewer: &str,
    after: i64,
    limit: i64,
) -> Result<Page, Error> {
    let table = Table::load(conn, game_id)?;
    // Whoever may watch the game reads its chat, as its events carry it anyway.
    if !table.visible_to(viewer) {
        return Err(Error::not_found("no such game"));
    }
    Ok(Page {
        messages: store::visible(conn, game_id, viewer, after, limit)?,
        last_event: table.row.event_count,
    })
}

/// `reporter` reports message `message_id` of `game_id` to the moderators; `false` when
/// they had reported it already.
///
/// # Errors
/// 404 for an unknown message or one the reporter cannot read; 403 `not_seated` for a
/// spectator; 400 for a reason [`check_reason`] refuses.
pub fn report(
    conn: &mut AnyConnection,
    game_id: &str,
    message_id: &str,
    reporter: &str,
    reason: &str,
) -> Result<bool, Error> {
    let reason = check_reason(reason)?;
    let reason = reason.as_str();
    db::write_transaction(conn, |conn| {
        let message = store::find(conn, message_id)?
            .filter(|m| m.game_id == game_id && m.hidden_at.is_none())
            .ok_or_else(|| Error::not_found("no such message"))?;
        let table = Table::load(conn, game_id)?;
        if table.seen_from(table.seat_of(reporter)).is_none() {
            // A spectator reads the chat but does not report it; to anyone else the
            // message does not exist.
            return Err(if table.visible_to(reporter) {
                Error::forbidden("only the seated players report messages").with_code("not_seated")
            } else {
                Error::not_found("no such message")
            });
        }
        if message.user_id == reporter {
            return Err(Error::validation("you cannot report your own message"));
        }
        Ok(store::report(
            conn,
            &uuid::Uuid::new_v4().to_string(),
            message_id,
            reporter,
            reason,
            db::now(),
        )?)
    })
}

/// A moderator hides a message: gone from the chat and from its event for everyone; its
/// reports are resolved. Audited.
///
/// # Errors
/// 404 for an unknown message; 409 `already_hidden`.
pub fn hide(
    conn: &mut AnyConnection,
    admin_id: &str,
    message_id: &str,
    reason: &str,
) -> Result<MessageRow, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        let message =
            store::find(conn, message_id)?.ok_or_else(|| Error::not_found("no such message"))?;
        if !store::hide(conn, message_id, admin_id, reason, now)? {
            return Err(Error::conflict(
                "already_hidden",
                "the message is hidden already",
            ));
        }
        let author = db::users::by_id(conn, &message.user_id)?
            .map(|u| u.username)
            .unwrap_or_default();
        let redacted = serde_json::to_string(&ServerEvent::ChatMessage {
            message_id: message.id.clone(),
            seat: u8::try_from(message.seat).unwrap_or_default(),
            user_id: message.user_id.clone(),
            username: author,
            text: None,
            phrase: None,
            hidden: true,
        })?;
        store::rewrite_event(conn, &message.game_id, message.seq, &redacted)?;
        // Streams and long-polls of the game on every instance read it again.
        db::wake::notify(conn, std::slice::from_ref(&message.game_id))?;
        store::resolve_reports(conn, message_id, now)?;
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "hide_message",
                target_type: "chat_message",
                target_id: message_id,
                reason: Some(reason),
                // What was hidden stays readable to the administrators who review it.
                details: json!({
                    "game_id": message.game_id,
                    "seq": message.seq,
                    "user_id": message.user_id,
                    "text": message.body,
                    "phrase": message.phrase,
                }),
            },
        )?;
        Ok(store::find(conn, message_id)?.unwrap_or(message))
    })
}

/// Dismisses the open reports of a message that stays as it is (harmless, or in a game
/// long over): they leave the moderators' queue. Audited (`dismiss_reports`). Returns how
/// many were dismissed.
///
/// # Errors
/// 404 for an unknown message; 409 `no_open_reports` when none is open.
pub fn dismiss_reports(
    conn: &mut AnyConnection,
    admin_id: &str,
    message_id: &str,
    reason: Option<&str>,
) -> Result<usize, Error> {
    db::write_transaction(conn, |conn| {
        let now = db::now();
        let message =
            store::find(conn, message_id)?.ok_or_else(|| Error::not_found("no such message"))?;
        let dismissed = store::resolve_reports(conn, message_id, now)?;
        if dismissed == 0 {
            return Err(Error::conflict(
                "no_open_reports",
                "the message has no open report",
            ));
        }
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "dismiss_reports",
                target_type: "chat_message",
                target_id: message_id,
                reason,
                details: json!({
                    "game_id": message.game_id,
                    "seq": message.seq,
                    "user_id": message.user_id,
                    "reports": dismissed,
                }),
            },
        )?;
        Ok(dismissed)
    })
}

/// A moderator mutes `user_id` until `until` (`None` lifts the mute). Audited.
///
/// # Errors
/// 404 for an unknown account; 400 for a time in the past or more than a year ahead.
pub fn mute(
    conn: &mut AnyConnection,
    admin_id: &str,
    user_id: &str,
    until: Option<NaiveDateTime>,
    reason: &str,
) -> Result<db::users::UserRow, Error> {
    let now = db::now();
    if let Some(until) = until {
        if until <= now {
            return Err(Error::validation(
                "until must lie in the future (null lifts the mute)",
            ));
        }
        if until > now + chrono::Duration::days(MAX_MUTE_DAYS) {
            return Err(Error::validation("until must lie within a year"));
        }
    }
    db::write_transaction(conn, |conn| {
        if db::users::set_muted(conn, user_id, until, until.map(|_| reason), now)? == 0 {
            return Err(Error::not_found("no such user"));
        }
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "mute_user",
                target_type: "user",
                target_id: user_id,
                reason: Some(reason),
                details: json!({"until": until.map(|t| t.and_utc())}),
            },
        )?;
        db::users::by_id(conn, user_id)?.ok_or_else(|| Error::not_found("no such user"))
    })
}

/// The event seqs of `game_id` whose `chat_message` `viewer` must see without its text:
/// those of users the viewer blocks (hidden ones are redacted in the event itself).
///
/// # Errors
/// Database errors.
pub fn blocked_seqs(
    conn: &mut AnyConnection,
    game_id: &str,
    viewer: &str,
) -> Result<Vec<i64>, Error> {
    Ok(store::hidden_seqs_for(conn, game_id, viewer)?)
}
