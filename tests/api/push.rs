//! Push to devices: registration, settings, and delivery to local fakes that speak the
//! real protocols (Web Push with RFC 8291 encryption and VAPID, FCM HTTP v1 with its
//! OAuth2 JWT-bearer grant, APNs over HTTP/2 and TLS with its ES256 provider token).

mod apns_fake;
mod fake;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use actix_web::test::TestRequest;
use aes_gcm::aead::{Aead, KeyInit};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hkdf::Hkdf;
use leekha::app::AppState;
use leekha::app::presence::Follower;
use leekha::config::Config;
use leekha::notifications::{Kind, Pending};
use leekha::push::Pusher;
use p256::ecdsa::signature::Verifier;
use serde_json::{Value, json};
use sha2::Sha256;

use actix_web::dev::{Service, ServiceResponse};

use crate::common::{self, Session, TestDb, bearer, post_json, send};
use apns_fake::ApnsFake;
use fake::{Fake, Request};

/// A browser's push subscription: its key pair and auth secret.
struct Browser {
    key: p256::SecretKey,
    auth: [u8; 16],
}

impl Browser {
    fn new() -> Self {
        Self {
            key: leekha::push::webpush::random_key(),
            auth: rand::random(),
        }
    }

    fn subscription(&self, endpoint: &str) -> Value {
        json!({
            "platform": "webpush",
            "subscription": {
                "endpoint": endpoint,
                "keys": {
                    "p256dh": B64.encode(self.key.public_key().to_sec1_bytes()),
                    "auth": B64.encode(self.auth),
                },
            },
        })
    }

    /// Decrypts an `aes128gcm` body as the browser does (RFC 8291 §3.4, RFC 8188).
    fn decrypt(&self, body: &[u8]) -> Value {
        let salt = &body[..16];
        let idlen = body[20] as usize;
        let as_public = &body[21..21 + idlen];
        let sealed = &body[21 + idlen..];
        let shared = self
            .key
            .diffie_hellman(&p256::PublicKey::from_sec1_bytes(as_public).unwrap());
        let mut info = b"WebPush: info\0".to_vec();
        info.extend_from_slice(&self.key.public_key().to_sec1_bytes());
        info.extend_from_slice(as_public);
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(&self.auth), shared.raw_secret_bytes())
            .expand(&info, &mut ikm)
            .unwrap();
        let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let (mut cek, mut nonce) = ([0u8; 16], [0u8; 12]);
        prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .unwrap();
        prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
            .unwrap();
        let mut plain = aes_gcm::Aes128Gcm::new_from_slice(&cek)
            .unwrap()
            .decrypt(&nonce.into(), sealed)
            .expect("the payload decrypts with the subscription's key");
        assert_eq!(plain.pop(), Some(2), "one last record");
        serde_json::from_slice(&plain).unwrap()
    }
}

/// Checks the VAPID header (RFC 8292): an ES256 JWT for the endpoint's origin, signed by the
/// key it names, which is the one the server publishes.
fn verify_vapid(req: &Request, origin: &str, published: &str) {
    let header = &req.headers["authorization"];
    let (t, k) = header
        .strip_prefix("vapid t=")
        .and_then(|r| r.split_once(", k="))
        .expect("vapid t=…, k=…");
    assert_eq!(k, published);
    let (input, sig) = t.rsplit_once('.').unwrap();
    let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&B64.decode(k).unwrap()).unwrap();
    let sig = p256::ecdsa::Signature::from_slice(&B64.decode(sig).unwrap()).unwrap();
    key.verify(input.as_bytes(), &sig)
        .expect("a valid ES256 signature");
    let claims: Value =
        serde_json::from_slice(&B64.decode(input.split('.').nth(1).unwrap()).unwrap()).unwrap();
    assert_eq!(claims["aud"], origin);
    assert!(claims["exp"].as_i64().unwrap() > chrono::Utc::now().timestamp());
}

fn config_for(db: &TestDb) -> Config {
    let mut config = db.config();
    config.webhook_allow_private = true;
    config
}

/// Writes a notification as the game service does.
fn notify(state: &AppState, user: &str, kind: Kind, game: &str) {
    let mut conn = state.db.conn().unwrap();
    leekha::notifications::write(
        &mut conn,
        vec![Pending {
            user_id: user.to_owned(),
            kind,
            game_id: Some(game.to_owned()),
            data: json!({"seat": 1, "phase": "playing"}),
            silent: false,
        }],
        leekha::db::now(),
    )
    .unwrap();
}

/// Registers a device for `user` (201); the device.
async fn add_device<S, B>(app: &S, user: &Session, body: Value) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let r = send(
        app,
        bearer(post_json("/api/v1/me/devices", body), &user.access),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.json
}

/// Runs the pusher until nothing is due now.
fn drain(pusher: &Pusher) -> usize {
    let stop = AtomicBool::new(false);
    let mut total = 0;
    loop {
        let n = pusher.deliver_due(&stop).unwrap();
        if n == 0 {
            return total;
        }
        total += n;
    }
}

const GAME: &str = "1a2b3c4d-0000-4000-8000-000000000000";

#[actix_web::test]
async fn a_device_registers_once_lists_and_is_removed() {
    let db = TestDb::migrated();
    let app = common::app(common::state_for(config_for(&db))).await;
    let alice = common::register(&app, "alice").await;
    let browser = Browser::new();
    let body = browser.subscription("http://127.0.0.1:9/push/a");
    let first = send(
        &app,
        bearer(post_json("/api/v1/me/devices", body.clone()), &alice.access),
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(first.json["platform"], "webpush");
    let location = format!("/api/v1/me/devices/{}", first.json["id"].as_str().unwrap());
    assert_eq!(first.header("location"), Some(location.as_str()));
    assert!(first.json["last_success_at"].is_null() && first.json["last_error"].is_null());
    let again = send(
        &app,
        bearer(post_json("/api/v1/me/devices", body), &alice.access),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["id"], first.json["id"]);
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    assert_eq!(list.json["items"].as_array().unwrap().len(), 1);
    assert!(
        !list.text.contains("127.0.0.1"),
        "endpoints are never shown: {}",
        list.text
    );
    let id = first.json["id"].as_str().unwrap();
    let uri = format!("/api/v1/me/devices/{id}");
    let bob = common::register(&app, "bob").await;
    // `Location` is where the device is read, by its owner only.
    let read = send(
        &app,
        bearer(TestRequest::get().uri(&location), &alice.access),
    )
    .await;
    assert_eq!(read.status, 200, "{}", read.text);
    assert_eq!(read.json, first.json);
    let theirs = send(&app, bearer(TestRequest::get().uri(&uri), &bob.access)).await;
    theirs.assert_problem(404, "not_found");
    let theirs = send(&app, bearer(TestRequest::delete().uri(&uri), &bob.access)).await;
    theirs.assert_problem(404, "not_found");
    let gone = send(&app, bearer(TestRequest::delete().uri(&uri), &alice.access)).await;
    assert_eq!(gone.status, 204);
    send(&app, bearer(TestRequest::get().uri(&uri), &alice.access))
        .await
        .assert_problem(404, "not_found");
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    assert_eq!(list.json["items"], json!([]));
}

#[actix_web::test]
async fn the_eleventh_device_drops_the_oldest() {
    let db = TestDb::migrated();
    let app = common::app(common::state_for(config_for(&db))).await;
    let alice = common::register(&app, "alice").await;
    let browser = Browser::new();
    let mut ids = Vec::new();
    for i in 0..11 {
        let body = browser.subscription(&format!("http://127.0.0.1:9/push/{i}"));
        let r = send(
            &app,
            bearer(post_json("/api/v1/me/devices", body), &alice.access),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text);
        ids.push(r.json["id"].clone());
    }
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    let items: Vec<Value> = list.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].clone())
        .collect();
    assert_eq!(items.len(), 10);
    assert!(!items.contains(&ids[0]) && items.contains(&ids[10]));
}

#[actix_web::test]
async fn bad_registrations_are_refused_with_the_reason() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let alice = common::register(&app, "alice").await;
    let browser = Browser::new();
    let post = |body: Value| bearer(post_json("/api/v1/me/devices", body), &alice.access);
    // The guard is on (no test switch): loopback endpoints are refused.
    let r = send(&app, post(browser.subscription("https://127.0.0.1/push"))).await;
    r.assert_problem(400, "push_endpoint_not_allowed");
    let mut off_curve = browser.subscription("https://1.1.1.1/push");
    let key = off_curve["subscription"]["keys"]["p256dh"]
        .as_str()
        .unwrap()
        .to_owned();
    let flipped = if key.ends_with('A') { 'B' } else { 'A' };
    off_curve["subscription"]["keys"]["p256dh"] =
        format!("{}{flipped}", &key[..key.len() - 1]).into();
    send(&app, post(off_curve))
        .await
        .assert_problem(400, "validation_failed");
    let mut short_auth = browser.subscription("https://1.1.1.1/push");
    short_auth["subscription"]["keys"]["auth"] = "AAAA".into();
    send(&app, post(short_auth))
        .await
        .assert_problem(400, "validation_failed");
    let r = send(&app, post(json!({"platform": "webpush", "token": "x"}))).await;
    r.assert_problem(400, "validation_failed");
    for locale in ["---", "e", "en-", "en GB"] {
        let mut odd = browser.subscription("https://1.1.1.1/push");
        odd["locale"] = locale.into();
        send(&app, post(odd))
            .await
            .assert_problem(400, "validation_failed");
    }
    // No FCM credentials, no APNs here.
    let r = send(&app, post(json!({"platform": "fcm", "token": "abc"}))).await;
    r.assert_problem(422, "push_platform_unavailable");
    let r = send(&app, post(json!({"platform": "apns", "token": "abc"}))).await;
    r.assert_problem(422, "push_platform_unavailable");
    let config = send(&app, TestRequest::get().uri("/api/v1/push/config")).await;
    assert_eq!(config.status, 200);
    assert_eq!(config.json["fcm"], false);
    assert_eq!(config.json["apns"], false);
    let key = B64
        .decode(config.json["vapid_public_key"].as_str().unwrap())
        .unwrap();
    assert!(key.len() == 65 && key[0] == 4);
}

#[actix_web::test]
async fn settings_have_turn_based_defaults_and_check_quiet_hours() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let alice = common::register(&app, "alice").await;
    let uri = "/api/v1/me/notification-settings";
    let r = send(&app, bearer(TestRequest::get().uri(uri), &alice.access)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["push"]["your_turn"], true);
    assert_eq!(r.json["push"]["chat_message"], false);
    assert_eq!(r.json["quiet_hours"], Value::Null);
    let mut wanted = r.json.clone();
    wanted["push"]["game_started"] = false.into();
    wanted["quiet_hours"] = json!({"start": "22:00", "end": "08:00", "time_zone": "Asia/Beirut"});
    let put = |body: Value| bearer(TestRequest::put().uri(uri).set_json(body), &alice.access);
    let r = send(&app, put(wanted.clone())).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = send(&app, bearer(TestRequest::get().uri(uri), &alice.access)).await;
    assert_eq!(r.json, wanted);
    let mut bad = wanted.clone();
    bad["quiet_hours"]["time_zone"] = "Europe/Atlantis".into();
    send(&app, put(bad))
        .await
        .assert_problem(400, "validation_failed");
    let mut bad = wanted.clone();
    bad["quiet_hours"]["start"] = "25:00".into();
    send(&app, put(bad))
        .await
        .assert_problem(400, "validation_failed");
    // A PUT replaces the settings: a body without `quiet_hours` is refused, not read as null.
    let mut partial = wanted.clone();
    partial.as_object_mut().unwrap().remove("quiet_hours");
    send(&app, put(partial))
        .await
        .assert_problem(400, "validation_failed");
    let r = send(&app, bearer(TestRequest::get().uri(uri), &alice.access)).await;
    assert_eq!(r.json, wanted, "a refused PUT changes nothing");
}

#[actix_web::test]
async fn a_web_push_arrives_encrypted_and_signed_and_a_gone_subscription_is_removed() {
    let db = TestDb::migrated();
    let state = common::state_for(config_for(&db));
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    let gone = Arc::new(Mutex::new(false));
    let answer = gone.clone();
    let service = Fake::start(move |_| {
        let status = if *answer.lock().unwrap() { 410 } else { 201 };
        (status, vec![], vec![])
    });
    let browser = Browser::new();
    let endpoint = format!("{}/push/alice", service.url);
    let mut sub = browser.subscription(&endpoint);
    sub["locale"] = "ar".into();
    let r = send(
        &app,
        bearer(post_json("/api/v1/me/devices", sub), &alice.access),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let published = send(&app, TestRequest::get().uri("/api/v1/push/config"))
        .await
        .json["vapid_public_key"]
        .as_str()
        .unwrap()
        .to_owned();

    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain(&pusher), 1);
    let got = service.requests();
    assert_eq!(got.len(), 1);
    let req = &got[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/push/alice")
    );
    assert_eq!(req.headers["content-encoding"], "aes128gcm");
    assert_eq!(req.headers["urgency"], "high");
    assert_eq!(req.headers["topic"].len(), 32);
    assert_eq!(req.headers["ttl"], "21600");
    verify_vapid(req, &service.url, &published);
    let payload = browser.decrypt(&req.body);
    assert_eq!(payload["type"], "your_turn");
    assert_eq!(payload["game_id"], GAME);
    assert_eq!(payload["seq"], 1);
    assert_eq!(payload["title"], "دورك في اللعبة 1a2b3c4d");
    assert_eq!(payload["silent"], false);
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    assert!(
        list.json["items"][0]["last_success_at"].is_string(),
        "{}",
        list.text
    );
    let metrics = send(&app, TestRequest::get().uri("/metrics")).await.text;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("leekha_push_deliveries_total{")
                && l.contains(r#"provider="webpush""#)
                && l.contains(r#"outcome="delivered""#)
                && l.ends_with(" 1")),
        "{metrics}"
    );

    *gone.lock().unwrap() = true;
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    assert_eq!(drain(&pusher), 1);
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    assert_eq!(
        list.json["items"],
        json!([]),
        "a 410 removes the subscription"
    );
}

#[actix_web::test]
async fn a_failed_web_push_reports_its_status_but_not_what_a_private_endpoint_said() {
    let db = TestDb::migrated();
    // The fake listens on loopback, so private addresses are allowed: the case where an
    // endpoint's answer could be an internal service's.
    let state = common::state_for(config_for(&db));
    assert!(state.config.webhook_allow_private);
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    let service = Fake::start(|_| (500, vec![], b"SECRET-INTERNAL-DATA".to_vec()));
    let browser = Browser::new();
    let sub = browser.subscription(&format!("{}/push/alice", service.url));
    let r = send(
        &app,
        bearer(post_json("/api/v1/me/devices", sub), &alice.access),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain(&pusher), 1);
    assert_eq!(service.requests().len(), 1);
    let list = devices_of(&app, &alice.access).await;
    assert_eq!(
        list["items"][0]["last_error"], "webpush answered 500",
        "{list}"
    );
}

#[actix_web::test]
async fn disabled_kinds_are_not_pushed_and_quiet_hours_push_silently() {
    let db = TestDb::migrated();
    let state = common::state_for(config_for(&db));
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    let service = Fake::start(|_| (201, vec![], vec![]));
    let browser = Browser::new();
    let sub = browser.subscription(&format!("{}/push/alice", service.url));
    send(
        &app,
        bearer(post_json("/api/v1/me/devices", sub), &alice.access),
    )
    .await;
    let uri = "/api/v1/me/notification-settings";
    let mut settings = send(&app, bearer(TestRequest::get().uri(uri), &alice.access))
        .await
        .json;
    settings["push"]["game_started"] = false.into();
    // Quiet all day but one minute from now: the push is silent whenever the test runs.
    let now = chrono::Utc::now();
    let fmt = |t: chrono::DateTime<chrono::Utc>| t.format("%H:%M").to_string();
    settings["quiet_hours"] = json!({
        "start": fmt(now + chrono::Duration::minutes(2)),
        "end": fmt(now + chrono::Duration::minutes(1)),
        "time_zone": "UTC",
    });
    let r = send(
        &app,
        bearer(
            TestRequest::put().uri(uri).set_json(&settings),
            &alice.access,
        ),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    notify(&state, &alice.id, Kind::GameStarted, GAME);
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain(&pusher), 1, "game_started is off");
    let got = service.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].headers["urgency"], "low");
    let payload = browser.decrypt(&got[0].body);
    assert_eq!(payload["type"], "your_turn");
    assert_eq!(payload["seq"], 2, "the feed still has both");
    assert_eq!(payload["silent"], true);
}

#[actix_web::test]
async fn a_withdrawn_invitation_made_again_reaches_the_feed_and_is_pushed_silently() {
    let db = TestDb::migrated();
    let state = common::state_for(config_for(&db));
    let app = common::app(state.clone()).await;
    let host = common::register(&app, "host_p").await;
    let dan = common::register(&app, "dan_p").await;
    let service = Fake::start(|_| (201, vec![], vec![]));
    let browser = Browser::new();
    let sub = browser.subscription(&format!("{}/push/dan", service.url));
    add_device(&app, &dan, sub).await;
    let created = common::play::post(
        &app,
        "/api/v1/games",
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "dan_p"},
                         {"kind": "open"}, {"kind": "open"}]}),
        &host.access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let seat = format!(
        "/api/v1/games/{}/seats/1",
        created.json["id"].as_str().unwrap()
    );
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain(&pusher), 1);
    for body in [
        json!({"kind": "open"}),
        json!({"kind": "invite", "username": "dan_p"}),
    ] {
        let changed = common::play::put_json(&app, &seat, body, &host.access).await;
        assert_eq!(changed.status, 200, "{}", changed.text);
    }
    assert_eq!(drain(&pusher), 1);
    let got = service.requests();
    let silent: Vec<(Value, Value)> = got
        .iter()
        .map(|r| browser.decrypt(&r.body))
        .map(|p| (p["type"].clone(), p["silent"].clone()))
        .collect();
    assert_eq!(
        silent,
        [
            (json!("invited"), json!(false)),
            (json!("invited"), json!(true))
        ],
        "the phone rings once per game"
    );
    let feed = common::play::get(&app, "/api/v1/me/notifications", &dan.access).await;
    assert_eq!(
        common::play::of_kind(&feed.json, "invited").len(),
        2,
        "the feed, and the screens that follow it, hear of both: {}",
        feed.text
    );
}

#[actix_web::test]
async fn one_device_or_first_settings_sent_from_several_requests_at_once_is_one_success() {
    let db = TestDb::migrated();
    let app = common::app(common::state_for(config_for(&db))).await;
    let browser = Browser::new();
    // PostgreSQL lets the requests of one round run side by side: without the user's lock
    // they inserted the same row twice, and the loser answered 409 (most rounds of five).
    for round in 0..5 {
        let user = common::register(&app, &format!("racer_{round}")).await;
        let sub = browser.subscription(&format!("http://127.0.0.1:9/race/{round}"));
        let registrations = (0..8).map(|_| {
            send(
                &app,
                bearer(post_json("/api/v1/me/devices", sub.clone()), &user.access),
            )
        });
        let uri = "/api/v1/me/notification-settings";
        let mut settings = send(&app, bearer(TestRequest::get().uri(uri), &user.access))
            .await
            .json;
        settings["push"]["your_turn"] = false.into();
        let saves = (0..8).map(|_| {
            send(
                &app,
                bearer(
                    TestRequest::put().uri(uri).set_json(&settings),
                    &user.access,
                ),
            )
        });
        let (registered, saved) = futures_util::future::join(
            futures_util::future::join_all(registrations),
            futures_util::future::join_all(saves),
        )
        .await;
        let mut statuses: Vec<u16> = registered.iter().map(|r| r.status.as_u16()).collect();
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [200, 200, 200, 200, 200, 200, 200, 201],
            "round {round}"
        );
        assert!(
            registered
                .iter()
                .all(|r| r.json["id"] == registered[0].json["id"]),
            "one device"
        );
        for r in &saved {
            assert_eq!(r.status, 200, "round {round}: {}", r.text);
        }
    }
}

#[actix_web::test]
async fn one_phone_registered_by_two_accounts_at_once_ends_with_one_of_them() {
    let db = TestDb::migrated();
    let app = common::app(common::state_for(config_for(&db))).await;
    let browser = Browser::new();
    let users = [
        common::register(&app, "handed_a").await,
        common::register(&app, "handed_b").await,
    ];
    // PostgreSQL runs the requests side by side: without the token's lock, two accounts
    // inserted the same token (409 to the loser), or one moved the device while the other
    // refreshed it (404 "device").
    for round in 0..5 {
        let sub = browser.subscription(&format!("http://127.0.0.1:9/handed/{round}"));
        let registrations = (0..8).map(|i| {
            send(
                &app,
                bearer(
                    post_json("/api/v1/me/devices", sub.clone()),
                    &users[i % 2].access,
                ),
            )
        });
        let registered = futures_util::future::join_all(registrations).await;
        for r in &registered {
            assert!(
                r.status == 200 || r.status == 201,
                "round {round}: {} {}",
                r.status,
                r.text
            );
        }
        // The phone is one device, of one account.
        let mut holders = 0;
        for user in &users {
            let list = send(
                &app,
                bearer(TestRequest::get().uri("/api/v1/me/devices"), &user.access),
            )
            .await;
            holders += list.json["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| registered.iter().any(|r| r.json["id"] == d["id"]))
                .count();
        }
        assert!(
            holders <= 1,
            "round {round}: {holders} devices hold the phone"
        );
    }
}

#[actix_web::test]
async fn two_instances_deliver_each_push_once_and_in_order() {
    let db = TestDb::migrated();
    let a = common::state_for(config_for(&db));
    let b = common::state_for(config_for(&db));
    let app = common::app(a.clone()).await;
    let service = Fake::start(|_| (201, vec![], vec![]));
    let mut browsers = Vec::new();
    let mut users = Vec::new();
    for name in ["pl1", "pl2", "pl3", "pl4"] {
        let user = common::register(&app, name).await;
        let browser = Browser::new();
        let sub = browser.subscription(&format!("{}/push/{name}", service.url));
        let r = send(
            &app,
            bearer(post_json("/api/v1/me/devices", sub), &user.access),
        )
        .await;
        assert_eq!(r.status, 201);
        browsers.push(browser);
        users.push(user);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|state| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let pusher = Pusher::new(state).unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if pusher.deliver_due(&stop).unwrap() == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
            })
        })
        .collect();
    for _ in 0..10 {
        for user in &users {
            notify(&a, &user.id, Kind::YourTurn, GAME);
        }
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while service.requests().len() < 40 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let got = service.requests();
    assert_eq!(got.len(), 40, "each push once");
    for (i, name) in ["pl1", "pl2", "pl3", "pl4"].iter().enumerate() {
        let seqs: Vec<i64> = got
            .iter()
            .filter(|r| r.path == format!("/push/{name}"))
            .map(|r| browsers[i].decrypt(&r.body)["seq"].as_i64().unwrap())
            .collect();
        assert_eq!(
            seqs,
            (1..=10).collect::<Vec<_>>(),
            "{name}: in order, no duplicates"
        );
    }
}

/// A service-account key file for the FCM fake, with `token_uri` on the fake.
fn fcm_credentials(fake_url: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    let creds = json!({
        "type": "service_account",
        "project_id": "leekha-test",
        "client_email": "push@leekha-test.iam.gserviceaccount.com",
        "private_key": include_str!("push/fcm_test_key.pem"),
        "token_uri": format!("{fake_url}/token"),
    });
    std::fs::write(file.path(), creds.to_string()).unwrap();
    file
}

/// An FCM fake: `/token` checks the RS256 assertion with the service account's public key
/// and hands out a bearer token; `messages:send` checks it and answers as `status` says.
fn fcm_fake(status: Arc<Mutex<Vec<u16>>>) -> Fake {
    Fake::start(move |req| {
        if req.path == "/token" {
            let form: std::collections::HashMap<String, String> =
                url::form_urlencoded::parse(&req.body)
                    .into_owned()
                    .collect();
            assert_eq!(
                form["grant_type"],
                "urn:ietf:params:oauth:grant-type:jwt-bearer"
            );
            let key = jsonwebtoken::DecodingKey::from_rsa_pem(include_bytes!(
                "push/fcm_test_key.pub.pem"
            ))
            .unwrap();
            let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
            validation.set_audience(&[format!("http://{}/token", req.headers["host"])]);
            let claims = jsonwebtoken::decode::<Value>(&form["assertion"], &key, &validation)
                .expect("an RS256 assertion by the service account")
                .claims;
            assert_eq!(claims["iss"], "push@leekha-test.iam.gserviceaccount.com");
            assert_eq!(
                claims["scope"],
                "https://www.googleapis.com/auth/firebase.messaging"
            );
            let body =
                json!({"access_token": "ya29.fake", "expires_in": 3599, "token_type": "Bearer"});
            return (200, vec![], body.to_string().into_bytes());
        }
        assert_eq!(req.path, "/v1/projects/leekha-test/messages:send");
        if req.headers.get("authorization").map(String::as_str) != Some("Bearer ya29.fake") {
            return (401, vec![], b"{}".to_vec());
        }
        let next = {
            let mut s = status.lock().unwrap();
            if s.len() > 1 { s.remove(0) } else { s[0] }
        };
        match next {
            404 => (404, vec![], json!({"error": {"code": 404, "status": "NOT_FOUND", "details": [{"errorCode": "UNREGISTERED"}]}}).to_string().into_bytes()),
            // A 404 that is not about the token (a wrong project, say).
            4040 => (404, vec![], json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "Requested entity was not found."}}).to_string().into_bytes()),
            429 => (429, vec![("retry-after".into(), "1".into())], b"{}".to_vec()),
            s => (s, vec![], json!({"name": "projects/leekha-test/messages/1"}).to_string().into_bytes()),
        }
    })
}

#[actix_web::test]
async fn fcm_gets_an_oauth_token_once_retries_429_after_retry_after_and_drops_unregistered() {
    let db = TestDb::migrated();
    let answers = Arc::new(Mutex::new(vec![429, 200]));
    let service = fcm_fake(answers.clone());
    let creds = fcm_credentials(&service.url);
    let mut config = config_for(&db);
    config.fcm_url = service.url.clone();
    config.fcm_credentials_file = Some(creds.path().to_owned());
    let state = common::state_for(config);
    let app = common::app(state.clone()).await;
    let config = send(&app, TestRequest::get().uri("/api/v1/push/config")).await;
    assert_eq!(config.json["fcm"], true);
    let alice = common::register(&app, "alice").await;
    let token = "fcm-token-of-alice:APA91b";
    let body = json!({"platform": "fcm", "token": token});
    let r = send(
        &app,
        bearer(post_json("/api/v1/me/devices", body), &alice.access),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);

    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain(&pusher), 1, "429: not yet due again");
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    let error = list.json["items"][0]["last_error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(error.contains("fcm answered 429"), "{}", list.text);
    assert!(!list.text.contains(token), "tokens are never shown");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(drain(&pusher), 1);
    let got = service.requests();
    let paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/token",
            "/v1/projects/leekha-test/messages:send",
            "/v1/projects/leekha-test/messages:send"
        ],
        "the token is cached"
    );
    let gap = got[2].at - got[1].at;
    assert!(
        gap >= std::time::Duration::from_secs(1),
        "Retry-After honoured: {gap:?}"
    );
    let message: Value = serde_json::from_slice(&got[2].body).unwrap();
    let m = &message["message"];
    assert_eq!(m["token"], token);
    assert_eq!(m["notification"]["title"], "Your turn in game 1a2b3c4d");
    assert_eq!(m["data"]["kind"], "your_turn");
    assert_eq!(m["data"]["game_id"], GAME);
    assert_eq!(m["data"]["seat"], "1");
    assert_eq!(m["android"]["collapse_key"], format!("your_turn:{GAME}"));
    // Kept for an offline phone as long as the push is worth trying, as on other services:
    // 6 h from the notification, so a retry asks for what is left of them.
    let ttl = |r: &fake::Request| -> u64 {
        let message: Value = serde_json::from_slice(&r.body).unwrap();
        let ttl = message["message"]["android"]["ttl"]
            .as_str()
            .unwrap()
            .to_owned();
        ttl.trim_end_matches('s').parse().unwrap()
    };
    assert!(ttl(&got[1]) >= 21_599, "{}", ttl(&got[1]));
    assert!(
        ttl(&got[2]) < ttl(&got[1]),
        "{} then {}",
        ttl(&got[1]),
        ttl(&got[2])
    );

    // A 404 that does not say UNREGISTERED fails the push but keeps the device.
    *answers.lock().unwrap() = vec![4040];
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    assert_eq!(drain(&pusher), 1);
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    assert_eq!(
        list.json["items"].as_array().unwrap().len(),
        1,
        "{}",
        list.text
    );

    *answers.lock().unwrap() = vec![404];
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    assert_eq!(drain(&pusher), 1);
    let list = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), &alice.access),
    )
    .await;
    assert_eq!(
        list.json["items"],
        json!([]),
        "UNREGISTERED removes the device"
    );
}

#[actix_web::test]
async fn four_phones_get_every_turn_in_order_once_from_two_instances() {
    let db = TestDb::migrated();
    let a = common::state_for(config_for(&db));
    let b = common::state_for(config_for(&db));
    let app = common::app(a.clone()).await;
    let service = Fake::start(|_| (201, vec![], vec![]));
    let players = common::play::four(&app, "phone").await;
    let mut browsers = Vec::new();
    for p in &players {
        let browser = Browser::new();
        let sub = browser.subscription(&format!("{}/push/{}", service.url, p.id));
        let r = send(
            &app,
            bearer(post_json("/api/v1/me/devices", sub), &p.access),
        )
        .await;
        assert_eq!(r.status, 201, "{}", r.text);
        browsers.push(browser);
    }
    // Two instances' workers on one database, at the default interval.
    let workers = [
        leekha::push::worker(a.clone()).unwrap(),
        leekha::push::worker(b.clone()).unwrap(),
    ];
    let game = common::play::game_of(&app, &players, json!({"rules": {"target_score": 1}})).await;
    let uri = format!("/api/v1/games/{game}");
    // Players as fast as the test can go by default (a burst: pushes queue per device);
    // LEEKHA_TEST_PUSH_PACE_MS spaces the actions to measure the delay of a calmer game.
    let pace = std::env::var("LEEKHA_TEST_PUSH_PACE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(std::time::Duration::from_millis);
    let mut actions = 0;
    'play: for _ in 0..1000 {
        for p in &players {
            let view = common::play::get(&app, &uri, &p.access).await;
            if view.json["status"] != "active" {
                break 'play;
            }
            if let Some(action) = common::play::legal_action(&view.json) {
                let acted =
                    common::play::post(&app, &format!("{uri}/actions"), action, &p.access).await;
                assert_eq!(acted.status, 200, "{}", acted.text);
                actions += 1;
                if let Some(pace) = pace {
                    std::thread::sleep(pace);
                }
            }
        }
    }
    assert!(actions > 13, "a round was played: {actions} actions");
    // What each player's feed says they should have heard.
    let mut expected = Vec::new();
    for p in &players {
        let feed =
            common::play::get_all(&app, "/api/v1/me/notifications", "notifications", &p.access)
                .await;
        let turns: Vec<i64> = feed.json["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["type"] == "your_turn")
            .map(|n| n["seq"].as_i64().unwrap())
            .collect();
        assert!(!turns.is_empty());
        expected.push(turns);
    }
    let mut total_pushes = 0;
    for p in &players {
        let feed =
            common::play::get_all(&app, "/api/v1/me/notifications", "notifications", &p.access)
                .await;
        total_pushes += feed.json["notifications"].as_array().unwrap().len();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while service.requests().len() < total_pushes && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(workers);
    let got = service.requests();
    if got.len() != total_pushes {
        use diesel::prelude::*;
        use leekha::db::schema::push_deliveries as d;
        let mut conn = a.db.conn().unwrap();
        let rows: Vec<(
            String,
            i64,
            i32,
            chrono::NaiveDateTime,
            Option<chrono::NaiveDateTime>,
            chrono::NaiveDateTime,
        )> = d::table
            .select((
                d::device_id,
                d::seq,
                d::attempts,
                d::next_attempt_at,
                d::delivered_at,
                d::created_at,
            ))
            .order((d::device_id, d::seq))
            .load(&mut conn)
            .unwrap();
        eprintln!("pending pushes at {:?}:", leekha::db::now());
        for r in rows {
            eprintln!("  {r:?}");
        }
    }
    assert_eq!(got.len(), total_pushes, "every notification pushed once");
    let mut delays = Vec::new();
    for (i, p) in players.iter().enumerate() {
        let mut turns = Vec::new();
        for r in got.iter().filter(|r| r.path == format!("/push/{}", p.id)) {
            let payload = browsers[i].decrypt(&r.body);
            if payload["type"] == "your_turn" {
                turns.push(payload["seq"].as_i64().unwrap());
                let created: chrono::DateTime<chrono::Utc> =
                    serde_json::from_value(payload["created_at"].clone()).unwrap();
                delays.push((r.wall - created).num_microseconds().unwrap() as f64 / 1000.0);
            }
        }
        assert_eq!(
            turns, expected[i],
            "{}: every turn, in order, once",
            p.username
        );
    }
    delays.sort_by(f64::total_cmp);
    let pct = |q: f64| delays[((delays.len() as f64 - 1.0) * q).round() as usize];
    eprintln!(
        "push delay notification→receiver over {} your_turn pushes: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        delays.len(),
        pct(0.5),
        pct(0.99),
        delays[delays.len() - 1]
    );
    assert!(pct(0.99) < 5000.0, "p99 {:.1} ms", pct(0.99));
}

const APNS_KEY_ID: &str = "KEYID12345";
const APNS_TEAM_ID: &str = "TEAMID1234";
const APNS_TOPIC: &str = "com.example.leekha";

/// A configuration that sends APNs pushes to the fake, trusting its certificate.
fn apns_config(db: &TestDb, fake: &ApnsFake) -> Config {
    let mut config = config_for(db);
    config.apns_url = fake.url.clone();
    config.apns_key_file = Some(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/push/apns_test_key.p8"),
    );
    config.apns_key_id = Some(APNS_KEY_ID.into());
    config.apns_team_id = Some(APNS_TEAM_ID.into());
    config.apns_topic = Some(APNS_TOPIC.into());
    config.apns_ca_file = Some(apns_fake::ca_file());
    config
}

/// Checks the provider token as APNs does: an ES256 JWT signed by the team's key, naming the
/// key and the team, issued within the hour. Returns it with its `iat`.
fn verify_provider_token(req: &Request) -> (String, i64) {
    let token = req.headers["authorization"]
        .strip_prefix("bearer ")
        .expect("authorization: bearer <JWT>")
        .to_owned();
    let key = jsonwebtoken::DecodingKey::from_ec_pem(include_bytes!("push/apns_test_key.pub.pem"))
        .unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    let decoded = jsonwebtoken::decode::<Value>(&token, &key, &validation)
        .expect("an ES256 token signed with the .p8 key");
    assert_eq!(decoded.header.kid.as_deref(), Some(APNS_KEY_ID));
    assert_eq!(decoded.claims["iss"], APNS_TEAM_ID);
    let iat = decoded.claims["iat"].as_i64().unwrap();
    let now = chrono::Utc::now().timestamp();
    assert!(
        (now - 3600..=now + 5).contains(&iat),
        "iat {iat}, now {now}"
    );
    (token, iat)
}

/// Runs the pusher on a thread of its own, as the worker does: reqwest's blocking client
/// refuses to run inside the test's async runtime.
fn drain_apart(pusher: &Pusher) -> usize {
    std::thread::scope(|s| s.spawn(|| drain(pusher)).join().unwrap())
}

fn apns_answer(status: u16, reason: &str) -> fake::Answer {
    let body = json!({"reason": reason}).to_string().into_bytes();
    (status, vec![], body)
}

async fn devices_of<S, B>(app: &S, access: &str) -> Value
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    send(
        app,
        bearer(TestRequest::get().uri("/api/v1/me/devices"), access),
    )
    .await
    .json
}

#[actix_web::test]
async fn an_apns_push_goes_over_http2_with_a_provider_token_and_gone_devices_are_removed() {
    let db = TestDb::migrated();
    const PHONE: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
    const DEV_BUILD: &str = "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f";
    let uninstalled = Arc::new(Mutex::new(false));
    let answer = uninstalled.clone();
    let service = ApnsFake::start(move |req| {
        if req.path.ends_with(DEV_BUILD) {
            return apns_answer(400, "BadDeviceToken");
        }
        if *answer.lock().unwrap() {
            return apns_answer(410, "Unregistered");
        }
        let id = (
            "apns-id".to_owned(),
            "77B4A8C4-0000-4000-8000-000000000001".to_owned(),
        );
        (200, vec![id], vec![])
    });
    let state = common::state_for(apns_config(&db, &service));
    let app = common::app(state.clone()).await;
    let config = send(&app, TestRequest::get().uri("/api/v1/push/config")).await;
    assert_eq!(config.json["apns"], true, "{}", config.text);
    let alice = common::register(&app, "alice").await;
    let bob = common::register(&app, "bob").await;
    let mut ids = Vec::new();
    for (who, token) in [(&alice, PHONE), (&bob, DEV_BUILD)] {
        let device = add_device(&app, who, json!({"platform": "apns", "token": token})).await;
        assert_eq!(device["platform"], "apns");
        ids.push(device["id"].clone());
    }
    // A token is hex: the same device in capitals is the same device; anything else is
    // refused before it could reach APNs.
    let again = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/me/devices"), &alice.access)
            .set_json(json!({"platform": "apns", "token": PHONE.to_ascii_uppercase()})),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["id"], ids[0]);
    for bad in ["zz", "abc", ""] {
        send(
            &app,
            bearer(TestRequest::post().uri("/api/v1/me/devices"), &alice.access)
                .set_json(json!({"platform": "apns", "token": bad})),
        )
        .await
        .assert_problem(400, "validation_failed");
    }

    notify(&state, &alice.id, Kind::YourTurn, GAME);
    notify(&state, &bob.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain_apart(&pusher), 2);
    let got = service.requests();
    assert_eq!(got.len(), 2);
    let alices = got
        .iter()
        .find(|r| r.request.path == format!("/3/device/{PHONE}"))
        .expect("alice's phone got a push");
    assert_eq!(alices.version, http::Version::HTTP_2);
    assert_eq!(alices.alpn.as_deref(), Some(&b"h2"[..]));
    let req = &alices.request;
    assert_eq!(req.method, "POST");
    let (token, _) = verify_provider_token(req);
    assert_eq!(req.headers["apns-topic"], APNS_TOPIC);
    assert_eq!(req.headers["apns-push-type"], "alert");
    assert_eq!(req.headers["apns-priority"], "10");
    assert_eq!(req.headers["apns-collapse-id"], format!("your_turn:{GAME}"));
    let expiration: i64 = req.headers["apns-expiration"].parse().unwrap();
    assert!(expiration > chrono::Utc::now().timestamp());
    let payload: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        payload["aps"]["alert"]["title"],
        "Your turn in game 1a2b3c4d"
    );
    assert_eq!(payload["aps"]["alert"]["body"], "Play a card.");
    assert_eq!(payload["aps"]["sound"], "default");
    assert_eq!(payload["aps"]["thread-id"], GAME);
    assert_eq!(payload["kind"], "your_turn");
    assert_eq!(payload["game_id"], GAME);
    assert_eq!(payload["seat"], "1");
    let list = devices_of(&app, &alice.access).await;
    assert!(list["items"][0]["last_success_at"].is_string(), "{list}");
    assert!(!list.to_string().contains(PHONE), "tokens are never shown");
    assert_eq!(
        devices_of(&app, &bob.access).await["items"],
        json!([]),
        "BadDeviceToken removes the device"
    );

    *uninstalled.lock().unwrap() = true;
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    assert_eq!(drain_apart(&pusher), 1);
    let got = service.requests();
    assert_eq!(got.len(), 3);
    assert_eq!(
        verify_provider_token(&got[2].request).0,
        token,
        "the token is reused"
    );
    assert!(
        got.iter().all(|r| r.connection == 0),
        "one connection carries every push: {:?}",
        got.iter().map(|r| r.connection).collect::<Vec<_>>()
    );
    assert_eq!(
        devices_of(&app, &alice.access).await["items"],
        json!([]),
        "410 Unregistered removes the device"
    );
    let metrics = send(&app, TestRequest::get().uri("/metrics")).await.text;
    for outcome in ["delivered", "gone"] {
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with("leekha_push_deliveries_total{")
                    && l.contains(r#"provider="apns""#)
                    && l.contains(&format!(r#"outcome="{outcome}""#))),
            "{outcome}: {metrics}"
        );
    }
}

#[actix_web::test]
async fn apns_429_waits_for_retry_after_and_an_expired_provider_token_is_renewed() {
    let db = TestDb::migrated();
    const PHONE: &str = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";
    // The first answer is 429; later, tokens issued at or before `expired_until` are refused.
    let busy = Arc::new(Mutex::new(true));
    let expired_until = Arc::new(Mutex::new(i64::MIN));
    let (b, e) = (busy.clone(), expired_until.clone());
    let service = ApnsFake::start(move |req| {
        let (_, iat) = verify_provider_token(req);
        if std::mem::replace(&mut *b.lock().unwrap(), false) {
            return (
                429,
                vec![("retry-after".into(), "1".into())],
                br#"{"reason":"TooManyRequests"}"#.to_vec(),
            );
        }
        if iat <= *e.lock().unwrap() {
            return apns_answer(403, "ExpiredProviderToken");
        }
        (200, vec![], vec![])
    });
    let state = common::state_for(apns_config(&db, &service));
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    add_device(
        &app,
        &alice,
        json!({"platform": "apns", "token": PHONE, "locale": "ar"}),
    )
    .await;

    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain_apart(&pusher), 1, "429: not yet due again");
    let list = devices_of(&app, &alice.access).await;
    let error = list["items"][0]["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("apns answered 429"), "{list}");
    assert!(!list.to_string().contains(PHONE), "tokens are never shown");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(drain_apart(&pusher), 1);
    let got = service.requests();
    assert_eq!(got.len(), 2);
    let gap = got[1].request.at - got[0].request.at;
    assert!(
        gap >= std::time::Duration::from_secs(1),
        "Retry-After honoured: {gap:?}"
    );
    let (first, iat) = verify_provider_token(&got[0].request);
    assert_eq!(
        verify_provider_token(&got[1].request).0,
        first,
        "the token is cached"
    );
    let payload: Value = serde_json::from_slice(&got[1].request.body).unwrap();
    assert_eq!(payload["aps"]["alert"]["title"], "دورك في اللعبة 1a2b3c4d");
    let list = devices_of(&app, &alice.access).await;
    assert!(list["items"][0]["last_success_at"].is_string(), "{list}");

    // APNs now says the token expired (as it does past its hour): a fresh one is signed and
    // the same push goes out in the same attempt.
    *expired_until.lock().unwrap() = iat;
    notify(&state, &alice.id, Kind::GameFinished, GAME);
    assert_eq!(drain_apart(&pusher), 1);
    let got = service.requests();
    assert_eq!(got.len(), 4);
    assert_eq!(verify_provider_token(&got[2].request).0, first);
    let (fresh, fresh_iat) = verify_provider_token(&got[3].request);
    assert!(fresh != first && fresh_iat > iat, "a fresh provider token");
    assert_eq!(
        got[3].request.body, got[2].request.body,
        "the same push again"
    );
    assert_eq!(
        got[3].request.headers["apns-collapse-id"],
        format!("game_finished:{GAME}")
    );
    let list = devices_of(&app, &alice.access).await;
    assert!(list["items"][0]["last_error"].is_null(), "{list}");
}

#[actix_web::test]
async fn quiet_hours_send_an_apns_background_push() {
    let db = TestDb::migrated();
    let service = ApnsFake::start(|_| (200, vec![], vec![]));
    let state = common::state_for(apns_config(&db, &service));
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    add_device(
        &app,
        &alice,
        json!({"platform": "apns", "token": "feedface"}),
    )
    .await;
    let uri = "/api/v1/me/notification-settings";
    let mut settings = send(&app, bearer(TestRequest::get().uri(uri), &alice.access))
        .await
        .json;
    // Quiet all day but one minute from now: the push is silent whenever the test runs.
    let now = chrono::Utc::now();
    let fmt = |t: chrono::DateTime<chrono::Utc>| t.format("%H:%M").to_string();
    settings["quiet_hours"] = json!({
        "start": fmt(now + chrono::Duration::minutes(2)),
        "end": fmt(now + chrono::Duration::minutes(1)),
        "time_zone": "UTC",
    });
    let put = TestRequest::put().uri(uri).set_json(&settings);
    assert_eq!(send(&app, bearer(put, &alice.access)).await.status, 200);
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain_apart(&pusher), 1);
    let got = service.requests();
    let req = &got[0].request;
    assert_eq!(req.headers["apns-push-type"], "background");
    assert_eq!(req.headers["apns-priority"], "5");
    let payload: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        payload["aps"],
        json!({"content-available": 1, "thread-id": GAME})
    );
    assert_eq!(payload["kind"], "your_turn");
}

#[actix_web::test]
async fn an_incomplete_or_wrong_apns_configuration_stops_the_worker_naming_the_variable() {
    let db = TestDb::migrated();
    let service = ApnsFake::start(|_| (200, vec![], vec![]));
    let mut config = apns_config(&db, &service);
    config.apns_team_id = None;
    let state = common::state_for(config.clone());
    let err = Pusher::new(state).unwrap_err();
    assert!(err.starts_with("LEEKHA_APNS_TEAM_ID is not set"), "{err}");
    // Without it APNs is not offered either.
    let app = common::app(common::state_for(config)).await;
    let r = send(&app, TestRequest::get().uri("/api/v1/push/config")).await;
    assert_eq!(r.json["apns"], false);

    let mut config = apns_config(&db, &service);
    config.apns_key_file = Some(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/push/fcm_test_key.pem"),
    );
    let err = Pusher::new(common::state_for(config)).unwrap_err();
    assert!(
        err.starts_with("LEEKHA_APNS_KEY_FILE") && err.contains("P-256"),
        "{err}"
    );
    let mut config = apns_config(&db, &service);
    config.apns_ca_file = Some("/nonexistent/ca.pem".into());
    let err = Pusher::new(common::state_for(config)).unwrap_err();
    assert!(err.starts_with("LEEKHA_APNS_CA_FILE"), "{err}");
}

#[actix_web::test]
async fn an_untrusted_apns_certificate_is_retried_and_reported_without_the_token() {
    let db = TestDb::migrated();
    const PHONE: &str = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef";
    let service = ApnsFake::start(|_| (200, vec![], vec![]));
    let mut config = apns_config(&db, &service);
    // The fake's certificate is issued by a root only LEEKHA_APNS_CA_FILE names.
    config.apns_ca_file = None;
    let state = common::state_for(config);
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    add_device(&app, &alice, json!({"platform": "apns", "token": PHONE})).await;
    notify(&state, &alice.id, Kind::YourTurn, GAME);
    let pusher = Pusher::new(state.clone()).unwrap();
    assert_eq!(drain_apart(&pusher), 1, "retried later");
    assert!(service.requests().is_empty());
    let list = devices_of(&app, &alice.access).await;
    let error = list["items"][0]["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("certificate"), "{list}");
    assert!(!error.contains(PHONE), "{error}");
    let metrics = send(&app, TestRequest::get().uri("/metrics")).await.text;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("leekha_push_deliveries_total{")
                && l.contains(r#"provider="apns""#)
                && l.contains(r#"outcome="retry""#)),
        "{metrics}"
    );
}

#[actix_web::test]
async fn a_burst_of_apns_pushes_shares_one_connection_in_feed_order() {
    let db = TestDb::migrated();
    let service = ApnsFake::start(|_| (200, vec![], vec![]));
    let state = common::state_for(apns_config(&db, &service));
    let app = common::app(state.clone()).await;
    let mut users = Vec::new();
    for (i, name) in ["pl1", "pl2", "pl3", "pl4"].into_iter().enumerate() {
        let user = common::register(&app, name).await;
        add_device(
            &app,
            &user,
            json!({"platform": "apns", "token": format!("{i:02x}00ff")}),
        )
        .await;
        users.push(user);
    }
    for _ in 0..25 {
        for user in &users {
            notify(&state, &user.id, Kind::YourTurn, GAME);
        }
    }
    let pusher = Pusher::new(state.clone()).unwrap();
    let started = std::time::Instant::now();
    assert_eq!(drain_apart(&pusher), 100);
    let took = started.elapsed();
    eprintln!(
        "100 APNs pushes to the local fake in {:.0} ms ({:.2} ms each)",
        took.as_secs_f64() * 1000.0,
        took.as_secs_f64() * 10.0
    );
    let got = service.requests();
    assert_eq!(got.len(), 100);
    assert!(got.iter().all(|r| r.connection == 0), "one connection");
    for (i, name) in ["pl1", "pl2", "pl3", "pl4"].into_iter().enumerate() {
        let seqs: Vec<i64> = got
            .iter()
            .filter(|r| r.request.path == format!("/3/device/{i:02x}00ff"))
            .map(|r| {
                let payload: Value = serde_json::from_slice(&r.request.body).unwrap();
                payload["seq"].as_str().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(seqs, (1..=25).collect::<Vec<_>>(), "{name}: in order, once");
    }
}

#[actix_web::test]
async fn an_endpoint_that_never_answers_holds_up_only_its_own_users_pushes() {
    let db = TestDb::migrated();
    let state = common::state_for(config_for(&db));
    let app = common::app(state.clone()).await;
    // The slow user's endpoints take longer than the sender waits (10 s); the others answer.
    let slow_asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = slow_asked.clone();
    let service = Fake::start(move |r| {
        if r.path.contains("/slow") {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_secs(12));
        }
        (201, vec![], vec![])
    });
    let slow = common::register(&app, "tarpit").await;
    let mut browsers = Vec::new();
    for i in 0..3 {
        let browser = Browser::new();
        add_device(
            &app,
            &slow,
            browser.subscription(&format!("{}/push/slow{i}", service.url)),
        )
        .await;
        browsers.push(browser);
    }
    let quick: Vec<Session> = [
        common::register(&app, "quick1").await,
        common::register(&app, "quick2").await,
    ]
    .into();
    for (i, user) in quick.iter().enumerate() {
        let browser = Browser::new();
        add_device(
            &app,
            user,
            browser.subscription(&format!("{}/push/quick{i}", service.url)),
        )
        .await;
        browsers.push(browser);
    }
    let worker = leekha::push::worker(state.clone()).unwrap();
    notify(&state, &slow.id, Kind::YourTurn, GAME);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let asked = std::time::Instant::now();
    for user in &quick {
        notify(&state, &user.id, Kind::YourTurn, GAME);
    }
    let paths = || -> Vec<String> { service.requests().iter().map(|r| r.path.clone()).collect() };
    let quick_in = |p: &Vec<String>| p.iter().filter(|p| p.contains("/quick")).count();
    while quick_in(&paths()) < 2 && asked.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let took = asked.elapsed();
    let seen = paths();
    let slow_in_flight = slow_asked.load(std::sync::atomic::Ordering::SeqCst);
    worker.stop();
    assert_eq!(quick_in(&seen), 2, "{seen:?}");
    // Sent one after another, they waited out the slow endpoints' 10 s (three of them);
    // on lanes, they go at once. A generous bound, far under the sender's timeout.
    assert!(
        took < std::time::Duration::from_secs(5),
        "the other users' pushes took {took:?}"
    );
    // One lane at a time for the slow user: its other devices waited their turn.
    assert_eq!(slow_in_flight, 1, "the slow user's endpoints asked at once");
}

#[actix_web::test]
async fn the_push_worker_delivers_to_apns_from_its_thread() {
    let db = TestDb::migrated();
    let service = ApnsFake::start(|_| (200, vec![], vec![]));
    let state = common::state_for(apns_config(&db, &service));
    let app = common::app(state.clone()).await;
    let alice = common::register(&app, "alice").await;
    add_device(
        &app,
        &alice,
        json!({"platform": "apns", "token": "0123456789abcdef"}),
    )
    .await;
    // Started from async code, as the server does; the client is built on the worker's thread.
    let worker = leekha::push::worker(state.clone()).unwrap();
    notify(&state, &alice.id, Kind::Invited, GAME);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while service.requests().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    worker.stop();
    let got = service.requests();
    assert_eq!(got.len(), 1);
    let payload: Value = serde_json::from_slice(&got[0].request.body).unwrap();
    assert_eq!(
        payload["aps"]["alert"]["title"],
        "You are invited to game 1a2b3c4d"
    );
}

#[actix_web::test]
async fn a_turn_is_not_pushed_to_a_user_who_has_the_game_open_unless_configured() {
    for skip in [true, false] {
        let db = TestDb::migrated();
        let mut config = config_for(&db);
        config.push_skip_watching = skip;
        let state = common::state_for(config);
        let app = common::app(state.clone()).await;
        let alice = common::register(&app, "alice").await;
        let service = Fake::start(|_| (201, vec![], vec![]));
        let browser = Browser::new();
        let sub = browser.subscription(&format!("{}/push/alice", service.url));
        send(
            &app,
            bearer(post_json("/api/v1/me/devices", sub), &alice.access),
        )
        .await;
        // Alice follows the game live (what an open stream holds).
        let watch = state
            .presence
            .enter(&alice.id, GAME, Follower::Stream)
            .unwrap();
        notify(&state, &alice.id, Kind::YourTurn, GAME);
        notify(&state, &alice.id, Kind::GameFinished, GAME);
        notify(&state, &alice.id, Kind::YourTurn, "another-game");
        let pusher = Pusher::new(state.clone()).unwrap();
        drain(&pusher);
        let kinds: Vec<(String, i64)> = service
            .requests()
            .iter()
            .map(|r| {
                let p = browser.decrypt(&r.body);
                (
                    p["type"].as_str().unwrap().to_owned(),
                    p["seq"].as_i64().unwrap(),
                )
            })
            .collect();
        let expected: &[(&str, i64)] = if skip {
            // The open game shows the turn; the rest still goes out.
            &[("game_finished", 2), ("your_turn", 3)]
        } else {
            &[("your_turn", 1), ("game_finished", 2), ("your_turn", 3)]
        };
        let expected: Vec<(String, i64)> = expected
            .iter()
            .map(|(k, s)| ((*k).to_owned(), *s))
            .collect();
        assert_eq!(kinds, expected, "LEEKHA_PUSH_SKIP_WATCHING={skip}");
        drop(watch);
        if skip {
            let metrics = send(&app, TestRequest::get().uri("/metrics")).await.text;
            assert!(
                metrics.lines().any(|l| l.contains("outcome=\"skipped\"")
                    && l.starts_with("leekha_push_deliveries_total")),
                "{metrics}"
            );
        }
    }
}

/// A device removed while a notification for its owner is being written (a friend request,
/// a card played) waits for that notification's commit: the push queued for it is then
/// removed with it, instead of failing the notification's foreign key, and with it the
/// request that caused it (a 500 on PostgreSQL).
#[actix_web::test]
async fn a_device_removed_while_its_owner_is_notified_waits_for_that_commit() {
    use std::sync::mpsc;
    let db = TestDb::migrated();
    let state = common::state_for(config_for(&db));
    let app = common::app(state.clone()).await;
    let owner = common::register(&app, "dev_owner").await;
    let service = Fake::start(|_| (201, vec![], vec![]));
    let endpoint = format!("{}/push/owner", service.url);
    let device = add_device(&app, &owner, Browser::new().subscription(&endpoint)).await;
    let device_id = device["id"].as_str().unwrap().to_owned();

    // The notification's transaction, stopped between reading the devices and its commit.
    let (read, devices_read) = mpsc::channel();
    let (go_on, told) = mpsc::channel::<()>();
    let writer = {
        let state = state.clone();
        let owner = owner.id.clone();
        std::thread::spawn(move || {
            let mut conn = state.db.conn().unwrap();
            leekha::db::write_transaction(&mut conn, |conn| {
                let devices = leekha::db::push::devices_to_push(conn, &owner)?;
                read.send(devices.len()).unwrap();
                told.recv().unwrap();
                Ok::<_, leekha::error::Error>(())
            })
            .unwrap();
        })
    };
    assert_eq!(devices_read.recv().unwrap(), 1);
    let remover = {
        let state = state.clone();
        let owner = owner.id.clone();
        std::thread::spawn(move || {
            let mut conn = state.db.conn().unwrap();
            leekha::push::remove(&mut conn, &owner, &device_id).is_ok()
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert!(
        !remover.is_finished(),
        "the removal waits for the notification's commit"
    );
    go_on.send(()).unwrap();
    writer.join().unwrap();
    assert!(remover.join().unwrap(), "then it removes the device");
}

/// A phone registering again while its device is removed (a reinstall, a second tap) is
/// judged before the removal (200, then removed) or after it (a new device, 201): never
/// between, where the device it found was gone (404 `device`).
#[actix_web::test]
async fn a_device_registered_again_while_it_is_removed_is_before_or_after_it() {
    let db = TestDb::migrated();
    let state = common::state_for(config_for(&db));
    let app = common::app(state.clone()).await;
    let owner = common::register(&app, "dev_again").await;
    let service = Fake::start(|_| (201, vec![], vec![]));
    let browser = Browser::new();
    for run in 0..12 {
        let sub = browser.subscription(&format!("{}/push/again{run}", service.url));
        let device = add_device(&app, &owner, sub.clone()).await;
        let id = device["id"].as_str().unwrap().to_owned();
        let (removed, again) = futures_util::future::join(
            send(
                &app,
                bearer(
                    TestRequest::delete().uri(&format!("/api/v1/me/devices/{id}")),
                    &owner.access,
                ),
            ),
            send(
                &app,
                bearer(post_json("/api/v1/me/devices", sub), &owner.access),
            ),
        )
        .await;
        assert_eq!(removed.status, 204, "{}", removed.text);
        assert!(again.status == 200 || again.status == 201, "{}", again.text);
    }
}
