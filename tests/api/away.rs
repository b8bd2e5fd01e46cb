//! Away mode: while a player is away, the bot plays their seats at once; returning, or the
//! end of the time away, gives the seats back.

use actix_web::test::TestRequest;
use chrono::{Duration, Utc};
use diesel::prelude::*;
use serde_json::{Value, json};

use crate::common::play::{four, game_of, get, get_all, legal_action, post};
use crate::common::{Session, TestDb, bearer, send};

fn seat_changes(events: &Value) -> Vec<(u64, String)> {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "seat_changed")
        .map(|e| {
            (
                e["data"]["seat"].as_u64().unwrap(),
                e["data"]["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `PUT /me/away` with `body`, as `who`.
async fn put_away<S, B>(app: &S, who: &Session, body: Value) -> crate::common::Reply
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
        bearer(
            TestRequest::put().uri("/api/v1/me/away").set_json(body),
            &who.access,
        ),
    )
    .await
}

/// Lets every player in `present` act while they can, up to `rounds` passes over them;
/// after each action, checks that `away` (if any) never has an action waiting.
async fn play_on<S, B>(
    app: &S,
    id: &str,
    present: &[&Session],
    away: Option<&Session>,
    rounds: usize,
) -> usize
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut acted = 0;
    for _ in 0..rounds {
        for p in present {
            let view = get(app, &format!("/api/v1/games/{id}"), &p.access).await;
            if view.json["status"] != "active" {
                return acted;
            }
            let Some(action) = legal_action(&view.json) else {
                continue;
            };
            let reply = post(
                app,
                &format!("/api/v1/games/{id}/actions"),
                action,
                &p.access,
            )
            .await;
            assert_eq!(reply.status, 200, "{}", reply.text);
            acted += 1;
            if let Some(away) = away {
                let theirs = get(app, &format!("/api/v1/games/{id}"), &away.access).await;
                assert!(
                    theirs.json["legal_actions"].is_null(),
                    "an away player's turn waits: {}",
                    theirs.text
                );
            }
        }
    }
    acted
}

#[actix_web::test]
async fn while_away_the_bot_plays_at_once_and_returning_gives_the_seat_back() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "away_").await;
    let id = game_of(&app, &players, json!({})).await;
    let (ann, rest) = (&players[0], [&players[1], &players[2], &players[3]]);

    let until = (Utc::now() + Duration::hours(8)).to_rfc3339();
    let away = put_away(&app, ann, json!({"until": until})).await;
    assert_eq!(away.status, 200, "{}", away.text);
    assert_eq!(away.json["games_handed_over"], 1);
    let me = get(&app, "/api/v1/me", &ann.access).await;
    assert!(me.json["away_until"].is_string(), "{}", me.text);

    // The pass was due at once: the bot made it in the same request.
    let view = get(&app, &format!("/api/v1/games/{id}"), &ann.access).await;
    assert!(view.json["legal_actions"].is_null(), "{}", view.text);
    assert!(view.json["seats"][0]["bot"].is_string());
    assert_eq!(view.json["seats"][0]["player"]["username"], ann.username);
    // A hint has nothing to suggest, and says the way back: not a reclaim, which is for
    // timeouts, but the end of the time away.
    let hint = get(&app, &format!("/api/v1/games/{id}/hint"), &ann.access).await;
    hint.assert_problem(409, "nothing_to_do");
    assert!(
        hint.json["detail"]
            .as_str()
            .unwrap()
            .contains("DELETE /api/v1/me/away"),
        "{}",
        hint.text
    );
    let acted = play_on(&app, &id, &rest, Some(ann), 12).await;
    assert!(acted >= 12, "the others played on: {acted} actions");

    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &ann.access,
    )
    .await;
    assert!(seat_changes(&events.json).contains(&(0, "away".to_owned())));
    // No `your_turn` reached the away player after they left.
    let feed = get(&app, "/api/v1/me/notifications", &ann.access).await;
    let last_seq_before = feed.json["last_seq"].as_i64().unwrap();

    let back = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me/away"), &ann.access),
    )
    .await;
    assert_eq!(back.status, 204, "{}", back.text);
    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &ann.access,
    )
    .await;
    assert!(seat_changes(&events.json).contains(&(0, "returned".to_owned())));
    let me = get(&app, "/api/v1/me", &ann.access).await;
    assert!(me.json["away_until"].is_null(), "{}", me.text);
    // Now the game waits for Ann again: the others run out of moves before her turn.
    play_on(&app, &id, &rest, None, 12).await;
    let view = get(&app, &format!("/api/v1/games/{id}"), &ann.access).await;
    assert!(view.json["legal_actions"].is_object(), "{}", view.text);
    assert!(view.json["seats"][0]["bot"].is_null());
    let feed = get(
        &app,
        &format!("/api/v1/me/notifications?after={last_seq_before}"),
        &ann.access,
    )
    .await;
    let kinds: Vec<&str> = feed.json["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"your_turn"), "back, she is told: {kinds:?}");
}

#[actix_web::test]
async fn a_game_that_starts_while_a_player_is_away_starts_with_the_bot_in_their_seat() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "late_").await;
    let dan = &players[3];
    let until = (Utc::now() + Duration::days(2)).to_rfc3339();
    let away = put_away(&app, dan, json!({"until": until})).await;
    assert_eq!(away.status, 200, "{}", away.text);
    assert_eq!(away.json["games_handed_over"], 0);
    let id = game_of(&app, &players, json!({})).await;
    let view = get(&app, &format!("/api/v1/games/{id}"), &dan.access).await;
    assert_eq!(view.json["status"], "active");
    assert!(view.json["seats"][3]["bot"].is_string(), "{}", view.text);
    assert!(view.json["legal_actions"].is_null());
    // Replayed in order, the events show the bot in the seat before the deal.
    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &dan.access,
    )
    .await;
    let order: Vec<String> = events.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "seat_changed" => format!("seat_changed {}", e["data"]["reason"].as_str().unwrap()),
            kind => kind.to_owned(),
        })
        .skip_while(|e| e != "game_started")
        .take(3)
        .collect();
    assert_eq!(order, ["game_started", "seat_changed away", "round_dealt"]);

    // The end of the time away, as the scheduler finds it.
    {
        use leekha::db::schema::users;
        let mut conn = state.db.conn().unwrap();
        diesel::update(users::table.find(&dan.id))
            .set(users::away_until.eq(leekha::db::now() - Duration::seconds(1)))
            .execute(&mut *conn)
            .unwrap();
    }
    let report = leekha::scheduler::tick(&state).unwrap();
    assert_eq!(report.returned_from_away, 1);
    let view = get(&app, &format!("/api/v1/games/{id}"), &dan.access).await;
    assert!(view.json["seats"][3]["bot"].is_null(), "{}", view.text);
    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &dan.access,
    )
    .await;
    let changes = seat_changes(&events.json);
    assert!(changes.contains(&(3, "away".to_owned())), "{changes:?}");
    assert!(changes.contains(&(3, "returned".to_owned())), "{changes:?}");
    let me = get(&app, "/api/v1/me", &dan.access).await;
    assert!(me.json["away_until"].is_null());
}

#[actix_web::test]
async fn the_time_away_is_in_the_future_and_at_most_thirty_days() {
    let db = TestDb::migrated();
    let app = crate::common::app(db.state()).await;
    let ann = crate::common::register(&app, "away_limits").await;
    for until in [
        Utc::now() - Duration::minutes(1),
        Utc::now() + Duration::days(31),
    ] {
        put_away(&app, &ann, json!({"until": until.to_rfc3339()}))
            .await
            .assert_problem(400, "validation_failed");
    }
    put_away(&app, &ann, json!({}))
        .await
        .assert_problem(400, "validation_failed");
    // A leap second is no time both databases keep.
    put_away(&app, &ann, json!({"until": "2099-12-31T23:59:60Z"}))
        .await
        .assert_problem(400, "validation_failed");
    // A time is kept to the microsecond, as PostgreSQL keeps it: what the answer says is
    // what is read back, on either database.
    let tomorrow = (Utc::now() + Duration::days(1)).format("%Y-%m-%dT%H:%M:%S");
    let away = put_away(
        &app,
        &ann,
        json!({"until": format!("{tomorrow}.123456789Z")}),
    )
    .await;
    assert_eq!(away.status, 200, "{}", away.text);
    let answered = away.json["until"].as_str().unwrap().to_owned();
    assert!(answered.ends_with(".123456Z"), "{answered}");
    let me = get(&app, "/api/v1/me", &ann.access).await;
    assert_eq!(me.json["away_until"], answered.as_str(), "{}", me.text);
}

#[actix_web::test]
async fn reclaiming_a_timed_out_seat_while_away_leaves_it_to_the_bot_until_the_return() {
    use leekha::db::schema::game_seats;
    let db = TestDb::migrated();
    let state = db.state();
    let app = crate::common::app(state.clone()).await;
    let players = four(&app, "away_reclaim").await;
    let id = game_of(&app, &players, json!({})).await;
    let ann = &players[0];
    // Two timeouts in a row gave Ann's seat to the bot.
    {
        let mut conn = state.db.conn().unwrap();
        diesel::update(game_seats::table.find((&id, 0)))
            .set((
                game_seats::bot_level.eq("heuristic"),
                game_seats::bot_reason.eq("timeout"),
                game_seats::timeouts_in_row.eq(2),
            ))
            .execute(&mut *conn)
            .unwrap();
    }
    let until = (Utc::now() + Duration::hours(8)).to_rfc3339();
    let away = put_away(&app, ann, json!({"until": until})).await;
    assert_eq!(away.status, 200, "{}", away.text);

    // Away, she does not play: the seat stays the bot's, now for her time away.
    let reclaimed = post(
        &app,
        &format!("/api/v1/games/{id}/reclaim"),
        json!({}),
        &ann.access,
    )
    .await;
    assert_eq!(reclaimed.status, 200, "{}", reclaimed.text);
    assert!(
        reclaimed.json["seats"][0]["bot"].is_string(),
        "{}",
        reclaimed.text
    );
    assert!(
        reclaimed.json["legal_actions"].is_null(),
        "{}",
        reclaimed.text
    );
    let events = get_all(
        &app,
        &format!("/api/v1/games/{id}/events"),
        "events",
        &ann.access,
    )
    .await;
    assert_eq!(
        seat_changes(&events.json).last(),
        Some(&(0, "away".to_owned()))
    );

    // Back, the seat is hers again.
    let back = send(
        &app,
        bearer(TestRequest::delete().uri("/api/v1/me/away"), &ann.access),
    )
    .await;
    assert_eq!(back.status, 204, "{}", back.text);
    let view = get(&app, &format!("/api/v1/games/{id}"), &ann.access).await;
    assert!(view.json["seats"][0]["bot"].is_null(), "{}", view.text);
}
