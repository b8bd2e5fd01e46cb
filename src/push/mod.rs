//! Push to devices (FCM, APNs, Web Push): each user's devices and settings, the push outbox that
//! [`crate::notifications::write`] fills in the transaction of the notification's cause, and
//! the worker that delivers it ([`deliver`]).
//!
//! Tokens, endpoints and keys are secrets of the device: they are never logged (the rows'
//! `Debug` redacts them) and never shown back.

pub mod apns;
pub mod deliver;
pub mod fcm;
pub mod messages;
pub mod settings;
pub mod webpush;

use chrono::NaiveDateTime;

use crate::config::Config;
use crate::db::AnyConnection;
use crate::db::outbox::NotificationRow;
use crate::db::push::{self as store, DeviceRow, NewPush};
use crate::error::Error;

pub use deliver::{Pusher, worker};

/// What a push to one mobile device says, whichever provider carries it; each provider's
/// message adds its own delivery fields.
#[derive(Debug)]
pub struct Alert<'a> {
    /// The device token.
    pub token: &'a str,
    /// Title, shown unless silent.
    pub title: &'a str,
    /// Body, shown unless silent.
    pub body: &'a str,
    /// Fields for the app (`kind`, `seq`, `game_id`, the notification's data).
    pub data: &'a serde_json::Map<String, serde_json::Value>,
    /// A background push: no alert, no sound, lower priority.
    pub silent: bool,
}
pub use settings::NotificationSettings;

/// At most this many devices per user; registering one more drops the oldest.
pub const MAX_DEVICES: usize = 10;

/// The longest FCM or APNs token accepted (FCM's are about 160 characters today).
pub const MAX_TOKEN: usize = 4096;

/// The longest Web Push endpoint accepted.
pub const MAX_ENDPOINT: usize = 2048;

/// A push service.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Firebase Cloud Messaging (Android, and iOS through Firebase).
    Fcm,
    /// Apple Push Notification service.
    Apns,
    /// Web Push (RFC 8030), for browsers.
    Webpush,
}

impl Platform {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Fcm => "fcm",
            Platform::Apns => "apns",
            Platform::Webpush => "webpush",
        }
    }
}

/// A device registration that passed every check ([`check`]). Its `Debug` redacts the
/// token.
pub struct Checked {
    platform: Platform,
    token: String,
    keys: Option<(String, String)>,
    locale: Option<String>,
}

impl std::fmt::Debug for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked")
            .field("platform", &self.platform)
            .field("token", &"***")
            .finish_non_exhaustive()
    }
}

/// What a client sends to register a device.
pub struct Registration {
    /// The push service.
    pub platform: Platform,
    /// FCM/APNs: the device token.
    pub token: Option<String>,
    /// Web Push: endpoint, `p256dh`, `auth`.
    pub subscription: Option<(String, String, String)>,
    /// The language of its pushes.
    pub locale: Option<String>,
}

/// Which push services this server can deliver to now.
pub fn available(config: &Config, platform: Platform) -> bool {
    match platform {
        Platform::Fcm => config.fcm_credentials_file.is_some(),
        Platform::Apns => apns::configured(config),
        Platform::Webpush => true,
    }
}

/// Checks a registration: the platform is served, the fields fit it and their limits, a
/// Web Push endpoint is an https URL (http only with the private-address switch, for tests)
/// on a public address (resolves the host: blocking), its keys are a P-256 point and 16
/// bytes.
///
/// # Errors
/// `validation_failed`, `push_endpoint_not_allowed` or `push_platform_unavailable`.
pub fn check(reg: Registration, config: &Config) -> Result<Checked, Error> {
    let Registration {
        platform,
        token,
        subscription,
        locale,
    } = reg;
    if !available(config, platform) {
        return Err(Error::unprocessable(
            "push_platform_unavailable",
            format!(
                "this server does not deliver to {}; GET /api/v1/push/config says which it does",
                platform.as_str()
            ),
        ));
    }
    if let Some(l) = &locale
        && !is_language_tag(l)
    {
        return Err(Error::validation(
            "locale must be a BCP 47 language tag such as \"en\" or \"ar-SA\" (at most 35 characters)",
        ));
    }
    match (platform, token, subscription) {
        (Platform::Webpush, None, Some((endpoint, p256dh, auth))) => {
            if endpoint.len() > MAX_ENDPOINT {
                return Err(Error::validation(format!(
                    "subscription.endpoint is longer than {MAX_ENDPOINT} characters"
                )));
            }
            webpush::check_keys(&p256dh, &auth)
                .map_err(|e| Error::validation(format!("subscription.{e}")))?;
            let allow_private = config.webhook_allow_private;
            let url = crate::webhooks::check_url(&endpoint, allow_private)
                .map_err(|e| Error::validation(e).with_code("push_endpoint_not_allowed"))?;
            if url.scheme() != "https" && !allow_private {
                return Err(
                    Error::validation("subscription.endpoint must be an https URL")
                        .with_code("push_endpoint_not_allowed"),
                );
            }
            Ok(Checked {
                platform,
                token: url.to_string(),
                keys: Some((p256dh, auth)),
                locale,
            })
        }
        (Platform::Apns, Some(token), None) => {
            // The device token in hex, as the app gets it; one case, so that the same device
            // registered twice is found again.
            let ok = (2..=MAX_TOKEN).contains(&token.len())
                && token.len() % 2 == 0
                && token.bytes().all(|b| b.is_ascii_hexdigit());
            if !ok {
                return Err(Error::validation(format!(
                    "an APNs token is the device token in hex: an even number of hex digits, \
                     at most {MAX_TOKEN}"
                )));
            }
            Ok(Checked {
                platform,
                token: token.to_ascii_lowercase(),
                keys: None,
                locale,
            })
        }
        (Platform::Fcm, Some(token), None) => {
            let ok = (1..=MAX_TOKEN).contains(&token.len())
                && token.bytes().all(|b| b.is_ascii_graphic());
            if !ok {
                return Err(Error::validation(format!(
                    "token must be 1–{MAX_TOKEN} printable characters without spaces"
                )));
            }
            Ok(Checked {
                platform,
                token,
                keys: None,
                locale,
            })
        }
        (Platform::Webpush, _, _) => Err(Error::validation(
            "platform webpush takes subscription {endpoint, keys: {p256dh, auth}} and no token",
        )),
        (_, _, _) => Err(Error::validation(
            "platforms fcm and apns take a token and no subscription",
        )),
    }
}

/// A registered device, and whether it is new.
#[derive(Debug)]
pub struct Registered {
    /// The device.
    pub device: DeviceRow,
    /// Registered now (201) rather than found (200).
    pub created: bool,
}

/// Registers the device for the user: the same token or endpoint again is the same device
/// (its keys and locale refreshed); one held by another user moves to this one as a new
/// device (the phone changed hands). Beyond [`MAX_DEVICES`] the oldest are dropped. Takes the
/// user's lock, then the token's, in the caller's write transaction: the same device
/// registered from two requests at once, of one account or of two, is then found by the
/// second, not inserted twice (a unique violation) nor moved while it is refreshed.
///
/// # Errors
/// Database errors.
pub fn register(
    conn: &mut AnyConnection,
    user_id: &str,
    checked: Checked,
    now: NaiveDateTime,
) -> Result<Registered, Error> {
    let Checked {
        platform,
        token,
        keys,
        locale,
    } = checked;
    let (p256dh, auth) = keys.unzip();
    crate::db::admin::lock_user(conn, user_id)?;
    store::lock_token(conn, platform.as_str(), &token)?;
    if let Some(existing) = store::device_by_token(conn, platform.as_str(), &token)? {
        if existing.user_id == user_id {
            store::refresh_device(
                conn,
                &existing.id,
                p256dh.as_deref(),
                auth.as_deref(),
                locale.as_deref(),
            )?;
            let device =
                store::device(conn, &existing.id)?.ok_or_else(|| Error::not_found("device"))?;
            return Ok(Registered {
                device,
                created: false,
            });
        }
        store::forget_device(conn, &existing.id)?;
    }
    let device = DeviceRow {
        id: uuid::Uuid::new_v4().to_string(),
        user_id: user_id.to_owned(),
        platform: platform.as_str().to_owned(),
        token,
        p256dh,
        auth,
        locale,
        created_at: now,
        last_success_at: None,
        last_error: None,
    };
    store::insert_device(conn, &device)?;
    let all = store::devices_of(conn, user_id)?;
    if all.len() > MAX_DEVICES {
        for old in all
            .iter()
            .filter(|d| d.id != device.id)
            .take(all.len() - MAX_DEVICES)
        {
            store::forget_device(conn, &old.id)?;
        }
    }
    Ok(Registered {
        device,
        created: true,
    })
}

/// The user's devices, oldest first.
///
/// # Errors
/// Database errors.
pub fn devices(conn: &mut AnyConnection, user_id: &str) -> Result<Vec<DeviceRow>, Error> {
    Ok(store::devices_of(conn, user_id)?)
}

/// One of the user's devices.
///
/// # Errors
/// `not_found` when the user has no such device (another user's is not theirs); database
/// errors.
pub fn device(
    conn: &mut AnyConnection,
    user_id: &str,
    device_id: &str,
) -> Result<DeviceRow, Error> {
    store::device(conn, device_id)?
        .filter(|d| d.user_id == user_id)
        .ok_or_else(|| Error::not_found("no such device"))
}

/// Removes the user's device and its pending pushes.
///
/// # Errors
/// `not_found` when the user has no such device; database errors.
pub fn remove(conn: &mut AnyConnection, user_id: &str, device_id: &str) -> Result<(), Error> {
    // Under the account's lock, as a registration is: a phone registering again while its
    // device is removed is judged after the removal (a new device) or before it, never
    // between (404 `device`).
    crate::db::write_transaction(conn, |conn| {
        crate::db::admin::lock_user(conn, user_id)?;
        if store::delete_device(conn, user_id, device_id)? {
            Ok(())
        } else {
            Err(Error::not_found("no such device"))
        }
    })
}

/// Enqueues one push per device of the notification's recipient, unless the user's settings
/// turn its kind off; silent when `silent` says so or in the user's quiet hours. Runs inside
/// the notification's transaction, so a push exists exactly when its notification does.
///
/// # Errors
/// Database errors.
pub fn enqueue(
    conn: &mut AnyConnection,
    row: &NotificationRow,
    body: &str,
    silent: bool,
) -> Result<(), Error> {
    let devices = store::devices_to_push(conn, &row.user_id)?;
    if devices.is_empty() {
        return Ok(());
    }
    let settings = settings::load(conn, &row.user_id)?;
    if !settings.push.enabled(&row.kind) || watching_live(&row.user_id, row.game_id.as_deref()) {
        return Ok(());
    }
    let silent = silent
        || settings
            .quiet_hours
            .as_ref()
            .is_some_and(|q| q.contains(row.created_at));
    for device in devices {
        let id = uuid::Uuid::new_v4().to_string();
        store::insert_push(
            conn,
            &NewPush {
                id: &id,
                device_id: &device.id,
                user_id: &row.user_id,
                seq: row.seq,
                kind: &row.kind,
                game_id: row.game_id.as_deref(),
                body,
                silent,
                next_attempt_at: row.created_at,
                created_at: row.created_at,
            },
        )?;
    }
    Ok(())
}

/// The presence hook: whether the user is watching the game live right now (then a
/// `your_turn` push would only repeat what the open stream shows). Presence comes with live
/// streams; until then nobody counts as watching and every push goes out.
fn watching_live(_user_id: &str, _game_id: Option<&str>) -> bool {
    false
}

/// The settings key of the generated VAPID key.
const VAPID_SETTING: &str = "vapid_private_key";

/// The server's VAPID key: from `LEEKHA_VAPID_PRIVATE_KEY_FILE` (PEM: PKCS#8 or SEC1), or
/// generated once and kept in the database, so every instance signs with the same key.
///
/// # Errors
/// An unreadable or invalid key file (`internal`); database errors.
pub fn vapid(conn: &mut AnyConnection, config: &Config) -> Result<webpush::Vapid, Error> {
    let key = match &config.vapid_private_key_file {
        Some(path) => read_vapid_file(path).map_err(Error::internal)?,
        None => {
            let fresh = hex::encode(webpush::random_key().to_bytes());
            let stored = crate::db::settings::get_or_insert(conn, VAPID_SETTING, &fresh)?;
            hex::decode(stored)
                .ok()
                .and_then(|b| p256::SecretKey::from_slice(&b).ok())
                .ok_or_else(|| Error::internal("the stored VAPID key is not a P-256 key"))?
        }
    };
    Ok(webpush::Vapid::new(key, config.vapid_subject.clone()))
}

/// Reads a P-256 private key from a PEM file.
///
/// # Errors
/// A sentence naming the file.
pub fn read_vapid_file(path: &std::path::Path) -> Result<p256::SecretKey, String> {
    let pem = std::fs::read_to_string(path)
        .map_err(|e| format!("LEEKHA_VAPID_PRIVATE_KEY_FILE {}: {e}", path.display()))?;
    p256::SecretKey::from_sec1_pem(&pem)
        .ok()
        .or_else(|| p256::pkcs8::DecodePrivateKey::from_pkcs8_pem(&pem).ok())
        .ok_or_else(|| {
            format!(
                "LEEKHA_VAPID_PRIVATE_KEY_FILE {}: not a PEM P-256 private key",
                path.display()
            )
        })
}

/// What this server can deliver: the VAPID public key, FCM, APNs.
///
/// # Errors
/// As [`vapid`].
pub fn public_config(
    conn: &mut AnyConnection,
    config: &Config,
) -> Result<(Option<String>, bool, bool), Error> {
    let key = vapid(conn, config)?.public_key();
    Ok((
        Some(key),
        available(config, Platform::Fcm),
        available(config, Platform::Apns),
    ))
}

/// Whether `tag` has the shape of a BCP 47 language tag (RFC 5646 §2.1) of at most 35
/// characters: a language of 2 to 8 letters, then subtags of 1 to 8 letters or digits, all
/// separated by `-` (or `_`, as Android writes them).
fn is_language_tag(tag: &str) -> bool {
    let mut subtags = tag.split(['-', '_']);
    let language = subtags.next().unwrap_or_default();
    tag.len() <= 35
        && (2..=8).contains(&language.len())
        && language.chars().all(|c| c.is_ascii_alphabetic())
        && subtags
            .all(|s| (1..=8).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn locales_must_look_like_language_tags() {
        for good in [
            "en",
            "ar-SA",
            "zh-Hant-TW",
            "en_GB",
            "de-CH-1996",
            "sr-Latn-RS",
        ] {
            assert!(super::is_language_tag(good), "{good}");
        }
        for bad in [
            "---",
            "",
            "e",
            "-en",
            "en-",
            "en--GB",
            "123",
            "en-toolongsubtag",
            "en GB",
            "é",
        ] {
            assert!(!super::is_language_tag(bad), "{bad}");
        }
    }
}
