//! The notification feed (an outbox written in the same transaction as the change that
//! causes it) and the webhook outbox that mirrors it.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::AnyConnection;
use crate::db::schema::{notifications, users, webhook_deliveries};
use crate::error::Error;

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
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
}

/// A stored notification.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = notifications)]
pub struct NotificationRow {
    /// Recipient.
    pub user_id: String,
    /// Per-user sequence number.
    pub seq: i64,
    /// Kind.
    pub kind: String,
    /// Game.
    pub game_id: Option<String>,
    /// Details (JSON).
    pub data: String,
    /// When.
    pub created_at: NaiveDateTime,
}

#[derive(Debug, Insertable)]
#[diesel(table_name = webhook_deliveries)]
struct NewDelivery<'a> {
    id: &'a str,
    user_id: &'a str,
    seq: i64,
    url: &'a str,
    body: &'a str,
    next_attempt_at: NaiveDateTime,
    created_at: NaiveDateTime,
}

/// The JSON a webhook receives.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NotificationView {
    /// Per-user sequence number, contiguous from 1.
    pub seq: i64,
    /// `your_turn`, `invited`, `game_started`, `game_finished`, `turn_reminder` or
    /// `seat_taken_by_bot`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The game concerned.
    pub game_id: Option<uuid::Uuid>,
    /// Details (e.g. `seat`, `deadline`).
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

/// Writes the notifications, each with the next seq of its user's feed, and a webhook
/// delivery for users who set a webhook. Users are locked in id order, so concurrent
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
        let seq: i64 = diesel::update(users::table.find(&p.user_id))
            .set(users::notification_count.eq(users::notification_count + 1))
            .returning(users::notification_count)
            .get_result(conn)?;
        let row = NotificationRow {
            user_id: p.user_id.clone(),
            seq,
            kind: p.kind.as_str().to_owned(),
            game_id: p.game_id.clone(),
            data: p.data.to_string(),
            created_at: now,
        };
        diesel::insert_into(notifications::table)
            .values(&row)
            .execute(conn)?;
        let hook: Option<String> = users::table
            .find(&p.user_id)
            .select(users::webhook_url)
            .first(conn)?;
        if let Some(url) = hook {
            let body =
                serde_json::to_string(&NotificationView::from(&row)).map_err(Error::internal)?;
            let id = uuid::Uuid::new_v4().to_string();
            diesel::insert_into(webhook_deliveries::table)
                .values(&NewDelivery {
                    id: &id,
                    user_id: &p.user_id,
                    seq,
                    url: &url,
                    body: &body,
                    next_attempt_at: now,
                    created_at: now,
                })
                .execute(conn)?;
        }
        if !notified.contains(&p.user_id) {
            notified.push(p.user_id);
        }
    }
    Ok(notified)
}

/// The user's notifications after `after`.
pub fn after(
    conn: &mut AnyConnection,
    user_id: &str,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<NotificationRow>> {
    notifications::table
        .filter(notifications::user_id.eq(user_id))
        .filter(notifications::seq.gt(after))
        .order(notifications::seq.asc())
        .limit(limit)
        .select(NotificationRow::as_select())
        .load(conn)
}

/// The last seq of the user's feed.
pub fn last_seq(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    users::table
        .find(user_id)
        .select(users::notification_count)
        .first(conn)
}
