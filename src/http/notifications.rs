//! The caller's notification feed and webhook.

use actix_web::{delete, get, put, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db::{self, outbox};
use crate::error::Error;
use crate::http::extract::{Json, Mine};
use crate::http::long_poll;
use crate::http::reply::{Reply, no_content, ok};
use crate::notifications::{self, NotificationView};

routes! { self::{feed, put_webhook, get_webhook, delete_webhook} }

/// A page of the feed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FeedPage {
    /// In order.
    pub notifications: Vec<NotificationView>,
    /// Pass it as `after` next time. When the page is full (`limit` notifications), the
    /// `seq` of its last one, and more may follow; otherwise the feed's last `seq`.
    #[schema(minimum = 0, example = 1)]
    pub last_seq: i64,
}

/// A webhook to set.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookRequest {
    /// An http(s) URL on a public address.
    #[schema(
        example = "https://example.com/leekha-hook",
        pattern = "^https?://",
        max_length = 2048
    )]
    pub url: String,
    /// 16–256 characters: the HMAC-SHA256 key of `X-Leekha-Signature`.
    #[schema(format = Password, min_length = 16, max_length = 256)]
    pub secret: String,
}

/// Where a webhook delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not delivered yet; it will be retried.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Retried for too long; given up.
    Failed,
}

/// One recent delivery.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DeliveryView {
    /// The notification's seq.
    pub seq: i64,
    /// Requests made so far.
    pub attempts: i32,
    /// `pending` (retries left), `delivered` or `failed` (given up: too old, or the webhook
    /// was removed).
    #[schema(value_type = DeliveryState)]
    pub state: String,
    /// Last HTTP status received.
    #[schema(required = true)]
    pub last_status: Option<i32>,
    /// Why the last attempt failed: the receiver's answer (`the receiver answered 500`), the
    /// connection's error, or `the webhook was removed`; null once delivered or before any.
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// Created.
    pub created_at: DateTime<Utc>,
}

/// The caller's webhook.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookView {
    /// The URL, null when none is set.
    #[schema(
        required = true,
        pattern = "^https?://",
        example = "https://example.com/leekha-hook"
    )]
    pub url: Option<String>,
    /// The latest deliveries (at most 20), newest first.
    pub recent_deliveries: Vec<DeliveryView>,
}

/// The caller's notification feed.
///
/// The caller's notifications after `after`; with `wait`, a long-poll. Every notification
/// has a `seq`, contiguous per user; pass the last one seen as `after`. With `wait` (≤ 30
/// s) the call returns as soon as a notification exists, or empty when the wait runs out:
/// loop on it to follow the feed.
#[utoipa::path(operation_id = "list_notifications", tag = "notifications", security(("bearer" = [])),
    params(long_poll::Query),
    responses((status = 200, description = "Notifications (possibly none when the wait ran out)", body = FeedPage),
        long_poll::TooManyOfMine))]
#[get("/me/notifications")]
pub async fn feed(me: Mine<(), crate::http::query::Query<long_poll::Query>>) -> Reply {
    let query = &me.input;
    let (after, wait, limit) = query.checked()?;
    let (rows, last_seq) = long_poll::poll(
        &me.state,
        &me.user,
        &crate::db::wake::feed_topic(me.user.id()),
        wait,
        |(rows, _): &(Vec<_>, i64)| rows.is_empty(),
        |_| {
            me.mine(move |conn, id| {
                let last = notifications::last_seq(conn, id)?;
                let rows = if last > after {
                    notifications::after(conn, id, after, limit)?
                } else {
                    Vec::new()
                };
                Ok((rows, last))
            })
        },
    )
    .await?;
    let last_seq = match rows.last() {
        // A full page: more may follow, so the next page starts after its last row.
        Some(row) if rows.len() as i64 >= limit => row.seq,
        // A notification added between the two reads is in `rows` but not in `last`.
        Some(row) => last_seq.max(row.seq),
        None => last_seq,
    };
    ok(FeedPage {
        notifications: rows.iter().map(NotificationView::from).collect(),
        last_seq,
    })
}

/// Set the caller's webhook.
///
/// Sets the caller's webhook: every notification is then also POSTed to `url`, signed with
/// `X-Leekha-Signature: sha256=<hex HMAC-SHA256 of the body with secret>`, and retried with
/// exponential backoff for up to 24 h, or after the receiver's `Retry-After` (at most 1 h).
/// First attempts follow the feed's order; a retry can arrive after later notifications, so
/// a receiver orders by `seq`.
#[utoipa::path(operation_id = "put_webhook", tag = "notifications", security(("bearer" = [])),
    request_body = WebhookRequest,
    responses(
        (status = 200, description = "Set", body = WebhookView),
        (status = 400, description = "Invalid URL or secret; private addresses (`webhook_url_not_allowed`)")))]
#[put("/me/webhook")]
pub async fn put_webhook(me: Mine<(), Json<WebhookRequest>>) -> Reply {
    let (me, body) = me.split();
    let WebhookRequest { url, secret } = body.into_inner();
    let n = secret.chars().count();
    if !(16..=256).contains(&n) {
        return Err(Error::validation(format!("secret must be 16–256 characters, got {n}")).into());
    }
    let allow_private = me.state.config.webhook_allow_private;
    let checked = web::block(move || crate::webhooks::check_url(&url, allow_private)).await?;
    let url = checked
        .map_err(|e| Error::validation(e).with_code("webhook_url_not_allowed"))?
        .to_string();
    let view = me
        .mine(move |conn, id| {
            outbox::set_webhook(conn, id, Some((&url, &secret)), db::now())?;
            webhook_view(conn, id)
        })
        .await?;
    ok(view)
}

/// The caller's webhook.
///
/// Its URL (null when none) and its latest deliveries with their status, for debugging a
/// receiver. The secret is never shown.
#[utoipa::path(operation_id = "get_webhook", tag = "notifications", security(("bearer" = [])),
    responses((status = 200, description = "The webhook (url null when none)", body = WebhookView)))]
#[get("/me/webhook")]
pub async fn get_webhook(me: Mine) -> Reply {
    ok(me.mine(webhook_view).await?)
}

/// Remove the caller's webhook.
///
/// Removes the caller's webhook; pending deliveries are given up at once (`failed`, last
/// error "the webhook was removed"). Answers 204 also when there was none.
#[utoipa::path(operation_id = "delete_webhook", tag = "notifications", security(("bearer" = [])),
    responses((status = 204, description = "Removed")))]
#[delete("/me/webhook")]
pub async fn delete_webhook(me: Mine) -> Reply {
    me.mine(crate::webhooks::remove).await?;
    no_content()
}

fn webhook_view(conn: &mut crate::db::AnyConnection, user_id: &str) -> Result<WebhookView, Error> {
    let url = outbox::webhook_url(conn, user_id)?;
    let rows = outbox::recent_deliveries(conn, user_id, 20)?;
    Ok(WebhookView {
        url,
        recent_deliveries: rows
            .into_iter()
            .map(
                |(seq, attempts, delivered, failed, last_status, last_error, created_at)| {
                    DeliveryView {
                        seq,
                        attempts,
                        state: if delivered.is_some() {
                            "delivered"
                        } else if failed.is_some() {
                            "failed"
                        } else {
                            "pending"
                        }
                        .into(),
                        last_status,
                        last_error,
                        created_at: created_at.and_utc(),
                    }
                },
            )
            .collect(),
    })
}
