//! Spectators: who may watch a game without a seat (`allow_spectators`), and the count of
//! those watching in the game view.

use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::common::play::{four, game_of, get, legal_action, post};
use crate::common::{self, TestDb, bearer, register, send};

#[actix_web::test]
async fn a_game_without_spectators_is_hidden_from_outsiders_once_it_starts() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "closed").await;
    let outsider = register(&app, "outsider").await;

    let created = post(
        &app,
        "/api/v1/games",
        json!({"allow_spectators": false}),
        &players[0].access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.json["allow_spectators"], false);
    let id = created.json["id"].as_str().unwrap().to_owned();
    // While it waits for players anyone may find it, look at it and join it.
    let lobby = get(&app, "/api/v1/games", &outsider.access).await;
    assert!(
        lobby.json["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == id.as_str()),
        "{}",
        lobby.text
    );
    let waiting = get(&app, &format!("/api/v1/games/{id}"), &outsider.access).await;
    assert_eq!(waiting.status, 200, "{}", waiting.text);
    // Looking is not watching: a game closed to spectators counts none.
    assert_eq!(waiting.json["spectators"], 0, "{}", waiting.text);
    for p in &players[1..] {
        let joined = post(
            &app,
            &format!("/api/v1/games/{id}/join"),
            json!({}),
            &p.access,
        )
        .await;
        assert_eq!(joined.status, 200, "{}", joined.text);
    }

    for uri in [
        format!("/api/v1/games/{id}"),
        format!("/api/v1/games/{id}/events"),
        format!("/api/v1/games/{id}/events/stream"),
        format!("/api/v1/games/{id}/chat"),
    ] {
        get(&app, &uri, &outsider.access)
            .await
            .assert_problem(404, "not_found");
    }
    let shown = get(&app, &format!("/api/v1/games/{id}"), &players[2].access).await;
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert_eq!(shown.json["status"], "active");
    assert_eq!(shown.json["allow_spectators"], false);

    // A game that allows them (the default) shows its spectators the public view.
    let open = game_of(&app, &four(&app, "open").await, json!({})).await;
    let seen = get(&app, &format!("/api/v1/games/{open}"), &outsider.access).await;
    assert_eq!(seen.status, 200, "{}", seen.text);
    assert_eq!(seen.json["allow_spectators"], true);
    assert_eq!(seen.json["my_seat"], Value::Null);
    assert_eq!(seen.json["legal_actions"], Value::Null);
    // A private game is never watched, whatever its creator asks: its view says so.
    let private = post(
        &app,
        "/api/v1/games",
        json!({"visibility": "private", "allow_spectators": true}),
        &players[0].access,
    )
    .await;
    assert_eq!(private.status, 201, "{}", private.text);
    assert_eq!(private.json["allow_spectators"], false);

    // Bad input is refused with the field named.
    let bad = post(
        &app,
        "/api/v1/games",
        json!({"allow_spectators": "no"}),
        &players[0].access,
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.text);
    // A value of the wrong type is a wrong value, not malformed JSON, wherever it sits; in
    // the rules, a wrong rule option.
    for (body, code) in [
        (json!({"allow_spectators": "no"}), "validation_failed"),
        (
            json!({"rules": {"pass_restriction": true}}),
            "invalid_rules",
        ),
        (json!({"rules": {"mode": 1}}), "invalid_rules"),
    ] {
        post(&app, "/api/v1/games", body, &players[0].access)
            .await
            .assert_problem(400, code);
    }
    let cut = TestRequest::post()
        .uri("/api/v1/games")
        .insert_header(("content-type", "application/json"))
        .set_payload(r#"{"rules": {"pass_restriction": tru"#);
    send(&app, bearer(cut, &players[0].access))
        .await
        .assert_problem(400, "bad_request");
}

#[actix_web::test]
async fn a_private_game_is_open_to_whoever_has_its_id_only_while_a_seat_is_open() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "priv").await;
    let (host, invitee, friend, late) = (&players[0], &players[1], &players[2], &players[3]);
    let stranger = register(&app, "stranger").await;

    let created = post(
        &app,
        "/api/v1/games",
        json!({"visibility": "private", "seats": [{"kind": "me"}, {"kind": "invite", "username": "priv1"}, {"kind": "open"}, {"kind": "bot", "level": "random"}]}),
        &host.access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.json["visibility"], "private");
    let id = created.json["id"].as_str().unwrap().to_owned();
    let lobby = get(&app, "/api/v1/games?status=waiting", &stranger.access).await;
    assert!(
        lobby.json["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["id"] != id.as_str()),
        "{}",
        lobby.text
    );
    let pages = [
        format!("/api/v1/games/{id}"),
        format!("/api/v1/games/{id}/events"),
        format!("/api/v1/games/{id}/chat"),
    ];

    // While a seat is open, the id is the invitation: whoever has it may look and take the seat.
    for uri in &pages {
        let seen = get(&app, uri, &friend.access).await;
        assert_eq!(seen.status, 200, "{uri}: {}", seen.text);
    }
    let joined = post(
        &app,
        &format!("/api/v1/games/{id}/join"),
        json!({}),
        &friend.access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    assert_eq!(joined.json["my_seat"], 2);
    assert_eq!(joined.json["status"], "waiting");

    // No seat is open any more (the last one is the invitee's): the game is hidden from the
    // others, and neither the late one nor the stranger can join it.
    for who in [late, &stranger] {
        for uri in &pages {
            get(&app, uri, &who.access)
                .await
                .assert_problem(404, "not_found");
        }
        post(
            &app,
            &format!("/api/v1/games/{id}/join"),
            json!({}),
            &who.access,
        )
        .await
        .assert_problem(404, "not_found");
    }
    // Its players and the invitee still see it; the invitee's join starts it.
    let waiting = get(&app, &format!("/api/v1/games/{id}"), &invitee.access).await;
    assert_eq!(waiting.status, 200, "{}", waiting.text);
    let started = post(
        &app,
        &format!("/api/v1/games/{id}/join"),
        json!({}),
        &invitee.access,
    )
    .await;
    assert_eq!(started.status, 200, "{}", started.text);
    assert_eq!(started.json["status"], "active");
    assert_eq!(started.json["my_seat"], 1);
    for uri in pages
        .iter()
        .chain([&format!("/api/v1/games/{id}/events/stream")])
    {
        get(&app, uri, &stranger.access)
            .await
            .assert_problem(404, "not_found");
    }
    let played = get(&app, &format!("/api/v1/games/{id}"), &friend.access).await;
    assert_eq!(played.status, 200, "{}", played.text);
    assert_eq!(played.json["my_seat"], 2);
}

#[actix_web::test]
async fn the_game_view_counts_who_watches_without_a_seat() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "seat").await;
    let id = game_of(&app, &players, json!({})).await;
    let spectators = |view: &Value| {
        view["spectators"]
            .as_u64()
            .unwrap_or_else(|| panic!("no spectators in {view}"))
    };

    let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
    assert_eq!(spectators(&view.json), 0, "players are not spectators");

    let ana = register(&app, "ana").await;
    let ben = register(&app, "ben").await;
    let first = get(&app, &format!("/api/v1/games/{id}"), &ana.access).await;
    assert_eq!(
        spectators(&first.json),
        1,
        "a spectator's first view counts them"
    );
    let view = get(&app, &format!("/api/v1/games/{id}"), &players[1].access).await;
    assert_eq!(spectators(&view.json), 1, "{}", view.text);
    // Reading again does not count twice; reading the events counts too.
    get(&app, &format!("/api/v1/games/{id}"), &ana.access).await;
    get(&app, &format!("/api/v1/games/{id}/events"), &ben.access).await;
    let view = get(&app, &format!("/api/v1/games/{id}"), &players[1].access).await;
    assert_eq!(spectators(&view.json), 2, "{}", view.text);

    // An action's answer carries the count as well.
    let mine = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
    let acted = post(
        &app,
        &format!("/api/v1/games/{id}/actions"),
        legal_action(&mine.json).unwrap(),
        &players[0].access,
    )
    .await;
    assert_eq!(acted.status, 200, "{}", acted.text);
    assert_eq!(spectators(&acted.json), 2, "{}", acted.text);

    // A watch lapses after a minute without a renewal.
    {
        use diesel::prelude::*;
        use leekha::db::schema::game_watchers;
        let mut conn = db.state().db.conn().unwrap();
        let long_ago = chrono::NaiveDate::from_ymd_opt(2020, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        diesel::update(game_watchers::table)
            .set(game_watchers::until.eq(long_ago))
            .execute(&mut *conn)
            .unwrap();
    }
    let view = send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}")),
            &players[1].access,
        ),
    )
    .await;
    assert_eq!(spectators(&view.json), 0, "{}", view.text);
}

#[actix_web::test]
async fn who_looks_at_a_private_game_or_takes_a_seat_is_no_spectator() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "looker").await;
    let watched = |id: &str, who: usize| {
        let uri = format!("/api/v1/games/{id}");
        let token = players[who].access.clone();
        let app = &app;
        async move { get(app, &uri, &token).await.json["spectators"].clone() }
    };

    // A private game is never watched: its id is the invitation, and a look is not a watch.
    let private = game_of(&app, &players[..3], json!({"visibility": "private"})).await;
    assert_eq!(watched(&private, 3).await, 0);
    assert_eq!(watched(&private, 0).await, 0);

    // A public one counts who looks without a seat, until they take one.
    let public = game_of(&app, &players[..3], json!({})).await;
    assert_eq!(watched(&public, 3).await, 1);
    assert_eq!(watched(&public, 0).await, 1);
    let joined = post(
        &app,
        &format!("/api/v1/games/{public}/join"),
        json!({}),
        &players[3].access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    assert_eq!(joined.json["spectators"], 0, "{}", joined.text);
    assert_eq!(watched(&public, 0).await, 0);

    // Nor is the user a seat is kept for: they look at the game to take it.
    let invitee = &players[3];
    let created = post(
        &app,
        "/api/v1/games",
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": invitee.username}, {"kind": "open"}, {"kind": "open"}]}),
        &players[0].access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let kept = created.json["id"].as_str().unwrap().to_owned();
    assert_eq!(watched(&kept, 3).await, 0, "the invitee is no spectator");
    assert_eq!(watched(&kept, 1).await, 1, "an outsider still is");
    assert_eq!(watched(&kept, 0).await, 1);
}
