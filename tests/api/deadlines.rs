//! Turn deadlines, auto-play, notifications and webhooks.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::test::TestRequest;
use diesel::prelude::*;
use leekha::app::AppState;
use leekha::db::schema::games;
use leekha::scheduler::{self, Scheduler};
use serde_json::{Value, json};

use crate::common::{self, Session, TestDb, bearer, post_json, register, send};

fn expire(state: &AppState, id: &str, column: &str) {
    let mut conn = state.db.conn().unwrap();
    let past = leekha::db::now() - chrono::Duration::seconds(1);
    // As if the time had come: the scheduler's wake time is never after the timers.
    match column {
        "deadline" => diesel::update(games::table.find(id))
            .set((
                games::deadline.eq(Some(past)),
                games::wake_at.eq(Some(past)),
            ))
            .execute(&mut *conn),
        _ => diesel::update(games::table.find(id))
            .set((
                games::reminder_at.eq(Some(past)),
                games::wake_at.eq(Some(past)),
            ))
            .execute(&mut *conn),
    }
    .unwrap();
}

/// One pass of the scheduler, then one of the webhook loop, as an instance's two threads do.
fn tick(state: &AppState) -> scheduler::TickReport {
    let report = scheduler::tick(state).unwrap();
    leekha::webhooks::deliver_due(
        &state.clone().into(),
        &leekha::webhooks::agent(state.config.webhook_allow_private),
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    report
}

async fn feed<S, B>(app: &S, p: &Session) -> Vec<Value>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let reply = send(
        app,
        bearer(
            TestRequest::get().uri("/api/v1/me/notifications"),
            &p.access,
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json["notifications"].as_array().unwrap().clone()
}

fn kinds(feed: &[Value]) -> Vec<String> {
    feed.iter()
        .map(|n| n["type"].as_str().unwrap().to_owned())
        .collect()
}

async fn four_humans<S, B>(app: &S, timeout: u32) -> (Vec<Session>, String)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut players = Vec::new();
    for name in ["wael", "xena", "yara", "zaid"] {
        players.push(register(app, name).await);
    }
    let created = send(
        app,
        bearer(
            post_json("/api/v1/games", json!({"turn_timeout_seconds": timeout})),
            &players[0].access,
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.json["id"].as_str().unwrap().to_owned();
    for p in &players[1..] {
        assert_eq!(
            send(
                app,
                bearer(
                    post_json(&format!("/api/v1/games/{id}/join"), json!({})),
                    &p.access
                )
            )
            .await
            .status,
            200
        );
    }
    (players, id)
}

#[actix_web::test]
async fn a_game_in_which_one_player_never_acts_still_finishes() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.scheduler_interval = Duration::from_millis(100);
    let state = common::state_for(config);
    let app = common::app(state.clone()).await;
    let me = register(&app, "sleepy").await;
    let created = send(
        &app,
        bearer(
            post_json(
                "/api/v1/games",
                json!({"rules": {"target_score": 1}, "turn_timeout_seconds": 5,
                       "seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]}),
            ),
            &me.access,
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.json["id"].as_str().unwrap().to_owned();
    let scheduler = Scheduler::spawn(state.clone());
    let started = Instant::now();
    let view = loop {
        let view = send(
            &app,
            bearer(
                TestRequest::get().uri(&format!("/api/v1/games/{id}")),
                &me.access,
            ),
        )
        .await
        .json;
        if view["status"] == "finished" {
            break view;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the game stalled: {view}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    };
    scheduler.stop();
    assert_eq!(
        view["seats"][0]["bot"], "heuristic",
        "after two timeouts a bot holds the seat"
    );

    let events = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}/events")),
            &me.access,
        ),
    )
    .await
    .json;
    let events = events["events"].as_array().unwrap();
    let timed_out: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "turn_timed_out")
        .collect();
    assert_eq!(timed_out.len(), 2, "two timeouts, then the bot plays");
    let mut lags: Vec<i64> = timed_out
        .iter()
        .map(|e| {
            let at =
                chrono::DateTime::parse_from_rfc3339(e["created_at"].as_str().unwrap()).unwrap();
            let deadline =
                chrono::DateTime::parse_from_rfc3339(e["data"]["deadline"].as_str().unwrap())
                    .unwrap();
            (at - deadline).num_milliseconds()
        })
        .collect();
    lags.sort_unstable();
    eprintln!("scheduler lag (deadline to action), ms: {lags:?}");
    assert!(lags.iter().all(|&l| (0..5000).contains(&l)), "{lags:?}");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "seat_changed" && e["data"]["reason"] == "timeout")
    );
    let feed = kinds(&feed(&app, &me).await);
    for kind in [
        "game_started",
        "your_turn",
        "seat_taken_by_bot",
        "game_finished",
    ] {
        assert!(
            feed.contains(&kind.to_owned()),
            "{kind} missing from {feed:?}"
        );
    }
}

#[actix_web::test]
async fn reminders_and_your_turn_reach_the_right_feeds() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let (players, id) = four_humans(&app, 3600).await;
    for p in &players {
        let k = kinds(&feed(&app, p).await);
        assert_eq!(k, vec!["game_started", "your_turn"], "{}", p.username);
    }
    // Seat 0 passes; the reminder then goes to the three others only.
    let view = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}")),
            &players[0].access,
        ),
    )
    .await
    .json;
    let hand: leekha::rules::CardSet = view["round"]["hand"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().parse::<leekha::rules::Card>().unwrap())
        .collect();
    let rules = leekha::rules::RuleOptions::default();
    let cards: Vec<leekha::rules::Card> = hand.iter().collect();
    let n = cards.len();
    let pass = (0..n)
        .flat_map(|a| (a + 1..n).flat_map(move |b| (b + 1..n).map(move |c| (a, b, c))))
        .map(|(a, b, c)| {
            leekha::rules::CardSet::single(cards[a])
                .with(cards[b])
                .with(cards[c])
        })
        .find(|set| leekha::rules::check_pass(hand, *set, &rules).is_ok())
        .unwrap();
    let codes: Vec<String> = pass.iter().map(|c| c.to_string()).collect();
    let acted = send(
        &app,
        bearer(
            post_json(
                &format!("/api/v1/games/{id}/actions"),
                json!({"type": "pass", "cards": codes}),
            ),
            &players[0].access,
        ),
    )
    .await;
    assert_eq!(acted.status, 200, "{}", acted.text);

    expire(&state, &id, "reminder_at");
    assert_eq!(tick(&state).reminders, 1);
    assert_eq!(tick(&state).reminders, 0, "a reminder goes out once");
    assert!(!kinds(&feed(&app, &players[0]).await).contains(&"turn_reminder".to_owned()));
    for p in &players[1..] {
        let f = feed(&app, p).await;
        let reminder = f
            .iter()
            .find(|n| n["type"] == "turn_reminder")
            .unwrap_or_else(|| panic!("{f:?}"));
        assert_eq!(reminder["game_id"], json!(id));
        assert!(reminder["data"]["deadline"].is_string());
        // Still passing: the push it makes asks for three cards, not one.
        assert_eq!(reminder["data"]["phase"], "passing");
    }
    let seqs: Vec<i64> = feed(&app, &players[1])
        .await
        .iter()
        .map(|n| n["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as i64).collect::<Vec<_>>(),
        "a feed is contiguous"
    );

    // The others time out: passing ends and only the leader hears your_turn.
    expire(&state, &id, "deadline");
    assert_eq!(tick(&state).timeouts, 1);
    let view = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}")),
            &players[0].access,
        ),
    )
    .await
    .json;
    let leader = view["turn"]["seat"].as_u64().unwrap() as usize;
    for (i, p) in players.iter().enumerate() {
        let turns = kinds(&feed(&app, p).await)
            .iter()
            .filter(|k| *k == "your_turn")
            .count();
        assert_eq!(turns, if i == leader { 2 } else { 1 }, "{}", p.username);
    }

    // A long-poll on the feed returns when a notification arrives.
    let next = players[(leader + 1) % 4].clone();
    let last = feed(&app, &next).await.last().unwrap()["seq"]
        .as_i64()
        .unwrap();
    let leader_p = players[leader].clone();
    let card = view_card(&app, &id, &leader_p).await;
    let started = Instant::now();
    let poll = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/me/notifications?after={last}&wait=20")),
            &next.access,
        ),
    );
    let act = async {
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        send(
            &app,
            bearer(
                post_json(
                    &format!("/api/v1/games/{id}/actions"),
                    json!({"type": "play", "card": card}),
                ),
                &leader_p.access,
            ),
        )
        .await
    };
    let (polled, acted) = futures_util::future::join(poll, act).await;
    assert_eq!(acted.status, 200, "{}", acted.text);
    assert_eq!(polled.json["notifications"][0]["type"], "your_turn");
    assert!(started.elapsed() < Duration::from_secs(5));
}

async fn view_card<S, B>(app: &S, id: &str, p: &Session) -> String
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let view = send(
        app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}")),
            &p.access,
        ),
    )
    .await
    .json;
    view["legal_actions"]["cards"][0]
        .as_str()
        .unwrap()
        .to_owned()
}

#[actix_web::test]
async fn two_timeouts_in_a_row_hand_the_seat_to_a_bot_until_its_player_reclaims_it() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let (players, id) = four_humans(&app, 3600).await;
    expire(&state, &id, "deadline");
    tick(&state);
    let view = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}")),
            &players[0].access,
        ),
    )
    .await
    .json;
    assert_eq!(view["round"]["phase"], "playing", "every late seat passed");
    let leader = view["turn"]["seat"].as_u64().unwrap() as usize;
    expire(&state, &id, "deadline");
    tick(&state);
    let view = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}")),
            &players[leader].access,
        ),
    )
    .await
    .json;
    assert_eq!(view["seats"][leader]["bot"], "heuristic", "{view}");
    assert!(view["legal_actions"].is_null());
    assert!(kinds(&feed(&app, &players[leader]).await).contains(&"seat_taken_by_bot".to_owned()));
    // The others timed out only once: they still hold their seats.
    let others_bots = (0..4)
        .filter(|&s| s != leader && !view["seats"][s]["bot"].is_null())
        .count();
    assert_eq!(others_bots, 0);

    let url = format!("/api/v1/games/{id}/reclaim");
    // A hint has nothing to suggest, and says the way back.
    let hint = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}/hint")),
            &players[leader].access,
        ),
    )
    .await;
    hint.assert_problem(409, "nothing_to_do");
    assert!(
        hint.json["detail"].as_str().unwrap().contains(&url),
        "{}",
        hint.text
    );
    let other = &players[(leader + 1) % 4];
    send(&app, bearer(TestRequest::post().uri(&url), &other.access))
        .await
        .assert_problem(409, "nothing_to_reclaim");
    let back = send(
        &app,
        bearer(TestRequest::post().uri(&url), &players[leader].access),
    )
    .await;
    assert_eq!(back.status, 200, "{}", back.text);
    assert!(back.json["seats"][leader]["bot"].is_null());
}

#[test]
fn two_instances_never_apply_one_timeout_twice() {
    let db = TestDb::migrated();
    let state = db.state();
    let ids: Vec<String> = actix_web::rt::System::new().block_on(async {
        let app = common::app(state.clone()).await;
        let mut players = Vec::new();
        for i in 0..4 {
            players.push(register(&app, &format!("twin_{i}")).await);
        }
        let mut ids = Vec::new();
        for _ in 0..8 {
            let created = send(
                &app,
                bearer(post_json("/api/v1/games", json!({})), &players[0].access),
            )
            .await;
            let id = created.json["id"].as_str().unwrap().to_owned();
            for p in &players[1..] {
                assert_eq!(
                    send(
                        &app,
                        bearer(
                            post_json(&format!("/api/v1/games/{id}/join"), json!({})),
                            &p.access
                        )
                    )
                    .await
                    .status,
                    200
                );
            }
            ids.push(id);
        }
        ids
    });
    for id in &ids {
        expire(&state, id, "deadline");
    }
    let other = db.state();
    let handles: Vec<_> = [state.clone(), other]
        .into_iter()
        .map(|s| std::thread::spawn(move || (0..3).map(|_| tick(&s).timeouts).sum::<usize>()))
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(
        total,
        ids.len(),
        "each deadline acted on once, by one instance"
    );
    let mut conn = state.db.conn().unwrap();
    for id in &ids {
        let actions = leekha::db::games::actions(&mut conn, id).unwrap();
        assert_eq!(actions.len(), 4, "exactly the four late passes");
        assert!(actions.iter().all(|a| a.actor == "timeout"));
        assert!(
            leekha::games::verify::verify_game(&mut conn, id)
                .unwrap()
                .is_none()
        );
    }
}

/// A tiny HTTP receiver: answers 500 to the first `failures` requests, then 200.
struct Receiver {
    port: u16,
    seen: Arc<Mutex<Vec<(String, String)>>>,
}

impl Receiver {
    fn start(failures: usize) -> Self {
        Self::failing_with(failures, "500 Internal Server Error\r\n")
    }

    /// Answers the first `failures` requests with `failure` (the status line's rest and any
    /// headers, each ending in CRLF), then 200.
    fn failing_with(failures: usize, failure: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(k) = stream.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    data.extend_from_slice(&buf[..k]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    if let Some(head_end) = text.find("\r\n\r\n") {
                        let len = text[..head_end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        if data.len() >= head_end + 4 + len {
                            break;
                        }
                    }
                }
                let text = String::from_utf8_lossy(&data).to_string();
                let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
                let signature = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .starts_with("x-leekha-signature:")
                            .then(|| l.split_once(':').unwrap().1.trim().to_owned())
                    })
                    .unwrap_or_default();
                log.lock().unwrap().push((signature, body.to_owned()));
                let status = if n < failures { failure } else { "200 OK\r\n" };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}content-length: 0\r\nconnection: close\r\n\r\n"
                );
            }
        });
        Self { port, seen }
    }
}

/// The secret of the tests' webhooks.
const HOOK_SECRET: &str = "a-webhook-secret-of-some-length";

/// An app whose webhooks may go to loopback and are retried after `retry_base`, with a user
/// whose webhook points at `receiver` and who has just started a game against three bots:
/// the state (for scheduler ticks), the app, the user, how many notifications the start
/// made, and the database (kept for the test's length).
async fn hooked_start(
    receiver: &Receiver,
    retry_base: Duration,
    max_age_secs: i64,
) -> (
    AppState,
    impl actix_web::dev::Service<
        actix_http::Request,
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
    >,
    Session,
    usize,
    TestDb,
) {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.webhook_allow_private = true;
    config.webhook_retry_base = retry_base;
    config.webhook_max_age_secs = max_age_secs;
    let state = common::state_for(config);
    let app = common::app(state.clone()).await;
    let me = register(&app, "hooked").await;
    let put = TestRequest::put()
        .uri("/api/v1/me/webhook")
        .set_json(json!({
            "url": format!("http://127.0.0.1:{}/hook", receiver.port),
            "secret": HOOK_SECRET
        }));
    let reply = send(&app, bearer(put, &me.access)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let created = send(
        &app,
        bearer(post_json("/api/v1/games", json!({"seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]})), &me.access),
    )
    .await;
    assert_eq!(created.status, 201);
    let expected = feed(&app, &me).await.len();
    (state, app, me, expected, db)
}

/// Runs the scheduler until `receiver` has seen `requests` requests (20 s at the most).
async fn deliver_until(state: &AppState, receiver: &Receiver, requests: usize) {
    let started = Instant::now();
    loop {
        let state = state.clone();
        web_block(move || tick(&state)).await;
        let delivered = receiver.seen.lock().unwrap().len();
        if delivered >= requests {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "deliveries stalled at {delivered} of {requests}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(60)).await;
    }
}

#[actix_web::test]
async fn a_receiver_gets_correctly_signed_webhooks_and_retries_after_failures() {
    let receiver = Receiver::start(2);
    let (state, app, me, expected, _db) =
        hooked_start(&receiver, Duration::from_millis(50), 86_400).await;
    assert_eq!(expected, 2, "game_started and your_turn");
    deliver_until(&state, &receiver, expected + 2).await;
    let seen = receiver.seen.lock().unwrap().clone();
    // First attempts go out in the feed's order.
    let seq = |body: &str| serde_json::from_str::<Value>(body).unwrap()["seq"].as_i64();
    assert!(seq(&seen[0].1) < seq(&seen[1].1), "{seen:?}");
    for (signature, body) in &seen {
        assert_eq!(
            signature,
            &leekha::webhooks::sign(HOOK_SECRET, body.as_bytes()),
            "signed with HMAC-SHA256 of the body"
        );
        let n: Value = serde_json::from_str(body).unwrap();
        assert!(n["seq"].is_i64() && n["type"].is_string());
    }
    let mut bodies: Vec<String> = seen.iter().map(|(_, b)| b.clone()).collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(
        bodies.len(),
        expected,
        "every notification arrived, retries repeat the same body"
    );

    let hook = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/webhook"), &me.access),
    )
    .await;
    let deliveries = hook.json["recent_deliveries"].as_array().unwrap();
    assert!(
        deliveries.iter().all(|d| d["state"] == "delivered"),
        "{deliveries:?}"
    );
    let attempts: i64 = deliveries
        .iter()
        .map(|d| d["attempts"].as_i64().unwrap())
        .sum();
    assert_eq!(attempts as usize, expected + 2, "two failures were retried");
}

/// A user's first webhook attempts go out one after another in the feed's order, whichever
/// instance claims them: while one is claimed and not yet tried, another instance (which
/// knows nothing of the first one's lanes) finds the user's later deliveries not due. A
/// retry holds up nothing.
#[actix_web::test]
async fn a_users_first_webhook_attempts_are_claimed_in_feed_order_across_instances() {
    use leekha::db::outbox::{self, AttemptEnd, Claim};
    let receiver = Receiver::start(0);
    let (state, _app, _me, expected, _db) =
        hooked_start(&receiver, Duration::from_secs(3600), 86_400).await;
    assert!(expected >= 2, "{expected} notifications");
    let seq = |d: &outbox::Delivery| {
        serde_json::from_str::<Value>(&d.body).unwrap()["seq"]
            .as_i64()
            .unwrap()
    };
    // A claim of up to ten, as an instance whose lanes are all idle makes it.
    let claim = || {
        let mut conn = state.db.conn().unwrap();
        leekha::db::write_transaction(&mut conn, |conn| {
            let now = leekha::db::now();
            let claim = Claim {
                now,
                lease: now + chrono::Duration::seconds(60),
                limit: 10,
                skip: &[],
            };
            outbox::claim_due(conn, &claim)
        })
        .unwrap()
    };
    let record = |d: &outbox::Delivery, end: AttemptEnd| {
        let mut conn = state.db.conn().unwrap();
        let now = leekha::db::now();
        outbox::record_attempt(&mut conn, &d.id, d.attempts + 1, Some(500), None, now, end)
            .unwrap();
    };
    let first = claim();
    assert_eq!(
        first.iter().map(seq).collect::<Vec<_>>(),
        [1],
        "the head only"
    );
    assert!(
        claim().is_empty(),
        "the second waits for the first's attempt"
    );
    // Tried and to be retried at once: the retry and the next first attempt both go.
    record(&first[0], AttemptEnd::RetryAt(leekha::db::now()));
    let mut both: Vec<i64> = claim().iter().map(seq).collect();
    both.sort_unstable();
    assert_eq!(both, [1, 2]);
}

#[actix_web::test]
async fn a_webhook_retry_waits_as_long_as_the_receivers_retry_after_says() {
    let receiver = Receiver::failing_with(1, "503 Service Unavailable\r\nretry-after: 1\r\n");
    // Without the receiver's word, the retry would come in an hour.
    let (state, _app, _me, expected, _db) =
        hooked_start(&receiver, Duration::from_secs(3600), 86_400).await;
    let started = Instant::now();
    deliver_until(&state, &receiver, expected + 1).await;
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "retried before the receiver's Retry-After"
    );
}

#[actix_web::test]
async fn the_last_webhook_retry_comes_at_the_end_of_its_window_not_after() {
    // Always failing; tries at 0 and 1.5 s, then the backoff (3 s) would pass the 2 s
    // window: the last try comes at 2 s instead, and then the delivery is given up.
    let receiver = Receiver::start(usize::MAX);
    let (state, _app, _me, expected, _db) =
        hooked_start(&receiver, Duration::from_millis(1500), 2).await;
    let started = Instant::now();
    deliver_until(&state, &receiver, 3 * expected).await;
    let last = started.elapsed();
    assert!(
        last < Duration::from_millis(3500),
        "the last try came {last:?} after the first"
    );
    // Nothing more: every delivery has ended.
    for _ in 0..10 {
        let state = state.clone();
        web_block(move || tick(&state)).await;
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(receiver.seen.lock().unwrap().len(), 3 * expected);
}

#[actix_web::test]
async fn a_removed_webhook_gives_up_its_pending_deliveries_at_once_and_says_why() {
    // Always failing; the next try would come in an hour.
    let receiver = Receiver::start(usize::MAX);
    let (state, app, me, expected, _db) =
        hooked_start(&receiver, Duration::from_secs(3600), 86_400).await;
    deliver_until(&state, &receiver, expected).await;
    let hook = |app| {
        let me = me.access.clone();
        async move {
            send(
                app,
                bearer(TestRequest::get().uri("/api/v1/me/webhook"), &me),
            )
            .await
        }
    };
    let before = hook(&app).await;
    let deliveries = before.json["recent_deliveries"].as_array().unwrap().clone();
    assert_eq!(deliveries.len(), expected, "{}", before.text);
    for d in &deliveries {
        assert_eq!(d["state"], "pending", "{d}");
        assert_eq!(
            (d["attempts"].as_i64(), d["last_status"].as_i64()),
            (Some(1), Some(500))
        );
        assert_eq!(d["last_error"], "the receiver answered 500", "{d}");
    }

    let removed = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me/webhook"), &me.access),
    )
    .await;
    assert_eq!(removed.status, 204, "{}", removed.text);
    let after = hook(&app).await;
    assert!(after.json["url"].is_null(), "{}", after.text);
    for d in after.json["recent_deliveries"].as_array().unwrap() {
        assert_eq!(
            d["state"], "failed",
            "at once, not at the next due time: {d}"
        );
        assert_eq!(d["attempts"], 1, "no request was made since: {d}");
        assert_eq!(d["last_error"], "the webhook was removed", "{d}");
    }
    // Nothing is tried again.
    let state2 = state.clone();
    web_block(move || tick(&state2)).await;
    assert_eq!(receiver.seen.lock().unwrap().len(), expected);
}

#[actix_web::test]
async fn a_receiver_that_never_answers_holds_up_only_its_own_users_webhooks() {
    // Accepts, reads nothing, answers nothing: each request waits out the agent's 10 s.
    let tarpit = TcpListener::bind("127.0.0.1:0").unwrap();
    let tarpit_port = tarpit.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in tarpit.incoming() {
            held.push(stream);
        }
    });
    let receiver = Receiver::start(0);
    let db = TestDb::migrated();
    let mut config = db.config();
    config.webhook_allow_private = true;
    let state = common::state_for(config);
    let app = common::app(state.clone()).await;
    let mut users = Vec::new();
    for (name, port) in [("stuck", tarpit_port), ("served", receiver.port)] {
        let user = register(&app, name).await;
        let put = TestRequest::put().uri("/api/v1/me/webhook").set_json(
            json!({"url": format!("http://127.0.0.1:{port}/hook"), "secret": HOOK_SECRET}),
        );
        assert_eq!(send(&app, bearer(put, &user.access)).await.status, 200);
        users.push(user);
    }
    // The stuck user's notifications come first, so a single sender would take them first.
    for user in &users {
        let game =
            json!({"seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]});
        let created = send(&app, bearer(post_json("/api/v1/games", game), &user.access)).await;
        assert_eq!(created.status, 201);
    }
    let expected = feed(&app, &users[1]).await.len();
    assert!(expected >= 2, "game_started and your_turn");
    let worker = leekha::webhooks::worker(state.clone()).unwrap();
    let started = Instant::now();
    while receiver.seen.lock().unwrap().len() < expected
        && started.elapsed() < Duration::from_secs(30)
    {
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed();
    let delivered = receiver.seen.lock().unwrap().len();
    web_block(move || worker.stop()).await;
    assert_eq!(delivered, expected);
    // One after another, they would have waited out 10 s per stuck delivery; a generous
    // bound, far under it.
    assert!(
        took < Duration::from_secs(5),
        "the other user's webhooks took {took:?}"
    );
}

#[actix_web::test]
async fn the_scheduler_acts_on_deadlines_without_waiting_on_any_webhook() {
    // A receiver that would keep each request for the agent's 10 s: the deadlines' loop must
    // not be the one that waits. Webhooks have a loop of their own.
    let receiver = Receiver::failing_with(usize::MAX, "500 Internal Server Error\r\n");
    let (state, app, me, expected, _db) =
        hooked_start(&receiver, Duration::from_millis(50), 86_400).await;
    assert!(expected > 0, "deliveries are queued");
    let mine = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/games"), &me.access),
    )
    .await;
    let id = mine.json["items"][0]["id"].as_str().unwrap().to_owned();
    expire(&state, &id, "deadline");
    let ticked = state.clone();
    let report = web_block(move || scheduler::tick(&ticked).unwrap()).await;
    assert_eq!(report.timeouts, 1, "{report:?}");
    assert!(
        receiver.seen.lock().unwrap().is_empty(),
        "the scheduler's pass made no webhook request"
    );
    // The webhook loop's pass does.
    deliver_until(&state, &receiver, expected).await;
}

async fn web_block<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    actix_web::web::block(f).await.unwrap()
}

#[actix_web::test]
async fn webhook_urls_on_private_addresses_are_refused_unless_allowed() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "cautious").await;
    for (url, code) in [
        ("http://127.0.0.1:8080/x", "webhook_url_not_allowed"),
        ("http://10.0.0.1/x", "webhook_url_not_allowed"),
        ("ftp://example.com/x", "webhook_url_not_allowed"),
    ] {
        let put = TestRequest::put()
            .uri("/api/v1/me/webhook")
            .set_json(json!({"url": url, "secret": "0123456789abcdef"}));
        send(&app, bearer(put, &me.access))
            .await
            .assert_problem(400, code);
    }
    let put = TestRequest::put()
        .uri("/api/v1/me/webhook")
        .set_json(json!({"url": "http://8.8.8.8/x", "secret": "short"}));
    send(&app, bearer(put, &me.access))
        .await
        .assert_problem(400, "validation_failed");
    let get = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/webhook"), &me.access),
    )
    .await;
    assert!(get.json["url"].is_null());
    let del = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me/webhook"), &me.access),
    )
    .await;
    assert_eq!(del.status, 204);
}

/// Actions leave the wake time alone while it is ahead of the timers (so the game row's
/// indexed columns stay put); a scheduler woken before anything is due only sets the exact
/// time, and sends nothing.
#[actix_web::test]
async fn an_early_wake_only_corrects_the_wake_time() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let (players, id) = four_humans(&app, 3600).await;
    let timers = |state: &AppState| {
        games::table
            .find(&id)
            .select((games::deadline, games::reminder_at, games::wake_at))
            .first::<(
                Option<chrono::NaiveDateTime>,
                Option<chrono::NaiveDateTime>,
                Option<chrono::NaiveDateTime>,
            )>(&mut *state.db.conn().unwrap())
            .unwrap()
    };
    let (deadline, reminder, wake) = timers(&state);
    assert!(reminder.unwrap() < deadline.unwrap());
    assert_eq!(wake, reminder, "the first thing due is the reminder");

    // The scheduler comes by early (say, an earlier turn's wake time).
    let early = leekha::db::now() - chrono::Duration::seconds(1);
    diesel::update(games::table.find(&id))
        .set(games::wake_at.eq(Some(early)))
        .execute(&mut *state.db.conn().unwrap())
        .unwrap();
    let report = tick(&state);
    assert_eq!((report.timeouts, report.reminders), (0, 0));
    assert_eq!(timers(&state), (deadline, reminder, reminder));
    for p in &players {
        assert!(!kinds(&feed(&app, p).await).contains(&"turn_reminder".to_owned()));
    }
}
