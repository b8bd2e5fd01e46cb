//! The notification feed (an outbox written in the same transaction as the change that
//! causes it) and the webhook outbox that mirrors it.

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::AnyConnection;
use crate::db::outbox::{self, NewDelivery};

pub use crate::db::outbox::NotificationRow;
use crate::error::Error;

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = NotificationType)]
pub enum Kind {
    /// The user must act in a game.
    YourTurn,
    /// The user was invited to a game.
    Invited,
    /// A game of the user started.
    GameStarted,
    /// A game of the user ended.
    GameFinished,
    /// 80 % of the user's turn time has passed.
    TurnReminder,
    /// A bot took the user's seat (after timeouts, or by an administrator).
    SeatTakenByBot,
    /// Another user asked the user to be friends, or answered the user's request (`friends`
    /// in the data says which).
    FriendRequest,
    /// A player at one of the user's tables said something.
    ChatMessage,
}

impl Kind {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::YourTurn => "your_turn",
            Kind::Invited => "invited",
            Kind::GameStarted => "game_started",
            Kind::GameFinished => "game_finished",
            Kind::TurnReminder => "turn_reminder",
            Kind::SeatTakenByBot => "seat_taken_by_bot",
            Kind::FriendRequest => "friend_request",
            Kind::ChatMessage => "chat_message",
        }
    }
}

/// A notification to write.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Recipient.
    pub user_id: String,
    /// Kind.
    pub kind: Kind,
    /// Game.
    pub game_id: Option<String>,
    /// Details.
    pub data: Value,
    /// Pushed without sound or banner, as in quiet hours: the user heard of this already.
    pub silent: bool,
}

/// The JSON a webhook receives.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NotificationView {
    /// Per-user sequence number, contiguous from 1.
    #[schema(minimum = 1)]
    pub seq: i64,
    /// `your_turn`, `invited`, `game_started`, `game_finished`, `turn_reminder`,
    /// `seat_taken_by_bot`, `friend_request` or `chat_message`.
    #[serde(rename = "type")]
    #[schema(value_type = Kind)]
    pub kind: String,
    /// The game concerned.
    #[schema(required = true)]
    pub game_id: Option<uuid::Uuid>,
    /// Details (e.g. `seat`, `deadline`; a turn's `your_turn` and `turn_reminder` carry its
    /// `phase`, `passing` or `playing`).
    #[schema(value_type = Object)]
    pub data: Value,
    /// When.
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl From<&NotificationRow> for NotificationView {
    fn from(n: &NotificationRow) -> Self {
        Self {
            seq: n.seq,
            kind: n.kind.clone(),
            game_id: n.game_id.as_deref().and_then(|g| g.parse().ok()),
            data: serde_json::from_str(&n.data).unwrap_or(Value::Null),
            created_at: n.created_at.and_utc(),
        }
    }
}

/// Writes the notifications, each with the next seq of its user's feed, a push for each
/// of the user's devices ([`crate::push::enqueue`]) and a webhook delivery for users who set
/// a webhook. Users are locked in id order, so concurrent
/// transactions never deadlock on them. Returns the users notified.
///
/// # Errors
/// Database errors.
pub fn write(
    conn: &mut AnyConnection,
    mut pending: Vec<Pending>,
    now: NaiveDateTime,
) -> Result<Vec<String>, Error> {
    pending.sort_by(|a, b| a.user_id.cmp(&b.user_id));
    let mut notified: Vec<String> = Vec::new();
    for p in pending {
        let seq = outbox::next_seq(conn, &p.user_id)?;
        let row = NotificationRow {
            user_id: p.user_id.clone(),
            seq,
            kind: p.kind.as_str().to_owned(),
            game_id: p.game_id.clone(),
            data: p.data.to_string(),
            created_at: now,
        };
        outbox::insert(conn, &row)?;
        let body = serde_json::to_string(&NotificationView::from(&row))?;
        crate::push::enqueue(conn, &row, &body, p.silent)?;
        if let Some(url) = outbox::webhook_url(conn, &p.user_id)? {
            let id = uuid::Uuid::new_v4().to_string();
            outbox::insert_delivery(
                conn,
                &NewDelivery {
                    id: &id,
                    user_id: &p.user_id,
                    seq,
                    url: &url,
                    body: &body,
                    next_attempt_at: now,
                    created_at: now,
                },
            )?;
        }
        if !notified.contains(&p.user_id) {
            notified.push(p.user_id);
        }
    }
    // Other instances' feed waiters wake at commit (a game's change sends these too; one
    // transaction delivers each topic once).
    let topics: Vec<String> = notified
        .iter()
        .map(|u| crate::db::wake::feed_topic(u))
        .collect();
    crate::db::wake::notify(conn, &topics)?;
    Ok(notified)
}

pub use outbox::{after, last_seq};
