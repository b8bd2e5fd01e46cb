//! Chat messages and the reports about them.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::keyset::{self, Direction, Keyset};
use super::schema::{blocks, chat_messages, chat_reports, users};

/// A stored chat message.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = chat_messages)]
pub struct MessageRow {
    /// UUID.
    pub id: String,
    /// The game.
    pub game_id: String,
    /// Its `chat_message` event.
    pub seq: i64,
    /// The author's seat.
    pub seat: i32,
    /// The author.
    pub user_id: String,
    /// Free text.
    pub body: Option<String>,
    /// A quick phrase's key.
    pub phrase: Option<String>,
    /// When.
    pub created_at: NaiveDateTime,
    /// When a moderator hid it.
    pub hidden_at: Option<NaiveDateTime>,
    /// Who.
    pub hidden_by: Option<String>,
    /// Why.
    pub hidden_reason: Option<String>,
}

/// A message with its author's username.
pub type Listed = (MessageRow, String);

/// Stores a message.
pub fn insert(conn: &mut AnyConnection, row: &MessageRow) -> QueryResult<()> {
    diesel::insert_into(chat_messages::table)
        .values(row)
        .execute(conn)
        .map(drop)
}

/// The visible messages of a game after `after` (its event seq), oldest first, leaving out
/// hidden ones and those by users `viewer` blocks.
pub fn visible(
    conn: &mut AnyConnection,
    game_id: &str,
    viewer: &str,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<Listed>> {
    let blocked = blocks::table
        .filter(blocks::user_id.eq(viewer.to_owned()))
        .select(blocks::blocked_id);
    chat_messages::table
        .inner_join(users::table.on(users::id.eq(chat_messages::user_id)))
        .filter(chat_messages::game_id.eq(game_id))
        .filter(chat_messages::seq.gt(after))
        .filter(chat_messages::hidden_at.is_null())
        .filter(chat_messages::user_id.ne_all(blocked))
        .order(chat_messages::seq.asc())
        .limit(limit)
        .select((MessageRow::as_select(), users::username))
        .load(conn)
}

/// The message `id`.
pub fn find(conn: &mut AnyConnection, id: &str) -> QueryResult<Option<MessageRow>> {
    chat_messages::table
        .find(id)
        .select(MessageRow::as_select())
        .first(conn)
        .optional()
}

/// The messages of `game_id` a viewer must not see: hidden by a moderator, or by a user the
/// viewer blocks (their event seqs).
pub fn hidden_seqs_for(
    conn: &mut AnyConnection,
    game_id: &str,
    viewer: &str,
) -> QueryResult<Vec<i64>> {
    let blocked = blocks::table
        .filter(blocks::user_id.eq(viewer.to_owned()))
        .select(blocks::blocked_id);
    chat_messages::table
        .filter(chat_messages::game_id.eq(game_id))
        .filter(
            chat_messages::hidden_at
                .is_not_null()
                .or(chat_messages::user_id.eq_any(blocked)),
        )
        .select(chat_messages::seq)
        .load(conn)
}

/// Marks a message hidden; `false` when it was hidden already.
pub fn hide(
    conn: &mut AnyConnection,
    id: &str,
    by: &str,
    reason: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    diesel::update(
        chat_messages::table
            .find(id)
            .filter(chat_messages::hidden_at.is_null()),
    )
    .set((
        chat_messages::hidden_at.eq(now),
        chat_messages::hidden_by.eq(by),
        chat_messages::hidden_reason.eq(reason),
    ))
    .execute(conn)
    .map(|n| n > 0)
}

/// Files a report; `false` when this reporter had reported the message already.
pub fn report(
    conn: &mut AnyConnection,
    id: &str,
    message_id: &str,
    reporter_id: &str,
    reason: &str,
    now: NaiveDateTime,
) -> QueryResult<bool> {
    let row = (
        chat_reports::id.eq(id),
        chat_reports::message_id.eq(message_id),
        chat_reports::reporter_id.eq(reporter_id),
        chat_reports::reason.eq(reason),
        chat_reports::created_at.eq(now),
    );
    insert_or_skip!(conn, chat_reports::table, row)
}

/// Resolves the open reports of a message.
pub fn resolve_reports(
    conn: &mut AnyConnection,
    message_id: &str,
    now: NaiveDateTime,
) -> QueryResult<usize> {
    diesel::update(
        chat_reports::table
            .filter(chat_reports::message_id.eq(message_id))
            .filter(chat_reports::resolved_at.is_null()),
    )
    .set(chat_reports::resolved_at.eq(now))
    .execute(conn)
}

/// A report in the moderators' queue: id, reason, filed at, the reporter's id and username,
/// the message and its author's username.
pub type QueuedReport = (
    String,
    String,
    NaiveDateTime,
    String,
    String,
    MessageRow,
    String,
);

/// Open reports, oldest first, after the keyset `(created_at, id)`.
pub fn open_reports(
    conn: &mut AnyConnection,
    after: Option<Keyset>,
    limit: i64,
) -> QueryResult<Vec<QueuedReport>> {
    // The message's author is a second join of `users`.
    let authors = diesel::alias!(users as authors);
    let query = chat_reports::table
        .inner_join(chat_messages::table)
        .inner_join(users::table.on(users::id.eq(chat_reports::reporter_id)))
        .inner_join(authors.on(authors.field(users::id).eq(chat_messages::user_id)))
        .filter(chat_reports::resolved_at.is_null())
        .into_boxed();
    keyset::page(
        query,
        chat_reports::created_at,
        chat_reports::id,
        Direction::OldestFirst,
        after,
    )
    .limit(limit)
    .select((
        chat_reports::id,
        chat_reports::reason,
        chat_reports::created_at,
        users::id,
        users::username,
        MessageRow::as_select(),
        authors.field(users::username),
    ))
    .load(conn)
}

/// Replaces the stored data of a game's event (a hidden message's `chat_message`): the one
/// change ever made to a written event, so that no copy of the event shows the text again.
pub fn rewrite_event(
    conn: &mut AnyConnection,
    game_id: &str,
    seq: i64,
    data: &str,
) -> QueryResult<usize> {
    use super::schema::game_events;
    diesel::update(game_events::table.find((game_id, seq)))
        .set(game_events::data.eq(data))
        .execute(conn)
}
