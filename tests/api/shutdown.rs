//! Graceful shutdown of the real binary: a request in flight when SIGTERM arrives completes,
//! and a scheduler with many due games stops between them.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use leekha::db::schema::{game_seats, games};
use serde_json::json;

use crate::common::{self, Server, TestDb, bearer, post_json, register, send};

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes one HTTP/1.1 request with `Connection: close` and returns the open stream.
pub(crate) fn send_request(
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> std::io::Result<TcpStream> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    Ok(stream)
}

/// Reads the whole response: (status, body as JSON).
pub(crate) fn read_response(mut stream: TcpStream) -> std::io::Result<(u16, serde_json::Value)> {
    let mut raw = String::new();
    stream.read_to_string(&mut raw)?;
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Ok((
        status,
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    ))
}

fn wait_ready(server: &mut Server, port: u16) {
    let started = Instant::now();
    loop {
        if let Ok(stream) = send_request(port, "GET", "/readyz", None, None)
            && let Ok((200, _)) = read_response(stream)
        {
            break;
        }
        assert!(
            server.0.try_wait().unwrap().is_none(),
            "the server exited early"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server never became ready"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn call(
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> (u16, serde_json::Value) {
    read_response(send_request(port, method, path, token, body).unwrap()).unwrap()
}

/// Starts the binary on `db` and waits until it is ready.
fn start(db: &TestDb, port: u16) -> Server {
    start_with(db, port, &[])
}

/// Starts the binary on `db` with these extra variables and waits until it is ready.
pub(crate) fn start_with(db: &TestDb, port: u16, vars: &[(&str, &str)]) -> Server {
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_leekha"))
            .arg("serve")
            .env("DATABASE_URL", db.url.expose())
            .env("LEEKHA_BIND", format!("127.0.0.1:{port}"))
            .env("LEEKHA_WORKERS", "2")
            .env("LEEKHA_JWT_SECRET", common::TEST_SECRET)
            .env("RUST_LOG", "warn")
            .envs(vars.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_ready(&mut server, port);
    server
}

/// Sends SIGTERM and waits for the exit; returns how long it took.
fn terminate(server: &mut Server, within: Duration) -> Duration {
    let asked = Instant::now();
    let term = Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let exit = loop {
        if let Some(exit) = server.0.try_wait().unwrap() {
            break exit;
        }
        assert!(
            asked.elapsed() < within,
            "the server did not exit within {within:?} of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "graceful shutdown exits 0, got {exit}");
    asked.elapsed()
}

#[test]
fn sigterm_stops_the_scheduler_between_due_games() {
    const GAMES: usize = 150;
    let db = TestDb::migrated();
    // Games of one human and three bots, each with the human's deadline passed and one
    // timeout already counted: waking one hands the seat to a bot, which plays on in short
    // steps (the scheduler comes back to the game while other due games wait their turn).
    actix_web::rt::System::new().block_on(async {
        let state = db.state();
        let app = common::app(state.clone()).await;
        // Three players: one may have at most 100 active games.
        let mut players = Vec::new();
        for i in 0..3 {
            players.push(register(&app, &format!("insomniac{i}")).await);
        }
        for i in 0..GAMES {
            let me = &players[i % players.len()];
            let created = send(
                &app,
                bearer(
                    post_json(
                        "/api/v1/games",
                        json!({"rules": {"target_score": 301}, "turn_timeout_seconds": 5,
                               "seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]}),
                    ),
                    &me.access,
                ),
            )
            .await;
            assert_eq!(created.status, 201, "{}", created.text);
        }
        let mut conn = state.db.conn().unwrap();
        diesel::update(game_seats::table.filter(game_seats::user_id.is_not_null()))
            .set(game_seats::timeouts_in_row.eq(1))
            .execute(&mut *conn)
            .unwrap();
        let past = leekha::db::now() - chrono::Duration::seconds(1);
        diesel::update(games::table)
            .set((games::deadline.eq(Some(past)), games::wake_at.eq(Some(past))))
            .execute(&mut *conn)
            .unwrap();
    });
    // A game the scheduler has woken: its human's seat went to the bot for the timeout.
    let woken = |db: &TestDb| -> i64 {
        let mut conn = db.state().db.conn().unwrap();
        game_seats::table
            .filter(game_seats::bot_reason.eq("timeout"))
            .count()
            .get_result(&mut *conn)
            .unwrap()
    };

    let port = free_port();
    let started = Instant::now();
    let mut server = start(&db, port);
    // SIGTERM once the scheduler is into its tick.
    while woken(&db) < 1 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the scheduler never woke a game"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let first = started.elapsed();
    let took = terminate(&mut server, Duration::from_secs(30));
    let done = woken(&db);
    eprintln!(
        "a game woken {first:?} after the start; exit {took:?} after SIGTERM, \
         {done} of {GAMES} games woken"
    );
    assert!(
        took < Duration::from_secs(5),
        "the exit waits for the game in hand only ({took:?})"
    );
    assert!(
        done < GAMES as i64,
        "it stopped between games, it did not wake all {GAMES}"
    );
}

#[test]
fn a_request_in_flight_when_sigterm_arrives_still_completes() {
    let db = TestDb::migrated();
    let port = free_port();
    let mut server = start(&db, port);

    let (status, session) = call(
        port,
        "POST",
        "/api/v1/auth/register",
        None,
        Some(r#"{"username": "night_owl", "password": "correct horse battery"}"#),
    );
    assert_eq!(status, 201, "{session}");
    let token = session["access_token"].as_str().unwrap().to_owned();
    let (status, game) = call(port, "POST", "/api/v1/games", Some(&token), Some("{}"));
    assert_eq!(status, 201, "{game}");
    let id = game["id"].as_str().unwrap();
    let last_seq = {
        let (status, page) = call(
            port,
            "GET",
            &format!("/api/v1/games/{id}/events"),
            Some(&token),
            None,
        );
        assert_eq!(status, 200, "{page}");
        page["last_seq"].as_i64().unwrap()
    };

    // A long-poll that nothing will wake: it answers when its 5 s run out.
    let asked = Instant::now();
    let poll = send_request(
        port,
        "GET",
        &format!("/api/v1/games/{id}/events?after={last_seq}&wait=5"),
        Some(&token),
        None,
    )
    .unwrap();
    // Let the server read it and start waiting, then ask it to stop.
    std::thread::sleep(Duration::from_millis(1500));
    let term = Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());

    let (status, page) = read_response(poll).unwrap();
    let waited = asked.elapsed();
    assert_eq!(status, 200, "the in-flight request completes: {page}");
    assert_eq!(page["last_seq"], last_seq);
    assert!(
        waited >= Duration::from_millis(4500),
        "it ran its course ({waited:?}), it was not cut short"
    );

    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(exit) = server.0.try_wait().unwrap() {
            break exit;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "graceful shutdown exits 0, got {exit}");
    // New connections are refused once it is gone.
    assert!(
        send_request(port, "GET", "/healthz", None, None)
            .and_then(read_response)
            .is_err()
    );
}
