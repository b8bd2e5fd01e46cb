//! Cross-instance wake-ups on PostgreSQL. Changes to games are announced after their commit,
//! batched by the instance's listener (`app::listen::ListenStatus::send`): PostgreSQL commits
//! notifying transactions one at a time, so the busiest writes must not notify themselves.
//! Rarer writers (accounts, sessions, chat, feeds) call [`notify`] inside their transaction,
//! so PostgreSQL delivers the wake-up to every instance's listener only when the transaction
//! commits, and never for one that rolled back. On SQLite (one process) both do nothing
//! beyond waking the writer's own instance after the commit.
//!
//! Topics are short strings: a game id, `user:<id>` (a feed), `account:<id>` (a ban, a
//! logout or a deletion that ends the user's streams).

use diesel::prelude::*;
use diesel::sql_types::{Array, Text};

use super::AnyConnection;

/// The one channel every instance listens on; the payload is the topic.
pub const CHANNEL: &str = "leekha_wake";

/// The topic of a user's notification feed.
pub fn feed_topic(user_id: &str) -> String {
    format!("user:{user_id}")
}

/// The topic of a session (a refresh-token family): the streams it opened end when it is
/// woken, at its logout.
pub fn session_topic(family_id: &str) -> String {
    format!("session:{family_id}")
}

/// The topic of a user's account: its streams end when it is woken.
pub fn account_topic(user_id: &str) -> String {
    format!("account:{user_id}")
}

/// The topics of a change to a game: the game, and the feeds of the users it notified.
pub fn game_topics(game_id: &str, notified_users: &[String]) -> Vec<String> {
    std::iter::once(game_id.to_owned())
        .chain(notified_users.iter().map(|u| feed_topic(u)))
        .collect()
}

/// Queues a wake-up of each topic for the commit of the current transaction (PostgreSQL's
/// `pg_notify`; duplicates within a transaction are delivered once). Outside a transaction
/// it is delivered at once. No-op on SQLite.
pub fn notify(conn: &mut AnyConnection, topics: &[String]) -> QueryResult<()> {
    let AnyConnection::Postgresql(pg) = conn else {
        return Ok(());
    };
    if topics.is_empty() {
        return Ok(());
    }
    diesel::sql_query("SELECT pg_notify('leekha_wake', t) FROM unnest($1::text[]) AS t")
        .bind::<Array<Text>, _>(topics)
        .execute(pg)
        .map(drop)
}
