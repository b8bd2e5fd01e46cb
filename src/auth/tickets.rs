//! Stream tickets: for clients that cannot send `Authorization` (a browser's
//! `EventSource`), a short-lived, single-use secret that opens one event stream as
//! `?ticket=`, so that the long-lived access token never appears in a URL (and so in no
//! proxy or server log). A ticket is bound to the user who asked for it, lives at most
//! `LEEKHA_STREAM_TICKET_TTL_SECONDS` (≤ 60 s), is stored only as its SHA-256, and is
//! spent by the first stream that presents it. Only the stream endpoints accept it.

use sha2::{Digest, Sha256};

use crate::db::{self, AnyConnection, tickets};
use crate::error::Error;

/// A ticket just issued.
#[derive(Debug)]
pub struct Ticket {
    /// The secret to pass as `?ticket=`.
    pub ticket: String,
    /// Seconds it stays redeemable.
    pub expires_in: i64,
}

fn hash(ticket: &str) -> String {
    hex::encode(Sha256::digest(ticket.as_bytes()))
}

/// Issues a ticket for `user_id` in the session `session`, redeemable for `ttl_secs`.
///
/// # Errors
/// Database errors.
pub fn issue(
    conn: &mut AnyConnection,
    user_id: &str,
    session: Option<&str>,
    ttl_secs: i64,
) -> Result<Ticket, Error> {
    let ticket = format!("st_{}", hex::encode(rand::random::<[u8; 32]>()));
    let now = db::now();
    tickets::insert(
        conn,
        &hash(&ticket),
        user_id,
        session,
        now,
        now + chrono::Duration::seconds(ttl_secs),
    )?;
    Ok(Ticket {
        ticket,
        expires_in: ttl_secs,
    })
}

/// Spends a ticket: the user it was issued to, and the session it was issued in.
///
/// # Errors
/// 401 `invalid_token` for a ticket that is unknown, already used or expired.
pub fn redeem(conn: &mut AnyConnection, ticket: &str) -> Result<(String, Option<String>), Error> {
    if ticket.len() > 128 {
        return Err(invalid());
    }
    tickets::redeem(conn, &hash(ticket), db::now())?.ok_or_else(invalid)
}

fn invalid() -> Error {
    Error::unauthorized(
        "invalid_token",
        "the stream ticket is unknown, used or expired; ask for a new one",
    )
}
