//! Push to devices: what the server can deliver, the caller's devices and notification
//! settings.

use actix_web::{delete, get, post, put, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db;
use crate::db::push::DeviceRow;
use crate::http::extract::{Json, Mine};
use crate::http::reply::{Reply, State, made_or_held, no_content, ok};
use crate::push::{self, NotificationSettings, Platform, Registration};

routes! {
    self::{push_config, register_device, list_devices, get_device, delete_device, get_settings, put_settings},
}

/// What this server can deliver.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PushConfigView {
    /// The VAPID public key for `pushManager.subscribe({applicationServerKey})`: base64url
    /// of the uncompressed P-256 point.
    #[schema(
        required = true,
        pattern = "^[A-Za-z0-9_-]{87}$",
        example = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    )]
    pub vapid_public_key: Option<String>,
    /// FCM tokens can be registered.
    pub fcm: bool,
    /// APNs tokens can be registered.
    pub apns: bool,
}

/// A Web Push subscription's keys, as `PushSubscription.toJSON()` gives them.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionKeys {
    /// The browser's P-256 public key (base64url, uncompressed, 65 bytes).
    #[schema(
        pattern = "^[A-Za-z0-9_-]{87}=?$",
        example = "BMvZbIAEYsX4b4mt_ggOnoi0lD5bsgvDMZ--OtnlO1XBv70FITbkPkBrv1_PzlejR1YmDhCC3WvbmmdV6bBs6-4"
    )]
    pub p256dh: String,
    /// The 16-byte auth secret (base64url).
    #[schema(
        pattern = "^[A-Za-z0-9_-]{22}(==)?$",
        example = "AwGHKEuqx2XObkTG4IVamA"
    )]
    pub auth: String,
}

/// A Web Push subscription.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Subscription {
    /// The push service's https URL for this browser.
    #[schema(
        pattern = "^https?://",
        example = "https://push.example.net/wpush/v2/abc",
        max_length = 2048
    )]
    pub endpoint: String,
    /// The keys that encrypt and authenticate its payloads.
    pub keys: SubscriptionKeys,
}

/// A device to register.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceRequest {
    /// The push service.
    pub platform: Platform,
    /// `fcm`: the registration token (at most 4096 printable characters); `apns`: the device
    /// token in hex (case does not matter).
    #[schema(format = Password, max_length = 4096)]
    pub token: Option<String>,
    /// `webpush`: the subscription.
    pub subscription: Option<Subscription>,
    /// The language of its pushes (`en`, `ar`…); English by default.
    #[schema(
        example = "ar-SA",
        pattern = "^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$",
        max_length = 35
    )]
    pub locale: Option<String>,
}

/// A registered device (its token is never shown).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DeviceView {
    /// Device id.
    pub id: uuid::Uuid,
    /// The push service.
    pub platform: Platform,
    /// Registered.
    pub created_at: DateTime<Utc>,
    /// The last push the service accepted.
    #[schema(required = true)]
    pub last_success_at: Option<DateTime<Utc>>,
    /// The last failure, as a sentence: the service's status and the start of its answer
    /// (only the status for a Web Push endpoint on a server that allows private addresses).
    #[schema(required = true)]
    pub last_error: Option<String>,
}

impl From<&DeviceRow> for DeviceView {
    fn from(d: &DeviceRow) -> Self {
        Self {
            id: d.id.parse().unwrap_or_default(),
            platform: match d.platform.as_str() {
                "fcm" => Platform::Fcm,
                "apns" => Platform::Apns,
                _ => Platform::Webpush,
            },
            created_at: d.created_at.and_utc(),
            last_success_at: d.last_success_at.map(|t| t.and_utc()),
            last_error: d.last_error.clone(),
        }
    }
}

/// The caller's devices.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DeviceList {
    /// Oldest first.
    pub items: Vec<DeviceView>,
}

/// What this server can push to.
///
/// The VAPID public key browsers subscribe with, and whether FCM and APNs tokens are
/// accepted. No authentication.
#[utoipa::path(operation_id = "get_push_config", tag = "push",
    responses((status = 200, description = "What this server can deliver", body = PushConfigView)))]
#[get("/push/config")]
pub async fn push_config(state: State) -> Reply {
    let config = state.config.clone();
    let (vapid_public_key, fcm, apns) = state
        .db
        .run(move |conn| push::public_config(conn, &config))
        .await?;
    ok(PushConfigView {
        vapid_public_key,
        fcm,
        apns,
    })
}

/// Register a device.
///
/// Registers an FCM registration token, an APNs device token or a Web Push subscription for
/// the caller: every notification is then also pushed to it. The same token or endpoint again
/// answers 200 with the same `id` (its keys and locale updated). A user has at most 10 devices: registering another drops
/// the oldest.
#[utoipa::path(operation_id = "register_device", tag = "push", security(("bearer" = [])),
    request_body = DeviceRequest,
    responses(
        (status = 201, description = "Registered", body = DeviceView),
        (status = 200, description = "Already registered: the same device", body = DeviceView),
        (status = 400, description = "Invalid token, subscription or locale; an endpoint on a private address (`push_endpoint_not_allowed`)"),
        (status = 422, description = "This server does not deliver to the platform (`push_platform_unavailable`)")))]
#[post("/me/devices")]
pub async fn register_device(me: Mine<(), Json<DeviceRequest>>) -> Reply {
    let (me, body) = me.split();
    let DeviceRequest {
        platform,
        token,
        subscription,
        locale,
    } = body.into_inner();
    let registration = Registration {
        platform,
        token,
        subscription: subscription.map(|s| (s.endpoint, s.keys.p256dh, s.keys.auth)),
        locale,
    };
    let config = me.state.config.clone();
    // Resolves a Web Push endpoint's host: off the async threads.
    let checked = web::block(move || push::check(registration, &config)).await??;
    let registered = me
        .mine(move |conn, id| {
            db::write_transaction(conn, |conn| push::register(conn, id, checked, db::now()))
        })
        .await?;
    let view = DeviceView::from(&registered.device);
    let location = format!("/api/v1/me/devices/{}", view.id);
    made_or_held(registered.created, location, view)
}

/// The caller's devices.
///
/// Every registered device with its last success and last error, oldest first. Tokens
/// and endpoints are never shown.
#[utoipa::path(operation_id = "list_devices", tag = "push", security(("bearer" = [])),
    responses((status = 200, description = "The devices", body = DeviceList)))]
#[get("/me/devices")]
pub async fn list_devices(me: Mine) -> Reply {
    let rows = me.mine(push::devices).await?;
    ok(DeviceList {
        items: rows.iter().map(DeviceView::from).collect(),
    })
}

/// One of the caller's devices.
///
/// The device a registration's `Location` names, with its last success and last error. Its
/// token or endpoint is never shown.
#[utoipa::path(operation_id = "get_device", tag = "push", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Device id")),
    responses(
        (status = 200, description = "The device", body = DeviceView),
        (status = 404, description = "The caller has no such device")))]
#[get("/me/devices/{id}")]
pub async fn get_device(me: Mine<web::Path<uuid::Uuid>>) -> Reply {
    let device = me.path.to_string();
    let row = me
        .mine(move |conn, id| push::device(conn, id, &device))
        .await?;
    ok(DeviceView::from(&row))
}

/// Remove a device.
///
/// Removes one of the caller's devices; its pending pushes are dropped.
#[utoipa::path(operation_id = "delete_device", tag = "push", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Device id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "The caller has no such device")))]
#[delete("/me/devices/{id}")]
pub async fn delete_device(me: Mine<web::Path<uuid::Uuid>>) -> Reply {
    let device = me.path.to_string();
    me.mine(move |conn, id| push::remove(conn, id, &device))
        .await?;
    no_content()
}

/// The caller's notification settings.
///
/// Which notification kinds are pushed, and the quiet hours (pushes then arrive silent).
/// Until changed: everything about the caller's games on, chat off, no quiet hours.
#[utoipa::path(operation_id = "get_notification_settings", tag = "push", security(("bearer" = [])),
    responses((status = 200, description = "The settings", body = NotificationSettings)))]
#[get("/me/notification-settings")]
pub async fn get_settings(me: Mine) -> Reply {
    ok(me.mine(push::settings::load).await?)
}

/// Change the caller's notification settings.
///
/// Replaces the settings: every kind of `push` is given; `quiet_hours` null for none, or
/// `start` and `end` ("HH:MM", different; across midnight when start is later) in an IANA
/// `time_zone`.
#[utoipa::path(operation_id = "put_notification_settings", tag = "push", security(("bearer" = [])),
    request_body = NotificationSettings,
    responses(
        (status = 200, description = "Saved", body = NotificationSettings),
        (status = 400, description = "Invalid quiet hours or time zone")))]
#[put("/me/notification-settings")]
pub async fn put_settings(me: Mine<(), Json<NotificationSettings>>) -> Reply {
    let (me, body) = me.split();
    let settings = body.into_inner();
    if let Some(q) = &settings.quiet_hours {
        q.check()?;
    }
    let saved = me
        .mine(move |conn, id| {
            db::write_transaction(conn, |conn| {
                push::settings::save(conn, id, settings, db::now())
            })
        })
        .await?;
    ok(saved)
}
