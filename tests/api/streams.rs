//! Live streams (SSE): order and ids, exact resumption, the caller's copy only, tickets, the
//! ceiling, the end of a stream (game over, logout, ban, shutdown), heartbeats, and wake-ups
//! across two instances on one PostgreSQL.

use std::pin::Pin;
use std::time::{Duration, Instant};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::{self, TestRequest};
use serde_json::{Value, json};

use crate::common::play::{four, game_of, get, get_all, legal_action, post};
use crate::common::{self, Reply, Session, TestDb, bearer, post_json, register, send};

/// One SSE event as a client parses it.
#[derive(Debug, Clone, PartialEq)]
struct Frame {
    id: i64,
    event: String,
    data: Value,
}

/// An open stream, read frame by frame.
struct Sse {
    body: BoxBody,
    buf: String,
    /// Comment lines seen (heartbeats).
    comments: usize,
    /// `retry:` fields seen.
    retries: usize,
}

enum Next {
    Event(Frame),
    Ended,
    Quiet,
}

impl Sse {
    /// The next event within `within`, skipping comments and `retry:`.
    async fn next_within(&mut self, within: Duration) -> Next {
        let deadline = Instant::now() + within;
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, None, None);
                for line in block.lines().filter(|l| !l.is_empty()) {
                    if line.starts_with(':') {
                        self.comments += 1;
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = Some(serde_json::from_str(v).unwrap());
                    } else if line.starts_with("retry: ") {
                        self.retries += 1;
                    } else {
                        panic!("unexpected line {line:?}");
                    }
                }
                if let (Some(id), Some(event), Some(data)) = (id, event, data) {
                    return Next::Event(Frame { id, event, data });
                }
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Next::Quiet;
            }
            let chunk = actix_web::rt::time::timeout(
                left,
                std::future::poll_fn(|cx| Pin::new(&mut self.body).poll_next(cx)),
            )
            .await;
            match chunk {
                Err(_) => return Next::Quiet,
                Ok(None) => return Next::Ended,
                Ok(Some(bytes)) => {
                    self.buf
                        .push_str(std::str::from_utf8(&bytes.expect("a chunk")).unwrap());
                }
            }
        }
    }

    /// The next event, which must come within 10 s.
    async fn next(&mut self) -> Frame {
        match self.next_within(Duration::from_secs(10)).await {
            Next::Event(f) => f,
            Next::Ended => panic!("the stream ended"),
            Next::Quiet => panic!("no event within 10 s"),
        }
    }

    /// Whether the stream ends within `within` (events before the end are returned).
    async fn ends_within(&mut self, within: Duration) -> Result<Vec<Frame>, ()> {
        let mut seen = Vec::new();
        loop {
            match self.next_within(within).await {
                Next::Event(f) => seen.push(f),
                Next::Ended => return Ok(seen),
                Next::Quiet => return Err(()),
            }
        }
    }
}

/// Opens a stream: the open stream, or the refusal as a reply.
async fn open<S, B>(app: &S, req: TestRequest) -> Result<Sse, Reply>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody + 'static,
{
    let res = test::call_service(app, req.to_request()).await;
    if res.status() != 200 {
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = test::read_body(res).await;
        return Err(Reply {
            status,
            headers,
            json: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            text: String::from_utf8_lossy(&bytes).into_owned(),
            body: bytes.to_vec(),
        });
    }
    let h = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(h("content-type"), "text/event-stream");
    assert_eq!(h("cache-control"), "no-cache");
    assert_eq!(h("x-accel-buffering"), "no");
    assert!(
        h("content-encoding").is_empty(),
        "a stream is never compressed"
    );
    Ok(Sse {
        body: res.into_body().boxed(),
        buf: String::new(),
        comments: 0,
        retries: 0,
    })
}

fn stream_req(uri: &str, token: &str) -> TestRequest {
    // Clients that accept compression still get the stream as it is written.
    bearer(TestRequest::get().uri(uri), token).insert_header(("accept-encoding", "gzip, br"))
}

async fn open_ok<S, B>(app: &S, req: TestRequest) -> Sse
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody + 'static,
{
    match open(app, req).await {
        Ok(s) => s,
        Err(reply) => panic!("the stream was refused: {} {}", reply.status, reply.text),
    }
}

/// The events `p` sees through the list endpoint.
async fn listed<S, B>(app: &S, id: &str, p: &Session) -> Vec<Value>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let page = get_all(
        app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &p.access,
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.text);
    page.json["events"].as_array().unwrap().clone()
}

/// One legal action by the first of `players` who has one; when its request was sent.
async fn act_once<S, B>(app: &S, id: &str, players: &[Session]) -> Instant
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    for p in players {
        let view = get(app, &format!("/api/v1/games/{id}"), &p.access).await;
        if let Some(action) = legal_action(&view.json) {
            let sent = Instant::now();
            let done = post(
                app,
                &format!("/api/v1/games/{id}/actions"),
                action,
                &p.access,
            )
            .await;
            assert_eq!(done.status, 200, "{}", done.text);
            return sent;
        }
    }
    panic!("nobody can act");
}

#[actix_web::test]
async fn a_game_stream_delivers_the_callers_copy_of_every_event_in_order() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "sse_order").await;
    let id = game_of(&app, &players, json!({})).await;
    let mut streams = Vec::new();
    for p in &players[..2] {
        streams.push(
            open_ok(
                &app,
                stream_req(&format!("/api/v1/games/{id}/events/stream"), &p.access),
            )
            .await,
        );
    }
    for _ in 0..4 {
        act_once(&app, &id, &players).await;
    }
    for (p, stream) in players[..2].iter().zip(&mut streams) {
        let expected = listed(&app, &id, p).await;
        let mut got = Vec::new();
        for _ in 0..expected.len() {
            got.push(stream.next().await);
        }
        let ids: Vec<i64> = got.iter().map(|f| f.id).collect();
        assert_eq!(ids, (1..=expected.len() as i64).collect::<Vec<_>>());
        for (frame, listed) in got.iter().zip(&expected) {
            // Exactly the list endpoint's JSON for this caller, with the type as `event`.
            assert_eq!(&frame.data, listed);
            assert_eq!(frame.event, listed["type"].as_str().unwrap());
        }
        assert_eq!(stream.retries, 1, "the stream opens with a retry hint");
    }
    // Each caller's copy only: the dealt hands differ, and no pass shows another seat's cards.
    let hand = |frames: &[Value]| {
        frames.iter().find(|e| e["type"] == "round_dealt").unwrap()["data"]["hand"].clone()
    };
    let seen0 = listed(&app, &id, &players[0]).await;
    let seen1 = listed(&app, &id, &players[1]).await;
    assert_ne!(hand(&seen0), hand(&seen1));
    let my_seat = get(&app, &format!("/api/v1/games/{id}"), &players[1].access)
        .await
        .json["my_seat"]
        .clone();
    for e in seen1.iter().filter(|e| e["type"] == "pass_committed") {
        assert_eq!(
            e["data"].get("cards").is_some(),
            e["data"]["seat"] == my_seat,
            "only the caller's own pass shows its cards: {e}"
        );
    }
}

#[actix_web::test]
async fn resuming_after_a_dropped_stream_loses_nothing_and_repeats_nothing() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "sse_resume").await;
    let id = game_of(&app, &players, json!({})).await;
    let uri = format!("/api/v1/games/{id}/events/stream");
    let mut first = open_ok(&app, stream_req(&uri, &players[0].access)).await;
    let a = first.next().await;
    let b = first.next().await;
    assert_eq!((a.id, b.id), (1, 2));
    drop(first);
    // Meanwhile the game moves on.
    act_once(&app, &id, &players).await;
    act_once(&app, &id, &players).await;
    let all = listed(&app, &id, &players[0]).await;
    let total = all.len() as i64;
    assert!(total >= 4);

    // Last-Event-ID (what a browser sends on reconnecting) wins over the URL's `after`.
    let mut resumed = open_ok(
        &app,
        stream_req(&format!("{uri}?after=0"), &players[0].access)
            .insert_header(("last-event-id", "2")),
    )
    .await;
    let mut ids = Vec::new();
    for _ in 2..total {
        let f = resumed.next().await;
        assert_eq!(f.data, all[(f.id - 1) as usize]);
        ids.push(f.id);
    }
    assert_eq!(ids, (3..=total).collect::<Vec<_>>());
    assert!(
        matches!(
            resumed.next_within(Duration::from_millis(300)).await,
            Next::Quiet
        ),
        "nothing repeated after the last event"
    );

    // `?after=` alone resumes the same way.
    let mut by_query = open_ok(
        &app,
        stream_req(&format!("{uri}?after={}", total - 1), &players[0].access),
    )
    .await;
    assert_eq!(by_query.next().await.id, total);

    // A new action reaches the open stream at once, with the next id.
    act_once(&app, &id, &players).await;
    assert_eq!(resumed.next().await.id, total + 1);

    let bad = open(
        &app,
        stream_req(&uri, &players[0].access).insert_header(("last-event-id", "soon")),
    )
    .await
    .err()
    .unwrap();
    bad.assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn tickets_open_one_stream_once_and_only_streams() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.stream_ticket_ttl_secs = 1;
    let app = common::app(common::state_for(config)).await;
    let me = register(&app, "sse_ticket").await;
    let issued = send(
        &app,
        bearer(
            TestRequest::post().uri("/api/v1/auth/stream-ticket"),
            &me.access,
        ),
    )
    .await;
    assert_eq!(issued.status, 201, "{}", issued.text);
    assert_eq!(issued.json["expires_in"], 1);
    assert_eq!(issued.header("cache-control"), Some("no-store"));
    let ticket = issued.json["ticket"].as_str().unwrap().to_owned();
    let uri = format!("/api/v1/me/notifications/stream?ticket={ticket}");

    // Another endpoint does not take it.
    send(
        &app,
        TestRequest::get().uri(&format!("/api/v1/me?ticket={ticket}")),
    )
    .await
    .assert_problem(401, "missing_token");
    let mut stream = open_ok(&app, TestRequest::get().uri(&uri)).await;
    assert!(matches!(
        stream.next_within(Duration::from_millis(200)).await,
        Next::Quiet
    ));
    open(&app, TestRequest::get().uri(&uri))
        .await
        .err()
        .expect("a ticket works once")
        .assert_problem(401, "invalid_token");

    // One left unused past its lifetime is refused.
    let late = send(
        &app,
        bearer(
            TestRequest::post().uri("/api/v1/auth/stream-ticket"),
            &me.access,
        ),
    )
    .await
    .json["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    actix_web::rt::time::sleep(Duration::from_millis(1300)).await;
    open(
        &app,
        TestRequest::get().uri(&format!("/api/v1/me/notifications/stream?ticket={late}")),
    )
    .await
    .err()
    .expect("an expired ticket is refused")
    .assert_problem(401, "invalid_token");
    // Without a token nor a ticket.
    open(
        &app,
        TestRequest::get().uri("/api/v1/me/notifications/stream"),
    )
    .await
    .err()
    .unwrap()
    .assert_problem(401, "missing_token");
    // A ticket needs a signed-in caller.
    send(&app, post_json("/api/v1/auth/stream-ticket", json!({})))
        .await
        .assert_problem(401, "missing_token");
}

#[actix_web::test]
async fn a_stream_of_a_game_hidden_from_the_caller_is_refused_like_its_event_list() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let host = register(&app, "sse_host").await;
    let outsider = register(&app, "sse_outsider").await;
    register(&app, "sse_friend").await;
    // Private with no open seat: hidden from all but its players and the invited.
    let created = post(
        &app,
        "/api/v1/games",
        json!({"visibility": "private", "seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "invite", "username": "sse_friend"}]}),
        &host.access,
    )
    .await;
    let id = created.json["id"].as_str().unwrap();
    let listed = get(
        &app,
        &format!("/api/v1/games/{id}/events"),
        &outsider.access,
    )
    .await;
    listed.assert_problem(404, "not_found");
    open(
        &app,
        stream_req(
            &format!("/api/v1/games/{id}/events/stream"),
            &outsider.access,
        ),
    )
    .await
    .err()
    .expect("refused")
    .assert_problem(404, "not_found");
    let unknown = uuid::Uuid::new_v4();
    open(
        &app,
        stream_req(
            &format!("/api/v1/games/{unknown}/events/stream"),
            &host.access,
        ),
    )
    .await
    .err()
    .expect("refused")
    .assert_problem(404, "not_found");
}

#[actix_web::test]
async fn the_feed_stream_follows_the_callers_notifications() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "sse_feed").await;
    let mut feed = open_ok(
        &app,
        stream_req("/api/v1/me/notifications/stream", &players[0].access),
    )
    .await;
    game_of(&app, &players, json!({})).await;
    let page = get(&app, "/api/v1/me/notifications", &players[0].access).await;
    let expected = page.json["notifications"].as_array().unwrap().clone();
    assert!(!expected.is_empty());
    for n in &expected {
        let f = feed.next().await;
        assert_eq!(&f.data, n);
        assert_eq!(f.id, n["seq"].as_i64().unwrap());
        assert_eq!(f.event, n["type"].as_str().unwrap());
    }
}

#[actix_web::test]
async fn a_finished_games_stream_ends_after_game_finished() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let me = register(&app, "sse_finish").await;
    let created = post(
        &app,
        "/api/v1/games",
        json!({"rules": {"target_score": 30}, "seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot", "level": "random"}, {"kind": "bot"}]}),
        &me.access,
    )
    .await;
    let id = created.json["id"].as_str().unwrap().to_owned();
    let uri = format!("/api/v1/games/{id}/events/stream");
    let mut live = open_ok(&app, stream_req(&uri, &me.access)).await;
    let resigned = post(
        &app,
        &format!("/api/v1/games/{id}/resign"),
        json!({}),
        &me.access,
    )
    .await;
    assert_eq!(resigned.status, 200, "{}", resigned.text);
    common::play_out_bots(&state);
    let all = listed(&app, &id, &me).await;
    assert_eq!(all.last().unwrap()["type"], "game_finished");
    let frames = live
        .ends_within(Duration::from_secs(20))
        .await
        .expect("the stream ends");
    assert_eq!(frames.len(), all.len());
    assert_eq!(frames.last().unwrap().event, "game_finished");
    // Opened after the end, it sends the rest and ends.
    let mut late = open_ok(
        &app,
        stream_req(&format!("{uri}?after={}", all.len() - 1), &me.access),
    )
    .await;
    let rest = late.ends_within(Duration::from_secs(5)).await.unwrap();
    assert_eq!(rest.len(), 1);
    // Resumed after its last event, nothing can follow: 204, which stops a browser's
    // EventSource from reconnecting every two seconds.
    let after_end = send(
        &app,
        stream_req(&format!("{uri}?after={}", all.len()), &me.access),
    )
    .await;
    assert_eq!(after_end.status, 204, "{}", after_end.text);
    let by_header = send(
        &app,
        stream_req(&uri, &me.access).insert_header(("last-event-id", all.len().to_string())),
    )
    .await;
    assert_eq!(by_header.status, 204, "{}", by_header.text);
    // An empty `Last-Event-ID` is no id: `after` decides.
    let empty_header = send(
        &app,
        stream_req(&format!("{uri}?after={}", all.len()), &me.access)
            .insert_header(("last-event-id", "")),
    )
    .await;
    assert_eq!(empty_header.status, 204, "{}", empty_header.text);
    // A long-poll after the end answers at once too, rather than waiting out its 30 s.
    let started = Instant::now();
    let polled = get(
        &app,
        &format!("/api/v1/games/{id}/events?after={}&wait=30", all.len()),
        &me.access,
    )
    .await;
    assert_eq!(polled.status, 200, "{}", polled.text);
    assert!(polled.json["events"].as_array().unwrap().is_empty());
    assert_eq!(polled.json["last_seq"], all.len());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the long-poll waited {:?}",
        started.elapsed()
    );
}

#[actix_web::test]
async fn logout_ban_and_shutdown_end_open_streams() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let me = register(&app, "sse_leaver").await;
    let feed = "/api/v1/me/notifications/stream";
    let mut stream = open_ok(&app, stream_req(feed, &me.access)).await;
    // The same account on a second phone: its own session, its own streams (one opened
    // with a ticket of that session).
    let phone = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "sse_leaver", "password": common::PASSWORD}),
        ),
    )
    .await;
    assert_eq!(phone.status, 200, "{}", phone.text);
    let phone_token = phone.json["access_token"].as_str().unwrap().to_owned();
    let mut phone_stream = open_ok(&app, stream_req(feed, &phone_token)).await;
    let ticket = send(
        &app,
        bearer(
            TestRequest::post().uri("/api/v1/auth/stream-ticket"),
            &me.access,
        ),
    )
    .await;
    let ticket = ticket.json["ticket"].as_str().unwrap().to_owned();
    let mut ticket_stream = open_ok(
        &app,
        TestRequest::get().uri(&format!("{feed}?ticket={ticket}")),
    )
    .await;
    let out = send(
        &app,
        post_json("/api/v1/auth/logout", json!({"refresh_token": me.refresh})),
    )
    .await;
    assert_eq!(out.status, 204);
    assert!(
        stream.ends_within(Duration::from_secs(5)).await.is_ok(),
        "logout ends the stream"
    );
    assert!(
        ticket_stream
            .ends_within(Duration::from_secs(5))
            .await
            .is_ok(),
        "and the one its ticket opened"
    );
    assert!(
        matches!(
            phone_stream.next_within(Duration::from_millis(300)).await,
            Next::Quiet
        ),
        "the other session's stream stays open"
    );
    // The logged-out session's access token opens no new stream, though it has not expired.
    open(&app, stream_req(feed, &me.access))
        .await
        .err()
        .unwrap()
        .assert_problem(401, "invalid_token");
    // Nor gets a ticket, which could never be redeemed.
    send(
        &app,
        bearer(
            TestRequest::post().uri("/api/v1/auth/stream-ticket"),
            &me.access,
        ),
    )
    .await
    .assert_problem(401, "invalid_token");
    assert_eq!(
        send(
            &app,
            bearer(TestRequest::get().uri("/api/v1/me"), &phone_token)
        )
        .await
        .status,
        200
    );

    let target = register(&app, "sse_banned").await;
    let mut stream = open_ok(&app, stream_req(feed, &target.access)).await;
    let admin_token = crate::admin::admin(&app, &state, "sse_admin").await.access;
    let banned = send(
        &app,
        bearer(
            post_json(
                &format!("/api/v1/admin/users/{}/ban", target.id),
                json!({"reason": "test"}),
            ),
            &admin_token,
        ),
    )
    .await;
    assert_eq!(banned.status, 200, "{}", banned.text);
    assert!(
        stream.ends_within(Duration::from_secs(5)).await.is_ok(),
        "a ban ends the stream"
    );
    open(&app, stream_req(feed, &target.access))
        .await
        .err()
        .unwrap()
        .assert_problem(403, "banned");

    let other = register(&app, "sse_stayer").await;
    let mut stream = open_ok(&app, stream_req(feed, &other.access)).await;
    assert!(
        matches!(
            stream.next_within(Duration::from_millis(200)).await,
            Next::Quiet
        ),
        "others' logouts leave it open"
    );
    state.notifier.shut_down();
    assert!(
        stream.ends_within(Duration::from_secs(2)).await.is_ok(),
        "shutdown ends the stream"
    );
}

#[actix_web::test]
async fn a_password_change_and_a_replayed_refresh_token_end_the_streams_of_the_sessions_they_end() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "sse_changer").await;
    let feed = "/api/v1/me/notifications/stream";
    let login = || {
        send(
            &app,
            post_json(
                "/api/v1/auth/login",
                json!({"username": "sse_changer", "password": common::PASSWORD}),
            ),
        )
    };
    // A second session (a stolen one, say) follows the feed; the owner changes the password.
    let other = login().await;
    let other_access = other.json["access_token"].as_str().unwrap().to_owned();
    let mut theirs = open_ok(&app, stream_req(feed, &other_access)).await;
    let mut mine = open_ok(&app, stream_req(feed, &me.access)).await;
    let patch = TestRequest::patch().uri("/api/v1/me").set_json(json!({
        "password": "another password",
        "current_password": common::PASSWORD,
        "refresh_token": me.refresh,
    }));
    let changed = send(&app, bearer(patch, &me.access)).await;
    assert_eq!(changed.status, 200, "{}", changed.text);
    assert_eq!(changed.json["session_kept"], true);
    assert!(
        theirs.ends_within(Duration::from_secs(5)).await.is_ok(),
        "the ended session's stream ends"
    );
    assert!(
        matches!(
            mine.next_within(Duration::from_millis(300)).await,
            Next::Quiet
        ),
        "the caller's stays open"
    );

    // A replayed refresh token ends its session's streams too.
    let refreshed = send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": me.refresh})),
    )
    .await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.text);
    let replayed = send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": me.refresh})),
    )
    .await;
    replayed.assert_problem(401, "invalid_token");
    assert!(
        mine.ends_within(Duration::from_secs(5)).await.is_ok(),
        "a replay ends the session's stream"
    );
}

#[actix_web::test]
async fn a_password_change_kept_by_another_sessions_token_does_not_say_the_callers_was_kept() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "sse_mixed").await;
    let other = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "sse_mixed", "password": common::PASSWORD}),
        ),
    )
    .await;
    let patch = TestRequest::patch().uri("/api/v1/me").set_json(json!({
        "password": "another password",
        "current_password": common::PASSWORD,
        "refresh_token": other.json["refresh_token"],
    }));
    let changed = send(&app, bearer(patch, &me.access)).await;
    assert_eq!(changed.status, 200, "{}", changed.text);
    assert_eq!(changed.json["session_kept"], false, "{}", changed.text);
    send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &me.access),
    )
    .await
    .assert_problem(401, "invalid_token");
}

#[actix_web::test]
async fn an_idle_stream_gets_heartbeats_and_the_ceiling_answers_503() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.stream_heartbeat = Duration::from_secs(1);
    config.max_streams = 2;
    let state = common::state_for(config);
    let app = common::app(state.clone()).await;
    let me = register(&app, "sse_idle").await;
    let feed = "/api/v1/me/notifications/stream";
    let mut a = open_ok(&app, stream_req(feed, &me.access)).await;
    assert!(matches!(
        a.next_within(Duration::from_millis(2500)).await,
        Next::Quiet
    ));
    assert!(a.comments >= 2, "heartbeats: {}", a.comments);
    assert!(state.presence.is_watching_feed(&me.id));

    // The ceiling counts streams and waiting long-polls alike.
    let _b = open_ok(&app, stream_req(feed, &me.access)).await;
    let refused = open(&app, stream_req(feed, &me.access))
        .await
        .err()
        .unwrap();
    refused.assert_problem(503, "too_many_streams");
    assert!(refused.header("retry-after").is_some());
    get(&app, "/api/v1/me/notifications?wait=1", &me.access)
        .await
        .assert_problem(503, "too_many_streams");
    drop(a);
    let polled = get(&app, "/api/v1/me/notifications?wait=1", &me.access).await;
    assert_eq!(polled.status, 200, "a closed stream frees its place");
}

#[actix_web::test]
async fn one_user_holds_at_most_32_streams_and_long_polls_and_others_are_unaffected() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "sse_hoarder").await;
    let other = register(&app, "sse_neighbour").await;
    let feed = "/api/v1/me/notifications/stream";
    let mut held = Vec::new();
    for _ in 0..leekha::app::presence::MAX_PER_USER {
        held.push(open_ok(&app, stream_req(feed, &me.access)).await);
    }
    let refused = open(&app, stream_req(feed, &me.access))
        .await
        .err()
        .unwrap();
    refused.assert_problem(429, "rate_limited");
    assert!(refused.header("retry-after").is_some());
    get(&app, "/api/v1/me/notifications?wait=1", &me.access)
        .await
        .assert_problem(429, "rate_limited");
    // A plain read is no long-poll, and another user's stream has room.
    assert_eq!(
        get(&app, "/api/v1/me/notifications", &me.access)
            .await
            .status,
        200
    );
    let _theirs = open_ok(&app, stream_req(feed, &other.access)).await;
    held.pop();
    let polled = get(&app, "/api/v1/me/notifications?wait=1", &me.access).await;
    assert_eq!(polled.status, 200, "a closed stream frees its place");
}

#[actix_web::test]
async fn presence_tells_who_watches_a_game() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "sse_presence").await;
    let id = game_of(&app, &players, json!({})).await;
    assert!(!state.presence.is_watching(&players[0].id, &id));
    let stream = open_ok(
        &app,
        stream_req(
            &format!("/api/v1/games/{id}/events/stream"),
            &players[0].access,
        ),
    )
    .await;
    assert!(state.presence.is_watching(&players[0].id, &id));
    assert!(!state.presence.is_watching(&players[1].id, &id));
    let open_streams = |text: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("leekha_open_streams "))
            .unwrap_or_else(|| panic!("no leekha_open_streams in {text}"))
            .to_owned()
    };
    let scraped = send(&app, TestRequest::get().uri("/metrics")).await.text;
    assert_eq!(
        open_streams(&scraped),
        "1",
        "the gauge counts the open stream"
    );
    drop(stream);
    assert!(!state.presence.is_watching(&players[0].id, &id));
    let scraped = send(&app, TestRequest::get().uri("/metrics")).await.text;
    assert_eq!(open_streams(&scraped), "0");
}

/// Waits until a state's PostgreSQL listener has its `LISTEN` in place.
async fn listening(state: &leekha::app::AppState) {
    eventually(
        || state.listen.connects() > 0,
        "the listener never connected",
    )
    .await;
}

/// Waits up to 10 s for `done`, failing with `never` after that.
async fn eventually(done: impl Fn() -> bool, never: &str) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "{never}");
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
}

#[actix_web::test]
async fn a_change_through_another_instance_wakes_streams_and_long_polls_promptly() {
    if common::pg_base_url().is_none() {
        // Several instances share a PostgreSQL database; SQLite serves one process.
        eprintln!("skipped: needs LEEKHA_TEST_DATABASE_URL (PostgreSQL)");
        return;
    }
    let db = TestDb::migrated();
    let (s1, s2) = (db.state(), db.state());
    listening(&s1).await;
    listening(&s2).await;
    let app1 = common::app(s1).await;
    let app2 = common::app(s2).await;
    let players = four(&app1, "sse_two").await;
    let id = game_of(&app1, &players, json!({})).await;
    let last = listed(&app1, &id, &players[0]).await.len() as i64;
    let mut stream = open_ok(
        &app1,
        stream_req(
            &format!("/api/v1/games/{id}/events/stream?after={last}"),
            &players[0].access,
        ),
    )
    .await;
    // From the action's request (on instance 2) to the event on instance 1.
    let mut stream_ms = Vec::new();
    let mut poll_ms = Vec::new();
    let mut seen = last;
    for round in 0..6 {
        if round % 2 == 0 {
            let sent = act_once(&app2, &id, &players).await;
            let f = stream.next().await;
            stream_ms.push(sent.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(f.id, seen + 1);
            seen += 1;
        } else {
            poll_ms.push(woken_poll(&app1, &app2, &id, &players, seen).await);
        }
        // Whatever else arrived, in order and once.
        while let Next::Event(f) = stream.next_within(Duration::from_millis(200)).await {
            assert_eq!(f.id, seen + 1);
            seen += 1;
        }
    }
    report(&stream_ms, &poll_ms);
    for ms in stream_ms.iter().chain(&poll_ms) {
        assert!(*ms < 1000.0, "a wake-up across instances took {ms:.0} ms");
    }
}

#[actix_web::test]
async fn an_instance_alone_sends_no_wake_ups_and_one_that_arrives_is_woken_at_once() {
    if common::pg_base_url().is_none() {
        eprintln!("skipped: needs LEEKHA_TEST_DATABASE_URL (PostgreSQL)");
        return;
    }
    let db = TestDb::migrated();
    let s1 = db.state();
    listening(&s1).await;
    let app1 = common::app(s1.clone()).await;
    let players = four(&app1, "alone").await;
    let id = game_of(&app1, &players, json!({})).await;
    for _ in 0..4 {
        act_once(&app1, &id, &players).await;
    }
    assert!(!s1.listen.sends(), "no other instance listens");
    assert_eq!(s1.listen.sent(), 0, "nothing is announced to nobody");

    // A second instance counts the first; its hello makes the first one announce too.
    let s2 = db.state();
    listening(&s2).await;
    assert!(s2.listen.sends(), "the newcomer counted the first instance");
    eventually(
        || s1.listen.sends(),
        "the first instance never heard the newcomer's hello",
    )
    .await;
    let app2 = common::app(s2).await;
    let seen = listed(&app2, &id, &players[0]).await.len() as i64;
    let ms = woken_poll(&app2, &app1, &id, &players, seen).await;
    assert!(ms < 1000.0, "the wake-up took {ms:.0} ms");
    assert!(s1.listen.sent() > 0, "the first instance now announces");
}

#[actix_web::test]
async fn the_listener_reconnects_at_once_after_each_of_many_lost_connections() {
    let Some(base) = common::pg_base_url() else {
        eprintln!("skipped: needs LEEKHA_TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    let db = TestDb::migrated();
    let state = db.state();
    listening(&state).await;
    use diesel::{Connection, RunQueryDsl};
    let name = db.url.to_string().rsplit('/').next().unwrap().to_owned();
    let mut admin = diesel::PgConnection::establish(&base).unwrap();
    // The backoff once kept doubling across successful connections: from the sixth loss on,
    // every loss cost the 5 s of the longest wait.
    for loss in 1..=8 {
        let before = state.listen.connects();
        let started = Instant::now();
        diesel::sql_query(format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'leekha-listen' AND datname = '{name}'"
        ))
        .execute(&mut admin)
        .unwrap();
        eventually(
            || state.listen.connects() > before,
            "the listener did not reconnect",
        )
        .await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "loss {loss}: the listener took {took:?} to listen again"
        );
    }
}

/// An instance whose `DATABASE_URL` asks for TLS (`sslmode=require`, and `verify-ca` with the
/// server's own certificate as the root) wakes and is woken like any other: its listener
/// connects over TLS too. It once connected without TLS only, and never got through to a
/// server that demands it.
#[actix_web::test]
async fn an_instance_on_a_tls_url_listens_over_tls_and_wakes_the_others() {
    use diesel::{Connection, RunQueryDsl};
    let Some(base) = common::pg_base_url() else {
        eprintln!("skipped: needs LEEKHA_TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    #[derive(diesel::QueryableByName)]
    struct Setting {
        #[diesel(sql_type = diesel::sql_types::Text)]
        setting: String,
    }
    let mut admin = diesel::PgConnection::establish(&base).unwrap();
    let mut setting = |name: &str| {
        diesel::sql_query(format!(
            "SELECT setting FROM pg_settings WHERE name = '{name}'"
        ))
        .get_result::<Setting>(&mut admin)
        .unwrap()
        .setting
    };
    if setting("ssl") != "on" {
        eprintln!("skipped: the PostgreSQL server has ssl off");
        return;
    }
    let cert = setting("ssl_cert_file");
    let mut urls = vec!["sslmode=require".to_owned()];
    // A self-signed server certificate (Debian's "snakeoil") is its own root.
    if std::fs::read_to_string(&cert).is_ok_and(|pem| pem.contains("BEGIN CERTIFICATE")) {
        urls.push(format!("sslmode=verify-ca&sslrootcert={cert}"));
    }
    for tls in urls {
        let db = TestDb::migrated();
        let plain = db.state();
        let mut config = db.config();
        let url = format!("{}?{tls}", config.database_url.expose());
        config.database_url = leekha::config::DatabaseUrl::parse(&url).unwrap();
        let secure = common::state_for(config);
        listening(&plain).await;
        listening(&secure).await;
        #[derive(diesel::QueryableByName)]
        struct Ssl {
            #[diesel(sql_type = diesel::sql_types::Bool)]
            ssl: bool,
        }
        let name = db.url.expose().rsplit('/').next().unwrap().to_owned();
        let listeners: Vec<Ssl> = diesel::sql_query(format!(
            "SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
             WHERE a.application_name = 'leekha-listen' AND a.datname = '{name}'"
        ))
        .load(&mut admin)
        .unwrap();
        let mut flags: Vec<bool> = listeners.iter().map(|l| l.ssl).collect();
        flags.sort();
        assert!(
            flags.contains(&true),
            "{tls}: no listener over TLS: {flags:?}"
        );

        let app_plain = common::app(plain).await;
        let app_secure = common::app(secure).await;
        let players = four(&app_plain, "tls").await;
        let id = game_of(&app_plain, &players, json!({})).await;
        for (waiting, acting) in [(&app_secure, &app_plain), (&app_plain, &app_secure)] {
            let seen = listed(waiting, &id, &players[0]).await.len() as i64;
            let ms = woken_poll(waiting, acting, &id, &players, seen).await;
            assert!(ms < 1000.0, "{tls}: the wake-up took {ms:.0} ms");
        }
    }
}

/// A read of the events that does not wait shows every action committed before it, though
/// the wake-up that would refresh this instance's copy of the events is still on its way (an
/// action through another instance: here, one committed without announcing it).
#[actix_web::test]
async fn events_read_at_once_show_an_action_whose_wake_up_has_not_arrived() {
    use leekha::games::act::Act;
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "fresh").await;
    let id = game_of(&app, &players, json!({})).await;
    for _ in 0..8 {
        // This instance keeps the game's events as of now...
        let before = listed(&app, &id, &players[0]).await.len();
        // ...and "another instance" commits an action it has not heard of yet.
        let mut found = None;
        for p in &players {
            let view = get(&app, &format!("/api/v1/games/{id}"), &p.access).await;
            if let Some(action) = legal_action(&view.json) {
                found = Some((p, action));
                break;
            }
        }
        let (p, action) = found.expect("someone can act");
        let act = Act {
            game_id: id.clone(),
            user_id: p.id.clone(),
            wanted: crate::common::play::wanted(&action),
            expected_version: None,
            idempotency: None,
        };
        let hot = leekha::games::HotTables::default();
        leekha::games::act(
            &mut state.db.conn().unwrap(),
            leekha::games::Shortcuts {
                hot: &hot,
                group: state.db.group_commit().map(|g| &**g),
            },
            leekha::games::Submission {
                game_id: id.clone(),
                user_id: p.id.clone(),
                command: Ok(act),
                render: |_, _| Ok(String::new()),
                refusal: |_| (500, String::new()),
            },
        )
        .expect("the action applies");
        let after = listed(&app, &id, &players[0]).await.len();
        assert!(
            after > before,
            "the read missed the action ({before} events, then {after})"
        );
    }
}

/// Long-polls the game's events after `seen` on `waiting` while an action goes through
/// `acting`; checks that the poll returns that action's event and answers the milliseconds
/// from the action's request to the poll's answer.
async fn woken_poll<S, B>(waiting: &S, acting: &S, id: &str, players: &[Session], seen: i64) -> f64
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let uri = format!("/api/v1/games/{id}/events?after={seen}&wait=10");
    let poll = get(waiting, &uri, &players[0].access);
    let act = async {
        // Lets the long-poll start waiting first.
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        act_once(acting, id, players).await
    };
    let (page, sent) = futures_util::future::join(poll, act).await;
    let events = page.json["events"].as_array().unwrap();
    assert_eq!(events[0]["seq"], seen + 1, "{}", page.text);
    sent.elapsed().as_secs_f64() * 1000.0
}

/// Prints the measured latencies (the action's own round trip included).
fn report(stream_ms: &[f64], poll_ms: &[f64]) {
    eprintln!("cross-instance wake-up: stream {stream_ms:.1?} ms, long-poll {poll_ms:.1?} ms");
}

#[actix_web::test]
async fn an_open_stream_follows_its_caller_leaving_or_taking_a_seat() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let creator = register(&app, "reseat_c").await;
    let leaver = register(&app, "reseat_x").await;
    let joiner = register(&app, "reseat_j").await;
    let others = [
        register(&app, "reseat_1").await,
        register(&app, "reseat_2").await,
    ];
    let game = |body: Value| post(&app, "/api/v1/games", body, &creator.access);

    // A player who left before the start keeps no seat's copy, and no sight of a game
    // without spectators: their open stream ends at the start, before any hand is dealt.
    let hidden = game(json!({ "allow_spectators": false })).await;
    let hidden = hidden.json["id"].as_str().unwrap().to_owned();
    take_seat(&app, &hidden, 3, &leaver).await;
    let stream_uri = |id: &str| format!("/api/v1/games/{id}/events/stream");
    let mut stream = open_ok(&app, stream_req(&stream_uri(&hidden), &leaver.access)).await;
    let left = post(
        &app,
        &format!("/api/v1/games/{hidden}/leave"),
        json!({}),
        &leaver.access,
    )
    .await;
    assert_eq!(left.status, 200, "{}", left.text);
    take_seat(&app, &hidden, 1, &others[0]).await;
    take_seat(&app, &hidden, 2, &others[1]).await;
    take_seat(&app, &hidden, 3, &joiner).await;
    match stream.next_within(Duration::from_secs(5)).await {
        Next::Ended => {}
        Next::Event(f) => panic!("the stream of a player who left sent {f:?}"),
        Next::Quiet => panic!("the stream of a player who left stayed open"),
    }
    let again = send(&app, stream_req(&stream_uri(&hidden), &leaver.access)).await;
    assert_eq!(again.status, 404, "{}", again.text);
    let poll = get(
        &app,
        &format!("/api/v1/games/{hidden}/events"),
        &leaver.access,
    )
    .await;
    assert_eq!(poll.status, 404, "{}", poll.text);

    // A spectator who takes a seat: the stream ends before the start, and the stream
    // resumed there carries the player's own hand.
    let open = game(json!({})).await;
    let open = open.json["id"].as_str().unwrap().to_owned();
    let mut stream = open_ok(&app, stream_req(&stream_uri(&open), &leaver.access)).await;
    take_seat(&app, &open, 1, &others[0]).await;
    take_seat(&app, &open, 2, &others[1]).await;
    take_seat(&app, &open, 3, &leaver).await;
    assert!(
        matches!(
            stream.next_within(Duration::from_secs(5)).await,
            Next::Ended
        ),
        "the stream ends when its caller takes a seat"
    );
    let mut resumed = open_ok(&app, stream_req(&stream_uri(&open), &leaver.access)).await;
    let dealt = loop {
        let f = resumed.next().await;
        if f.event == "round_dealt" {
            break f;
        }
    };
    assert_eq!(
        dealt.data["data"]["hand"].as_array().map(Vec::len),
        Some(13),
        "{:?}",
        dealt.data
    );
}

/// `who` takes `seat` of the waiting game `id`.
async fn take_seat<S, B>(app: &S, id: &str, seat: u8, who: &Session)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let uri = format!("/api/v1/games/{id}/join");
    let r = post(app, &uri, json!({ "seat": seat }), &who.access).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[actix_web::test]
async fn a_spectators_stream_carries_the_public_copy_and_counts_them() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "sse_watched").await;
    let id = game_of(&app, &players, json!({})).await;
    let watcher = register(&app, "sse_watcher").await;
    let mut stream = open_ok(
        &app,
        stream_req(
            &format!("/api/v1/games/{id}/events/stream"),
            &watcher.access,
        ),
    )
    .await;
    for _ in 0..4 {
        act_once(&app, &id, &players).await;
    }
    let expected = listed(&app, &id, &watcher).await;
    for listed in &expected {
        let frame = stream.next().await;
        assert_eq!(&frame.data, listed);
    }
    let dealt = expected
        .iter()
        .find(|e| e["type"] == "round_dealt")
        .unwrap();
    assert!(dealt["data"].get("hand").is_none(), "{dealt}");
    for e in expected.iter().filter(|e| e["type"] == "pass_committed") {
        assert!(e["data"].get("cards").is_none(), "{e}");
    }
    let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
    assert_eq!(view.json["spectators"], 1, "{}", view.text);
}

#[actix_web::test]
async fn a_stream_ends_at_its_maximum_age_and_stays_open_without_one() {
    let db = TestDb::migrated();
    let mut config = db.config();
    assert_eq!(
        config.stream_max_age,
        Duration::ZERO,
        "streams have no age limit by default"
    );
    config.stream_max_age = Duration::from_secs(1);
    let app = common::app(common::state_for(config)).await;
    let me = register(&app, "sse_aged").await;
    let feed = "/api/v1/me/notifications/stream";
    let mut stream = open_ok(&app, stream_req(feed, &me.access)).await;
    assert!(
        matches!(
            stream.next_within(Duration::from_millis(500)).await,
            Next::Quiet
        ),
        "open before its age"
    );
    assert!(
        stream.ends_within(Duration::from_secs(3)).await.is_ok(),
        "LEEKHA_STREAM_MAX_SECONDS ends the stream"
    );
    // The client comes back, and the stream opens again.
    let mut again = open_ok(&app, stream_req(feed, &me.access)).await;
    assert!(matches!(
        again.next_within(Duration::from_millis(300)).await,
        Next::Quiet
    ));
}
