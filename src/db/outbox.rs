//! The outboxes: the notification feed, the webhook deliveries that mirror it, their
//! attempts, and each user's webhook settings.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::AnyConnection;
use super::schema::{notifications, users, webhook_attempts, webhook_deliveries};
use super::users::UserChange;

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

/// A webhook delivery to enqueue.
#[derive(Debug, Insertable)]
#[diesel(table_name = webhook_deliveries)]
pub struct NewDelivery<'a> {
    /// Delivery id.
    pub id: &'a str,
    /// Recipient.
    pub user_id: &'a str,
    /// The notification's seq.
    pub seq: i64,
    /// Where to POST.
    pub url: &'a str,
    /// The JSON body.
    pub body: &'a str,
    /// First attempt.
    pub next_attempt_at: NaiveDateTime,
    /// Created.
    pub created_at: NaiveDateTime,
}

/// A claimed delivery.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = webhook_deliveries)]
pub struct Delivery {
    /// Delivery id.
    pub id: String,
    /// Recipient.
    pub user_id: String,
    /// Where to POST.
    pub url: String,
    /// The JSON body.
    pub body: String,
    /// Attempts so far.
    pub attempts: i32,
    /// Created.
    pub created_at: NaiveDateTime,
}

/// A recent delivery as the webhook's owner sees it: seq, attempts, delivered, failed,
/// last status, last error, created.
pub type DeliverySummary = (
    i64,
    i32,
    Option<NaiveDateTime>,
    Option<NaiveDateTime>,
    Option<i32>,
    Option<String>,
    NaiveDateTime,
);

/// What a delivery attempt leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptEnd {
    /// Delivered now.
    Delivered,
    /// Given up on.
    Failed,
    /// Tried again at this time.
    RetryAt(NaiveDateTime),
}

/// Takes the next seq of the user's feed (the user's row lock until commit).
pub fn next_seq(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    diesel::update(users::table.find(user_id))
        .set(users::notification_count.eq(users::notification_count + 1))
        .returning(users::notification_count)
        .get_result(conn)
}

/// Appends a notification.
pub fn insert(conn: &mut AnyConnection, row: &NotificationRow) -> QueryResult<()> {
    diesel::insert_into(notifications::table)
        .values(row)
        .execute(conn)
        .map(drop)
}

/// The data of the user's notifications of `kind` written at or after `since`, newest
/// first, among the user's latest `window` notifications. The window keeps the read to a
/// walk of the feed's primary key however long the feed is (its times grow with its seq).
pub fn recent_data(
    conn: &mut AnyConnection,
    user_id: &str,
    kind: &str,
    since: NaiveDateTime,
    window: i64,
) -> QueryResult<Vec<String>> {
    let latest: Vec<(String, NaiveDateTime, String)> = notifications::table
        .filter(notifications::user_id.eq(user_id))
        .order(notifications::seq.desc())
        .limit(window)
        .select((
            notifications::kind,
            notifications::created_at,
            notifications::data,
        ))
        .load(conn)?;
    Ok(latest
        .into_iter()
        .take_while(|(_, at, _)| *at >= since)
        .filter(|(k, _, _)| k == kind)
        .map(|(_, _, data)| data)
        .collect())
}

/// The user's webhook URL, if set.
pub fn webhook_url(conn: &mut AnyConnection, user_id: &str) -> QueryResult<Option<String>> {
    users::table
        .find(user_id)
        .select(users::webhook_url)
        .first(conn)
}

/// The user's webhook secret; `None` when the user is gone.
pub fn webhook_secret(
    conn: &mut AnyConnection,
    user_id: &str,
) -> QueryResult<Option<Option<String>>> {
    users::table
        .find(user_id)
        .select(users::webhook_secret)
        .first(conn)
        .optional()
}

/// Sets (`Some((url, secret))`) or removes the user's webhook.
pub fn set_webhook(
    conn: &mut AnyConnection,
    user_id: &str,
    hook: Option<(&str, &str)>,
    now: NaiveDateTime,
) -> QueryResult<()> {
    let (url, secret) = hook.unzip();
    let change = UserChange {
        webhook_url: Some(url),
        webhook_secret: Some(secret),
        ..UserChange::at(now)
    };
    super::users::update(conn, user_id, &change).map(drop)
}

/// Gives up at once every delivery of the user's that is neither delivered nor given up
/// (their webhook was removed, so none will be tried again): failed now, with `why` as the
/// last error, their attempts as they were.
pub fn give_up_deliveries(
    conn: &mut AnyConnection,
    user_id: &str,
    why: &str,
    now: NaiveDateTime,
) -> QueryResult<usize> {
    diesel::update(
        webhook_deliveries::table
            .filter(webhook_deliveries::user_id.eq(user_id))
            .filter(webhook_deliveries::delivered_at.is_null())
            .filter(webhook_deliveries::failed_at.is_null()),
    )
    .set((
        webhook_deliveries::failed_at.eq(now),
        webhook_deliveries::last_error.eq(why),
    ))
    .execute(conn)
}

/// Enqueues a webhook delivery.
pub fn insert_delivery(conn: &mut AnyConnection, delivery: &NewDelivery<'_>) -> QueryResult<()> {
    diesel::insert_into(webhook_deliveries::table)
        .values(delivery)
        .execute(conn)
        .map(drop)
}

/// The user's notifications after `after`.
pub fn after(
    conn: &mut AnyConnection,
    user_id: &str,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<NotificationRow>> {
    log_after!(
        conn,
        notifications,
        user_id = user_id,
        NotificationRow,
        (after, limit)
    )
}

/// Whether the user's feed holds a notification of `kind` about `game_id`.
pub fn notified_about(
    conn: &mut AnyConnection,
    user_id: &str,
    kind: &str,
    game_id: &str,
) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        notifications::table
            .filter(notifications::user_id.eq(user_id))
            .filter(notifications::kind.eq(kind))
            .filter(notifications::game_id.eq(game_id)),
    ))
    .get_result(conn)
}

/// The last seq of the user's feed.
pub fn last_seq(conn: &mut AnyConnection, user_id: &str) -> QueryResult<i64> {
    users::table
        .find(user_id)
        .select(users::notification_count)
        .first(conn)
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
}

/// What a claim of due outbox rows asks for.
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    /// Due is at or before this.
    pub now: NaiveDateTime,
    /// Claimed rows are kept from other claims until then.
    pub lease: NaiveDateTime,
    /// At most this many.
    pub limit: i64,
    /// None of these users' (those a lane of this instance is sending to now).
    pub skip: &'a [String],
}

/// The ids `due` selects: a query of an outbox table aliased `d`, with the placeholders
/// `{now}`, `{limit}` and `{skip}` (where the condition leaving out the `skip` users' rows
/// goes). On PostgreSQL the rows stay locked until the transaction ends and other instances
/// skip them (`SKIP LOCKED`); on SQLite the single writer keeps claims apart.
pub(super) fn due_ids(
    conn: &mut AnyConnection,
    due: &str,
    claim: &Claim<'_>,
) -> QueryResult<Vec<String>> {
    use diesel::sql_types::{BigInt, Text, Timestamp};
    let Claim {
        now, limit, skip, ..
    } = *claim;
    let postgres = matches!(conn, AnyConnection::Postgresql(_));
    let marks: Vec<String> = (0..skip.len())
        .map(|i| {
            if postgres {
                format!("${}", i + 3)
            } else {
                "?".to_owned()
            }
        })
        .collect();
    let skipped = if skip.is_empty() {
        String::new()
    } else {
        format!(" AND d.user_id NOT IN ({})", marks.join(", "))
    };
    let (now_mark, limit_mark) = if postgres { ("$1", "$2") } else { ("?", "?") };
    let sql = due
        .replace("{now}", now_mark)
        .replace("{skip}", &skipped)
        .replace("{limit}", limit_mark);
    // The placeholders come in the order now, skip…, limit on SQLite (positional `?`), and
    // are numbered on PostgreSQL: bind in the text's order.
    let rows: Vec<IdRow> = match conn {
        AnyConnection::Postgresql(pg) => {
            let mut query = diesel::sql_query(format!("{sql} FOR UPDATE OF d SKIP LOCKED"))
                .into_boxed()
                .bind::<Timestamp, _>(now)
                .bind::<BigInt, _>(limit);
            for user in skip {
                query = query.bind::<Text, _>(user.clone());
            }
            query.load(pg)?
        }
        AnyConnection::Sqlite(lite) => {
            let mut query = diesel::sql_query(sql)
                .into_boxed()
                .bind::<Timestamp, _>(now);
            for user in skip {
                query = query.bind::<Text, _>(user.clone());
            }
            query.bind::<BigInt, _>(limit).load(lite)?
        }
    };
    Ok(rows.into_iter().map(|r| r.id).collect())
}

/// Due deliveries, oldest first. A first attempt waits while an earlier delivery of the
/// same user has not had its own, in flight on another instance included: first attempts
/// go out in the feed's order, one at a time, whichever instances send them. A retry
/// neither waits nor holds up later deliveries.
const DUE: &str = "SELECT d.id FROM webhook_deliveries d WHERE d.delivered_at IS NULL \
     AND d.failed_at IS NULL AND d.next_attempt_at <= {now} AND (d.attempts > 0 OR NOT EXISTS \
     (SELECT 1 FROM webhook_deliveries e WHERE e.user_id = d.user_id AND e.attempts = 0 \
     AND e.delivered_at IS NULL AND e.failed_at IS NULL AND e.seq < d.seq)){skip} \
     ORDER BY d.next_attempt_at, d.seq LIMIT {limit}";

/// Claims due deliveries as `claim` asks (other instances skip them meanwhile). Run it in a
/// write transaction.
pub fn claim_due(conn: &mut AnyConnection, claim: &Claim<'_>) -> QueryResult<Vec<Delivery>> {
    claim_due!(conn, webhook_deliveries, DUE, Delivery, claim)
}

/// Records attempt `n` of a delivery and where it leaves the delivery.
pub fn record_attempt(
    conn: &mut AnyConnection,
    delivery_id: &str,
    n: i32,
    status: Option<i32>,
    error: Option<&str>,
    now: NaiveDateTime,
    end: AttemptEnd,
) -> QueryResult<()> {
    super::write_transaction(conn, |conn| {
        diesel::insert_into(webhook_attempts::table)
            .values((
                webhook_attempts::delivery_id.eq(delivery_id),
                webhook_attempts::attempt.eq(n),
                webhook_attempts::status.eq(status),
                webhook_attempts::error.eq(error),
                webhook_attempts::at.eq(now),
            ))
            .execute(conn)?;
        record_end!(
            conn,
            webhook_deliveries,
            delivery_id,
            (n, status, error),
            now,
            end
        )
    })
}

/// The user's latest deliveries, newest first.
pub fn recent_deliveries(
    conn: &mut AnyConnection,
    user_id: &str,
    limit: i64,
) -> QueryResult<Vec<DeliverySummary>> {
    webhook_deliveries::table
        .filter(webhook_deliveries::user_id.eq(user_id))
        .order(webhook_deliveries::created_at.desc())
        .then_order_by(webhook_deliveries::seq.desc())
        .limit(limit)
        .select((
            webhook_deliveries::seq,
            webhook_deliveries::attempts,
            webhook_deliveries::delivered_at,
            webhook_deliveries::failed_at,
            webhook_deliveries::last_status,
            webhook_deliveries::last_error,
            webhook_deliveries::created_at,
        ))
        .load(conn)
}
