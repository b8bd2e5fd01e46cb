//! The audit log of administrator actions: each entry is written in the same transaction as
//! the action it records, so a committed action is always audited and an entry never
//! describes an action that rolled back.

use crate::db::{self, AnyConnection, admin::AuditRow};
use crate::error::Error;

/// What an audit entry records.
#[derive(Debug)]
pub struct Entry<'a> {
    /// `ban_user`, `unban_user`, `change_role`, `reset_rating`, `read_game`, `abort_game`,
    /// `seat_to_bot`, `hide_message`, `dismiss_reports`, `mute_user`.
    pub action: &'a str,
    /// `user`, `game` or `chat_message`.
    pub target_type: &'a str,
    /// The user or game id.
    pub target_id: &'a str,
    /// Why, as the administrator gave it.
    pub reason: Option<&'a str>,
    /// Facts of the action.
    pub details: serde_json::Value,
}

/// Appends the audit entry of `admin`'s action; call it inside the action's transaction.
///
/// # Errors
/// Database errors.
pub fn record(conn: &mut AnyConnection, admin: &str, entry: Entry<'_>) -> Result<(), Error> {
    db::admin::insert_audit(
        conn,
        &AuditRow {
            id: uuid::Uuid::new_v4().to_string(),
            admin_id: admin.to_owned(),
            action: entry.action.to_owned(),
            target_type: entry.target_type.to_owned(),
            target_id: entry.target_id.to_owned(),
            reason: entry.reason.map(str::to_owned),
            details: entry.details.to_string(),
            created_at: db::now(),
        },
    )?;
    tracing::info!(admin = %admin, action = entry.action, target = %entry.target_id, "admin action");
    Ok(())
}
