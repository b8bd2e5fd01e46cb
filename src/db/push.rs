//! Push to devices: the devices, each user's push settings, and the push outbox.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::schema::{push_deliveries, push_devices, push_settings};

/// A registered device. Its `Debug` never shows the token or the keys.
#[derive(Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = push_devices)]
pub struct DeviceRow {
    /// Device id.
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// `fcm`, `apns` or `webpush`.
    pub platform: String,
    /// The token, or the Web Push endpoint.
    pub token: String,
    /// Web Push: the subscription's public key (base64url).
    pub p256dh: Option<String>,
    /// Web Push: the auth secret (base64url).
    pub auth: Option<String>,
    /// Language of its pushes.
    pub locale: Option<String>,
    /// Registered.
    pub created_at: NaiveDateTime,
    /// Last accepted push.
    pub last_success_at: Option<NaiveDateTime>,
    /// Last failure.
    pub last_error: Option<String>,
}

impl std::fmt::Debug for DeviceRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRow")
            .field("id", &self.id)
            .field("user_id", &self.user_id)
            .field("platform", &self.platform)
            .field("token", &"***")
            .field("locale", &self.locale)
            .finish_non_exhaustive()
    }
}

/// The device with this platform and token (or endpoint), whoever owns it.
pub fn device_by_token(
    conn: &mut AnyConnection,
    platform: &str,
    token: &str,
) -> QueryResult<Option<DeviceRow>> {
    push_devices::table
        .filter(push_devices::platform.eq(platform))
        .filter(push_devices::token.eq(token))
        .select(DeviceRow::as_select())
        .first(conn)
        .optional()
}

/// Adds a device.
pub fn insert_device(conn: &mut AnyConnection, row: &DeviceRow) -> QueryResult<()> {
    diesel::insert_into(push_devices::table)
        .values(row)
        .execute(conn)
        .map(drop)
}

/// Updates what a registration may change on an existing device: its keys and locale.
pub fn refresh_device(
    conn: &mut AnyConnection,
    id: &str,
    p256dh: Option<&str>,
    auth: Option<&str>,
    locale: Option<&str>,
) -> QueryResult<()> {
    diesel::update(push_devices::table.find(id))
        .set((
            push_devices::p256dh.eq(p256dh),
            push_devices::auth.eq(auth),
            push_devices::locale.eq(locale),
        ))
        .execute(conn)
        .map(drop)
}

/// The user's devices, oldest first.
pub fn devices_of(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<DeviceRow>> {
    push_devices::table
        .filter(push_devices::user_id.eq(user_id))
        .order((push_devices::created_at.asc(), push_devices::id.asc()))
        .select(DeviceRow::as_select())
        .load(conn)
}

/// The user's devices that a notification being written is pushed to. On PostgreSQL they
/// are held (`FOR KEY SHARE`) until the transaction ends: a device removed meanwhile (by its
/// owner, or by the worker after a 410) is removed after this commit, with the pushes just
/// queued for it, instead of failing the notification's foreign key and with it the action
/// that caused it. SQLite's single writer orders the two already.
pub fn devices_to_push(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Vec<DeviceRow>> {
    let mine = push_devices::user_id.eq(user_id);
    match conn {
        AnyConnection::Postgresql(pg) => push_devices::table
            .filter(mine)
            .order((push_devices::created_at.asc(), push_devices::id.asc()))
            .select(DeviceRow::as_select())
            .for_key_share()
            .load(pg),
        AnyConnection::Sqlite(_) => devices_of(conn, user_id),
    }
}

/// One device.
pub fn device(conn: &mut AnyConnection, id: &str) -> QueryResult<Option<DeviceRow>> {
    push_devices::table
        .find(id)
        .select(DeviceRow::as_select())
        .first(conn)
        .optional()
}

/// Removes the user's device (with its pending pushes); whether there was one.
pub fn delete_device(conn: &mut AnyConnection, user_id: &str, id: &str) -> QueryResult<bool> {
    diesel::delete(
        push_devices::table
            .filter(push_devices::id.eq(id))
            .filter(push_devices::user_id.eq(user_id)),
    )
    .execute(conn)
    .map(|n| n > 0)
}

/// Removes a device, whoever owns it (the push service reported it gone).
pub fn forget_device(conn: &mut AnyConnection, id: &str) -> QueryResult<()> {
    diesel::delete(push_devices::table.find(id))
        .execute(conn)
        .map(drop)
}

/// Records the outcome of a push on the device.
pub fn device_outcome(
    conn: &mut AnyConnection,
    id: &str,
    success_at: Option<NaiveDateTime>,
    error: Option<&str>,
) -> QueryResult<()> {
    let target = push_devices::table.find(id);
    match success_at {
        Some(at) => diesel::update(target)
            .set((
                push_devices::last_success_at.eq(at),
                push_devices::last_error.eq(None::<String>),
            ))
            .execute(conn)?,
        None => diesel::update(target)
            .set(push_devices::last_error.eq(error))
            .execute(conn)?,
    };
    Ok(())
}

/// Stored push settings: kinds (JSON), quiet start, quiet end, time zone.
pub type SettingsRow = (String, Option<String>, Option<String>, Option<String>);

/// The user's stored settings, if any were ever saved.
pub fn settings(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Option<SettingsRow>> {
    push_settings::table
        .find(user_id)
        .select((
            push_settings::kinds,
            push_settings::quiet_start,
            push_settings::quiet_end,
            push_settings::time_zone,
        ))
        .first(conn)
        .optional()
}

/// Saves the user's settings.
pub fn save_settings(
    conn: &mut AnyConnection,
    user_id: &str,
    row: &SettingsRow,
    now: NaiveDateTime,
) -> QueryResult<()> {
    let (kinds, start, end, zone) = row;
    let values = (
        push_settings::kinds.eq(kinds),
        push_settings::quiet_start.eq(start),
        push_settings::quiet_end.eq(end),
        push_settings::time_zone.eq(zone),
        push_settings::updated_at.eq(now),
    );
    let updated = diesel::update(push_settings::table.find(user_id))
        .set(values)
        .execute(conn)?;
    if updated == 0 {
        diesel::insert_into(push_settings::table)
            .values((push_settings::user_id.eq(user_id), values))
            .execute(conn)?;
    }
    Ok(())
}

/// A push to enqueue.
#[derive(Debug, Insertable)]
#[diesel(table_name = push_deliveries)]
pub struct NewPush<'a> {
    /// Delivery id.
    pub id: &'a str,
    /// Target device.
    pub device_id: &'a str,
    /// Recipient.
    pub user_id: &'a str,
    /// Notification seq.
    pub seq: i64,
    /// Notification kind.
    pub kind: &'a str,
    /// Game.
    pub game_id: Option<&'a str>,
    /// The notification (JSON).
    pub body: &'a str,
    /// In quiet hours.
    pub silent: bool,
    /// First attempt.
    pub next_attempt_at: NaiveDateTime,
    /// Created.
    pub created_at: NaiveDateTime,
}

/// Enqueues a push.
pub fn insert_push(conn: &mut AnyConnection, push: &NewPush<'_>) -> QueryResult<()> {
    diesel::insert_into(push_deliveries::table)
        .values(push)
        .execute(conn)
        .map(drop)
}

/// Takes the lock of a push token (or Web Push endpoint) for the rest of the transaction:
/// whoever registers it takes it first, so that two accounts registering one phone at once
/// are judged one after the other (the second moves the device to itself) rather than
/// colliding on the unique token. A no-op on SQLite, whose writers are serialized.
pub fn lock_token(conn: &mut AnyConnection, platform: &str, token: &str) -> QueryResult<()> {
    let AnyConnection::Postgresql(pg) = conn else {
        return Ok(());
    };
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('leekha.device.' || $1 || ':' || $2))")
        .bind::<diesel::sql_types::Text, _>(platform)
        .bind::<diesel::sql_types::Text, _>(token)
        .execute(pg)
        .map(drop)
}

/// A claimed push.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = push_deliveries)]
pub struct PushRow {
    /// Delivery id.
    pub id: String,
    /// Target device.
    pub device_id: String,
    /// Recipient.
    pub user_id: String,
    /// Notification seq.
    pub seq: i64,
    /// Kind.
    pub kind: String,
    /// Game.
    pub game_id: Option<String>,
    /// The notification (JSON).
    pub body: String,
    /// In quiet hours.
    pub silent: bool,
    /// Attempts so far.
    pub attempts: i32,
    /// Created.
    pub created_at: NaiveDateTime,
}

/// Due pushes, each the oldest one pending of its device: a device's pushes go out one at a
/// time and in order, whichever instance sends them.
const DUE: &str = "SELECT d.id FROM push_deliveries d WHERE d.delivered_at IS NULL \
     AND d.failed_at IS NULL AND d.next_attempt_at <= {now} AND NOT EXISTS (SELECT 1 FROM \
     push_deliveries e WHERE e.device_id = d.device_id AND e.delivered_at IS NULL \
     AND e.failed_at IS NULL AND e.seq < d.seq){skip} ORDER BY d.next_attempt_at, d.seq \
     LIMIT {limit}";

/// Whether any push is due: a read without locks, so that an idle worker never takes
/// SQLite's write lock.
pub fn any_due(conn: &mut AnyConnection, now: NaiveDateTime) -> QueryResult<bool> {
    push_deliveries::table
        .filter(push_deliveries::delivered_at.is_null())
        .filter(push_deliveries::failed_at.is_null())
        .filter(push_deliveries::next_attempt_at.le(now))
        .select(push_deliveries::id)
        .first::<String>(conn)
        .optional()
        .map(|found| found.is_some())
}

/// Claims due pushes as `claim` asks (at most one per device, its oldest pending): other
/// instances skip them meanwhile (`FOR UPDATE SKIP LOCKED` on PostgreSQL, SQLite's single
/// writer otherwise), and skip the device's later pushes until this one is done. Run it in
/// a write transaction.
pub fn claim_due(
    conn: &mut AnyConnection,
    claim: &super::outbox::Claim<'_>,
) -> QueryResult<Vec<PushRow>> {
    claim_due!(conn, push_deliveries, DUE, PushRow, claim)
}

/// Where an attempt leaves a push: the ends of a webhook delivery's attempt.
pub use super::outbox::AttemptEnd as PushEnd;

/// Records attempt `n` of a push.
pub fn record_attempt(
    conn: &mut AnyConnection,
    id: &str,
    n: i32,
    status: Option<i32>,
    error: Option<&str>,
    now: NaiveDateTime,
    end: PushEnd,
) -> QueryResult<()> {
    record_end!(conn, push_deliveries, id, (n, status, error), now, end)
}
