//! Stream tickets (`auth::tickets`): stored hashed, redeemed by deleting the row, so a
//! ticket opens one stream on whichever instance receives it.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::schema::stream_tickets;

/// Stores a ticket's hash for `user_id` until `expires_at`, and forgets expired ones.
pub fn insert(
    conn: &mut AnyConnection,
    ticket_hash: &str,
    user_id: &str,
    session_id: Option<&str>,
    now: NaiveDateTime,
    expires_at: NaiveDateTime,
) -> QueryResult<()> {
    diesel::delete(stream_tickets::table.filter(stream_tickets::expires_at.le(now)))
        .execute(conn)?;
    diesel::insert_into(stream_tickets::table)
        .values((
            stream_tickets::ticket_hash.eq(ticket_hash),
            stream_tickets::user_id.eq(user_id),
            stream_tickets::session_id.eq(session_id),
            stream_tickets::created_at.eq(now),
            stream_tickets::expires_at.eq(expires_at),
        ))
        .execute(conn)
        .map(drop)
}

/// Spends the ticket with this hash: its user and session when it existed and had not
/// expired. One statement, so two redemptions of the same ticket cannot both succeed.
pub fn redeem(
    conn: &mut AnyConnection,
    ticket_hash: &str,
    now: NaiveDateTime,
) -> QueryResult<Option<(String, Option<String>)>> {
    diesel::delete(stream_tickets::table.find(ticket_hash))
        .returning((
            stream_tickets::user_id,
            stream_tickets::session_id,
            stream_tickets::expires_at,
        ))
        .get_result::<(String, Option<String>, NaiveDateTime)>(conn)
        .optional()
        .map(|found| {
            found
                .filter(|(_, _, expires_at)| *expires_at > now)
                .map(|(user, session, _)| (user, session))
        })
}
