//! The creator's seat changes in a waiting game: open a seat, invite someone in place of an
//! invitation nobody answered, give a seat to a bot; nobody else may, and no human's seat.

use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::common::play::{get, of_kind, post, put_json};
use crate::common::{Reply, Session, TestDb, bearer, register, send};

async fn set_seat(
    app: &impl actix_web::dev::Service<
        actix_http::Request,
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
    >,
    game: &str,
    seat: &str,
    body: Value,
    who: &Session,
) -> Reply {
    let uri = format!("/api/v1/games/{game}/seats/{seat}");
    put_json(app, &uri, body, &who.access).await
}

fn invitations(feed: &Value) -> usize {
    of_kind(feed, "invited").len()
}

#[actix_web::test]
async fn the_creator_opens_reinvites_and_fills_the_seats_no_player_holds() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let host = register(&app, "host_a").await;
    let bob = register(&app, "host_bob").await;
    let cat = register(&app, "host_cat").await;
    let dan = register(&app, "host_dan").await;
    let outsider = register(&app, "host_out").await;
    let created = post(
        &app,
        "/api/v1/games",
        json!({"seats": [{"kind": "me"}, {"kind": "invite", "username": "host_bob"},
                         {"kind": "invite", "username": "host_cat"}, {"kind": "open"}]}),
        &host.access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let game = created.json["id"].as_str().unwrap().to_owned();

    // Only the creator, seated, changes seats.
    for who in [&bob, &outsider] {
        set_seat(&app, &game, "2", json!({"kind": "open"}), who)
            .await
            .assert_problem(403, "forbidden");
    }

    // Cat never answers: her seat is opened, then kept for Dan, who hears of it.
    let opened = set_seat(&app, &game, "2", json!({"kind": "open"}), &host).await;
    assert_eq!(opened.status, 200, "{}", opened.text);
    assert_eq!(opened.json["seats"][2]["open"], true, "{}", opened.text);
    assert_eq!(opened.json["my_seat"], 0);
    let mine = get(&app, "/api/v1/me/games?status=waiting", &cat.access).await;
    assert_eq!(
        mine.json["items"].as_array().unwrap().len(),
        0,
        "{}",
        mine.text
    );
    let kept = set_seat(
        &app,
        &game,
        "2",
        json!({"kind": "invite", "username": "HOST_DAN"}),
        &host,
    )
    .await;
    assert_eq!(kept.status, 200, "{}", kept.text);
    assert_eq!(kept.json["seats"][2]["open"], false);
    let feed = get(&app, "/api/v1/me/notifications", &dan.access).await;
    assert_eq!(invitations(&feed.json), 1, "{}", feed.text);
    // Asking again for what the seat is changes nothing, and tells no one again.
    let again = set_seat(
        &app,
        &game,
        "2",
        json!({"kind": "invite", "username": "host_dan"}),
        &host,
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["version"], kept.json["version"]);
    let feed = get(&app, "/api/v1/me/notifications", &dan.access).await;
    assert_eq!(invitations(&feed.json), 1);
    // Withdrawn and made again, the invitation reaches Dan's feed again (its push is silent:
    // `push::a_withdrawn_invitation_made_again_reaches_the_feed_and_is_pushed_silently`).
    for body in [
        json!({"kind": "open"}),
        json!({"kind": "invite", "username": "host_dan"}),
    ] {
        let changed = set_seat(&app, &game, "2", body, &host).await;
        assert_eq!(changed.status, 200, "{}", changed.text);
    }
    let feed = get(&app, "/api/v1/me/notifications", &dan.access).await;
    assert_eq!(invitations(&feed.json), 2, "{}", feed.text);
    let kept = get(&app, &format!("/api/v1/games/{game}"), &host.access).await;
    let events = get(&app, &format!("/api/v1/games/{game}/events"), &host.access).await;
    let reasons: Vec<&str> = events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "seat_changed")
        .map(|e| e["data"]["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["host"; 4], "{}", events.text);

    // What cannot be asked: a player's seat, no seat, the creator or a guest already at the
    // table, a bot in a rated game, a body of the wrong shape.
    set_seat(&app, &game, "0", json!({"kind": "open"}), &host)
        .await
        .assert_problem(409, "seat_taken");
    for seat in ["4", "-1", "x"] {
        set_seat(&app, &game, seat, json!({"kind": "open"}), &host)
            .await
            .assert_problem(400, "validation_failed");
    }
    for body in [
        json!({"kind": "invite", "username": "host_a"}),
        json!({"kind": "invite", "username": "host_bob"}),
        json!({"kind": "invite", "username": "nobody_here"}),
        json!({"kind": "invite"}),
        json!({"kind": "open", "username": "host_dan"}),
        json!({"kind": "open", "level": "expert"}),
        json!({"kind": "bot"}),
        json!({"kind": "me"}),
    ] {
        let refused = set_seat(&app, &game, "3", body.clone(), &host).await;
        assert_eq!(refused.status, 400, "{body}: {}", refused.text);
    }
    let view = get(&app, &format!("/api/v1/games/{game}"), &host.access).await;
    assert_eq!(
        view.json["version"], kept.json["version"],
        "nothing changed"
    );

    // A seat a player took is theirs.
    let joined = post(
        &app,
        &format!("/api/v1/games/{game}/join"),
        json!({}),
        &bob.access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    set_seat(&app, &game, "1", json!({"kind": "open"}), &host)
        .await
        .assert_problem(409, "seat_taken");
}

#[actix_web::test]
async fn bots_the_creator_seats_start_an_unrated_game_and_blocks_still_hold() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let host = register(&app, "solo_host").await;
    let blocker = register(&app, "solo_blocker").await;
    let put = TestRequest::put().uri("/api/v1/me/blocks/solo_host");
    assert_eq!(send(&app, bearer(put, &blocker.access)).await.status, 201);
    let created = post(
        &app,
        "/api/v1/games",
        json!({"rated": false, "seats": [{"kind": "me"}, {"kind": "open"}, {"kind": "open"}, {"kind": "open"}]}),
        &host.access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let game = created.json["id"].as_str().unwrap().to_owned();
    set_seat(
        &app,
        &game,
        "1",
        json!({"kind": "invite", "username": "solo_blocker"}),
        &host,
    )
    .await
    .assert_problem(403, "blocked");
    for seat in ["1", "2"] {
        let bot = set_seat(
            &app,
            &game,
            seat,
            json!({"kind": "bot", "level": "random"}),
            &host,
        )
        .await;
        assert_eq!(bot.status, 200, "{}", bot.text);
        assert_eq!(bot.json["status"], "waiting");
    }
    let last = set_seat(&app, &game, "3", json!({"kind": "bot"}), &host).await;
    assert_eq!(last.status, 200, "{}", last.text);
    assert_eq!(
        last.json["status"], "active",
        "the fourth seat filled starts the game"
    );
    assert_eq!(last.json["seats"][3]["bot"], "heuristic");
    assert_eq!(last.json["round"]["hand"].as_array().unwrap().len(), 13);
    set_seat(&app, &game, "3", json!({"kind": "open"}), &host)
        .await
        .assert_problem(409, "game_not_waiting");
}
