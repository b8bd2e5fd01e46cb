//! The service foundation: probes, error envelopes, the OpenAPI document, the binary.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use actix_web::http::Method;
use actix_web::test::TestRequest;
use leekha::config::{Config, DatabaseUrl};

use crate::common::{self, TestDb, proxy::Proxy, send};

#[actix_web::test]
async fn healthz_answers_ok() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let reply = send(&app, TestRequest::get().uri("/healthz")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json["status"], "ok");
    assert!(reply.headers.contains_key("x-request-id"));
}

#[actix_web::test]
async fn an_empty_database_is_not_ready_until_migrated_then_ready() {
    let db = TestDb::empty();
    let state = db.state();
    let app = common::app(state.clone()).await;

    let reply = send(&app, TestRequest::get().uri("/readyz")).await;
    reply.assert_problem(503, "not_migrated");
    // Every 503 says when to come back, as the document declares.
    assert!(
        reply
            .header("retry-after")
            .is_some_and(|s| s.parse::<u32>().is_ok_and(|n| n > 0))
    );

    let applied = state
        .db
        .migrate()
        .expect("migrations apply to an empty database");
    assert!(applied >= 1);
    assert_eq!(
        state.db.migrate().unwrap(),
        0,
        "a second run applies nothing"
    );

    let reply = send(&app, TestRequest::get().uri("/readyz")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["status"], "ready");
    let expected = match db.url.backend() {
        leekha::config::Backend::Postgres => "postgresql",
        leekha::config::Backend::Sqlite => "sqlite",
    };
    assert_eq!(reply.json["database"], expected);
}

#[actix_web::test]
async fn readyz_turns_503_when_postgres_is_unreachable_and_200_when_it_returns() {
    let Some(_) = common::pg_base_url() else {
        eprintln!(
            "skipped: needs PostgreSQL (LEEKHA_TEST_DATABASE_URL); SQLite has no server to lose"
        );
        return;
    };
    let db = TestDb::migrated();
    let url = db.url.expose().to_owned();
    let authority = url
        .split("://")
        .nth(1)
        .unwrap()
        .split(['/', '?'])
        .next()
        .unwrap();
    let host_port = authority.rsplit('@').next().unwrap();
    let target: SocketAddr = host_port.to_socket_addrs().unwrap().next().unwrap();
    let proxy = Proxy::start(target);
    let proxied = url.replacen(host_port, &proxy.addr.to_string(), 1);
    let mut config = Config::for_database(DatabaseUrl::parse(&proxied).unwrap());
    config.db_timeout = Duration::from_millis(500);
    config.jwt_secret = Some(leekha::auth::Secret::new(common::TEST_SECRET));
    let state = common::state_for(config);
    let app = common::app(state).await;

    let reply = send(&app, TestRequest::get().uri("/readyz")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);

    proxy.cut();
    let started = Instant::now();
    let reply = send(&app, TestRequest::get().uri("/readyz")).await;
    reply.assert_problem(503, "database_unavailable");
    assert!(reply.headers.contains_key("retry-after"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a probe must not hang"
    );

    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = send(&app, TestRequest::get().uri("/readyz")).await;
        if reply.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "readyz did not recover: {}",
            reply.text
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn when_postgres_drops_the_pools_sessions_one_request_fails_and_the_rest_do_not() {
    use diesel::{Connection, RunQueryDsl};
    let Some(base) = common::pg_base_url() else {
        eprintln!("skipped: needs PostgreSQL (LEEKHA_TEST_DATABASE_URL)");
        return;
    };
    let db = TestDb::migrated();
    let mut config = db.config();
    config.pool_size = 4;
    let app = common::app(common::state_for(config)).await;
    // Every pooled connection opened and idle.
    let fill = futures_util::future::join_all(
        (0..8).map(|_| send(&app, TestRequest::get().uri("/readyz"))),
    )
    .await;
    assert!(fill.iter().all(|r| r.status == 200));

    // As at a restart of PostgreSQL: every session of the database ends.
    let name = db.url.expose().rsplit('/').next().unwrap().to_owned();
    let mut admin = diesel::PgConnection::establish(&base).unwrap();
    diesel::sql_query(format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = '{name}' AND pid <> pg_backend_pid()"
    ))
    .execute(&mut admin)
    .unwrap();

    // The first request to meet a dead connection fails; it has the pool drop the other
    // dead ones, so the next requests get fresh connections (before, each of the four
    // failed one request).
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(
            send(&app, TestRequest::get().uri("/readyz"))
                .await
                .status
                .as_u16(),
        );
    }
    let failed = statuses.iter().filter(|&&s| s == 503).count();
    assert!(failed <= 1, "{statuses:?}");
    assert_eq!(statuses[1..], [200, 200, 200], "{statuses:?}");
}

#[actix_web::test]
async fn a_write_while_another_connection_holds_the_sqlite_lock_gets_503_with_retry_after() {
    use diesel::Connection;
    use diesel::connection::SimpleConnection;

    let db = TestDb::migrated();
    if db.url.backend() != leekha::config::Backend::Sqlite {
        eprintln!("skipped: SQLite's write lock only");
        return;
    }
    let mut config = db.config();
    // busy_timeout follows it: the request gives up on the lock after this long.
    config.db_timeout = Duration::from_millis(300);
    let app = common::app(common::state_for(config)).await;
    let me = common::register(&app, "patient").await;

    // Another process's writer, as a second raw connection to the same file.
    let mut other = diesel::SqliteConnection::establish(db.url.expose()).unwrap();
    other.batch_execute("BEGIN IMMEDIATE").unwrap();
    let started = Instant::now();
    let reply = send(
        &app,
        common::bearer(
            common::post_json("/api/v1/games", serde_json::json!({})),
            &me.access,
        ),
    )
    .await;
    let waited = started.elapsed();
    other.batch_execute("ROLLBACK").unwrap();

    reply.assert_problem(503, "database_unavailable");
    assert!(
        reply.headers.contains_key("retry-after"),
        "{:?}",
        reply.headers
    );
    assert!(
        waited < Duration::from_secs(5),
        "it waits busy_timeout, not longer ({waited:?})"
    );
    eprintln!("answered 503 after {waited:?}");

    // The lock released, the same request succeeds.
    let reply = send(
        &app,
        common::bearer(
            common::post_json("/api/v1/games", serde_json::json!({})),
            &me.access,
        ),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
}

#[actix_web::test]
async fn an_unknown_route_gets_404_problem_json() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let reply = send(&app, TestRequest::get().uri("/api/v1/nothing-here")).await;
    reply.assert_problem(404, "not_found");
}

#[actix_web::test]
async fn a_wrong_method_gets_405_problem_json_with_allow() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let reply = send(&app, TestRequest::delete().uri("/readyz")).await;
    reply.assert_problem(405, "method_not_allowed");
    assert_eq!(reply.headers.get("allow").unwrap(), "GET, HEAD");
    // The document's own operations, and the pages outside it (the web client).
    for page in ["/openapi.json", "/", "/sw.js", "/docs"] {
        for method in [Method::DELETE, Method::POST, Method::PUT] {
            let reply = send(
                &app,
                TestRequest::default().method(method.clone()).uri(page),
            )
            .await;
            reply.assert_problem(405, "method_not_allowed");
            assert_eq!(
                reply.headers.get("allow").unwrap(),
                "GET, HEAD",
                "{method} {page}"
            );
        }
    }
}

#[actix_web::test]
async fn documentation_is_served_from_the_binary() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let spec = send(&app, TestRequest::get().uri("/openapi.json")).await;
    assert_eq!(spec.status, 200);
    assert_eq!(spec.json["openapi"], "3.1.0");
    assert!(spec.json["paths"]["/readyz"]["get"].is_object());
    // Both ways into the documentation are operations of the document (API.md lists them).
    assert_eq!(
        spec.json["paths"]["/openapi.json"]["get"]["operationId"],
        "openapi_document"
    );
    assert_eq!(spec.json["paths"]["/docs"]["get"]["operationId"], "docs");

    let redirect = send(&app, TestRequest::get().uri("/docs")).await;
    assert_eq!(redirect.status, 308);
    assert_eq!(redirect.headers.get("location").unwrap(), "/docs/");
    let page = send(&app, TestRequest::get().uri("/docs/")).await;
    assert_eq!(page.status, 200);
    assert!(
        page.text.contains("swagger"),
        "{}",
        &page.text[..page.text.len().min(300)]
    );
    let init = send(&app, TestRequest::get().uri("/docs/swagger-initializer.js")).await;
    assert_eq!(init.status, 200);
    for file in ["/docs/", "/docs/swagger-initializer.js"] {
        let head = send(&app, TestRequest::default().method(Method::HEAD).uri(file)).await;
        assert_eq!(head.status, 200, "HEAD {file}");
    }
    assert!(init.text.contains("/openapi.json"));
    // No request leaves for the public validator: the page works offline.
    assert!(
        init.text.contains(r#""validatorUrl": "none""#),
        "{}",
        init.text
    );
    let bundle = send(&app, TestRequest::get().uri("/docs/swagger-ui-bundle.js")).await;
    assert_eq!(bundle.status, 200);
    assert!(
        bundle.text.len() > 100_000,
        "the Swagger UI bundle is vendored in the binary"
    );
}

#[test]
fn the_committed_openapi_document_matches_the_code() {
    let generated = serde_json::to_string_pretty(&leekha::http::openapi()).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed.trim_end() == generated.trim_end(),
        "openapi/openapi.json is stale: regenerate it with `cargo run -q -- openapi > openapi/openapi.json`"
    );
}

#[test]
fn every_operation_documents_its_responses() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"]
                .as_object()
                .unwrap_or_else(|| panic!("{method} {path}"));
            assert!(!responses.is_empty(), "{method} {path} has no responses");
            assert!(
                op["operationId"].is_string() && op["description"].is_string(),
                "{method} {path} lacks an operationId or a description"
            );
            let bodies = op["requestBody"]["content"]
                .as_object()
                .into_iter()
                .chain(responses.values().filter_map(|r| r["content"].as_object()));
            for content in bodies {
                for (media, body) in content {
                    // Prometheus text and the problem pages' HTML have no JSON example.
                    if media.starts_with("application/") {
                        assert!(
                            body.get("example").is_some() || body.get("examples").is_some(),
                            "{method} {path}: a {media} body without an example"
                        );
                    }
                }
            }
            for (status, response) in responses {
                assert!(
                    response["description"].is_string(),
                    "{method} {path} {status} lacks a description"
                );
            }
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http_get(port: u16, path: &str) -> Option<String> {
    http_request(port, "GET", path)
}

/// One request over a fresh connection, as a real client sends it; the whole answer as text.
fn http_request(port: u16, method: &str, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    stream.read_to_string(&mut out).ok()?;
    Some(out)
}

/// The status line, the value of `name` (lower case), and the body of a raw answer.
fn parts<'a>(answer: &'a str, name: &str) -> (&'a str, Option<&'a str>, &'a str) {
    let (head, body) = answer.split_once("\r\n\r\n").expect("a complete head");
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default();
    let value = lines.find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    });
    (status, value, body)
}

#[test]
fn the_binary_boots_on_an_empty_database_migrates_and_shuts_down_gracefully() {
    let db = TestDb::empty();
    let port = free_port();
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_leekha"))
        .arg("serve")
        .env("DATABASE_URL", db.url.expose())
        .env("LEEKHA_BIND", format!("127.0.0.1:{port}"))
        .env("LEEKHA_WORKERS", "1")
        .env("LEEKHA_JWT_SECRET", common::TEST_SECRET)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ready_after = loop {
        if let Some(reply) = http_get(port, "/readyz")
            && reply.starts_with("HTTP/1.1 200")
        {
            break started.elapsed();
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the server exited with {status}: {err}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server never became ready"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    eprintln!(
        "cold start to ready ({:?}): {ready_after:?}",
        db.url.backend()
    );

    // HEAD of a GET resource: the GET's status and length, no content (RFC 9110 §9.3.2);
    // checked on the wire, where the encoder drops the body.
    for path in [
        "/openapi.json",
        "/api/v1/push/config",
        "/api/v1/chat/phrases",
        "/api/v1/me",
    ] {
        let get = http_request(port, "GET", path).unwrap();
        let head = http_request(port, "HEAD", path).unwrap();
        let (get_status, get_length, get_body) = parts(&get, "content-length");
        let (head_status, head_length, head_body) = parts(&head, "content-length");
        assert_eq!(head_status, get_status, "{path}");
        assert!(!get_body.is_empty(), "{path}: {get}");
        assert_eq!(head_body, "", "{path}: {head}");
        assert_eq!(head_length, get_length, "{path}");
    }
    let stream = http_request(port, "HEAD", "/api/v1/me/notifications/stream").unwrap();
    let (status, allow, _) = parts(&stream, "allow");
    assert!(status.contains(" 405 "), "a stream has no HEAD: {stream}");
    assert_eq!(allow, Some("GET"));
    let put_only = http_request(port, "POST", "/api/v1/me").unwrap();
    let (status, allow, _) = parts(&put_only, "allow");
    assert!(status.contains(" 405 "), "{put_only}");
    assert!(allow.is_some_and(|a| a.contains("HEAD")), "{put_only}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "graceful shutdown exits 0, got {exit}");
}

#[test]
fn the_binary_refuses_bad_configuration_with_a_clear_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_leekha"))
        .arg("migrate")
        .env("DATABASE_URL", "mysql://root@localhost/leekha")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("DATABASE_URL") && err.contains("unknown scheme"),
        "{err}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_leekha"))
        .arg("serve")
        .env("DATABASE_URL", "/nonexistent-dir/x/leekha.db")
        .env("LEEKHA_DB_TIMEOUT_MS", "200")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect to the database"), "{err}");

    // What the wake-up listener cannot honour is refused before the database is touched
    // (no server listens on port 1: a migration first would fail to connect instead).
    let out = Command::new(env!("CARGO_BIN_EXE_leekha"))
        .arg("serve")
        .env(
            "DATABASE_URL",
            "postgres://postgres@127.0.0.1:1/leekha?sslpassword=secret",
        )
        .env("LEEKHA_JWT_SECRET", "x".repeat(32))
        .env("LEEKHA_DB_TIMEOUT_MS", "200")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("DATABASE_URL: sslpassword") && !err.contains("cannot connect"),
        "{err}"
    );
}

#[test]
fn the_openapi_subcommand_prints_the_document() {
    let out = Command::new(env!("CARGO_BIN_EXE_leekha"))
        .arg("openapi")
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["info"]["title"], "Leekha server");
}

/// Every closed set on the wire is an `enum` in the document (issue: `{kind: "bott"}` must
/// not type-check in a generated client): a plain string property is allowed only for the
/// free text fields named here.
#[test]
fn only_free_text_fields_are_plain_strings_in_the_document() {
    const FREE_TEXT: &[&str] = &[
        "reason",
        "abort_reason",
        "ban_reason",
        "next_cursor",
        "username",
        "target_id",
        "last_error",
        "detail",
        "title",
        "type",
        "advice",
        "explanation",
        "refresh_token",
        "access_token",
        "mute_reason",
        "text",
        "en",
        "ar",
    ];
    let doc = leekha::http::openapi();
    let mut plain = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let Some(properties) = schema["properties"].as_object() else {
            continue;
        };
        for (field, property) in properties {
            let is_string = property["type"] == "string"
                || property["type"] == serde_json::json!(["string", "null"]);
            let constrained = ["enum", "format", "pattern", "$ref"]
                .iter()
                .any(|k| property.get(*k).is_some());
            if is_string && !constrained && !FREE_TEXT.contains(&field.as_str()) {
                plain.push(format!("{name}.{field}"));
            }
        }
    }
    assert!(
        plain.is_empty(),
        "plain strings that look like closed sets: {plain:?}"
    );
}
