//! The push worker: claims due pushes with a lease (one per device at a time, so a device
//! gets its pushes in order and two instances never send one twice), sends each to its
//! service, and records the outcome: delivered, retried with backoff (`Retry-After`
//! honoured) on 429, 5xx and transport errors, the device removed when the service reports
//! it gone, given up on other refusals or after [`MAX_AGE`].

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use sha2::{Digest, Sha256};

use super::apns::{self, Apns};
use super::fcm::{self, Fcm};
use super::webpush::{self, Vapid};
use super::{Alert, Platform, messages};
use crate::db;
use crate::db::push::{self as store, DeviceRow, PushEnd, PushRow};
use crate::error::Error;
use crate::services::Services;

/// How long a claimed push is reserved for the instance that claimed it.
const LEASE: Duration = Duration::from_secs(30);

/// The most pushes one pass of [`Pusher::deliver_due`] attempts.
const PER_PASS: usize = 50;

/// How many pushes an instance's worker sends at once, one user's at a time each: a Web Push
/// endpoint is the user's to choose, and one that takes the agent's whole 10 s must hold up
/// only its own user's pushes.
pub const LANES: usize = 16;

/// A push is given up this long after its notification: later, it would only be noise.
pub const MAX_AGE: Duration = Duration::from_secs(6 * 3600);

/// How long a push service may keep a message for an offline device: as long as the push is
/// still worth trying, up to [`MAX_AGE`] after its notification on every platform, so a
/// retry asks for what is left of it (at least a second: 0 means "now or never" to Web
/// Push).
fn ttl_seconds(created_at: chrono::NaiveDateTime, now: chrono::NaiveDateTime) -> u64 {
    let age = (now - created_at).num_seconds().max(0).unsigned_abs();
    MAX_AGE.as_secs().saturating_sub(age).max(1)
}

/// What a push service answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// `Retry-After`, when given (seconds or an HTTP date), at most an hour.
    pub retry_after: Option<Duration>,
    /// The start of the body, for the error message.
    pub body: String,
    /// The service's id of the message (APNs `apns-id`), for the log.
    pub id: Option<String>,
}

impl Answer {
    /// Reads status, `Retry-After` and up to 2 KiB of body.
    pub fn read(mut reply: ureq::http::Response<ureq::Body>) -> Self {
        let status = reply.status().as_u16();
        let retry_after = crate::webhooks::retry_after(reply.headers());
        let mut body = String::new();
        let _ = reply
            .body_mut()
            .as_reader()
            .take(2048)
            .read_to_string(&mut body);
        Self {
            status,
            retry_after,
            body,
            id: None,
        }
    }
}

/// What to make of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Delivered,
    /// The service says the device no longer exists.
    Gone,
    /// Try again, after this long if the service said.
    Retry(Option<Duration>),
    /// A refusal that trying again will not change.
    Failed,
}

fn judge(platform: Platform, answer: &Result<Answer, String>) -> Verdict {
    let Ok(a) = answer else {
        return Verdict::Retry(None);
    };
    match (platform, a.status) {
        (_, 200..=299) => Verdict::Delivered,
        // FCM answers 404 for other things too (a wrong project): only `UNREGISTERED` says
        // the token is gone.
        (Platform::Fcm, 404) if a.body.contains("UNREGISTERED") => Verdict::Gone,
        (Platform::Apns, 410) | (Platform::Webpush, 404 | 410) => Verdict::Gone,
        // A token from a development build sent to production, or garbage: it will never
        // work here.
        (Platform::Apns, 400) if apns::reason(&a.body).as_deref() == Some("BadDeviceToken") => {
            Verdict::Gone
        }
        (_, 429 | 500..=599) => Verdict::Retry(a.retry_after),
        // FCM's token expired early: the sender dropped it and asks anew next time.
        (Platform::Fcm, 401) => Verdict::Retry(None),
        // The provider token was refused even after renewal (a clock off, a revoked key): a
        // fault of the server, not of the device, so its pushes wait rather than go.
        (Platform::Apns, 403) => Verdict::Retry(None),
        _ => Verdict::Failed,
    }
}

/// The collapse key of a push: a newer push of the same game and kind replaces the older
/// one on the device. A notification about no game (a friend request) replaces nothing:
/// two requests from two people must both reach the phone, so its key is its feed `seq`.
pub fn collapse_key(kind: &str, game_id: Option<&str>, seq: i64) -> String {
    match game_id {
        Some(g) => format!("{kind}:{g}"),
        None => format!("{kind}#{seq}"),
    }
}

/// The Web Push `Topic` for a collapse key: at most 32 characters of the URL-safe base64
/// alphabet (RFC 8030 §5.4), so a digest of the key.
pub fn topic(collapse_key: &str) -> String {
    let digest = Sha256::digest(collapse_key.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..24])
}

/// Everything the worker needs to send: the VAPID key, the FCM and APNs senders with their
/// token caches (the APNs one with its HTTP/2 connection), and two HTTP/1.1 clients (Web
/// Push endpoints are the users' and go through the address guard; FCM's URL is the
/// operator's). Shared by the worker's lanes: Web Push and FCM pushes go out side by side;
/// APNs pushes, over the one HTTP/2 connection, one at a time.
#[derive(Debug)]
pub struct Pusher {
    state: Services,
    vapid: Vapid,
    fcm: Option<Fcm>,
    apns: Option<Mutex<Apns>>,
    guarded: ureq::Agent,
    plain: ureq::Agent,
}

impl Pusher {
    /// A pusher for the state: reads the VAPID key (from its file, or the database), the
    /// FCM credentials and the APNs key.
    ///
    /// # Errors
    /// A bad key file or credentials, or an unreadable database.
    pub fn new(state: impl Into<Services>) -> Result<Self, String> {
        let state: Services = state.into();
        let mut conn = state.db.conn().map_err(|e| e.to_string())?;
        let vapid = super::vapid(&mut conn, &state.config)
            .map_err(|e| format!("VAPID key: {}", e.cause()))?;
        drop(conn);
        let fcm = match &state.config.fcm_credentials_file {
            Some(path) => Some(Fcm::new(
                fcm::Credentials::read(path)?,
                &state.config.fcm_url,
            )?),
            None => None,
        };
        let apns = Apns::from_config(&state.config)?;
        let plain = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .user_agent("leekha-push/1")
            .build()
            .new_agent();
        Ok(Self {
            guarded: crate::webhooks::agent(state.config.webhook_allow_private),
            state,
            vapid,
            fcm,
            apns: apns.map(Mutex::new),
            plain,
        })
    }

    /// Claims up to 50 due pushes, one after the other, and makes one attempt each; returns
    /// the attempts made. Returns early when `stop` is set (what is left keeps its lease and
    /// goes out later). The worker sends on [`LANES`] instead.
    ///
    /// # Errors
    /// Database errors.
    pub fn deliver_due(&self, stop: &AtomicBool) -> Result<usize, Error> {
        let mut attempts = 0;
        while attempts < PER_PASS && !stop.load(Ordering::Relaxed) {
            let Some(push) = self.claim(&[])? else {
                break;
            };
            self.attempt(&push)?;
            attempts += 1;
        }
        Ok(attempts)
    }

    /// Claims the next due push of a user not in `busy`, if any. Only a read when nothing is
    /// due, so that an idle worker never takes SQLite's write lock.
    ///
    /// # Errors
    /// Database errors.
    fn claim(&self, busy: &[String]) -> Result<Option<PushRow>, Error> {
        let mut conn = self.state.db.conn()?;
        if !store::any_due(&mut conn, db::now())? {
            return Ok(None);
        }
        // One push claimed at a time, just before its attempt: a batch claimed at once could
        // outlast its lease behind slow push services, and another instance would then
        // claim and send the rest a second time.
        db::write_transaction(&mut conn, |conn| {
            let now = db::now();
            let lease = now + chrono::Duration::from_std(LEASE).unwrap_or_default();
            let claim = db::outbox::Claim {
                now,
                lease,
                limit: 1,
                skip: busy,
            };
            Ok::<_, Error>(store::claim_due(conn, &claim)?.pop())
        })
    }

    /// One attempt at a claimed push, and its outcome recorded. No database connection is
    /// held while the push service answers: the lanes would otherwise take the pool's.
    fn attempt(&self, push: &PushRow) -> Result<(), Error> {
        let Some(device) = store::device(&mut *self.state.db.conn()?, &push.device_id)? else {
            // Removed since the claim: its pushes went with it.
            return Ok(());
        };
        let platform = match device.platform.as_str() {
            "fcm" => Platform::Fcm,
            "apns" => Platform::Apns,
            _ => Platform::Webpush,
        };
        if self.shown_live(&device.user_id, push) {
            let now = db::now();
            db::write_transaction(&mut *self.state.db.conn()?, |conn| {
                store::record_attempt(
                    conn,
                    &push.id,
                    push.attempts,
                    None,
                    Some("not sent: the user had the game open"),
                    now,
                    PushEnd::Failed,
                )
            })?;
            self.state
                .metrics
                .push_delivery(platform.as_str(), "skipped");
            return Ok(());
        }
        let answer = self.send(platform, &device, push);
        let verdict = judge(platform, &answer);
        let now = db::now();
        let n = push.attempts + 1;
        let status = answer.as_ref().ok().map(|a| i32::from(a.status));
        // A Web Push endpoint is the user's to choose; on a server that may call private
        // addresses, its answer's body could be an internal service's, which the user reads
        // back in the device's `last_error`: there only the status is kept.
        let echo_body = !(platform == Platform::Webpush && self.state.config.webhook_allow_private);
        let error = match &answer {
            Ok(a) if verdict != Verdict::Delivered && echo_body => Some(format!(
                "{} answered {}: {}",
                platform.as_str(),
                a.status,
                a.body.chars().take(300).collect::<String>()
            )),
            Ok(a) if verdict != Verdict::Delivered => {
                Some(format!("{} answered {}", platform.as_str(), a.status))
            }
            Ok(_) => None,
            Err(e) => Some(e.chars().take(500).collect()),
        };
        let too_old =
            now >= push.created_at + chrono::Duration::from_std(MAX_AGE).unwrap_or_default();
        let (end, outcome) = match &verdict {
            Verdict::Delivered => (PushEnd::Delivered, "delivered"),
            Verdict::Gone => (PushEnd::Failed, "gone"),
            Verdict::Failed => (PushEnd::Failed, "failed"),
            Verdict::Retry(_) if too_old => (PushEnd::Failed, "failed"),
            Verdict::Retry(after) => {
                let backoff = self
                    .state
                    .config
                    .push_retry_base
                    .saturating_mul(1u32 << (n - 1).clamp(0, 16) as u32)
                    .min(Duration::from_secs(3600));
                let wait = after.unwrap_or(backoff);
                // The last try comes at the end of the window, not after it.
                let at = (now + chrono::Duration::from_std(wait).unwrap_or_default())
                    .min(push.created_at + chrono::Duration::from_std(MAX_AGE).unwrap_or_default());
                (PushEnd::RetryAt(at), "retry")
            }
        };
        db::write_transaction(&mut *self.state.db.conn()?, |conn| {
            if verdict == Verdict::Gone {
                // The device and every push still queued for it go.
                store::forget_device(conn, &device.id)?;
            } else {
                store::record_attempt(conn, &push.id, n, status, error.as_deref(), now, end)?;
                let success = (verdict == Verdict::Delivered).then_some(now);
                store::device_outcome(conn, &device.id, success, error.as_deref())?;
            }
            Ok::<_, Error>(())
        })?;
        self.state.metrics.push_delivery(platform.as_str(), outcome);
        if verdict == Verdict::Delivered {
            let service_id = answer.as_ref().ok().and_then(|a| a.id.as_deref());
            tracing::debug!(push = %push.id, device = %device.id, attempt = n, service_id, "push delivered");
        } else {
            tracing::info!(push = %push.id, device = %device.id, attempt = n, outcome, status = ?status, error = ?error, "push not delivered");
        }
        Ok(())
    }

    /// Whether the push only repeats what the user sees right now: a turn, a reminder or a
    /// chat line of a game they have open live on this instance.
    fn shown_live(&self, user_id: &str, push: &PushRow) -> bool {
        self.state.config.push_skip_watching
            && matches!(
                push.kind.as_str(),
                "your_turn" | "turn_reminder" | "chat_message"
            )
            && push
                .game_id
                .as_deref()
                .is_some_and(|game| self.state.watching.is_watching(user_id, game))
    }

    fn send(
        &self,
        platform: Platform,
        device: &DeviceRow,
        push: &PushRow,
    ) -> Result<Answer, String> {
        let notification: serde_json::Value =
            serde_json::from_str(&push.body).unwrap_or(serde_json::Value::Null);
        let (title, body) = messages::render(
            &push.kind,
            push.game_id.as_deref(),
            &notification["data"],
            device.locale.as_deref(),
        );
        let collapse = collapse_key(&push.kind, push.game_id.as_deref(), push.seq);
        let data = || {
            let mut data = serde_json::Map::new();
            data.insert("kind".into(), push.kind.clone().into());
            data.insert("seq".into(), push.seq.to_string().into());
            if let Some(g) = &push.game_id {
                data.insert("game_id".into(), g.clone().into());
            }
            if let Some(fields) = notification["data"].as_object() {
                for (k, v) in fields {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    data.entry(k.clone()).or_insert(text.into());
                }
            }
            data
        };
        match platform {
            Platform::Webpush => {
                let (Some(p256dh), Some(auth)) = (&device.p256dh, &device.auth) else {
                    return Err("the subscription has no keys".into());
                };
                let mut payload = notification.clone();
                payload["title"] = title.into();
                payload["body"] = body.into();
                payload["silent"] = push.silent.into();
                let (ua, secret) = webpush::decode(p256dh)
                    .zip(webpush::decode(auth))
                    .ok_or("the subscription's keys are not base64url")?;
                let sealed = webpush::encrypt(payload.to_string().as_bytes(), &ua, &secret)?;
                let url = url::Url::parse(&device.token).map_err(|e| e.to_string())?;
                let urgency = if push.silent {
                    "low"
                } else if matches!(push.kind.as_str(), "your_turn" | "turn_reminder") {
                    "high"
                } else {
                    "normal"
                };
                let reply = self
                    .guarded
                    .post(url.as_str())
                    .header(
                        "authorization",
                        &self
                            .vapid
                            .authorization(&url, chrono::Utc::now().timestamp()),
                    )
                    .header("content-encoding", "aes128gcm")
                    .header("content-type", "application/octet-stream")
                    .header("ttl", &ttl_seconds(push.created_at, db::now()).to_string())
                    .header("urgency", urgency)
                    .header("topic", &topic(&collapse))
                    .send(&sealed[..])
                    .map_err(|e| e.to_string())?;
                Ok(Answer::read(reply))
            }
            Platform::Fcm => {
                let Some(fcm) = &self.fcm else {
                    return Err("FCM is not configured (LEEKHA_FCM_CREDENTIALS_FILE)".into());
                };
                let mut data = data();
                if push.silent {
                    data.insert("silent".into(), "1".into());
                }
                fcm.send(
                    &self.plain,
                    &fcm::Message {
                        alert: Alert {
                            token: &device.token,
                            title: &title,
                            body: &body,
                            data: &data,
                            silent: push.silent,
                        },
                        collapse_key: &collapse,
                        ttl_seconds: ttl_seconds(push.created_at, db::now()),
                    },
                )
            }
            Platform::Apns => {
                let Some(apns) = &self.apns else {
                    return Err("APNs is not configured (LEEKHA_APNS_KEY_FILE)".into());
                };
                // The same key as the other services, as long as APNs takes it.
                let collapse_id = if collapse.len() <= apns::MAX_COLLAPSE_ID {
                    collapse.clone()
                } else {
                    topic(&collapse)
                };
                let expiration = (push.created_at
                    + chrono::Duration::from_std(MAX_AGE).unwrap_or_default())
                .and_utc()
                .timestamp();
                lock(apns).send(&apns::Message {
                    alert: Alert {
                        token: &device.token,
                        title: &title,
                        body: &body,
                        data: &data(),
                        silent: push.silent,
                    },
                    collapse_id: &collapse_id,
                    thread_id: push.game_id.as_deref(),
                    expiration,
                })
            }
        }
    }
}

/// Starts the push loop of this instance: every `LEEKHA_PUSH_INTERVAL_MS` it looks for due
/// pushes, and sends them on up to [`LANES`] threads, one user's at a time each.
///
/// # Errors
/// As [`Pusher::new`], or when the thread cannot be made.
pub fn worker(state: impl Into<Services>) -> Result<crate::background::Worker, String> {
    let state: Services = state.into();
    let interval = state.config.push_interval;
    let pusher = Arc::new(Pusher::new(state)?);
    let sender = pusher.clone();
    crate::background::Worker::spawn_lanes(
        "leekha-push",
        LANES,
        interval,
        move |busy| Ok(pusher.claim(busy)?.map(|p| (p.user_id.clone(), p))),
        move |push| sender.attempt(&push),
    )
}

/// The APNs sender; one whose lane panicked mid-send is still usable (its connection is made
/// again as needed).
fn lock<T>(sender: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    sender
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::parse_retry_after;

    fn answer(status: u16, retry: Option<u64>) -> Result<Answer, String> {
        Ok(Answer {
            status,
            retry_after: retry.map(Duration::from_secs),
            body: String::new(),
            id: None,
        })
    }

    #[test]
    fn answers_are_judged_per_service() {
        assert_eq!(judge(Platform::Fcm, &answer(200, None)), Verdict::Delivered);
        let unregistered = Ok(Answer {
            body: r#"{"error":{"code":404,"status":"NOT_FOUND","details":[{"errorCode":"UNREGISTERED"}]}}"#.into(),
            ..answer(404, None).unwrap()
        });
        assert_eq!(judge(Platform::Fcm, &unregistered), Verdict::Gone);
        // Another 404 (a wrong project) says nothing about the device.
        assert_eq!(judge(Platform::Fcm, &answer(404, None)), Verdict::Failed);
        assert_eq!(judge(Platform::Webpush, &answer(410, None)), Verdict::Gone);
        assert_eq!(judge(Platform::Webpush, &answer(404, None)), Verdict::Gone);
        assert_eq!(judge(Platform::Apns, &answer(410, None)), Verdict::Gone);
        let bad_token = Ok(Answer {
            body: r#"{"reason":"BadDeviceToken"}"#.into(),
            ..answer(400, None).unwrap()
        });
        assert_eq!(judge(Platform::Apns, &bad_token), Verdict::Gone);
        assert_eq!(judge(Platform::Apns, &answer(400, None)), Verdict::Failed);
        assert_eq!(
            judge(Platform::Apns, &answer(403, None)),
            Verdict::Retry(None)
        );
        assert_eq!(
            judge(Platform::Fcm, &answer(429, Some(3))),
            Verdict::Retry(Some(Duration::from_secs(3)))
        );
        assert_eq!(
            judge(Platform::Webpush, &answer(503, None)),
            Verdict::Retry(None)
        );
        assert_eq!(
            judge(Platform::Webpush, &answer(400, None)),
            Verdict::Failed
        );
        assert_eq!(
            judge(Platform::Fcm, &Err("refused".into())),
            Verdict::Retry(None)
        );
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date_and_topics_fit_rfc_8030() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("99999"), Some(Duration::from_secs(3600)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        let t = topic(&collapse_key(
            "your_turn",
            Some("1a2b3c4d-0000-4000-8000-000000000000"),
            7,
        ));
        assert_eq!(t.len(), 32);
        // One game and kind collapse whatever the seq; two friend requests do not.
        let game = Some("1a2b3c4d-0000-4000-8000-000000000000");
        assert_eq!(
            collapse_key("your_turn", game, 7),
            collapse_key("your_turn", game, 8)
        );
        assert_ne!(
            collapse_key("friend_request", None, 7),
            collapse_key("friend_request", None, 8)
        );
        assert!(
            t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }
}
