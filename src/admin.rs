//! Administrators' use cases on accounts: ban, unban, change a role. Each runs in one
//! transaction that starts by taking the account's lock, so the checks and the change see the
//! same state, and is audited in it ([`crate::audit`]). Use cases on games are in
//! [`crate::games`].

use serde_json::json;

use crate::audit::{self, Entry};
use crate::auth::Role;
use crate::db::users::{self, Tokens, UserChange, UserRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;

/// Runs `f` in one transaction that starts by taking the locks of the target's account and
/// the administrator's, in id order (and on SQLite the write lock, so no stale read snapshot
/// is ever upgraded), and then checks that the administrator still is one: two
/// administrators demoting or banning each other at once are judged one after the other,
/// and the second is refused, as it would be a moment later.
fn user_locked<T>(
    conn: &mut AnyConnection,
    admin_id: &str,
    id: &str,
    f: impl FnOnce(&mut AnyConnection) -> Result<T, Error>,
) -> Result<T, Error> {
    db::write_transaction(conn, |conn| {
        let missed = db::admin::lock_in_id_order(conn, [admin_id, id], db::admin::Accounts::Any)?;
        if missed.contains(&id) {
            return Err(Error::not_found("no such user"));
        }
        let still_admin = users::by_id(conn, admin_id)?.is_some_and(|a| {
            a.role == Role::Admin.as_str() && a.banned_at.is_none() && a.deleted_at.is_none()
        });
        if !still_admin {
            return Err(Error::forbidden("this operation is for administrators"));
        }
        f(conn)
    })
}

/// The live account `id`, or 404.
fn live_user(conn: &mut AnyConnection, id: &str) -> Result<UserRow, Error> {
    users::by_id(conn, id)?
        .filter(|u| u.deleted_at.is_none())
        .ok_or_else(|| Error::not_found("no such user"))
}

fn user_entry<'a>(
    action: &'a str,
    target: &'a str,
    reason: Option<&'a str>,
    details: serde_json::Value,
) -> Entry<'a> {
    Entry {
        action,
        target_type: "user",
        target_id: target,
        reason,
        details,
    }
}

/// Bans an account: its access tokens stop working on the next request, its refresh tokens
/// are revoked, and it cannot log in until unbanned. It leaves its waiting games (declining
/// its invitations), which would otherwise start with a seat nobody can play; its running
/// games go on, its turns timing out to the bots. Returns the account and the games left.
///
/// # Errors
/// 404 for no live account; 409 `already_banned`.
pub fn ban(
    conn: &mut AnyConnection,
    admin_id: &str,
    target: &str,
    reason: &str,
) -> Result<(UserRow, Vec<crate::games::Committed>), Error> {
    let banned = user_locked(conn, admin_id, target, |conn| {
        live_user(conn, target)?;
        let now = db::now();
        if !db::admin::ban(conn, target, reason, now)? {
            return Err(Error::conflict(
                "already_banned",
                "this account is already banned",
            ));
        }
        let revoked = users::revoke(conn, Tokens::of_user(target), now)?;
        // Ends the banned user's open streams on every instance, at the commit.
        crate::db::wake::notify(conn, &[crate::db::wake::account_topic(target)])?;
        let details = json!({ "refresh_tokens_revoked": revoked });
        audit::record(
            conn,
            admin_id,
            user_entry("ban_user", target, Some(reason), details),
        )?;
        live_user(conn, target)
    })?;
    // After the account's commit: a game's lock is never taken while holding the user's.
    let left = crate::games::leave_waiting(conn, target)?;
    Ok((banned, left))
}

/// Lifts a ban; the revoked refresh tokens stay revoked.
///
/// # Errors
/// 404 for no live account; 409 `not_banned`.
pub fn unban(
    conn: &mut AnyConnection,
    admin_id: &str,
    target: &str,
    reason: Option<&str>,
) -> Result<UserRow, Error> {
    user_locked(conn, admin_id, target, |conn| {
        let before = live_user(conn, target)?;
        if !db::admin::unban(conn, target, db::now())? {
            return Err(Error::conflict("not_banned", "this account is not banned"));
        }
        let details = json!({ "ban_reason": before.ban_reason });
        audit::record(
            conn,
            admin_id,
            user_entry("unban_user", target, reason, details),
        )?;
        live_user(conn, target)
    })
}

/// Sets an account's role; it takes effect on the account's next request. The role it has
/// already is no change, and is not audited.
///
/// # Errors
/// 404 for no live account.
pub fn set_role(
    conn: &mut AnyConnection,
    admin_id: &str,
    target: &str,
    role: Role,
    reason: Option<&str>,
) -> Result<UserRow, Error> {
    user_locked(conn, admin_id, target, |conn| {
        let before = live_user(conn, target)?;
        // The role it has already: nothing changes, so nothing is audited.
        if before.role == role.as_str() {
            return Ok(before);
        }
        let change = UserChange {
            role: Some(role.as_str()),
            ..UserChange::at(db::now())
        };
        users::update(conn, target, &change)?;
        let details = json!({ "from": before.role, "to": role.as_str() });
        audit::record(
            conn,
            admin_id,
            user_entry("change_role", target, reason, details),
        )?;
        live_user(conn, target)
    })
}
