//! The HTTP conventions of API 1.1 that hold across endpoints: `Location` on every 201,
//! compression, CORS, 415 for non-JSON bodies, problem type pages, `RateLimit-*` headers,
//! `HEAD` on the probes, the limits of lists.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::common::{self, TestDb, bearer, post_json, register, send};

/// Every documented operation as (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            out.push((method.clone(), path.clone(), op.clone()));
        }
    }
    out
}

#[actix_web::test]
async fn every_201_names_the_new_resource_in_location() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    let mut created: Vec<String> = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["responses"].get("201").is_some())
        .map(|(method, path, _)| format!("{method} {path}"))
        .collect();
    created.sort();
    assert_eq!(
        created,
        [
            "post /api/v1/auth/guest",
            "post /api/v1/auth/register",
            "post /api/v1/auth/stream-ticket",
            "post /api/v1/games",
            "post /api/v1/games/{id}/chat",
            // Its Location is checked in ratings.rs (a rematch needs a finished game).
            "post /api/v1/games/{id}/rematch",
            // Checked in tests/api/push.rs.
            "post /api/v1/me/devices",
            "put /api/v1/me/blocks/{username}",
            "put /api/v1/me/friends/{username}",
        ],
        "a new 201 needs its Location checked here"
    );
    // The document promises what the server sends: a required Location on every 201 but
    // the stream ticket's, which has no address (schemathesis holds the server to it).
    for (method, path, op) in operations(&doc) {
        let Some(created) = op["responses"].get("201") else {
            continue;
        };
        let location = &created["headers"]["Location"];
        if path == "/api/v1/auth/stream-ticket" {
            assert!(location.is_null(), "{method} {path} documents a Location");
        } else {
            assert_eq!(location["required"], true, "{method} {path}");
        }
    }

    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let registered = send(
        &app,
        post_json(
            "/api/v1/auth/register",
            json!({"username": "lina", "password": common::PASSWORD}),
        ),
    )
    .await;
    assert_eq!(registered.status, 201, "{}", registered.text);
    assert_eq!(registered.header("location").unwrap(), "/api/v1/me");
    let token = registered.json["access_token"].as_str().unwrap();
    let me = send(&app, bearer(TestRequest::get().uri("/api/v1/me"), token)).await;
    assert_eq!(me.json["id"], registered.json["user"]["id"]);

    let guest = send(&app, TestRequest::post().uri("/api/v1/auth/guest")).await;
    assert_eq!(guest.status, 201, "{}", guest.text);
    assert_eq!(guest.header("location").unwrap(), "/api/v1/me");

    let game = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/games"), token),
    )
    .await;
    assert_eq!(game.status, 201, "{}", game.text);
    let location = game.header("location").unwrap();
    assert_eq!(
        location,
        format!("/api/v1/games/{}", game.json["id"].as_str().unwrap())
    );
    let shown = send(&app, bearer(TestRequest::get().uri(location), token)).await;
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert_eq!(shown.json["id"], game.json["id"]);

    let game_id = game.json["id"].as_str().unwrap();
    let said = send(
        &app,
        bearer(
            post_json(
                &format!("/api/v1/games/{game_id}/chat"),
                json!({"text": "hi"}),
            ),
            token,
        ),
    )
    .await;
    assert_eq!(said.status, 201, "{}", said.text);
    let location = said.header("location").unwrap();
    let listed = send(&app, bearer(TestRequest::get().uri(location), token)).await;
    assert_eq!(
        listed.json["items"][0]["id"], said.json["id"],
        "{}",
        listed.text
    );

    register(&app, "omar").await;
    for (put, list, key) in [
        ("/api/v1/me/friends/omar", "/api/v1/me/friends", "outgoing"),
        ("/api/v1/me/blocks/omar", "/api/v1/me/blocks", "items"),
    ] {
        let made = send(&app, bearer(TestRequest::put().uri(put), token)).await;
        assert_eq!(made.status, 201, "{}", made.text);
        let location = made.header("location").unwrap();
        assert_eq!(location, list);
        let listed = send(&app, bearer(TestRequest::get().uri(location), token)).await;
        assert_eq!(
            listed.json[key][0]["user"]["username"], "omar",
            "{}",
            listed.text
        );
    }
    // A stream ticket is a single-use secret, not a resource with an address of its own:
    // it names none.
    let ticket = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/auth/stream-ticket"), token),
    )
    .await;
    assert_eq!(ticket.status, 201, "{}", ticket.text);
    assert!(ticket.header("location").is_none());
}

#[actix_web::test]
async fn head_on_the_probes_answers_like_get_without_a_body() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for path in ["/healthz", "/readyz"] {
        let get = send(&app, TestRequest::get().uri(path)).await;
        let head = send(&app, TestRequest::default().method(Method::HEAD).uri(path)).await;
        assert_eq!(get.status, 200, "{path}");
        assert_eq!(head.status, get.status, "{path}");
        assert_eq!(head.content_type(), get.content_type(), "{path}");
        assert!(
            !get.text.is_empty() && head.text.is_empty(),
            "{path}: {}",
            head.text
        );
    }
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    assert!(doc["paths"]["/healthz"]["head"].is_object());
    assert!(doc["paths"]["/readyz"]["head"].is_object());
}

#[actix_web::test]
async fn head_on_readyz_reports_an_unmigrated_database() {
    let db = TestDb::empty();
    let app = common::app(db.state()).await;
    let head = send(
        &app,
        TestRequest::default().method(Method::HEAD).uri("/readyz"),
    )
    .await;
    assert_eq!(head.status, 503);
}

/// A request for a documented operation, its path parameters filled with values that parse
/// (a seat number, else a fresh UUID), so that only the body can be refused.
fn request_for(method: &str, path: &str) -> TestRequest {
    let uri: String = path
        .split('/')
        .map(|segment| match segment {
            "{seat}" => "1".to_owned(),
            s if s.starts_with('{') => uuid::Uuid::new_v4().to_string(),
            s => s.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/");
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
    TestRequest::default().method(method).uri(&uri)
}

#[actix_web::test]
async fn every_operation_with_a_json_body_refuses_other_media_types_with_415() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    // An administrator passes every authorization check, so the body is what is judged.
    let admin = crate::admin::admin(&app, &state, "root").await;
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    let with_body: Vec<_> = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op.get("requestBody").is_some())
        .collect();
    assert!(with_body.len() >= 10, "{with_body:?}");
    for (method, path, op) in &with_body {
        assert!(
            op["responses"]["415"].is_object(),
            "{method} {path} documents 415"
        );
        for content_type in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            // A `json` subtype of another type is not `application/json` (actix-web reads it).
            Some("text/json"),
            None,
        ] {
            let mut req = bearer(request_for(method, path), &admin.access).set_payload("{}");
            if let Some(content_type) = content_type {
                req = req.insert_header(("content-type", content_type));
            }
            let reply = send(&app, req).await;
            assert_eq!(
                reply.status, 415,
                "{method} {path} with {content_type:?}: {}",
                reply.text
            );
            reply.assert_problem(415, "unsupported_media_type");
        }
    }
}

#[actix_web::test]
async fn json_with_parameters_and_an_empty_optional_body_are_accepted() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let player = register(&app, "hala").await;
    let create = |content_type: Option<&'static str>, body: &'static str| {
        let mut req =
            bearer(TestRequest::post().uri("/api/v1/games"), &player.access).set_payload(body);
        if let Some(content_type) = content_type {
            req = req.insert_header(("content-type", content_type));
        }
        req
    };
    for (content_type, body) in [
        (
            Some("application/json; charset=utf-8"),
            r#"{"visibility":"private"}"#,
        ),
        (Some("application/vnd.leekha+json"), "{}"),
        (Some("application/json"), ""),
        (None, ""),
    ] {
        let reply = send(&app, create(content_type, body)).await;
        assert_eq!(
            reply.status, 201,
            "{content_type:?} {body:?}: {}",
            reply.text
        );
    }
    // An empty body under another media type still declares something we cannot read.
    send(&app, create(Some("text/plain"), ""))
        .await
        .assert_problem(415, "unsupported_media_type");
    let login = TestRequest::post()
        .uri("/api/v1/auth/login")
        .insert_header(("content-type", "application/json; charset=utf-8"))
        .set_payload(format!(
            r#"{{"username":"hala","password":"{}"}}"#,
            common::PASSWORD
        ));
    assert_eq!(send(&app, login).await.status, 200);
}

#[actix_web::test]
async fn a_problem_names_its_type_and_the_type_page_explains_the_code() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let refused = send(&app, TestRequest::get().uri("/api/v1/me")).await;
    refused.assert_problem(401, "missing_token");
    assert_eq!(refused.json["type"], "/problems/missing_token");
    assert_eq!(refused.json["title"], "Missing access token");

    let page = send(&app, TestRequest::get().uri("/problems/missing_token")).await;
    assert_eq!(page.status, 200);
    assert!(
        page.content_type().starts_with("text/html"),
        "{}",
        page.content_type()
    );
    assert!(page.text.contains("<code>missing_token</code>") && page.text.contains("401"));

    let json = send(
        &app,
        TestRequest::get()
            .uri("/problems/must_follow_suit")
            .insert_header(("accept", "application/json")),
    )
    .await;
    assert_eq!(json.status, 200);
    assert_eq!(json.json["code"], "must_follow_suit");
    assert_eq!(json.json["status"], 422);
    assert!(json.json["explanation"].is_string() && json.json["advice"].is_string());

    send(&app, TestRequest::get().uri("/problems/no_such_code"))
        .await
        .assert_problem(404, "not_found");
}

#[actix_web::test]
async fn every_catalog_code_has_its_page() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for entry in leekha::http::problem_catalog::all() {
        let uri = leekha::http::problem_catalog::type_uri(entry.code);
        let page = send(&app, TestRequest::get().uri(&uri)).await;
        assert_eq!(page.status, 200, "{uri}");
        assert!(
            page.text.contains(&format!("HTTP status {}", entry.status)),
            "{uri}"
        );
    }
}

/// A `RateLimit-*` header as a number.
fn rate_header(reply: &common::Reply, name: &str) -> u64 {
    reply
        .header(name)
        .unwrap_or_else(|| panic!("{name} missing: {:?}", reply.headers))
        .parse()
        .unwrap()
}

#[actix_web::test]
async fn account_endpoints_report_their_rate_limit_on_success_and_on_429() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.auth_rate_per_minute = 3;
    let app = common::app(common::state_for(config)).await;
    // Registration and login count against separate quotas.
    let player = register(&app, "rana").await;
    let login = || {
        post_json(
            "/api/v1/auth/login",
            json!({"username": "rana", "password": common::PASSWORD}),
        )
    };
    let mut remaining = Vec::new();
    for _ in 0..3 {
        let ok = send(&app, login()).await;
        assert_eq!(ok.status, 200, "{}", ok.text);
        assert_eq!(rate_header(&ok, "ratelimit-limit"), 3);
        let reset = rate_header(&ok, "ratelimit-reset");
        assert!((1..=60).contains(&reset), "{reset}");
        remaining.push(rate_header(&ok, "ratelimit-remaining"));
    }
    assert_eq!(remaining, [2, 1, 0]);

    let limited = send(&app, login()).await;
    limited.assert_problem(429, "rate_limited");
    assert_eq!(rate_header(&limited, "ratelimit-limit"), 3);
    assert_eq!(rate_header(&limited, "ratelimit-remaining"), 0);
    let retry = rate_header(&limited, "retry-after");
    let reset = rate_header(&limited, "ratelimit-reset");
    assert!(
        (1..=60).contains(&retry) && retry <= reset && reset <= 60,
        "{retry} {reset}"
    );

    // A refusal for another reason still reports the quota it spent.
    let wrong = send(
        &app,
        post_json(
            "/api/v1/auth/refresh",
            json!({"refresh_token": "not-a-token"}),
        ),
    )
    .await;
    wrong.assert_problem(401, "invalid_token");
    assert_eq!(rate_header(&wrong, "ratelimit-remaining"), 2);
    // Operations without a rate limit carry no such headers.
    let me = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &player.access),
    )
    .await;
    assert!(me.header("ratelimit-limit").is_none());
}

/// The body of a reply, decoded as its `Content-Encoding` says.
fn decoded(reply: &common::Reply) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match reply.header("content-encoding") {
        None => out.extend_from_slice(&reply.body),
        Some("gzip") => {
            flate2::read::GzDecoder::new(&reply.body[..])
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(&reply.body[..], 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        Some(other) => panic!("unexpected encoding {other}"),
    }
    out
}

/// The reply says its body depends on `Accept-Encoding`, so that no shared cache hands one
/// client's encoding to another.
fn assert_varies_by_encoding(reply: &common::Reply) {
    assert!(
        reply
            .header("vary")
            .is_some_and(|v| v.contains("accept-encoding")),
        "{:?}",
        reply.headers
    );
}

/// A GET with `Accept-Encoding`, when given.
fn get_encoded(uri: &str, accept_encoding: Option<&str>) -> TestRequest {
    let req = TestRequest::get().uri(uri);
    match accept_encoding {
        Some(e) => req.insert_header(("accept-encoding", e)),
        None => req,
    }
}

#[actix_web::test]
async fn responses_are_compressed_with_gzip_or_brotli_when_the_client_accepts_it() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let plain = send(&app, get_encoded("/openapi.json", None)).await;
    assert_eq!(plain.status, 200);
    assert!(plain.header("content-encoding").is_none());
    assert!(plain.json.is_object());
    // Uncompressed, but only because this client did not ask: a shared cache must know.
    assert_varies_by_encoding(&plain);
    for encoding in ["gzip", "br"] {
        let reply = send(&app, get_encoded("/openapi.json", Some(encoding))).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("content-encoding"), Some(encoding));
        assert_varies_by_encoding(&reply);
        assert!(
            reply.body.len() * 4 < plain.body.len(),
            "{encoding} compresses"
        );
        let json: Value = serde_json::from_slice(&decoded(&reply)).unwrap();
        assert_eq!(json, plain.json, "{encoding}");
    }
    // The Swagger UI, served from the binary.
    for asset in ["/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"] {
        let plain = send(&app, get_encoded(asset, None)).await;
        for encoding in ["gzip", "br"] {
            let reply = send(&app, get_encoded(asset, Some(encoding))).await;
            assert_eq!(reply.status, 200, "{asset}");
            assert_eq!(reply.header("content-encoding"), Some(encoding), "{asset}");
            assert_eq!(decoded(&reply), plain.body, "{asset} {encoding}");
        }
    }
    // A tiny body is not worth it; the mark that says so does not leak.
    let small = send(&app, get_encoded("/healthz", Some("gzip, br"))).await;
    assert_eq!(small.status, 200);
    assert!(
        small.header("content-encoding").is_none(),
        "{:?}",
        small.headers
    );
    assert_eq!(small.json["status"], "ok");
    // Refusing every encoding, identity included, gets a problem.
    send(
        &app,
        get_encoded("/openapi.json", Some("identity;q=0, *;q=0")),
    )
    .await
    .assert_problem(406, "not_acceptable");
}

#[actix_web::test]
async fn compressed_game_views_keep_their_etag_and_long_polls_still_answer() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = crate::common::play::four(&app, "zip").await;
    let game = crate::common::play::game_of(&app, &players, json!({})).await;
    let uri = format!("/api/v1/games/{game}");
    let token = &players[0].access;
    let plain = send(&app, bearer(get_encoded(&uri, None), token)).await;
    let view = send(&app, bearer(get_encoded(&uri, Some("gzip")), token)).await;
    assert_eq!(view.status, 200, "{}", view.text);
    assert_eq!(view.header("content-encoding"), Some("gzip"));
    let etag = view.header("etag").unwrap();
    assert_eq!(Some(etag), plain.header("etag"));
    let json: Value = serde_json::from_slice(&decoded(&view)).unwrap();
    assert_eq!(json["version"], plain.json["version"]);

    let unchanged = send(
        &app,
        bearer(get_encoded(&uri, Some("gzip")), token).insert_header(("if-none-match", etag)),
    )
    .await;
    assert_eq!(unchanged.status, 304);
    assert_eq!(unchanged.header("etag"), Some(etag));
    assert!(unchanged.body.is_empty() && unchanged.header("content-encoding").is_none());
    // The 304 stands for the full response, which varies with the encoding; so does the
    // uncompressed view.
    for reply in [&unchanged, &plain] {
        assert_varies_by_encoding(reply);
    }

    // A long-poll that runs out answers as usual, compressed or not.
    let events = send(
        &app,
        bearer(get_encoded(&format!("{uri}/events"), None), token),
    )
    .await;
    let last = events.json["events"]
        .as_array()
        .and_then(|e| e.last())
        .map_or(0, |e| e["seq"].as_i64().unwrap());
    let started = std::time::Instant::now();
    let waited = send(
        &app,
        bearer(
            get_encoded(&format!("{uri}/events?after={last}&wait=1"), Some("br")),
            token,
        ),
    )
    .await;
    assert_eq!(waited.status, 200, "{}", waited.text);
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    let page: Value = serde_json::from_slice(&decoded(&waited)).unwrap();
    assert_eq!(page["events"], json!([]), "{page}");
}

const APP_ORIGIN: &str = "https://app.example.com";

/// An app whose configuration allows CORS from these origins.
async fn app_with_cors(
    db: &TestDb,
    origins: &str,
) -> impl actix_web::dev::Service<
    actix_http::Request,
    Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
    Error = actix_web::Error,
> {
    let mut config = db.config();
    config.cors_origins = leekha::config::CorsOrigins::parse(origins).unwrap();
    common::app(common::state_for(config)).await
}

/// A preflight for a POST of an action with the headers a browser client sends.
fn preflight(origin: &str) -> TestRequest {
    TestRequest::default()
        .method(Method::OPTIONS)
        .uri(&format!("/api/v1/games/{}/actions", uuid::Uuid::new_v4()))
        .insert_header(("origin", origin))
        .insert_header(("access-control-request-method", "POST"))
        .insert_header((
            "access-control-request-headers",
            "authorization, content-type, if-match, idempotency-key",
        ))
}

/// The comma-separated values of a header, lowercase.
fn listed(reply: &common::Reply, name: &str) -> Vec<String> {
    reply
        .headers
        .get_all(name)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_ascii_lowercase())
        .collect()
}

#[actix_web::test]
async fn cors_is_off_by_default() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let reply = send(
        &app,
        TestRequest::get()
            .uri("/healthz")
            .insert_header(("origin", APP_ORIGIN)),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert!(reply.header("access-control-allow-origin").is_none());
    assert!(!listed(&reply, "vary").contains(&"origin".to_owned()));
    let refused = send(&app, preflight(APP_ORIGIN)).await;
    refused.assert_problem(405, "method_not_allowed");
    assert!(refused.header("access-control-allow-origin").is_none());
}

#[actix_web::test]
async fn an_allowed_origin_reads_answers_and_their_headers() {
    let db = TestDb::migrated();
    let app = app_with_cors(&db, "https://app.example.com, http://localhost:3000").await;
    let player = register(&app, "samir").await;
    let created = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/games"), &player.access)
            .insert_header(("origin", APP_ORIGIN))
            .insert_header(("accept-encoding", "gzip")),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(
        created.header("access-control-allow-origin"),
        Some(APP_ORIGIN)
    );
    assert!(created.header("access-control-allow-credentials").is_none());
    assert_eq!(created.header("content-encoding"), Some("gzip"));
    let vary = listed(&created, "vary");
    assert!(
        vary.contains(&"origin".to_owned()) && vary.contains(&"accept-encoding".to_owned()),
        "{vary:?}"
    );
    let exposed = listed(&created, "access-control-expose-headers");
    for header in [
        "etag",
        "location",
        "retry-after",
        "idempotent-replayed",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "x-request-id",
        "www-authenticate",
    ] {
        assert!(
            exposed.contains(&header.to_owned()),
            "{header} in {exposed:?}"
        );
    }

    // Errors are readable too, those rewritten into a problem included.
    let unauthorized = send(
        &app,
        TestRequest::get()
            .uri("/api/v1/me")
            .insert_header(("origin", "http://localhost:3000")),
    )
    .await;
    unauthorized.assert_problem(401, "missing_token");
    assert_eq!(
        unauthorized.header("www-authenticate"),
        Some(r#"Bearer realm="leekha""#)
    );
    assert_eq!(
        unauthorized.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    let too_large = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/games"), &player.access)
            .insert_header(("origin", APP_ORIGIN))
            .insert_header(("content-type", "application/json"))
            .set_payload(format!(r#"{{"visibility":"{}"}}"#, "x".repeat(100_000))),
    )
    .await;
    too_large.assert_problem(413, "payload_too_large");
    assert_eq!(
        too_large.header("access-control-allow-origin"),
        Some(APP_ORIGIN)
    );
}

#[actix_web::test]
async fn another_origin_is_served_without_cors_headers() {
    let db = TestDb::migrated();
    let app = app_with_cors(&db, APP_ORIGIN).await;
    for origin in [
        "https://evil.example.com",
        "https://app.example.com.evil.test",
        "null",
    ] {
        let reply = send(
            &app,
            TestRequest::get()
                .uri("/healthz")
                .insert_header(("origin", origin)),
        )
        .await;
        assert_eq!(reply.status, 200, "{origin}");
        for cors_header in [
            "access-control-allow-origin",
            "access-control-expose-headers",
            "access-control-allow-credentials",
        ] {
            assert!(
                reply.header(cors_header).is_none(),
                "{origin}: {cors_header}"
            );
        }
        assert!(
            listed(&reply, "vary").contains(&"origin".to_owned()),
            "{origin}"
        );
    }
    // Nor does a request without an Origin (not from a browser page) get any.
    let plain = send(&app, TestRequest::get().uri("/healthz")).await;
    assert!(plain.header("access-control-expose-headers").is_none());
}

#[actix_web::test]
async fn a_preflight_from_an_allowed_origin_is_answered_and_others_are_refused() {
    let db = TestDb::migrated();
    let app = app_with_cors(&db, APP_ORIGIN).await;
    let allowed = send(&app, preflight(APP_ORIGIN)).await;
    assert!(
        allowed.status == 200 || allowed.status == 204,
        "{} {}",
        allowed.status,
        allowed.text
    );
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some(APP_ORIGIN)
    );
    assert!(listed(&allowed, "access-control-allow-methods").contains(&"post".to_owned()));
    let headers = listed(&allowed, "access-control-allow-headers");
    for header in [
        "authorization",
        "content-type",
        "if-match",
        "if-none-match",
        "idempotency-key",
        "last-event-id",
    ] {
        assert!(
            headers.contains(&header.to_owned()),
            "{header} in {headers:?}"
        );
    }
    assert!(allowed.header("access-control-max-age").is_some());
    assert!(allowed.header("access-control-allow-credentials").is_none());

    let refused = send(&app, preflight("https://evil.example.com")).await;
    refused.assert_problem(400, "bad_request");
    assert!(refused.header("access-control-allow-origin").is_none());
    let odd_header = send(
        &app,
        preflight(APP_ORIGIN).insert_header(("access-control-request-headers", "x-unknown")),
    )
    .await;
    odd_header.assert_problem(400, "bad_request");
}

#[actix_web::test]
async fn a_wildcard_allows_every_origin_without_credentials() {
    let db = TestDb::migrated();
    let app = app_with_cors(&db, "*").await;
    let reply = send(
        &app,
        TestRequest::get()
            .uri("/healthz")
            .insert_header(("origin", "https://anywhere.example.org")),
    )
    .await;
    assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
    assert!(reply.header("access-control-allow-credentials").is_none());
    let allowed = send(&app, preflight("https://anywhere.example.org")).await;
    assert_eq!(allowed.status, 200, "{}", allowed.text);
    assert_eq!(allowed.header("access-control-allow-origin"), Some("*"));
}

#[actix_web::test]
async fn every_list_takes_at_most_200_and_gives_50_by_default() {
    // The document: every `limit` is 1..=200.
    let doc: Value = serde_json::to_value(leekha::http::openapi()).unwrap();
    let mut limits = 0;
    for (method, path, op) in operations(&doc) {
        for param in op["parameters"].as_array().into_iter().flatten() {
            if param["name"] == "limit" {
                limits += 1;
                assert_eq!(param["schema"]["maximum"], 200, "{method} {path}");
                assert_eq!(param["schema"]["minimum"], 1, "{method} {path}");
            }
        }
    }
    assert!(limits >= 10, "{limits} limit parameters");

    // The lists by `seq` refuse 201 and give 50 when not asked.
    use crate::common::play::{four, game_of, get, legal_action, post};
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "pager").await;
    let id = game_of(&app, &players, json!({})).await;
    for uri in [
        format!("/api/v1/games/{id}/events?limit=201"),
        format!("/api/v1/games/{id}/chat?limit=201"),
        "/api/v1/me/notifications?limit=201".to_owned(),
        format!("/api/v1/games/{id}/events?limit=0"),
    ] {
        get(&app, &uri, &players[0].access)
            .await
            .assert_problem(400, "validation_failed");
    }
    // Play until the game has more than 50 events.
    let mut last_seq = 0;
    while last_seq <= 60 {
        let mut acted = false;
        for p in &players {
            let view = get(&app, &format!("/api/v1/games/{id}"), &p.access).await;
            if let Some(action) = legal_action(&view.json) {
                let done = post(
                    &app,
                    &format!("/api/v1/games/{id}/actions"),
                    action,
                    &p.access,
                )
                .await;
                assert_eq!(done.status, 200, "{}", done.text);
                acted = true;
            }
        }
        assert!(acted, "nobody could act");
        let all = get(
            &app,
            &format!("/api/v1/games/{id}/events?limit=200"),
            &players[0].access,
        )
        .await;
        last_seq = all.json["last_seq"].as_i64().unwrap();
    }
    let page = get(
        &app,
        &format!("/api/v1/games/{id}/events"),
        &players[0].access,
    )
    .await;
    assert_eq!(
        page.json["events"].as_array().unwrap().len(),
        50,
        "{}",
        page.text
    );
    assert_eq!(
        page.json["last_seq"], 50,
        "a full page ends at its last event"
    );
}

#[actix_web::test]
async fn a_body_must_be_a_json_object_and_a_wrong_value_in_it_is_validation_failed() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = crate::common::play::four(&app, "obj").await;
    let game = crate::common::play::game_of(&app, &players, json!({})).await;
    let token = &players[0].access;
    let raw = |method: Method, uri: &str, body: &str| {
        TestRequest::default()
            .method(method)
            .uri(uri)
            .insert_header(("content-type", "application/json"))
            .set_payload(body.to_owned())
    };
    // serde would fill a struct from an array of its fields; no schema of the API allows it.
    for (uri, body) in [
        (
            "/api/v1/games",
            r#"[null, null, "private", null, null, null]"#,
        ),
        (
            &format!("/api/v1/games/{game}/actions"),
            r#"["play", "KC"]"#,
        ),
        (&format!("/api/v1/games/{game}/actions"), r#""play""#),
        ("/api/v1/me/devices", r#"["webpush"]"#),
        ("/api/v1/me/away", "null"),
    ] {
        let reply = send(&app, bearer(raw(Method::POST, uri, body), token)).await;
        let reply = if reply.status == 405 {
            send(&app, bearer(raw(Method::PUT, uri, body), token)).await
        } else {
            reply
        };
        reply.assert_problem(400, "validation_failed");
        assert!(reply.text.contains("JSON object"), "{uri}: {}", reply.text);
    }
    let account = raw(
        Method::POST,
        "/api/v1/auth/register",
        r#"["eve", "a password"]"#,
    );
    send(&app, account)
        .await
        .assert_problem(400, "validation_failed");
    // Nothing was made of them.
    let mine = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/games"), token),
    )
    .await;
    assert_eq!(
        mine.json["items"].as_array().unwrap().len(),
        1,
        "{}",
        mine.text
    );
    // A wrong token where an enum belongs is a wrong value, not malformed JSON.
    for body in [r#"{"platform": null}"#, r#"{"platform": 5}"#] {
        send(
            &app,
            bearer(raw(Method::POST, "/api/v1/me/devices", body), token),
        )
        .await
        .assert_problem(400, "validation_failed");
    }
    // What is not JSON at all still is.
    let cut = raw(Method::POST, "/api/v1/me/devices", r#"{"platform": "fc"#);
    send(&app, bearer(cut, token))
        .await
        .assert_problem(400, "bad_request");
}

#[actix_web::test]
async fn a_body_that_cannot_be_read_is_described_in_words_not_internals() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let player = register(&app, "reader").await;
    // A plain JSON body that claims to be in `encoding`.
    let claimed = |encoding: &str, username: &str| {
        TestRequest::post()
            .uri("/api/v1/auth/register")
            .insert_header(("content-type", "application/json"))
            .insert_header(("content-encoding", encoding))
            .set_payload(format!(
                r#"{{"username":"{username}","password":"password123"}}"#
            ))
    };
    for encoding in ["gzip", "br", "deflate", "zstd"] {
        let reply = send(&app, claimed(encoding, "zz")).await;
        reply.assert_problem(400, "bad_request");
        let detail = reply.json["detail"].as_str().unwrap();
        assert!(
            !detail.contains("Some(") && !detail.contains("Custom") && !detail.contains("kind:"),
            "{encoding}: {detail}"
        );
    }
    // A coding the server does not decode is named, with those it does, and the body is
    // not read as if it were plain (it is plain here, and would register `coded`).
    for encoding in ["x-gzip", "gzip, br", "compress"] {
        let reply = send(&app, claimed(encoding, "coded")).await;
        reply.assert_problem(415, "unsupported_media_type");
        assert_eq!(
            reply.header("accept-encoding"),
            Some("gzip, deflate, br, zstd"),
            "{encoding}"
        );
        let detail = reply.json["detail"].as_str().unwrap();
        assert!(detail.contains(encoding), "{encoding}: {detail}");
    }
    send(
        &app,
        TestRequest::post()
            .uri("/api/v1/auth/login")
            .insert_header(("content-type", "application/json"))
            .set_payload(r#"{"username":"coded","password":"password123"}"#),
    )
    .await
    .assert_problem(401, "invalid_credentials");
    // An optional body past the limit says the limit, as a required one does.
    let too_large = send(
        &app,
        bearer(TestRequest::post().uri("/api/v1/games"), &player.access)
            .insert_header(("content-type", "application/json"))
            .set_payload(format!(r#"{{"visibility":"{}"}}"#, "x".repeat(100_000))),
    )
    .await;
    too_large.assert_problem(413, "payload_too_large");
    let detail = too_large.json["detail"].as_str().unwrap();
    assert!(detail.contains("65536"), "{detail}");
}

#[actix_web::test]
async fn a_body_naming_a_key_twice_is_refused_whatever_the_operation() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    // A required body.
    let raw = |uri: &str, body: &'static str| {
        TestRequest::post()
            .uri(uri)
            .insert_header(("content-type", "application/json"))
            .set_payload(body)
    };
    send(
        &app,
        raw(
            "/api/v1/auth/register",
            r#"{"username":"dupk1","username":"dupk2","password":"password123"}"#,
        ),
    )
    .await
    .assert_problem(400, "validation_failed");
    let player = register(&app, "dupe_keys").await;
    // An optional body, and a key repeated deeper down.
    for body in [
        r#"{"visibility":"public","visibility":"private"}"#,
        r#"{"rules":{"preset":"classic","preset":"partnership"}}"#,
    ] {
        send(&app, bearer(raw("/api/v1/games", body), &player.access))
            .await
            .assert_problem(400, "validation_failed");
    }
    // Nothing was made: the player has no game.
    let mine = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me/games"), &player.access),
    )
    .await;
    assert_eq!(mine.json["items"], json!([]), "{}", mine.text);
    // The same body without the repetition is fine.
    let made = send(
        &app,
        bearer(
            raw("/api/v1/games", r#"{"visibility":"private"}"#),
            &player.access,
        ),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text);
    // An action.
    let id = made.json["id"].as_str().unwrap();
    send(
        &app,
        bearer(
            TestRequest::post()
                .uri(&format!("/api/v1/games/{id}/actions"))
                .insert_header(("content-type", "application/json"))
                .set_payload(r#"{"type":"play","card":"2C","card":"QS"}"#),
            &player.access,
        ),
    )
    .await
    .assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn a_query_parameter_given_empty_is_a_parameter_not_given() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = crate::admin::admin(&app, &state, "empty_q_boss").await;
    let me = register(&app, "empty_q").await;
    let game = crate::common::play::game_of(&app, std::slice::from_ref(&me), json!({})).await;
    for uri in [
        "/api/v1/games?status=&limit=&cursor=".to_owned(),
        "/api/v1/me/games?status=&friends=".to_owned(),
        "/api/v1/me/notifications?after=&wait=&limit".to_owned(),
        format!("/api/v1/games/{game}/chat?after=&limit="),
        format!("/api/v1/games/{game}/events?after=&wait="),
        "/api/v1/leaderboards/solo?around=&limit=".to_owned(),
    ] {
        let reply = send(&app, bearer(TestRequest::get().uri(&uri), &me.access)).await;
        assert_eq!(reply.status, 200, "{uri}: {}", reply.text);
    }
    for uri in [
        "/api/v1/admin/audit?action=&target_id=",
        "/api/v1/admin/games?status=&player=",
    ] {
        let reply = send(&app, bearer(TestRequest::get().uri(uri), &boss.access)).await;
        assert_eq!(reply.status, 200, "{uri}: {}", reply.text);
    }
    // A value that is there is still judged.
    let bad = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/games?limit=x"), &me.access),
    )
    .await;
    bad.assert_problem(400, "validation_failed");
    // The refusal names the parameter, in words a client author reads, not the extractor's.
    let detail = bad.json["detail"].as_str().unwrap_or_default().to_owned();
    assert!(detail.contains("limit"), "{detail}");
    assert!(!detail.contains("deserialize"), "{detail}");
}

#[actix_web::test]
async fn a_nul_character_anywhere_in_the_input_is_refused_with_400_on_both_databases() {
    // PostgreSQL cannot hold a NUL in text: each of these once answered 500 there.
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = crate::admin::admin(&app, &state, "nul_boss").await;
    let me = register(&app, "nul_me").await;
    let bodies = [
        (
            "/api/v1/auth/login",
            json!({"username": "a\u{0}b", "password": "x"}),
        ),
        (
            "/api/v1/games",
            json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "nul\u{0}x"},
                             {"kind": "open"}, {"kind": "open"}]}),
        ),
        ("/api/v1/auth/refresh", json!({"refresh_token": "\u{0}"})),
    ];
    for (uri, body) in bodies {
        let reply = send(&app, bearer(post_json(uri, body), &me.access)).await;
        reply.assert_problem(400, "validation_failed");
        assert!(reply.text.contains("NUL"), "{uri}: {}", reply.text);
    }
    for uri in [
        "/api/v1/admin/users?query=a%00b",
        "/api/v1/admin/games?player=%00",
        "/api/v1/admin/audit?target_id=x%00",
    ] {
        let reply = send(&app, bearer(TestRequest::get().uri(uri), &boss.access)).await;
        reply.assert_problem(400, "validation_failed");
    }
    for method in [Method::PUT, Method::DELETE] {
        for uri in ["/api/v1/me/friends/nul%00x", "/api/v1/me/blocks/nul%00x"] {
            let req = TestRequest::default().method(method.clone()).uri(uri);
            let reply = send(&app, bearer(req, &me.access)).await;
            reply.assert_problem(400, "validation_failed");
        }
    }
    // "%2500" is the text "%00", not a NUL: searched for, and found in no name.
    let text = send(
        &app,
        bearer(
            TestRequest::get().uri("/api/v1/admin/users?query=%2500"),
            &boss.access,
        ),
    )
    .await;
    assert_eq!(text.status, 200, "{}", text.text);
}
