//! Administration over HTTP: admin-only routes, bans, roles, game searches, the full state,
//! aborts, seats handed to bots, statistics, and the audit log behind all of them.

use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use diesel::prelude::*;
use leekha::app::AppState;
use leekha::rules::{Card, CardSet};
use serde_json::{Value, json};

use crate::common::play::{delete, four, game_of, get, legal_action, of_kind, post, put};
use crate::common::{self, PASSWORD, Session, TestDb, bearer, post_json, register, send};

/// Makes a registered user an administrator, as `leekha admin create` would.
pub fn make_admin(state: &AppState, user: &Session) {
    use leekha::db::schema::users;
    let mut conn = state.db.conn().unwrap();
    diesel::update(users::table.find(&user.id))
        .set(users::role.eq("admin"))
        .execute(&mut *conn)
        .unwrap();
}

/// Registers `name` and makes it an administrator.
pub async fn admin<S, B>(app: &S, state: &AppState, name: &str) -> Session
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let session = register(app, name).await;
    make_admin(state, &session);
    session
}

/// The audit entries (newest first), optionally only about `target`.
async fn audit_entries<S, B>(app: &S, admin: &Session, target: Option<&str>) -> Vec<Value>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let uri = match target {
        Some(t) => format!("/api/v1/admin/audit?target_id={t}&limit=200"),
        None => "/api/v1/admin/audit?limit=200".to_owned(),
    };
    let reply = get(app, &uri, &admin.access).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json["items"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn every_admin_route_answers_403_to_a_player_and_401_without_a_token() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let player = register(&app, "plain_player").await;
    let other = register(&app, "other_player").await;
    let game = game_of(&app, std::slice::from_ref(&player), json!({})).await;
    let uid = &other.id;
    let routes: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", "/api/v1/admin/users?query=pl".into(), None),
        (
            "POST",
            format!("/api/v1/admin/users/{uid}/ban"),
            Some(json!({"reason": "spam"})),
        ),
        (
            "POST",
            format!("/api/v1/admin/users/{uid}/unban"),
            Some(json!({})),
        ),
        (
            "PUT",
            format!("/api/v1/admin/users/{uid}/role"),
            Some(json!({"role": "admin"})),
        ),
        (
            "POST",
            format!("/api/v1/admin/users/{uid}/ratings/reset"),
            Some(json!({})),
        ),
        ("GET", "/api/v1/admin/games?status=waiting".into(), None),
        ("GET", format!("/api/v1/admin/games/{game}"), None),
        (
            "POST",
            format!("/api/v1/admin/games/{game}/abort"),
            Some(json!({"reason": "test"})),
        ),
        (
            "POST",
            format!("/api/v1/admin/games/{game}/seats/1/bot"),
            Some(json!({})),
        ),
        ("GET", "/api/v1/admin/stats".into(), None),
        ("GET", "/api/v1/admin/audit".into(), None),
        ("GET", "/api/v1/admin/reports".into(), None),
        (
            "POST",
            format!("/api/v1/admin/chat/{}/hide", uuid::Uuid::new_v4()),
            Some(json!({"reason": "insults"})),
        ),
        (
            "POST",
            format!("/api/v1/admin/chat/{}/dismiss", uuid::Uuid::new_v4()),
            Some(json!({})),
        ),
        (
            "POST",
            format!("/api/v1/admin/users/{uid}/mute"),
            Some(json!({"until": null, "reason": "insults"})),
        ),
    ];
    let spec = serde_json::to_value(leekha::http::openapi()).unwrap();
    let documented: usize = spec["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(p, _)| p.starts_with("/api/v1/admin"))
        .map(|(_, ops)| ops.as_object().unwrap().len())
        .sum();
    assert_eq!(
        documented,
        routes.len(),
        "every documented admin operation is checked here"
    );
    for (method, uri, body) in &routes {
        let request = |token: Option<&str>| {
            let mut req = match *method {
                "GET" => TestRequest::get(),
                "PUT" => TestRequest::put(),
                _ => TestRequest::post(),
            }
            .uri(uri);
            if let Some(body) = body {
                req = req.set_json(body);
            }
            match token {
                Some(t) => bearer(req, t),
                None => req,
            }
        };
        send(&app, request(Some(&player.access)))
            .await
            .assert_problem(403, "forbidden");
        send(&app, request(None))
            .await
            .assert_problem(401, "missing_token");
    }
    // Nothing happened: the game still waits, the other account is untouched.
    let view = get(&app, &format!("/api/v1/games/{game}"), &player.access).await;
    assert_eq!(view.json["status"], "waiting");
    let me = get(&app, "/api/v1/me", &other.access).await;
    assert_eq!(me.json["role"], "player");
}

/// A feed long-poll of `user`'s, during which `end` runs and then, if `wake`, a
/// notification for them wakes it: its answer, which must come before the wait runs out.
async fn poll_across<S, B>(
    app: &S,
    state: &AppState,
    user: &Session,
    end: impl std::future::Future<Output = ()>,
    wake: bool,
) -> common::Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let poll = get(
        app,
        "/api/v1/me/notifications?after=0&wait=10",
        &user.access,
    );
    let meanwhile = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        end.await;
        if !wake {
            return;
        }
        // A `your_turn`, as a banned player's running game still sends them when their
        // turn comes (the seat plays on until it times out to a bot), and woken as every
        // writer of notifications wakes the feeds after its commit.
        let mut conn = state.db.conn().unwrap();
        let notified = leekha::notifications::write(
            &mut conn,
            vec![leekha::notifications::Pending {
                user_id: user.id.clone(),
                kind: leekha::notifications::Kind::YourTurn,
                game_id: None,
                data: json!({}),
                silent: false,
            }],
            leekha::db::now(),
        )
        .unwrap();
        state.announce_users(&notified);
    };
    let started = std::time::Instant::now();
    let (answer, ()) = tokio::join!(poll, meanwhile);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(9),
        "woken by the notification or the ending, not by the end of the wait"
    );
    answer
}

#[actix_web::test]
async fn a_long_poll_waiting_when_its_user_is_banned_answers_403_not_what_woke_it() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "pollboss").await;
    let user = register(&app, "poller").await;
    let ban = async {
        let banned = post(
            &app,
            &format!("/api/v1/admin/users/{}/ban", user.id),
            json!({"reason": "spam"}),
            &boss.access,
        )
        .await;
        assert_eq!(banned.status, 200, "{}", banned.text);
    };
    poll_across(&app, &state, &user, ban, true)
        .await
        .assert_problem(403, "banned");
}

#[actix_web::test]
async fn a_long_poll_waiting_when_its_session_logs_out_answers_401() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    for (name, wake) in [("poll_leaver", true), ("poll_quiet", false)] {
        let user = register(&app, name).await;
        let logout = async {
            let out = send(
                &app,
                post_json(
                    "/api/v1/auth/logout",
                    json!({"refresh_token": user.refresh}),
                ),
            )
            .await;
            assert_eq!(out.status, 204);
        };
        // Woken by a notification, or by the logout itself when nothing else happens.
        poll_across(&app, &state, &user, logout, wake)
            .await
            .assert_problem(401, "invalid_token");
    }
}

#[actix_web::test]
async fn admin_actions_that_need_a_body_refuse_an_empty_one_with_400_and_change_nothing() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "emptyboss").await;
    let player = register(&app, "emptyplayer").await;
    let game = game_of(&app, std::slice::from_ref(&player), json!({})).await;
    let uid = &player.id;
    let message = uuid::Uuid::new_v4();
    for (method, uri) in [
        ("POST", format!("/api/v1/admin/users/{uid}/ban")),
        ("PUT", format!("/api/v1/admin/users/{uid}/role")),
        ("POST", format!("/api/v1/admin/users/{uid}/mute")),
        ("POST", format!("/api/v1/admin/games/{game}/abort")),
        ("POST", format!("/api/v1/admin/chat/{message}/hide")),
    ] {
        let req = match method {
            "PUT" => TestRequest::put(),
            _ => TestRequest::post(),
        };
        // No body and no Content-Type, then an empty JSON object.
        send(&app, bearer(req.uri(&uri), &boss.access))
            .await
            .assert_problem(400, "validation_failed");
        let req = match method {
            "PUT" => TestRequest::put(),
            _ => TestRequest::post(),
        };
        send(
            &app,
            bearer(req.uri(&uri).set_json(json!({})), &boss.access),
        )
        .await
        .assert_problem(400, "validation_failed");
    }
    // A mute needs its `until` (null to lift): a body that forgets it changes nothing.
    send(
        &app,
        bearer(
            TestRequest::post()
                .uri(&format!("/api/v1/admin/users/{uid}/mute"))
                .set_json(json!({"reason": "forgot the time"})),
            &boss.access,
        ),
    )
    .await
    .assert_problem(400, "validation_failed");
    assert!(audit_entries(&app, &boss, Some(uid)).await.is_empty());
    let view = get(&app, &format!("/api/v1/games/{game}"), &player.access).await;
    assert_eq!(view.json["status"], "waiting");
}

#[actix_web::test]
async fn a_reason_players_or_admins_read_holds_no_escape_control_or_direction_override() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "plainboss").await;
    let player = register(&app, "plainplayer").await;
    let game = game_of(&app, std::slice::from_ref(&player), json!({})).await;
    let uid = &player.id;
    for reason in [
        "line\u{7}bell",
        "red \u{1b}[31m",
        "abc\u{202E}def",
        "one\u{2028}two",
        "\u{200B}",
    ] {
        for (uri, body) in [
            (
                format!("/api/v1/admin/games/{game}/abort"),
                json!({ "reason": reason }),
            ),
            (
                format!("/api/v1/admin/users/{uid}/ban"),
                json!({ "reason": reason }),
            ),
            (
                format!("/api/v1/admin/users/{uid}/mute"),
                json!({ "reason": reason, "until": null }),
            ),
        ] {
            post(&app, &uri, body, &boss.access)
                .await
                .assert_problem(400, "validation_failed");
        }
    }
    assert!(audit_entries(&app, &boss, Some(uid)).await.is_empty());
    let view = get(&app, &format!("/api/v1/games/{game}"), &player.access).await;
    assert_eq!(view.json["status"], "waiting");
    // Counted as kept (Unicode NFC): 300 accented letters sent as combining marks are 300.
    let aborted = post(
        &app,
        &format!("/api/v1/admin/games/{game}/abort"),
        json!({ "reason": format!("two lines\n{}", "e\u{301}".repeat(300)) }),
        &boss.access,
    )
    .await;
    assert_eq!(aborted.status, 200, "{}", aborted.text);
    let view = get(&app, &format!("/api/v1/games/{game}"), &player.access).await;
    assert_eq!(
        view.json["abort_reason"],
        format!("two lines\n{}", "\u{e9}".repeat(300))
    );
}

#[actix_web::test]
async fn admins_search_users_by_a_part_of_the_name_page_by_page() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    for name in ["Layla_1", "layla_2", "LAYLA_3", "omar", "lay_la"] {
        register(&app, name).await;
    }
    let reply = get(&app, "/api/v1/admin/users?query=LAYLA", &boss.access).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let mut names: Vec<&str> = reply.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["LAYLA_3", "Layla_1", "layla_2"]);
    assert!(reply.json["next_cursor"].is_null());

    // `_` is a character here, not a LIKE wildcard.
    let reply = get(&app, "/api/v1/admin/users?query=y_l", &boss.access).await;
    let names: Vec<&str> = reply.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lay_la"]);

    // Pages of 2 visit all 6 accounts once.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let uri = match &cursor {
            Some(c) => format!("/api/v1/admin/users?limit=2&cursor={c}"),
            None => "/api/v1/admin/users?limit=2".to_owned(),
        };
        let page = get(&app, &uri, &boss.access).await;
        assert_eq!(page.status, 200, "{}", page.text);
        for u in page.json["items"].as_array().unwrap() {
            seen.push(u["username"].as_str().unwrap().to_owned());
            assert!(u["role"].is_string() && u.get("banned_at").is_some());
        }
        match page.json["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 6, "{seen:?}");

    get(&app, "/api/v1/admin/users?limit=201", &boss.access)
        .await
        .assert_problem(400, "validation_failed");
    get(&app, "/api/v1/admin/users?cursor=nonsense", &boss.access)
        .await
        .assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn a_ban_cuts_a_logged_in_user_off_on_the_next_request_and_unban_restores_them() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let user = register(&app, "troll").await;
    assert_eq!(get(&app, "/api/v1/me", &user.access).await.status, 200);

    let banned = post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", user.id),
        json!({"reason": "  abusive messages  "}),
        &boss.access,
    )
    .await;
    assert_eq!(banned.status, 200, "{}", banned.text);
    assert_eq!(banned.json["ban_reason"], "abusive messages");
    assert!(banned.json["banned_at"].is_string());

    get(&app, "/api/v1/me", &user.access)
        .await
        .assert_problem(403, "banned");
    // Its refresh tokens were revoked, and it cannot log in; a refresh says why (403
    // `banned`: stop), not only that the token is no good.
    let refresh = || {
        send(
            &app,
            post_json(
                "/api/v1/auth/refresh",
                json!({"refresh_token": user.refresh}),
            ),
        )
    };
    refresh().await.assert_problem(403, "banned");
    send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "troll", "password": PASSWORD}),
        ),
    )
    .await
    .assert_problem(403, "banned");
    post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", user.id),
        json!({"reason": "again"}),
        &boss.access,
    )
    .await
    .assert_problem(409, "already_banned");
    // Out of sight to others: no profile, no friend request that could never be answered.
    let fan = register(&app, "fan").await;
    get(&app, "/api/v1/users/troll", &fan.access)
        .await
        .assert_problem(404, "not_found");
    put(&app, "/api/v1/me/friends/troll", &fan.access)
        .await
        .assert_problem(404, "not_found");

    let unbanned = post(
        &app,
        &format!("/api/v1/admin/users/{}/unban", user.id),
        json!({"reason": "appeal accepted"}),
        &boss.access,
    )
    .await;
    assert_eq!(unbanned.status, 200, "{}", unbanned.text);
    assert!(unbanned.json["banned_at"].is_null());
    // The session the ban ended stays ended: its access token too.
    get(&app, "/api/v1/me", &user.access)
        .await
        .assert_problem(401, "invalid_token");
    let login = send(
        &app,
        post_json(
            "/api/v1/auth/login",
            json!({"username": "troll", "password": PASSWORD}),
        ),
    )
    .await;
    assert_eq!(login.status, 200, "{}", login.text);
    // The tokens the ban revoked stay revoked.
    refresh().await.assert_problem(401, "invalid_token");
    let asked = put(&app, "/api/v1/me/friends/troll", &fan.access).await;
    assert_eq!(asked.status, 201, "{}", asked.text);
    // An empty body is fine for unban (the reason is optional), but not banned any more.
    send(
        &app,
        bearer(
            TestRequest::post().uri(&format!("/api/v1/admin/users/{}/unban", user.id)),
            &boss.access,
        ),
    )
    .await
    .assert_problem(409, "not_banned");
}

#[actix_web::test]
async fn a_banned_user_leaves_their_waiting_games_and_declines_their_invitations() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss_w").await;
    let troll = register(&app, "troll_w").await;
    let host = register(&app, "host_w").await;
    let alone = game_of(&app, std::slice::from_ref(&troll), json!({})).await;
    let shared = game_of(&app, &[troll.clone(), host.clone()], json!({})).await;
    let invited = game_of(
        &app,
        std::slice::from_ref(&host),
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "troll_w"},
                         {"kind": "open"}, {"kind": "open"}]}),
    )
    .await;

    let banned = post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", troll.id),
        json!({"reason": "spam"}),
        &boss.access,
    )
    .await;
    assert_eq!(banned.status, 200, "{}", banned.text);

    let view = |id: String| {
        let app = &app;
        let token = boss.access.clone();
        async move {
            get(app, &format!("/api/v1/admin/games/{id}"), &token)
                .await
                .json
        }
    };
    assert_eq!(view(alone).await["status"], "aborted");
    let shared = view(shared).await;
    assert_eq!(shared["status"], "waiting");
    let seated: Vec<&Value> = shared["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["player"].is_null())
        .collect();
    assert_eq!(seated.len(), 1, "{shared}");
    assert_eq!(seated[0]["player"]["username"], "host_w");
    // The seat reserved for the banned user is open to anyone again.
    let invited = view(invited).await;
    assert_eq!(invited["status"], "waiting");
    assert_eq!(invited["seats"][1]["open"], true, "{invited}");

    // Nor can a new game invite them: a banned account is no one to invite.
    post(
        &app,
        "/api/v1/games",
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "troll_w"},
                         {"kind": "open"}, {"kind": "open"}]}),
        &host.access,
    )
    .await
    .assert_problem(400, "validation_failed");
    // A request let in before the ban meets it inside its transaction: neither a creation
    // nor a join seats the banned account (the service as the handler calls it).
    let mut conn = state.db.conn().unwrap();
    let open = game_of(&app, std::slice::from_ref(&host), json!({})).await;
    let joined = leekha::games::join(&mut conn, &open, &troll.id, None, 10);
    assert_eq!(
        joined.err().map(|e| e.code().to_owned()).as_deref(),
        Some("banned")
    );
    let plan = leekha::games::NewGame {
        rules: leekha::rules::RuleOptions::default(),
        seats: [
            leekha::games::SeatPlan::Me,
            leekha::games::SeatPlan::Open,
            leekha::games::SeatPlan::Open,
            leekha::games::SeatPlan::Open,
        ],
        public: true,
        allow_spectators: true,
        turn_timeout_seconds: 3600,
        max_active_games: 10,
        rated: true,
    };
    let created = leekha::games::create(&mut conn, &troll.id, plan);
    assert_eq!(
        created.err().map(|e| e.code().to_owned()).as_deref(),
        Some("banned")
    );
}

#[actix_web::test]
async fn a_role_change_takes_effect_on_the_next_request() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let user = register(&app, "helper").await;
    get(&app, "/api/v1/admin/stats", &user.access)
        .await
        .assert_problem(403, "forbidden");

    let promote = |role: &'static str| {
        bearer(
            TestRequest::put()
                .uri(&format!("/api/v1/admin/users/{}/role", user.id))
                .set_json(json!({"role": role, "reason": "moderator team"})),
            &boss.access,
        )
    };
    let reply = send(&app, promote("admin")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["role"], "admin");
    // The same access token, issued when it was a player, now opens admin routes.
    assert_eq!(
        get(&app, "/api/v1/admin/stats", &user.access).await.status,
        200
    );
    assert_eq!(
        get(&app, "/api/v1/me", &user.access).await.json["role"],
        "admin"
    );

    let reply = send(&app, promote("player")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    get(&app, "/api/v1/admin/stats", &user.access)
        .await
        .assert_problem(403, "forbidden");
    // The role it has already: the answer is the account, and the audit log has nothing new.
    let again = send(&app, promote("player")).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["role"], "player");
    let audit = get(
        &app,
        &format!("/api/v1/admin/audit?target_id={}", user.id),
        &boss.access,
    )
    .await;
    assert_eq!(audit.status, 200, "{}", audit.text);
    let changes: Vec<&Value> = audit.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "change_role")
        .collect();
    assert_eq!(changes.len(), 2, "{}", audit.text);

    send(
        &app,
        bearer(
            TestRequest::put()
                .uri(&format!("/api/v1/admin/users/{}/role", user.id))
                .set_json(json!({"role": "emperor"})),
            &boss.access,
        ),
    )
    .await
    .assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn admins_cannot_ban_mute_or_demote_themselves_and_unknown_users_are_404() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", boss.id),
        json!({"reason": "oops"}),
        &boss.access,
    )
    .await
    .assert_problem(409, "own_account");
    // Nor lift a mute another administrator gave them.
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    for until in [json!(tomorrow), Value::Null] {
        post(
            &app,
            &format!("/api/v1/admin/users/{}/mute", boss.id),
            json!({"until": until, "reason": "test"}),
            &boss.access,
        )
        .await
        .assert_problem(409, "own_account");
    }
    send(
        &app,
        bearer(
            TestRequest::put()
                .uri(&format!("/api/v1/admin/users/{}/role", boss.id))
                .set_json(json!({"role": "player"})),
            &boss.access,
        ),
    )
    .await
    .assert_problem(409, "own_account");
    let nobody = uuid::Uuid::new_v4();
    post(
        &app,
        &format!("/api/v1/admin/users/{nobody}/ban"),
        json!({"reason": "who?"}),
        &boss.access,
    )
    .await
    .assert_problem(404, "not_found");
    post(
        &app,
        "/api/v1/admin/users/not-a-uuid/ban",
        json!({"reason": "who?"}),
        &boss.access,
    )
    .await
    .assert_problem(400, "bad_request");
    // A deleted account is no one to act on, a mute included.
    let gone = register(&app, "gone_soon").await;
    assert_eq!(delete(&app, "/api/v1/me", &gone.access).await.status, 204);
    for (action, body) in [
        ("ban", json!({"reason": "late"})),
        ("mute", json!({"until": null, "reason": "late"})),
    ] {
        post(
            &app,
            &format!("/api/v1/admin/users/{}/{action}", gone.id),
            body,
            &boss.access,
        )
        .await
        .assert_problem(404, "not_found");
    }
}

#[actix_web::test]
async fn reasons_must_be_1_to_500_characters() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let user = register(&app, "target").await;
    let game = game_of(&app, std::slice::from_ref(&user), json!({})).await;
    let ban = format!("/api/v1/admin/users/{}/ban", user.id);
    let abort = format!("/api/v1/admin/games/{game}/abort");
    for (uri, body) in [
        (&ban, json!({"reason": ""})),
        (&ban, json!({"reason": "   "})),
        (&ban, json!({"reason": "x".repeat(501)})),
        (&ban, json!({})),
        (&ban, json!({"reason": "ok", "extra": 1})),
        (&abort, json!({"reason": ""})),
        (&abort, json!({"reason": "é".repeat(501)})),
    ] {
        post(&app, uri, body, &boss.access)
            .await
            .assert_problem(400, "validation_failed");
    }
    // 500 characters (not bytes) is accepted.
    let reply = post(
        &app,
        &abort,
        json!({"reason": "é".repeat(500)}),
        &boss.access,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    // A refused request leaves no audit entry.
    let entries = audit_entries(&app, &boss, Some(&user.id)).await;
    assert!(entries.is_empty(), "{entries:?}");
}

#[actix_web::test]
async fn an_aborted_game_shows_aborted_to_its_players() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let players = four(&app, "pl").await;
    let game = game_of(&app, &players, json!({})).await;
    let before = get(&app, &format!("/api/v1/games/{game}"), &players[0].access).await;
    assert_eq!(before.json["status"], "active");

    let reply = post(
        &app,
        &format!("/api/v1/admin/games/{game}/abort"),
        json!({"reason": "server bug in the deal"}),
        &boss.access,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["status"], "aborted");
    let version = reply.json["version"].as_i64().unwrap();
    assert_eq!(
        reply.header("etag"),
        Some(format!("\"{version}\"").as_str())
    );

    // A game aborted before its deal has no seed to reveal.
    let undealt = game_of(&app, &players[..1], json!({})).await;
    post(
        &app,
        &format!("/api/v1/admin/games/{undealt}/abort"),
        json!({"reason": "test"}),
        &boss.access,
    )
    .await;
    let replay = get(
        &app,
        &format!("/api/v1/games/{undealt}/replay"),
        &players[0].access,
    )
    .await;
    assert_eq!(replay.status, 200, "{}", replay.text);
    assert!(replay.json["seed"].is_null(), "{}", replay.text);

    for p in &players {
        let view = get(&app, &format!("/api/v1/games/{game}"), &p.access).await;
        assert_eq!(view.json["status"], "aborted");
        assert_eq!(view.json["abort_reason"], "server bug in the deal");
        assert!(view.json["turn"].is_null() && view.json["legal_actions"].is_null());
        assert!(view.json["version"].as_i64() > before.json["version"].as_i64());
    }
    let events = get(
        &app,
        &format!("/api/v1/games/{game}/events"),
        &players[1].access,
    )
    .await;
    let last = events.json["events"].as_array().unwrap().last().unwrap();
    assert_eq!(last["type"], "game_aborted");
    assert_eq!(last["data"]["reason"], "server bug in the deal");

    // Playing on is refused, and so is a second abort.
    post(
        &app,
        &format!("/api/v1/games/{game}/actions"),
        json!({"type": "play", "card": "2C"}),
        &players[0].access,
    )
    .await
    .assert_problem(409, "game_not_active");
    post(
        &app,
        &format!("/api/v1/admin/games/{game}/abort"),
        json!({"reason": "again"}),
        &boss.access,
    )
    .await
    .assert_problem(409, "game_not_active");
    let listed = get(&app, "/api/v1/me/games?status=aborted", &players[2].access).await;
    assert_eq!(listed.json["items"][0]["status"], "aborted");

    // A waiting game can be aborted too.
    let waiting = game_of(&app, &players[..1], json!({})).await;
    let reply = post(
        &app,
        &format!("/api/v1/admin/games/{waiting}/abort"),
        json!({"reason": "spam lobby"}),
        &boss.access,
    )
    .await;
    assert_eq!(reply.json["status"], "aborted", "{}", reply.text);
    // Its empty seats can no longer be joined, so none is shown open.
    for seat in 1..4 {
        assert_eq!(reply.json["seats"][seat]["open"], false, "{}", reply.text);
    }
    let lobby = get(&app, "/api/v1/games", &players[1].access).await;
    assert!(
        lobby.json["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["id"] != waiting.as_str())
    );
    post(
        &app,
        &format!("/api/v1/admin/games/{}/abort", uuid::Uuid::new_v4()),
        json!({"reason": "ghost"}),
        &boss.access,
    )
    .await
    .assert_problem(404, "not_found");
}

#[actix_web::test]
async fn a_seat_handed_to_a_bot_is_played_by_the_bot_and_players_see_it() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let players = four(&app, "pl").await;
    let game = game_of(&app, &players, json!({})).await;
    let before = get(&app, &format!("/api/v1/games/{game}"), &players[1].access).await;
    assert_eq!(before.json["round"]["phase"], "passing");
    assert_eq!(before.json["round"]["passes_committed"][1], false);

    let reply = post(
        &app,
        &format!("/api/v1/admin/games/{game}/seats/1/bot"),
        json!({"reason": "player reported away for a week"}),
        &boss.access,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["seats"][1]["bot"], "heuristic");

    // Every player sees the bot on seat 1, and the bot has already passed for it.
    for p in &players {
        let view = get(&app, &format!("/api/v1/games/{game}"), &p.access).await;
        assert_eq!(view.json["seats"][1]["bot"], "heuristic");
        assert_eq!(
            view.json["seats"][1]["player"]["id"],
            players[1].id.as_str()
        );
        assert_eq!(view.json["round"]["passes_committed"][1], true);
    }
    let own = get(&app, &format!("/api/v1/games/{game}"), &players[1].access).await;
    assert!(own.json["legal_actions"].is_null(), "{}", own.text);
    let events = get(
        &app,
        &format!("/api/v1/games/{game}/events"),
        &players[0].access,
    )
    .await;
    let kinds: Vec<(&str, &Value)> = events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), &e["data"]))
        .collect();
    let changed = kinds
        .iter()
        .find(|(k, d)| *k == "seat_changed" && d["reason"] == "admin")
        .expect("a seat_changed event with reason admin");
    assert_eq!(changed.1["seat"], 1);
    assert_eq!(changed.1["bot"], "heuristic");
    assert_eq!(changed.1["user_id"], players[1].id.as_str());
    assert!(
        kinds
            .iter()
            .any(|(k, d)| *k == "pass_committed" && d["seat"] == 1)
    );
    // The player whose seat it was is told.
    let feed = get(&app, "/api/v1/me/notifications", &players[1].access).await;
    let taken = of_kind(&feed.json, "seat_taken_by_bot");
    assert_eq!(taken.len(), 1, "{}", feed.text);
    assert_eq!(taken[0]["data"]["reason"], "admin");
    assert_eq!(taken[0]["data"]["seat"], 1);
    assert_eq!(taken[0]["game_id"], game.as_str());

    // The others pass; the game goes on into play, the bot playing seat 1 when its turn comes.
    for p in [&players[0], &players[2], &players[3]] {
        let view = get(&app, &format!("/api/v1/games/{game}"), &p.access).await;
        let action = legal_action(&view.json).expect("a pass");
        let reply = post(
            &app,
            &format!("/api/v1/games/{game}/actions"),
            action,
            &p.access,
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
    }
    let view = get(&app, &format!("/api/v1/games/{game}"), &players[0].access).await;
    assert_eq!(view.json["round"]["phase"], "playing");
    assert_ne!(view.json["turn"]["seat"], 1, "the bot never keeps the turn");

    post(
        &app,
        &format!("/api/v1/admin/games/{game}/seats/1/bot"),
        json!({}),
        &boss.access,
    )
    .await
    .assert_problem(409, "seat_controlled_by_bot");
    // Its player cannot resign it again: it is a bot's for the rest of the game already.
    post(
        &app,
        &format!("/api/v1/games/{game}/resign"),
        json!({}),
        &players[1].access,
    )
    .await
    .assert_problem(409, "already_resigned");
    // No seat 4, nor one out of a byte's range: each is refused for what a seat is.
    for seat in ["4", "256", "-1", "x"] {
        post(
            &app,
            &format!("/api/v1/admin/games/{game}/seats/{seat}/bot"),
            json!({}),
            &boss.access,
        )
        .await
        .assert_problem(400, "validation_failed");
    }
    let waiting = game_of(&app, &players[..1], json!({})).await;
    post(
        &app,
        &format!("/api/v1/admin/games/{waiting}/seats/0/bot"),
        json!({}),
        &boss.access,
    )
    .await
    .assert_problem(409, "game_not_active");
}

#[actix_web::test]
async fn handing_the_last_human_seat_to_a_bot_plays_the_game_to_its_end() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let player = register(&app, "lonely").await;
    let bots = json!({"seats": [
        {"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}
    ], "rules": {"target_score": 26}});
    let game = game_of(&app, std::slice::from_ref(&player), bots).await;
    let reply = post(
        &app,
        &format!("/api/v1/admin/games/{game}/seats/0/bot"),
        json!({}),
        &boss.access,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    // The bots play a few moves in the request, and the rest in the scheduler's short
    // transactions: no request holds the game for a whole game of bot moves.
    assert_eq!(reply.json["status"], "active");
    assert!(common::play_out_bots(&state) > 1);
    let view = get(&app, &format!("/api/v1/games/{game}"), &player.access).await;
    assert_eq!(view.json["status"], "finished");
    assert!(view.json["result"]["winners"].is_array());
}

#[actix_web::test]
async fn the_full_state_shows_every_hand_and_each_read_is_audited() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let players = four(&app, "pl").await;
    let game = game_of(&app, &players, json!({})).await;

    let full = get(&app, &format!("/api/v1/admin/games/{game}"), &boss.access).await;
    assert_eq!(full.status, 200, "{}", full.text);
    let j = &full.json;
    assert_eq!(j["id"], game.as_str());
    assert_eq!(j["status"], "active");
    assert!(j["my_seat"].is_null());
    assert_eq!(j["seed"].as_str().unwrap().len(), 64);
    let seats = j["seats_private"].as_array().unwrap();
    assert_eq!(seats.len(), 4);
    let mut all = CardSet::EMPTY;
    for (i, s) in seats.iter().enumerate() {
        assert_eq!(s["seat"], i);
        let hand: CardSet = s["hand"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().parse::<Card>().unwrap())
            .collect();
        assert_eq!(hand.len(), 13);
        all = all.union(hand);
        // Each hand is the one its player sees.
        let own = get(&app, &format!("/api/v1/games/{game}"), &players[i].access).await;
        assert_eq!(s["hand"], own.json["round"]["hand"]);
        assert_eq!(s["legal_actions"]["type"], "pass");
    }
    assert_eq!(all.len(), 52);
    assert_eq!(j["rounds"].as_array().unwrap().len(), 1);
    assert_eq!(j["rounds"][0]["hands"][2], seats[2]["hand"]);
    assert!(j["actions"].as_array().unwrap().is_empty());

    // After a pass, the pass shows for its seat and in the action log.
    let view = get(&app, &format!("/api/v1/games/{game}"), &players[0].access).await;
    let action = legal_action(&view.json).unwrap();
    let reply = post(
        &app,
        &format!("/api/v1/games/{game}/actions"),
        action.clone(),
        &players[0].access,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let full = get(&app, &format!("/api/v1/admin/games/{game}"), &boss.access).await;
    let mut passed: Vec<String> = full.json["seats_private"][0]["passed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    passed.sort();
    let mut sent: Vec<String> = action["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    sent.sort();
    assert_eq!(passed, sent);
    assert_eq!(full.json["actions"][0]["type"], "pass");
    assert_eq!(full.json["actions"][0]["actor"], "player");

    let reads: Vec<Value> = audit_entries(&app, &boss, Some(&game))
        .await
        .into_iter()
        .filter(|e| e["action"] == "read_game")
        .collect();
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert_eq!(reads[0]["admin"]["username"], "boss");
    assert_eq!(reads[0]["target_type"], "game");

    // A waiting game has no hands yet.
    let waiting = game_of(&app, &players[..1], json!({})).await;
    let full = get(
        &app,
        &format!("/api/v1/admin/games/{waiting}"),
        &boss.access,
    )
    .await;
    assert_eq!(full.status, 200, "{}", full.text);
    assert!(full.json["seed"].is_null());
    assert!(full.json["seats_private"].as_array().unwrap().is_empty());
    get(
        &app,
        &format!("/api/v1/admin/games/{}", uuid::Uuid::new_v4()),
        &boss.access,
    )
    .await
    .assert_problem(404, "not_found");
}

#[actix_web::test]
async fn every_admin_action_leaves_an_audit_entry_newest_first() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let players = four(&app, "pl").await;
    let game = game_of(&app, &players, json!({})).await;
    let uid = &players[3].id;

    let steps: Vec<(String, Value, &str, &str)> = vec![
        (
            format!("/api/v1/admin/users/{uid}/ban"),
            json!({"reason": "cheating"}),
            "ban_user",
            uid,
        ),
        (
            format!("/api/v1/admin/users/{uid}/unban"),
            json!({"reason": "false alarm"}),
            "unban_user",
            uid,
        ),
        (
            format!("/api/v1/admin/games/{game}/seats/2/bot"),
            json!({"reason": "afk"}),
            "seat_to_bot",
            &game,
        ),
        (
            format!("/api/v1/admin/games/{game}/abort"),
            json!({"reason": "test game"}),
            "abort_game",
            &game,
        ),
    ];
    for (uri, body, _, _) in &steps {
        let reply = post(&app, uri, body.clone(), &boss.access).await;
        assert_eq!(reply.status, 200, "{uri}: {}", reply.text);
    }
    let reply = send(
        &app,
        bearer(
            TestRequest::put()
                .uri(&format!("/api/v1/admin/users/{uid}/role"))
                .set_json(json!({"role": "admin"})),
            &boss.access,
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let reply = get(&app, &format!("/api/v1/admin/games/{game}"), &boss.access).await;
    assert_eq!(reply.status, 200, "{}", reply.text);

    let entries = audit_entries(&app, &boss, None).await;
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "read_game",
            "change_role",
            "abort_game",
            "seat_to_bot",
            "unban_user",
            "ban_user"
        ],
        "newest first"
    );
    for (_, body, action, target) in &steps {
        let e = entries.iter().find(|e| e["action"] == *action).unwrap();
        assert_eq!(e["target_id"], *target);
        // The filter reads the id in either case.
        let upper = audit_entries(&app, &boss, Some(&target.to_uppercase())).await;
        assert!(upper.iter().any(|u| u["id"] == e["id"]), "{upper:?}");
        assert_eq!(e["reason"], body["reason"]);
        assert_eq!(e["admin"]["id"], boss.id.as_str());
        assert!(e["created_at"].is_string() && e["id"].is_string());
    }
    let role = &entries[1];
    assert_eq!(role["details"], json!({"from": "player", "to": "admin"}));
    assert!(role["reason"].is_null());
    assert_eq!(entries[3]["details"]["seat"], 2);
    assert_eq!(entries[3]["details"]["user_id"], players[2].id.as_str());

    // Filters and pages.
    let only = get(&app, "/api/v1/admin/audit?action=ban_user", &boss.access).await;
    assert_eq!(only.json["items"].as_array().unwrap().len(), 1);
    get(&app, "/api/v1/admin/audit?action=bogus", &boss.access)
        .await
        .assert_problem(400, "validation_failed");
    let first = get(&app, "/api/v1/admin/audit?limit=4", &boss.access).await;
    let cursor = first.json["next_cursor"].as_str().unwrap();
    let second = get(
        &app,
        &format!("/api/v1/admin/audit?limit=4&cursor={cursor}"),
        &boss.access,
    )
    .await;
    let rest: Vec<&str> = second.json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(rest, ["unban_user", "ban_user"]);
    assert!(second.json["next_cursor"].is_null());
}

#[actix_web::test]
async fn the_audit_log_refuses_updates_and_deletes() {
    use leekha::db::schema::audit_log;
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let user = register(&app, "someone").await;
    let reply = post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", user.id),
        json!({"reason": "x"}),
        &boss.access,
    )
    .await;
    assert_eq!(reply.status, 200);
    let mut conn = state.db.conn().unwrap();
    let updated = diesel::update(audit_log::table)
        .set(audit_log::reason.eq(Some("rewritten")))
        .execute(&mut *conn);
    assert!(updated.is_err(), "{updated:?}");
    let deleted = diesel::delete(audit_log::table).execute(&mut *conn);
    assert!(deleted.is_err(), "{deleted:?}");
    let n: i64 = audit_log::table.count().get_result(&mut *conn).unwrap();
    assert_eq!(n, 1);
}

#[actix_web::test]
async fn admins_search_games_by_status_and_player() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let players = four(&app, "pl").await;
    let active = game_of(&app, &players, json!({})).await;
    let waiting = game_of(&app, &players[..1], json!({"visibility": "private"})).await;
    let other = register(&app, "Stranger").await;
    let theirs = game_of(&app, std::slice::from_ref(&other), json!({})).await;

    let all = get(&app, "/api/v1/admin/games", &boss.access).await;
    assert_eq!(all.status, 200, "{}", all.text);
    assert_eq!(
        all.item_ids(),
        [theirs.clone(), waiting.clone(), active.clone()]
    );
    let first = &all.json["items"][2];
    assert_eq!(first["status"], "active");
    assert_eq!(first["rated"], true);
    assert_eq!(first["seats"][3]["player"]["username"], "pl3");

    let w = get(&app, "/api/v1/admin/games?status=waiting", &boss.access).await;
    assert_eq!(w.item_ids(), [theirs.clone(), waiting.clone()]);
    let p = get(&app, "/api/v1/admin/games?player=PL0", &boss.access).await;
    assert_eq!(p.item_ids(), [waiting.clone(), active.clone()]);
    let p = get(
        &app,
        "/api/v1/admin/games?player=stranger&status=waiting,active",
        &boss.access,
    )
    .await;
    assert_eq!(p.item_ids(), [theirs]);
    let none = get(&app, "/api/v1/admin/games?player=nobody", &boss.access).await;
    assert!(none.item_ids().is_empty());
    let page = get(&app, "/api/v1/admin/games?limit=2", &boss.access).await;
    let cursor = page.json["next_cursor"].as_str().unwrap();
    let next = get(
        &app,
        &format!("/api/v1/admin/games?limit=2&cursor={cursor}"),
        &boss.access,
    )
    .await;
    assert_eq!(next.item_ids(), std::slice::from_ref(&active));
    get(&app, "/api/v1/admin/games?status=lost", &boss.access)
        .await
        .assert_problem(400, "validation_failed");

    // A deleted account's games are found by its id, also once its name is taken again;
    // the name alone means the live account.
    let gone = register(&app, "Leaver").await;
    let bots =
        json!({"seats": [{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]});
    let played = game_of(&app, std::slice::from_ref(&gone), bots).await;
    assert_eq!(delete(&app, "/api/v1/me", &gone.access).await.status, 204);
    let by_name = get(&app, "/api/v1/admin/games?player=leaver", &boss.access).await;
    assert!(by_name.item_ids().is_empty(), "{}", by_name.text);
    let by_id = format!("/api/v1/admin/games?player_id={}", gone.id.to_uppercase());
    let found = get(&app, &by_id, &boss.access).await;
    assert_eq!(found.item_ids(), [played]);
    // Bots at the table from the start: unrated.
    assert_eq!(found.json["items"][0]["rated"], false);
    let again = register(&app, "leaver").await;
    let by_name = get(&app, "/api/v1/admin/games?player=leaver", &boss.access).await;
    assert!(by_name.item_ids().is_empty(), "{}", by_name.text);
    let both = format!("/api/v1/admin/games?player=leaver&player_id={}", gone.id);
    assert!(get(&app, &both, &boss.access).await.item_ids().is_empty());
    let both = format!("/api/v1/admin/games?player=leaver&player_id={}", again.id);
    assert!(get(&app, &both, &boss.access).await.item_ids().is_empty());
    let both = format!("/api/v1/admin/games?player=pl0&player_id={}", players[0].id);
    assert_eq!(
        get(&app, &both, &boss.access).await.item_ids(),
        [waiting, active]
    );
    get(&app, "/api/v1/admin/games?player_id=leaver", &boss.access)
        .await
        .assert_problem(400, "validation_failed");
}

#[actix_web::test]
async fn stats_count_users_games_and_recent_actions() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boss").await;
    let players = four(&app, "pl").await;
    let game = game_of(&app, &players, json!({})).await;
    game_of(&app, &players[..1], json!({})).await;
    let view = get(&app, &format!("/api/v1/games/{game}"), &players[0].access).await;
    let action = legal_action(&view.json).unwrap();
    let reply = post(
        &app,
        &format!("/api/v1/games/{game}/actions"),
        action,
        &players[0].access,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", players[3].id),
        json!({"reason": "x"}),
        &boss.access,
    )
    .await;

    let stats = get(&app, "/api/v1/admin/stats", &boss.access).await;
    assert_eq!(stats.status, 200, "{}", stats.text);
    let s = &stats.json;
    assert_eq!(s["users"]["total"], 5);
    assert_eq!(s["users"]["admins"], 1);
    assert_eq!(s["users"]["banned"], 1);
    assert_eq!(s["games"]["total"], 2);
    assert_eq!(s["games"]["active"], 1);
    assert_eq!(s["games"]["waiting"], 1);
    assert_eq!(s["games"]["finished"], 0);
    assert_eq!(s["actions"]["last_hour"], 1);
    assert_eq!(s["actions"]["last_day"], 1);
    assert!(s["generated_at"].is_string());
}

#[actix_web::test]
async fn a_banned_or_deleted_player_is_refused_by_the_game_endpoints_before_any_game_lookup() {
    use crate::common::play::action_count;
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "warden").await;
    let players = four(&app, "bn").await;
    let game = game_of(&app, &players, json!({})).await;
    let p = &players[1];
    let view = get(&app, &format!("/api/v1/games/{game}"), &p.access).await;
    assert_eq!(view.status, 200, "{}", view.text);
    let action = legal_action(&view.json).expect("a pass");
    let before = action_count(&app, &game, &players[0].access).await;

    let banned = post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", p.id),
        json!({"reason": "cheating"}),
        &boss.access,
    )
    .await;
    assert_eq!(banned.status, 200, "{}", banned.text);
    let unknown = uuid::Uuid::new_v4();
    for id in [game.clone(), unknown.to_string()] {
        get(&app, &format!("/api/v1/games/{id}"), &p.access)
            .await
            .assert_problem(403, "banned");
        post(
            &app,
            &format!("/api/v1/games/{id}/actions"),
            action.clone(),
            &p.access,
        )
        .await
        .assert_problem(403, "banned");
    }
    // Even a malformed action gets the account's answer first.
    post(
        &app,
        &format!("/api/v1/games/{game}/actions"),
        json!({"type": "fold"}),
        &p.access,
    )
    .await
    .assert_problem(403, "banned");
    assert_eq!(action_count(&app, &game, &players[0].access).await, before);

    let q = &players[2];
    let deleted = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me"), &q.access),
    )
    .await;
    assert_eq!(deleted.status, 204, "{}", deleted.text);
    get(&app, &format!("/api/v1/games/{game}"), &q.access)
        .await
        .assert_problem(401, "invalid_token");
    post(
        &app,
        &format!("/api/v1/games/{game}/actions"),
        json!({"type": "play", "card": "QS"}),
        &q.access,
    )
    .await
    .assert_problem(401, "invalid_token");
}
