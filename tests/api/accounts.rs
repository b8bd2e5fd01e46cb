//! Accounts and authentication.

use actix_web::test::TestRequest;
use base64::Engine;
use diesel::prelude::*;
use leekha::auth::tokens::{Claims, TokenKeys};
use leekha::auth::{Role, Secret};
use serde_json::json;

use crate::common::{self, PASSWORD, TestDb, bearer, post_json, register, send};

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data)
}

#[actix_web::test]
async fn register_answers_a_token_pair_that_opens_me() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let reply = send(
        &app,
        post_json(
            "/api/v1/auth/register",
            json!({"username": "Layla_1", "password": PASSWORD}),
        ),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.json["token_type"], "Bearer");
    assert_eq!(reply.json["expires_in"], 900);
    assert_eq!(reply.json["user"]["username"], "Layla_1");
    assert_eq!(reply.json["user"]["role"], "player");
    assert!(reply.json["refresh_token"].as_str().unwrap().len() >= 43);
    // Tokens are credentials: no cache on the way keeps them (RFC 6749, 5.1).
    assert_eq!(reply.header("cache-control"), Some("no-store"));

    let access = reply.json["access_token"].as_str().unwrap();
    let me = send(&app, bearer(TestRequest::get().uri("/api/v1/me"), access)).await;
    assert_eq!(me.status, 200, "{}", me.text);
    assert_eq!(me.json["username"], "Layla_1");
    assert_eq!(me.json["stats"]["games_played"], 0);

    // The token carries the documented claims, and a key id in its header.
    let parts: Vec<&str> = access.split('.').collect();
    let decode = |s: &str| -> serde_json::Value {
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .unwrap(),
        )
        .unwrap()
    };
    let (header, claims) = (decode(parts[0]), decode(parts[1]));
    assert_eq!(header["alg"], "HS256");
    assert!(header["kid"].is_string());
    for claim in ["sub", "role", "exp", "iat", "jti", "kid"] {
        assert!(!claims[claim].is_null(), "claim {claim} missing: {claims}");
    }
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        900
    );
}

#[actix_web::test]
async fn a_duplicate_username_ignoring_case_gets_409() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    register(&app, "omar").await;
    let reply = send(
        &app,
        post_json(
            "/api/v1/auth/register",
            json!({"username": "OMAR", "password": PASSWORD}),
        ),
    )
    .await;
    reply.assert_problem(409, "username_taken");
}

#[actix_web::test]
async fn invalid_input_gets_400_validation_failed() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for body in [
        json!({"username": "ab", "password": PASSWORD}),
        json!({"username": "has space", "password": PASSWORD}),
        json!({"username": "x".repeat(33), "password": PASSWORD}),
        json!({"username": "fine_name", "password": "short"}),
        json!({"username": "fine_name", "password": "p".repeat(129)}),
        json!({"username": "fine_name"}),
        json!({"username": 42, "password": PASSWORD}),
        // A field the operation does not know is refused, as on every other body, rather
        // than silently dropped (a client asking for a role must learn it cannot).
        json!({"username": "fine_name", "password": PASSWORD, "role": "admin"}),
    ] {
        let reply = send(&app, post_json("/api/v1/auth/register", body.clone())).await;
        reply.assert_problem(400, "validation_failed");
    }
    for (path, body) in [
        (
            "/api/v1/auth/login",
            json!({"username": "fine_name", "password": PASSWORD, "remember": true}),
        ),
        (
            "/api/v1/auth/refresh",
            json!({"refresh_token": "x", "extra": 1}),
        ),
        (
            "/api/v1/auth/logout",
            json!({"refresh_token": "x", "all": true}),
        ),
    ] {
        let reply = send(&app, post_json(path, body)).await;
        reply.assert_problem(400, "validation_failed");
    }
}

#[actix_web::test]
async fn malformed_json_gets_400_problem_json() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let req = TestRequest::post()
        .uri("/api/v1/auth/login")
        .insert_header(("content-type", "application/json"))
        .set_payload("{\"username\": \"x\", ");
    send(&app, req).await.assert_problem(400, "bad_request");
}

#[actix_web::test]
async fn an_oversized_body_gets_413_problem_json() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let huge = json!({"username": "someone", "password": "x".repeat(200_000)});
    send(&app, post_json("/api/v1/auth/login", huge))
        .await
        .assert_problem(413, "payload_too_large");
}

#[actix_web::test]
async fn a_wrong_content_type_gets_415_problem_json() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let req = TestRequest::post()
        .uri("/api/v1/auth/login")
        .insert_header(("content-type", "text/plain"))
        .set_payload("{}");
    send(&app, req)
        .await
        .assert_problem(415, "unsupported_media_type");
}

#[actix_web::test]
async fn wrong_password_and_unknown_user_get_the_same_answer() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    register(&app, "nadia").await;
    let wrong = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "nadia", "password": "not the password"}),
        ),
    )
    .await;
    let unknown = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "nobody_here", "password": "not the password"}),
        ),
    )
    .await;
    wrong.assert_problem(401, "invalid_credentials");
    unknown.assert_problem(401, "invalid_credentials");
    assert_eq!(wrong.json["detail"], unknown.json["detail"]);

    let ok = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "NADIA", "password": PASSWORD}),
        ),
    )
    .await;
    assert_eq!(
        ok.status, 200,
        "login ignores the case of the username: {}",
        ok.text
    );
}

#[actix_web::test]
async fn a_missing_expired_tampered_or_unsigned_token_gets_401() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let s = register(&app, "karim").await;

    send(&app, TestRequest::get().uri("/api/v1/me"))
        .await
        .assert_problem(401, "missing_token");
    let basic = TestRequest::get()
        .uri("/api/v1/me")
        .insert_header(("authorization", "Basic a2FyaW06eA=="));
    send(&app, basic).await.assert_problem(401, "invalid_token");

    let keys = TokenKeys::new(&Secret::new(common::TEST_SECRET), None, 900);
    let now = chrono::Utc::now().timestamp();
    let expired = keys.sign(&Claims {
        sub: s.id.clone(),
        role: "player".into(),
        iat: now - 1000,
        exp: now - 10,
        jti: "j".into(),
        kid: "k".into(),
        sid: None,
    });
    let reply = send(&app, bearer(TestRequest::get().uri("/api/v1/me"), &expired)).await;
    reply.assert_problem(401, "invalid_token");
    assert!(reply.json["detail"].as_str().unwrap().contains("expired"));

    // Change the role claim, keep the signature.
    let parts: Vec<&str> = s.access.split('.').collect();
    let mut claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[1])
            .unwrap(),
    )
    .unwrap();
    claims["role"] = json!("admin");
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        b64(claims.to_string().as_bytes()),
        parts[2]
    );
    send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &tampered),
    )
    .await
    .assert_problem(401, "invalid_token");

    let none_header = b64(br#"{"alg":"none","typ":"JWT"}"#);
    for unsigned in [
        format!("{none_header}.{}.", parts[1]),
        format!("{none_header}.{}", parts[1]),
    ] {
        send(
            &app,
            bearer(TestRequest::get().uri("/api/v1/me"), &unsigned),
        )
        .await
        .assert_problem(401, "invalid_token");
    }

    let other_key = TokenKeys::new(
        &Secret::new("another-secret-another-secret-another"),
        None,
        900,
    );
    let forged = other_key.issue(&s.id, Role::Admin, now, None);
    send(&app, bearer(TestRequest::get().uri("/api/v1/me"), &forged))
        .await
        .assert_problem(401, "invalid_token");
}

#[actix_web::test]
async fn a_banned_user_is_cut_off_on_the_next_request() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let s = register(&app, "banme").await;
    assert_eq!(
        send(
            &app,
            bearer(TestRequest::get().uri("/api/v1/me"), &s.access)
        )
        .await
        .status,
        200
    );

    {
        use leekha::db::schema::users;
        let mut conn = state.db.conn().unwrap();
        diesel::update(users::table.find(&s.id))
            .set(users::banned_at.eq(Some(leekha::db::now())))
            .execute(&mut *conn)
            .unwrap();
    }
    send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &s.access),
    )
    .await
    .assert_problem(403, "banned");
    send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": s.refresh})),
    )
    .await
    .assert_problem(403, "banned");
    send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "banme", "password": PASSWORD}),
        ),
    )
    .await
    .assert_problem(403, "banned");
}

#[actix_web::test]
async fn a_deleted_users_tokens_stop_working() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let s = register(&app, "leaving").await;
    let reply = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me"), &s.access),
    )
    .await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &s.access),
    )
    .await
    .assert_problem(401, "invalid_token");
    send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": s.refresh})),
    )
    .await
    .assert_problem(401, "invalid_token");
    // The name is free again.
    register(&app, "leaving").await;
}

#[actix_web::test]
async fn a_deleted_account_leaves_its_waiting_games_and_a_bot_plays_out_its_running_ones() {
    use crate::common::play::{four, game_of, get, post};
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "gone").await;
    let (me, other) = (&players[0], &players[1]);
    let running = game_of(&app, &players, json!({})).await;
    let mine = game_of(&app, std::slice::from_ref(me), json!({})).await;
    let theirs = game_of(&app, &[other.clone(), me.clone()], json!({})).await;
    let invite = json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "gone0"}, {"kind": "open"}, {"kind": "open"}]});
    let invited = post(&app, "/api/v1/games", invite, &other.access).await;
    assert_eq!(invited.status, 201, "{}", invited.text);
    let invited = invited.json["id"].as_str().unwrap().to_owned();

    let deleted = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me"), &me.access),
    )
    .await;
    assert_eq!(deleted.status, 204, "{}", deleted.text);

    // The running game goes on: a bot holds the seat for good, the player still named.
    let view = get(&app, &format!("/api/v1/games/{running}"), &other.access).await;
    assert_eq!(view.json["status"], "active", "{}", view.text);
    assert_eq!(view.json["seats"][0]["bot"], "heuristic", "{}", view.text);
    assert_eq!(view.json["seats"][0]["player"]["id"], me.id.as_str());
    let events = crate::common::play::get_all(
        &app,
        &format!("/api/v1/games/{running}/events"),
        "events",
        &other.access,
    )
    .await;
    assert!(
        events.json["events"].as_array().unwrap().iter().any(|e| {
            e["type"] == "seat_changed"
                && e["data"]["seat"] == 0
                && e["data"]["reason"] == "resigned"
        }),
        "{}",
        events.text
    );
    // The game it waited alone in is aborted; in the others its seat is open again.
    let view = get(&app, &format!("/api/v1/games/{mine}"), &other.access).await;
    assert_eq!(view.json["status"], "aborted", "{}", view.text);
    for id in [&theirs, &invited] {
        let view = get(&app, &format!("/api/v1/games/{id}"), &other.access).await;
        assert_eq!(view.json["status"], "waiting", "{}", view.text);
        assert_eq!(view.json["seats"][1]["open"], true, "{}", view.text);
    }
    // Nobody waits on it in the lobby.
    let lobby = get(
        &app,
        "/api/v1/games?status=waiting&limit=200",
        &other.access,
    )
    .await;
    assert!(
        lobby.json["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["id"] != json!(mine)),
        "{}",
        lobby.text
    );
}

#[actix_web::test]
async fn refresh_rotates_and_a_reused_token_revokes_its_family() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let s = register(&app, "rotor").await;

    let first = send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": s.refresh})),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.header("cache-control"), Some("no-store"));
    let second_refresh = first.json["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second_refresh, s.refresh);
    let access = first.json["access_token"].as_str().unwrap();
    let me = || send(&app, bearer(TestRequest::get().uri("/api/v1/me"), access));
    assert_eq!(me().await.status, 200);

    // The spent token comes back: the whole family is revoked, the newest token included.
    send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": s.refresh})),
    )
    .await
    .assert_problem(401, "invalid_token");
    send(
        &app,
        post_json(
            "/api/v1/auth/refresh",
            json!({"refresh_token": second_refresh}),
        ),
    )
    .await
    .assert_problem(401, "invalid_token");
    // The family's access tokens no longer reach the account either: a thief's copy of one
    // cannot rename or delete it.
    me().await.assert_problem(401, "invalid_token");

    // Another login is another family and is unaffected.
    let other = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "rotor", "password": PASSWORD}),
        ),
    )
    .await;
    let other_refresh = other.json["refresh_token"].as_str().unwrap();
    assert_eq!(
        send(
            &app,
            post_json(
                "/api/v1/auth/refresh",
                json!({"refresh_token": other_refresh})
            )
        )
        .await
        .status,
        200
    );

    send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": "made-up"})),
    )
    .await
    .assert_problem(401, "invalid_token");
}

#[actix_web::test]
async fn logout_revokes_the_refresh_token() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let s = register(&app, "bye_bye").await;
    let reply = send(
        &app,
        post_json("/api/v1/auth/logout", json!({"refresh_token": s.refresh})),
    )
    .await;
    assert_eq!(reply.status, 204);
    send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &s.access),
    )
    .await
    .assert_problem(401, "invalid_token");
    send(
        &app,
        post_json("/api/v1/auth/refresh", json!({"refresh_token": s.refresh})),
    )
    .await
    .assert_problem(401, "invalid_token");
    assert_eq!(
        send(
            &app,
            post_json("/api/v1/auth/logout", json!({"refresh_token": s.refresh}))
        )
        .await
        .status,
        204
    );
}

#[actix_web::test]
async fn a_guest_can_play_then_upgrade_with_username_and_password() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let reply = send(&app, TestRequest::post().uri("/api/v1/auth/guest")).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.json["user"]["is_guest"], true);
    assert!(
        reply.json["user"]["username"]
            .as_str()
            .unwrap()
            .starts_with("guest_")
    );
    let access = reply.json["access_token"].as_str().unwrap().to_owned();

    let patch = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"username": "samir", "password": PASSWORD}));
    let upgraded = send(&app, bearer(patch, &access)).await;
    assert_eq!(upgraded.status, 200, "{}", upgraded.text);
    assert_eq!(upgraded.json["username"], "samir");
    assert_eq!(upgraded.json["is_guest"], false);

    let login = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "samir", "password": PASSWORD}),
        ),
    )
    .await;
    assert_eq!(login.status, 200, "{}", login.text);

    // Changing the password now needs the current one.
    let patch = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"password": "a new password"}));
    send(&app, bearer(patch, &access))
        .await
        .assert_problem(400, "validation_failed");
    let patch = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"password": "a new password", "current_password": "wrong one!"}));
    send(&app, bearer(patch, &access))
        .await
        .assert_problem(403, "invalid_credentials");
    let patch = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"password": "a new password", "current_password": PASSWORD}));
    assert_eq!(send(&app, bearer(patch, &access)).await.status, 200);
    let login = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "samir", "password": "a new password"}),
        ),
    )
    .await;
    assert_eq!(login.status, 200);
    // Changed without the caller's refresh token, the password ended every session, the
    // caller's too: its access token is refused, and the new login's serves.
    send(&app, bearer(TestRequest::get().uri("/api/v1/me"), &access))
        .await
        .assert_problem(401, "invalid_token");
    let access = login.json["access_token"].as_str().unwrap().to_owned();

    register(&app, "taken_name").await;
    let patch = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"username": "TAKEN_name"}));
    send(&app, bearer(patch, &access))
        .await
        .assert_problem(409, "username_taken");
    let patch = TestRequest::patch().uri("/api/v1/me").set_json(json!({}));
    send(&app, bearer(patch, &access))
        .await
        .assert_problem(400, "validation_failed");
}

/// Logs `username` in with `password`; the reply.
async fn login_as<S, B>(app: &S, username: &str, password: &str) -> common::Reply
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
        post_json(
            "/api/v1/auth/login",
            json!({"username": username, "password": password}),
        ),
    )
    .await
}

#[actix_web::test]
async fn a_password_change_revokes_the_other_sessions_and_keeps_the_callers() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let phone = register(&app, "nadia").await;
    let laptop = login_as(&app, "nadia", PASSWORD).await;
    assert_eq!(laptop.status, 200, "{}", laptop.text);
    let laptop_refresh = laptop.json["refresh_token"].as_str().unwrap().to_owned();

    let patch = TestRequest::patch().uri("/api/v1/me").set_json(json!({
        "password": "a new password",
        "current_password": PASSWORD,
        "refresh_token": phone.refresh,
    }));
    let changed = send(&app, bearer(patch, &phone.access)).await;
    assert_eq!(changed.status, 200, "{}", changed.text);
    assert_eq!(changed.json["username"], "nadia");
    assert_eq!(changed.json["sessions_revoked"], 1, "{}", changed.text);
    assert_eq!(changed.json["session_kept"], true, "{}", changed.text);

    // The other login's access token no longer reaches the account (a stolen one could
    // otherwise rename or delete it until it expires); the caller's still does.
    let laptop_access = laptop.json["access_token"].as_str().unwrap();
    for request in [
        TestRequest::get().uri("/api/v1/me"),
        TestRequest::patch()
            .uri("/api/v1/me")
            .set_json(json!({"username": "hijacked"})),
        TestRequest::delete().uri("/api/v1/me"),
    ] {
        send(&app, bearer(request, laptop_access))
            .await
            .assert_problem(401, "invalid_token");
    }
    let me = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &phone.access),
    )
    .await;
    assert_eq!(me.json["username"], "nadia", "{}", me.text);

    // The other login can no longer refresh; the one that changed the password can.
    send(
        &app,
        post_json(
            "/api/v1/auth/refresh",
            json!({"refresh_token": laptop_refresh}),
        ),
    )
    .await
    .assert_problem(401, "invalid_token");
    let kept = send(
        &app,
        post_json(
            "/api/v1/auth/refresh",
            json!({"refresh_token": phone.refresh}),
        ),
    )
    .await;
    assert_eq!(kept.status, 200, "{}", kept.text);

    login_as(&app, "nadia", PASSWORD)
        .await
        .assert_problem(401, "invalid_credentials");
    assert_eq!(login_as(&app, "nadia", "a new password").await.status, 200);
}

#[actix_web::test]
async fn a_password_change_without_the_callers_refresh_token_revokes_every_session() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let phone = register(&app, "omar_2").await;
    let laptop = login_as(&app, "omar_2", PASSWORD).await;
    let laptop_refresh = laptop.json["refresh_token"].as_str().unwrap().to_owned();

    let patch = TestRequest::patch().uri("/api/v1/me").set_json(json!({
        "password": "a new password",
        "current_password": PASSWORD,
    }));
    let changed = send(&app, bearer(patch, &phone.access)).await;
    assert_eq!(changed.status, 200, "{}", changed.text);
    assert_eq!(changed.json["sessions_revoked"], 2, "{}", changed.text);
    assert_eq!(changed.json["session_kept"], false, "{}", changed.text);
    for token in [&phone.refresh, &laptop_refresh] {
        send(
            &app,
            post_json("/api/v1/auth/refresh", json!({"refresh_token": token})),
        )
        .await
        .assert_problem(401, "invalid_token");
    }

    // A rename alone ends no session.
    let fresh = login_as(&app, "omar_2", "a new password").await;
    let access = fresh.json["access_token"].as_str().unwrap().to_owned();
    let rename = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"username": "omar_3"}));
    let renamed = send(&app, bearer(rename, &access)).await;
    assert_eq!(renamed.status, 200, "{}", renamed.text);
    assert_eq!(renamed.json["sessions_revoked"], 0);
    assert_eq!(renamed.json["session_kept"], true);
    let refreshed = send(
        &app,
        post_json(
            "/api/v1/auth/refresh",
            json!({"refresh_token": fresh.json["refresh_token"]}),
        ),
    )
    .await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.text);
}

#[actix_web::test]
async fn current_password_guesses_are_rate_limited_per_account_and_per_ip() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.auth_rate_per_minute = 3;
    let app = common::app(common::state_for(config)).await;
    let victim = register(&app, "victim").await;
    let guess = |from: &str| {
        let patch = TestRequest::patch()
            .uri("/api/v1/me")
            .set_json(json!({"password": "a new password", "current_password": "guess guess"}))
            .peer_addr(from.parse().unwrap());
        bearer(patch, &victim.access)
    };
    for _ in 0..3 {
        send(&app, guess("198.51.100.7:4000"))
            .await
            .assert_problem(403, "invalid_credentials");
    }
    let limited = send(&app, guess("198.51.100.7:4000")).await;
    limited.assert_problem(429, "rate_limited");
    let retry: u64 = limited
        .headers
        .get("retry-after")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // The quota is the account's, wherever the guesses come from.
    send(&app, guess("203.0.113.9:5000"))
        .await
        .assert_problem(429, "rate_limited");
    // Even the right password waits: the limit counts checks, not failures.
    let right = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"password": "a new password", "current_password": PASSWORD}));
    send(&app, bearer(right, &victim.access))
        .await
        .assert_problem(429, "rate_limited");
    // A rename checks no password and is not limited.
    let rename = TestRequest::patch()
        .uri("/api/v1/me")
        .set_json(json!({"username": "victim_2"}));
    assert_eq!(send(&app, bearer(rename, &victim.access)).await.status, 200);
}

#[actix_web::test]
async fn current_password_guesses_are_rate_limited_per_ip_across_accounts() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.auth_rate_per_minute = 3;
    let app = common::app(common::state_for(config)).await;
    let mut users = Vec::new();
    for name in ["user_a", "user_b"] {
        users.push(register(&app, name).await);
    }
    let guess = |user: &common::Session| {
        let patch = TestRequest::patch()
            .uri("/api/v1/me")
            .set_json(json!({"password": "a new password", "current_password": "guess guess"}))
            .peer_addr("198.51.100.8:4000".parse().unwrap());
        bearer(patch, &user.access)
    };
    for user in [&users[0], &users[1], &users[0]] {
        send(&app, guess(user))
            .await
            .assert_problem(403, "invalid_credentials");
    }
    send(&app, guess(&users[1]))
        .await
        .assert_problem(429, "rate_limited");
}

#[actix_web::test]
async fn login_is_rate_limited_per_ip_and_per_username_with_retry_after() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.auth_rate_per_minute = 3;
    let app = common::app(common::state_for(config)).await;
    let bad = json!({"username": "victim", "password": "guess guess"});
    for _ in 0..3 {
        send(&app, post_json("/api/v1/auth/login", bad.clone()))
            .await
            .assert_problem(401, "invalid_credentials");
    }
    let limited = send(&app, post_json("/api/v1/auth/login", bad)).await;
    limited.assert_problem(429, "rate_limited");
    let retry: u64 = limited
        .headers
        .get("retry-after")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");

    // Another IP trying the same username is limited too (per-username quota).
    let from_elsewhere = post_json(
        "/api/v1/auth/login",
        json!({"username": "VICTIM", "password": "guess guess"}),
    )
    .peer_addr("203.0.113.9:5000".parse().unwrap());
    send(&app, from_elsewhere)
        .await
        .assert_problem(429, "rate_limited");
    // Guest creation from one IP is limited as well.
    for _ in 0..3 {
        assert_eq!(
            send(&app, TestRequest::post().uri("/api/v1/auth/guest"))
                .await
                .status,
            201
        );
    }
    send(&app, TestRequest::post().uri("/api/v1/auth/guest"))
        .await
        .assert_problem(429, "rate_limited");
}

#[actix_web::test]
async fn tokens_signed_with_the_previous_secret_stay_valid_after_rotation() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let s = register(&app, "rotated").await;

    let mut config = db.config();
    config.jwt_secret = Some(Secret::new("a-brand-new-secret-a-brand-new-secret"));
    config.jwt_previous_secret = Some(Secret::new(common::TEST_SECRET));
    let rotated = common::app(common::state_for(config.clone())).await;
    assert_eq!(
        send(
            &rotated,
            bearer(TestRequest::get().uri("/api/v1/me"), &s.access)
        )
        .await
        .status,
        200
    );

    config.jwt_previous_secret = None;
    let forgotten = common::app(common::state_for(config)).await;
    send(
        &forgotten,
        bearer(TestRequest::get().uri("/api/v1/me"), &s.access),
    )
    .await
    .assert_problem(401, "invalid_token");
}

#[actix_web::test]
async fn without_a_secret_sqlite_keeps_a_generated_one_and_postgres_refuses_to_start() {
    let db = TestDb::migrated();
    let mut config = db.config();
    config.jwt_secret = None;
    let db_handle = leekha::db::Db::open(&config);
    match db.url.backend() {
        leekha::config::Backend::Postgres => {
            let err = leekha::app::AppState::init(config, db_handle).unwrap_err();
            assert!(err.contains("LEEKHA_JWT_SECRET"), "{err}");
        }
        leekha::config::Backend::Sqlite => {
            let first =
                common::app(leekha::app::AppState::init(config.clone(), db_handle).unwrap()).await;
            let s = register(&first, "persistent").await;
            // A restart: new state, same database.
            let again =
                leekha::app::AppState::init(config.clone(), leekha::db::Db::open(&config)).unwrap();
            let second = common::app(again).await;
            assert_eq!(
                send(
                    &second,
                    bearer(TestRequest::get().uri("/api/v1/me"), &s.access)
                )
                .await
                .status,
                200
            );
        }
    }
}

#[test]
fn the_admin_command_creates_an_admin_with_a_password_from_the_environment() {
    let db = TestDb::migrated();
    let run_as = |name: &str, password: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_leekha"))
            .args(["admin", "create", name])
            .env("DATABASE_URL", db.url.expose())
            .env("LEEKHA_ADMIN_PASSWORD", password)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap()
    };
    let run = |password: &str| run_as("root_admin", password);
    let out = run("short");
    assert!(!out.status.success(), "a short password is refused");
    // A new account's name is held to the rules of a chosen one.
    let out = run_as("guest_root", "an admin password");
    assert!(!out.status.success(), "the guests' prefix is refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("kept for guest accounts"));
    let out = run("an admin password");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("admin root_admin created"));

    let state = db.state();
    let mut conn = state.db.conn().unwrap();
    let user = leekha::db::users::by_username(&mut conn, "root_admin")
        .unwrap()
        .unwrap();
    assert_eq!(user.role, "admin");
    assert!(leekha::auth::verify_password(
        "an admin password",
        user.password_hash.as_deref()
    ));
}

#[test]
fn the_openapi_document_declares_bearer_on_every_protected_operation() {
    let doc = serde_json::to_value(leekha::http::openapi()).unwrap();
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let public = [
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/docs",
        "/problems/{code}",
        "/api/v1/auth/register",
        "/api/v1/auth/login",
        "/api/v1/auth/guest",
        "/api/v1/auth/refresh",
        "/api/v1/auth/logout",
        "/api/v1/push/config",
        "/api/v1/chat/phrases",
    ];
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let secured = op["security"]
                .as_array()
                .is_some_and(|s| s.iter().any(|r| r.get("bearer").is_some()));
            if public.contains(&path.as_str()) {
                assert!(!secured, "{method} {path} is public");
            } else {
                assert!(secured, "{method} {path} must declare the bearer scheme");
                assert!(
                    op["responses"]["401"].is_object(),
                    "{method} {path} must document 401"
                );
            }
        }
    }
}

/// Refreshes read the token before they write: under concurrency (SQLite's single writer
/// especially) none may fail.
#[actix_web::test]
async fn concurrent_refreshes_and_game_creations_all_succeed() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let mut sessions = Vec::new();
    for i in 0..12 {
        sessions.push(register(&app, &format!("busy_{i}")).await);
    }
    for _ in 0..3 {
        let refreshes = sessions.iter().map(|s| {
            send(
                &app,
                post_json("/api/v1/auth/refresh", json!({"refresh_token": s.refresh})),
            )
        });
        let creations = sessions.iter().map(|s| {
            send(
                &app,
                bearer(post_json("/api/v1/games", json!({})), &s.access),
            )
        });
        let (refreshed, created) = futures_util::future::join(
            futures_util::future::join_all(refreshes),
            futures_util::future::join_all(creations),
        )
        .await;
        for r in &created {
            assert_eq!(r.status, 201, "{}", r.text);
        }
        for (s, r) in sessions.iter_mut().zip(&refreshed) {
            assert_eq!(r.status, 200, "{}", r.text);
            s.refresh = r.json["refresh_token"].as_str().unwrap().to_owned();
        }
    }
}

#[actix_web::test]
async fn names_starting_guest_are_kept_for_guests() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    for name in ["guest_abcdefghij", "Guest_me"] {
        let reply = send(
            &app,
            post_json(
                "/api/v1/auth/register",
                json!({"username": name, "password": PASSWORD}),
            ),
        )
        .await;
        reply.assert_problem(400, "validation_failed");
        assert!(reply.json["detail"].as_str().unwrap().contains("guest_"));
    }
    let guest = send(&app, TestRequest::post().uri("/api/v1/auth/guest")).await;
    let access = guest.json["access_token"].as_str().unwrap().to_owned();
    let own = guest.json["user"]["username"].as_str().unwrap().to_owned();
    let rename = |name: &str| {
        bearer(
            TestRequest::patch()
                .uri("/api/v1/me")
                .set_json(json!({"username": name, "password": PASSWORD})),
            &access,
        )
    };
    send(&app, rename("guest_other1"))
        .await
        .assert_problem(400, "validation_failed");
    // A guest keeping its own name while it sets a password is no impostor.
    let kept = send(&app, rename(&own)).await;
    assert_eq!(kept.status, 200, "{}", kept.text);
    assert_eq!(kept.json["is_guest"], false);
}
