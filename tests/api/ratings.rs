//! Ratings, boards, profiles, histories and rematches over HTTP (issue #19).

use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::admin::admin;
use crate::common::play::{four, game_of, get, get_all, legal_action, post};
use crate::common::{self, Session, TestDb, bearer, send};

/// Plays a game to its end with every seated human choosing a legal action in turn.
async fn play_to_end<S, B>(app: &S, game: &str, players: &[Session]) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    match play_until(app, game, players, |_| false).await {
        Ok(end) => end,
        Err(_) => unreachable!("nothing stops the play"),
    }
}

/// Plays the game, each of `players` in turn acting when it can, until it finishes (its
/// final view), or until `stop` says of a player's view that its next action is to be held
/// back (that player's index and the action).
async fn play_until<S, B>(
    app: &S,
    game: &str,
    players: &[Session],
    stop: impl Fn(&Value) -> bool,
) -> Result<Value, (usize, Value)>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    for _ in 0..2_000 {
        let mut acted = false;
        for (i, p) in players.iter().enumerate() {
            let view = get(app, &format!("/api/v1/games/{game}"), &p.access).await;
            assert_eq!(view.status, 200, "{}", view.text);
            if view.json["status"] == "finished" {
                return Ok(view.json);
            }
            if let Some(action) = legal_action(&view.json) {
                if stop(&view.json) {
                    return Err((i, action));
                }
                let done = post(
                    app,
                    &format!("/api/v1/games/{game}/actions"),
                    action,
                    &p.access,
                )
                .await;
                assert_eq!(done.status, 200, "{}", done.text);
                acted = true;
            }
        }
        assert!(acted, "nobody could act in an unfinished game");
    }
    panic!("the game did not end");
}

/// A one-round game (target 1: someone takes a point every round) of the four players.
fn one_round(mode: &str) -> Value {
    json!({"rules": {"preset": if mode == "solo" { "classic" } else { "partnership" }, "target_score": 1}})
}

async fn profile<S, B>(app: &S, of: &Session, by: &Session) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let reply = get(app, &format!("/api/v1/users/{}", of.username), &by.access).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json
}

fn mu(profile: &Value, mode: &str) -> f64 {
    profile["ratings"][mode]["mu"].as_f64().unwrap()
}

fn games(profile: &Value, mode: &str) -> i64 {
    profile["ratings"][mode]["games"].as_i64().unwrap()
}

/// The seat numbers by rank in a finished game's result.
fn ranks(view: &Value) -> Vec<(usize, u64)> {
    view["result"]["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["seat"].as_u64().unwrap() as usize,
                s["rank"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn verify(state: &leekha::app::AppState) {
    let mut conn = state.db.conn().unwrap();
    let (_, mismatches) = leekha::games::verify::verify_all(&mut conn).unwrap();
    assert!(mismatches.is_empty(), "{mismatches:?}");
}

#[actix_web::test]
async fn a_rated_solo_game_moves_the_winner_up_and_the_last_down() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "solo").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    let view = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
    assert_eq!(view.json["rated"], true);
    let end = play_to_end(&app, &id, &players).await;
    let ranking = ranks(&end);
    let (best, worst) = (ranking[0], ranking[3]);
    assert!(
        best.1 < worst.1,
        "a one-round game has a last place: {ranking:?}"
    );
    let first = profile(&app, &players[best.0], &players[1]).await;
    let last = profile(&app, &players[worst.0], &players[1]).await;
    assert!(mu(&first, "solo") > 25.0, "{first}");
    assert!(mu(&last, "solo") < 25.0, "{last}");
    for p in &players {
        let seen = profile(&app, p, &players[0]).await;
        assert_eq!(games(&seen, "solo"), 1);
        assert_eq!(games(&seen, "partnership"), 0);
        assert_eq!(seen["ratings"]["solo"]["provisional"], true);
        assert_eq!(seen["stats"]["games"], 1);
        assert!(seen["stats"]["average_points_per_round"].as_f64().is_some());
    }
    // Equal places move alike.
    for pair in ranking.windows(2) {
        if pair[0].1 == pair[1].1 {
            let a = profile(&app, &players[pair[0].0], &players[0]).await;
            let b = profile(&app, &players[pair[1].0], &players[0]).await;
            assert_eq!(mu(&a, "solo"), mu(&b, "solo"));
        }
    }
    // The history has the game, with the rating the profile shows.
    let history = get(
        &app,
        "/api/v1/me/ratings/history?mode=solo",
        &players[best.0].access,
    )
    .await;
    assert_eq!(history.status, 200, "{}", history.text);
    let items = history.json["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["game_id"], id.as_str());
    assert_eq!(items[0]["rating"]["mu"], first["ratings"]["solo"]["mu"]);
    let none = get(
        &app,
        "/api/v1/me/ratings/history?mode=partnership",
        &players[0].access,
    )
    .await;
    assert_eq!(none.json["items"], json!([]));
    verify(&state);
}

#[actix_web::test]
async fn partnership_partners_move_together() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "pair").await;
    let id = game_of(&app, &players, one_round("partnership")).await;
    let end = play_to_end(&app, &id, &players).await;
    let winners: Vec<u64> = end["result"]["winners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().unwrap())
        .collect();
    let mut mus = Vec::new();
    for p in &players {
        let seen = profile(&app, p, &players[0]).await;
        assert_eq!(games(&seen, "partnership"), 1);
        assert_eq!(games(&seen, "solo"), 0);
        mus.push(mu(&seen, "partnership"));
    }
    assert_eq!(mus[0], mus[2]);
    assert_eq!(mus[1], mus[3]);
    let (won, lost) = if winners.contains(&0) { (0, 1) } else { (1, 0) };
    assert!(mus[won] > 25.0 && mus[lost] < 25.0, "{mus:?} {winners:?}");
    verify(&state);
}

#[actix_web::test]
async fn unrated_and_bot_seated_games_leave_ratings_alone() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "calm").await;
    let mut body = one_round("solo");
    body["rated"] = json!(false);
    let id = game_of(&app, &players, body).await;
    let end = play_to_end(&app, &id, &players).await;
    assert_eq!(end["rated"], false);
    // A game with a bot seat is unrated by default, and cannot be asked to be rated.
    let bots = json!([{"kind": "me"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]);
    let refused = post(
        &app,
        "/api/v1/games",
        json!({"seats": bots, "rated": true}),
        &players[0].access,
    )
    .await;
    refused.assert_problem(400, "validation_failed");
    let created = post(
        &app,
        "/api/v1/games",
        json!({"seats": bots, "rules": {"target_score": 1}}),
        &players[0].access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.json["rated"], false);
    let bot_game = created.json["id"].as_str().unwrap().to_owned();
    play_to_end(&app, &bot_game, &players[..1]).await;
    for p in &players {
        let seen = profile(&app, p, &players[0]).await;
        assert_eq!(games(&seen, "solo"), 0, "{seen}");
        assert_eq!(mu(&seen, "solo"), 25.0);
    }
    // Both games still count in the statistics.
    assert_eq!(
        profile(&app, &players[0], &players[1]).await["stats"]["games"],
        2
    );
    let board = get(&app, "/api/v1/leaderboards/solo", &players[0].access).await;
    assert_eq!(board.json["items"], json!([]));
    get(
        &app,
        "/api/v1/leaderboards/solo?around=me",
        &players[0].access,
    )
    .await
    .assert_problem(404, "not_rated");
    verify(&state);
}

#[actix_web::test]
async fn a_seat_a_bot_finished_is_rated_for_the_human_who_held_it() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "quit").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    let resigned = send(
        &app,
        bearer(
            TestRequest::post().uri(&format!("/api/v1/games/{id}/resign")),
            &players[2].access,
        ),
    )
    .await;
    assert_eq!(resigned.status, 200, "{}", resigned.text);
    let end = play_to_end(
        &app,
        &id,
        &[players[0].clone(), players[1].clone(), players[3].clone()],
    )
    .await;
    let seat_of_quitter = ranks(&end).into_iter().find(|r| r.0 == 2).unwrap();
    let quitter = profile(&app, &players[2], &players[0]).await;
    assert_eq!(games(&quitter, "solo"), 1, "{quitter}");
    // The rating moved by the seat's result: down for a last place, up for a first.
    if seat_of_quitter.1 == 4 {
        assert!(mu(&quitter, "solo") < 25.0);
    }
    if seat_of_quitter.1 == 1 {
        assert!(mu(&quitter, "solo") > 25.0);
    }
    verify(&state);
}

#[actix_web::test]
async fn boards_order_by_ordinal_page_with_consistent_ranks_and_drop_banned_players() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "boardboss").await;
    let players = four(&app, "board").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    play_to_end(&app, &id, &players).await;
    // Three more players with a new player's rating after one game: three equal ordinals
    // (0), a tie. (Written directly: a reset leaves a player off the board.)
    let mut everyone = players.clone();
    for i in 0..3 {
        let p = common::register(&app, &format!("fresh{i}")).await;
        let mut conn = state.db.conn().unwrap();
        leekha::db::ratings::save(
            &mut conn,
            &leekha::db::ratings::RatingRow {
                user_id: p.id.clone(),
                mode: "solo".into(),
                mu: 25.0,
                sigma: 25.0 / 3.0,
                ordinal: 0.0,
                games: 1,
                listed: true,
                updated_at: chrono::Utc::now().naive_utc(),
            },
        )
        .unwrap();
        everyone.push(p);
    }
    // Page through with limit 2.
    let mut items: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    let first = get(
        &app,
        "/api/v1/leaderboards/solo?limit=2",
        &players[0].access,
    )
    .await;
    let solo_cursor = first.json["next_cursor"].as_str().unwrap();
    // A cursor is a position on its own board only.
    get(
        &app,
        &format!("/api/v1/leaderboards/partnership?limit=2&cursor={solo_cursor}"),
        &players[0].access,
    )
    .await
    .assert_problem(400, "validation_failed");
    loop {
        let uri = match &cursor {
            Some(c) => format!("/api/v1/leaderboards/solo?limit=2&cursor={c}"),
            None => "/api/v1/leaderboards/solo?limit=2".to_owned(),
        };
        let page = get(&app, &uri, &players[0].access).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let page_items = page.json["items"].as_array().unwrap();
        assert!(page_items.len() <= 2);
        items.extend(page_items.iter().cloned());
        match page.json["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(items.len(), 7, "{items:?}");
    let ordinals: Vec<f64> = items
        .iter()
        .map(|i| i["rating"]["ordinal"].as_f64().unwrap())
        .collect();
    for (i, item) in items.iter().enumerate() {
        // Rank = 1 + players strictly above: ties share it, across page boundaries too.
        let above = ordinals.iter().filter(|o| **o > ordinals[i]).count() as i64;
        assert_eq!(item["rank"], above + 1, "{items:?}");
        assert!(i == 0 || ordinals[i - 1] >= ordinals[i]);
        assert_eq!(item["provisional"], true);
    }
    let names: Vec<&str> = items
        .iter()
        .map(|i| i["user"]["username"].as_str().unwrap())
        .collect();
    for p in &everyone {
        assert!(names.contains(&p.username.as_str()));
    }
    // Around me: the caller is on the page, with the same rank as on the full board.
    let me = &everyone[5];
    let around = get(
        &app,
        "/api/v1/leaderboards/solo?around=me&limit=3",
        &me.access,
    )
    .await;
    assert_eq!(around.status, 200, "{}", around.text);
    let page = around.json["items"].as_array().unwrap();
    assert_eq!(page.len(), 3);
    let mine = page
        .iter()
        .find(|i| i["user"]["username"] == me.username.as_str())
        .expect("the caller is on the page around them");
    let full = items
        .iter()
        .find(|i| i["user"]["username"] == me.username.as_str())
        .unwrap();
    assert_eq!(mine["rank"], full["rank"]);
    let start = items
        .iter()
        .position(|i| i["user"]["username"] == page[0]["user"]["username"])
        .unwrap();
    assert_eq!(&items[start..start + 3], page.as_slice());
    // A banned player leaves the board (and has no profile); unbanned, they are back.
    let banned = &players[0];
    let ban = post(
        &app,
        &format!("/api/v1/admin/users/{}/ban", banned.id),
        json!({"reason": "fixture"}),
        &boss.access,
    )
    .await;
    assert_eq!(ban.status, 200, "{}", ban.text);
    let board = get(
        &app,
        "/api/v1/leaderboards/solo?limit=200",
        &players[1].access,
    )
    .await;
    let listed = board.json["items"].as_array().unwrap();
    assert_eq!(listed.len(), 6);
    assert!(listed.iter().all(|i| i["user"]["id"] != banned.id.as_str()));
    assert_eq!(listed[0]["rank"], 1);
    get(
        &app,
        &format!("/api/v1/users/{}", banned.username),
        &players[1].access,
    )
    .await
    .assert_problem(404, "not_found");
    // Bad input gets clear problems.
    get(&app, "/api/v1/users/a!", &players[1].access)
        .await
        .assert_problem(400, "validation_failed");
    get(&app, "/api/v1/leaderboards/chess", &players[1].access)
        .await
        .assert_problem(404, "not_found");
    get(
        &app,
        "/api/v1/leaderboards/solo?cursor=junk",
        &players[1].access,
    )
    .await
    .assert_problem(400, "validation_failed");
    get(
        &app,
        "/api/v1/leaderboards/solo?around=you",
        &players[1].access,
    )
    .await
    .assert_problem(400, "validation_failed");
    // The fixture's ratings have no history; a reset gives them one, and verify replays it.
    for p in &everyone[4..] {
        let reset = post(
            &app,
            &format!("/api/v1/admin/users/{}/ratings/reset", p.id),
            json!({"mode": "solo", "reason": "end of the tie fixture"}),
            &boss.access,
        )
        .await;
        assert_eq!(reset.status, 200, "{}", reset.text);
    }
    verify(&state);
}

#[actix_web::test]
async fn an_admin_reset_is_audited_and_replays() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "resetboss").await;
    let players = four(&app, "reset").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    play_to_end(&app, &id, &players).await;
    let target = &players[1];
    let player_try = post(
        &app,
        &format!("/api/v1/admin/users/{}/ratings/reset", target.id),
        json!({}),
        &target.access,
    )
    .await;
    player_try.assert_problem(403, "forbidden");
    let reset = post(
        &app,
        &format!("/api/v1/admin/users/{}/ratings/reset", target.id),
        json!({"reason": "collusion"}),
        &boss.access,
    )
    .await;
    assert_eq!(reset.status, 200, "{}", reset.text);
    assert_eq!(reset.json["solo"]["games"], 0);
    assert_eq!(reset.json["solo"]["mu"], 25.0);
    let seen = profile(&app, target, &players[0]).await;
    assert_eq!(games(&seen, "solo"), 0);
    // Reset means new: on no board, in either mode, until the next rated game; an unban
    // does not list them either.
    let on_board = |page: &Value| {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["user"]["id"] == target.id.as_str())
    };
    for mode in ["solo", "partnership"] {
        let board = get(
            &app,
            &format!("/api/v1/leaderboards/{mode}"),
            &players[0].access,
        )
        .await;
        assert!(!on_board(&board.json), "{mode}: {}", board.text);
        get(
            &app,
            &format!("/api/v1/leaderboards/{mode}?around=me"),
            &target.access,
        )
        .await
        .assert_problem(404, "not_rated");
    }
    let audit = get(
        &app,
        &format!("/api/v1/admin/audit?target_id={}", target.id),
        &boss.access,
    )
    .await;
    let entry = &audit.json["items"][0];
    assert_eq!(entry["action"], "reset_rating");
    assert_eq!(entry["reason"], "collusion");
    assert_eq!(entry["details"]["solo"]["games"], 1);
    let history = get(&app, "/api/v1/me/ratings/history", &target.access).await;
    let items = history.json["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["game_id"], Value::Null);
    let stats = get(&app, "/api/v1/admin/stats", &boss.access).await;
    assert_eq!(stats.json["games"]["rated"], 1);
    for action in ["ban", "unban"] {
        let r = post(
            &app,
            &format!("/api/v1/admin/users/{}/{action}", target.id),
            json!({"reason": "checking the board"}),
            &boss.access,
        )
        .await;
        assert_eq!(r.status, 200, "{action}: {}", r.text);
    }
    let board = get(&app, "/api/v1/leaderboards/solo", &players[0].access).await;
    assert!(!on_board(&board.json), "unbanned: {}", board.text);
    send(
        &app,
        bearer(
            TestRequest::post()
                .uri("/api/v1/admin/users/00000000-0000-0000-0000-000000000000/ratings/reset"),
            &boss.access,
        ),
    )
    .await
    .assert_problem(404, "not_found");
    verify(&state);
    // A stored rating that does not replay is reported.
    {
        use diesel::prelude::*;
        use leekha::db::schema::ratings;
        let mut conn = state.db.conn().unwrap();
        diesel::update(ratings::table.filter(ratings::user_id.eq(&players[0].id)))
            .set(ratings::mu.eq(99.0))
            .execute(&mut *conn)
            .unwrap();
        let (_, mismatches) = leekha::games::verify::verify_all(&mut conn).unwrap();
        assert_eq!(mismatches.len(), 1, "{mismatches:?}");
        assert!(mismatches[0].game_id.starts_with("rating:"));
    }
}

#[actix_web::test]
async fn twenty_concurrent_rematch_requests_make_one_game() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "again").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    // Not before the end.
    post(
        &app,
        &format!("/api/v1/games/{id}/rematch"),
        json!({}),
        &players[0].access,
    )
    .await
    .assert_problem(409, "game_not_finished");
    play_to_end(&app, &id, &players).await;
    let outsider = common::register(&app, "outsider").await;
    post(
        &app,
        &format!("/api/v1/games/{id}/rematch"),
        json!({}),
        &outsider.access,
    )
    .await
    .assert_problem(403, "not_seated");
    let uri = format!("/api/v1/games/{id}/rematch");
    let requests = (0..20).map(|i| {
        let p = &players[i % 4];
        send(&app, bearer(TestRequest::post().uri(&uri), &p.access))
    });
    let replies = join_all(requests).await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(
        created,
        1,
        "{:?}",
        replies
            .iter()
            .map(|r| (r.status, &r.text))
            .collect::<Vec<_>>()
    );
    assert!(replies.iter().all(|r| r.status == 201 || r.status == 200));
    let new_id = replies[0].json["id"].as_str().unwrap().to_owned();
    assert!(replies.iter().all(|r| r.json["id"] == new_id.as_str()));
    assert_ne!(new_id, id);
    // Everyone asked, so everyone is seated in their old seat and the game started.
    let new = get(&app, &format!("/api/v1/games/{new_id}"), &players[0].access).await;
    assert_eq!(new.json["status"], "active", "{}", new.text);
    assert_eq!(new.json["rated"], true);
    assert_eq!(new.json["rules"]["target_score"], 1);
    for (i, p) in players.iter().enumerate() {
        assert_eq!(new.json["seats"][i]["player"]["id"], p.id.as_str());
    }
    let old = get(&app, &format!("/api/v1/games/{id}"), &players[1].access).await;
    assert_eq!(old.json["rematch_id"], new_id.as_str());
}

#[actix_web::test]
async fn a_rematch_invites_the_others_and_keeps_the_bots() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "invite").await;
    let seats = json!([{"kind": "me"}, {"kind": "invite", "username": "invite1"}, {"kind": "bot", "level": "random"}, {"kind": "bot"}]);
    let created = post(
        &app,
        "/api/v1/games",
        json!({"seats": seats, "rules": {"target_score": 1}, "visibility": "private"}),
        &players[0].access,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.json["id"].as_str().unwrap().to_owned();
    let joined = post(
        &app,
        &format!("/api/v1/games/{id}/join"),
        json!({}),
        &players[1].access,
    )
    .await;
    assert_eq!(joined.status, 200, "{}", joined.text);
    play_to_end(&app, &id, &players[..2]).await;
    let first = post(
        &app,
        &format!("/api/v1/games/{id}/rematch"),
        json!({}),
        &players[1].access,
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(
        first.header("location").unwrap(),
        format!("/api/v1/games/{}", first.json["id"].as_str().unwrap())
    );
    let view = &first.json;
    assert_eq!(view["status"], "waiting");
    assert_eq!(view["visibility"], "private");
    assert_eq!(view["my_seat"], 1);
    assert_eq!(view["seats"][0]["invited"]["id"], players[0].id.as_str());
    assert_eq!(view["seats"][2]["bot"], "random");
    assert_eq!(view["seats"][3]["bot"], "heuristic");
    // The other player hears of it.
    let feed = get_all(
        &app,
        "/api/v1/me/notifications",
        "notifications",
        &players[0].access,
    )
    .await;
    let invited = feed.json["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|n| n["type"] == "invited")
        .cloned()
        .expect("an invitation");
    assert_eq!(invited["game_id"], view["id"]);
    // The second request seats its caller, and the game starts.
    let second = post(
        &app,
        &format!("/api/v1/games/{id}/rematch"),
        json!({}),
        &players[0].access,
    )
    .await;
    assert_eq!(second.status, 200, "{}", second.text);
    assert_eq!(second.json["id"], view["id"]);
    assert_eq!(second.json["my_seat"], 0);
    assert_eq!(second.json["status"], "active");
    // Asking again changes nothing.
    let third = post(
        &app,
        &format!("/api/v1/games/{id}/rematch"),
        json!({}),
        &players[0].access,
    )
    .await;
    assert_eq!(third.status, 200, "{}", third.text);
    assert_eq!(third.json["id"], view["id"]);
}

#[actix_web::test]
async fn a_rematch_leaves_a_blocked_players_seat_open_and_seats_who_declined_at_first() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four(&app, "grudge").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    play_to_end(&app, &id, &players).await;
    let blocked = crate::common::play::put(
        &app,
        &format!("/api/v1/me/blocks/{}", players[2].username),
        &players[0].access,
    )
    .await;
    assert_eq!(blocked.status, 201, "{}", blocked.text);
    let uri = format!("/api/v1/games/{id}/rematch");
    let rematch = |p: usize| post(&app, &uri, json!({}), &players[p].access);
    let first = rematch(0).await;
    assert_eq!(first.status, 201, "{}", first.text);
    let new_id = first.json["id"].as_str().unwrap().to_owned();
    let seats = &first.json["seats"];
    assert_eq!(seats[1]["invited"]["id"], players[1].id.as_str());
    assert_eq!(seats[3]["invited"]["id"], players[3].id.as_str());
    // Invited, the blocked player could only have been refused at the join.
    assert!(seats[2]["invited"].is_null(), "{}", first.text);
    assert_eq!(seats[2]["open"], true);
    rematch(2).await.assert_problem(403, "blocked");

    // Declining and then asking after all seats the caller in their old seat.
    let declined = post(
        &app,
        &format!("/api/v1/games/{new_id}/leave"),
        json!({}),
        &players[1].access,
    )
    .await;
    assert_eq!(declined.status, 200, "{}", declined.text);
    let back = rematch(1).await;
    assert_eq!(back.status, 200, "{}", back.text);
    assert_eq!(back.json["id"], new_id.as_str());
    assert_eq!(back.json["my_seat"], 1);
    let last = rematch(3).await;
    assert_eq!(last.json["my_seat"], 3, "{}", last.text);
    assert_eq!(last.json["status"], "waiting");

    // Once it started without them, there is no seat to give.
    let stranger = common::register(&app, "grudge_late").await;
    let joined = post(
        &app,
        &format!("/api/v1/games/{new_id}/join"),
        json!({}),
        &stranger.access,
    )
    .await;
    assert_eq!(joined.json["status"], "active", "{}", joined.text);
    rematch(2).await.assert_problem(409, "rematch_unavailable");
}

#[actix_web::test]
async fn a_rematch_with_no_seat_left_says_so_and_an_aborted_one_makes_way_for_another() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "again_again").await;
    let id = game_of(&app, &players, one_round("solo")).await;
    play_to_end(&app, &id, &players).await;
    let uri = format!("/api/v1/games/{id}/rematch");
    let first = post(&app, &uri, json!({}), &players[0].access).await;
    assert_eq!(first.status, 201, "{}", first.text);
    let first_id = first.json["id"].as_str().unwrap().to_owned();
    // Player 1 declines, and a stranger takes the seat while 2 and 3 keep theirs reserved.
    let declined = post(
        &app,
        &format!("/api/v1/games/{first_id}/leave"),
        json!({}),
        &players[1].access,
    )
    .await;
    assert_eq!(declined.status, 200, "{}", declined.text);
    let stranger = common::register(&app, "again_stranger").await;
    let joined = post(
        &app,
        &format!("/api/v1/games/{first_id}/join"),
        json!({}),
        &stranger.access,
    )
    .await;
    assert_eq!(joined.json["status"], "waiting", "{}", joined.text);
    let refused = post(&app, &uri, json!({}), &players[1].access).await;
    refused.assert_problem(409, "rematch_unavailable");
    assert!(
        refused.json["detail"]
            .as_str()
            .unwrap()
            .contains("no seat left"),
        "{}",
        refused.text
    );

    // Aborted, the rematch leaves the way open for a new one.
    let boss = crate::admin::admin(&app, &state, "again_boss").await;
    let aborted = post(
        &app,
        &format!("/api/v1/admin/games/{first_id}/abort"),
        json!({"reason": "stuck"}),
        &boss.access,
    )
    .await;
    assert_eq!(aborted.status, 200, "{}", aborted.text);
    let second = post(&app, &uri, json!({}), &players[1].access).await;
    assert_eq!(second.status, 201, "{}", second.text);
    let second_id = second.json["id"].as_str().unwrap();
    assert_ne!(second_id, first_id);
    assert_eq!(second.json["my_seat"], 1);
    let old = get(&app, &format!("/api/v1/games/{id}"), &players[0].access).await;
    assert_eq!(old.json["rematch_id"], second_id);
}

/// Plays a one-round game up to its last card; returns who plays it and the action.
async fn play_to_last_card<S, B>(app: &S, game: &str, players: &[Session]) -> (usize, Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let last_card = |view: &Value| {
        let round = &view["round"];
        round["tricks_played"] == 12 && round["trick"]["cards"].as_array().unwrap().len() == 3
    };
    match play_until(app, game, players, last_card).await {
        Err(held_back) => held_back,
        Ok(_) => panic!("the game ended before its last card"),
    }
}

#[actix_web::test]
async fn rated_games_finishing_at_the_same_instant_all_commit() {
    // Each finish moves its four new players into different board buckets, in seat order:
    // finishes that run at once used to lock the bucket counts in opposite orders and
    // deadlock on PostgreSQL (500 after a second's wait).
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let mut last = Vec::new();
    for g in 0..8 {
        let players = four(&app, &format!("fin{g}_")).await;
        let id = game_of(&app, &players, one_round("solo")).await;
        let (seat, action) = play_to_last_card(&app, &id, &players).await;
        last.push((id, players[seat].access.clone(), action));
    }
    let uris: Vec<String> = last
        .iter()
        .map(|(id, _, _)| format!("/api/v1/games/{id}/actions"))
        .collect();
    let finishes = last
        .iter()
        .zip(&uris)
        .map(|((_, access, action), uri)| post(&app, uri, action.clone(), access));
    for reply in join_all(finishes).await {
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(reply.json["status"], "finished", "{}", reply.text);
    }
    let mut conn = state.db.conn().unwrap();
    let ratings = leekha::db::ratings::all(&mut conn).unwrap();
    assert_eq!(ratings.len(), 32);
    drop(conn);
    verify(&state);
}

/// A rated game whose rating change is made after another's comes after it in the history,
/// whatever time its instance stamped (a finish that waited for the board lock with an
/// earlier time, or another instance's clock ahead): the history is newest first, and
/// `leekha verify` replays it in the order the changes were made.
#[actix_web::test]
async fn a_rating_change_made_later_is_later_in_the_history_whatever_its_clock() {
    use diesel::prelude::*;
    use leekha::db::schema::rating_history;
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let players = four(&app, "clock").await;
    let first = game_of(&app, &players, one_round("solo")).await;
    play_to_end(&app, &first, &players).await;
    // As if an instance whose clock is an hour ahead had finished it.
    let ahead = leekha::db::now() + chrono::Duration::hours(1);
    {
        let mut conn = state.db.conn().unwrap();
        diesel::update(rating_history::table.filter(rating_history::game_id.eq(&first)))
            .set(rating_history::at.eq(ahead))
            .execute(&mut *conn)
            .unwrap();
    }
    let second = game_of(&app, &players, one_round("solo")).await;
    play_to_end(&app, &second, &players).await;
    let history = get(
        &app,
        "/api/v1/me/ratings/history?mode=solo",
        &players[0].access,
    )
    .await;
    assert_eq!(history.status, 200, "{}", history.text);
    assert_eq!(
        history.json["items"][0]["game_id"], second,
        "newest first: {}",
        history.text
    );
    verify(&state);
}

/// The first rematch request meets a player of the old table blocking the caller, or being
/// banned: whichever comes first, the rematch is made (the seat left open, or the
/// invitation sent, and a ban then declines it), never refused for it.
#[actix_web::test]
async fn a_rematch_racing_a_block_or_a_ban_of_an_old_player_is_made() {
    let db = TestDb::migrated();
    let state = db.state();
    let app = common::app(state.clone()).await;
    let boss = admin(&app, &state, "rematch_boss").await;
    for run in 0..4 {
        let players = four(&app, &format!("rr{run}_")).await;
        let id = game_of(&app, &players, one_round("solo")).await;
        play_to_end(&app, &id, &players).await;
        let uri = format!("/api/v1/games/{id}/rematch");
        let rematch = post(&app, &uri, json!({}), &players[0].access);
        let other = async {
            if run % 2 == 0 {
                crate::common::play::put(
                    &app,
                    &format!("/api/v1/me/blocks/{}", players[0].username),
                    &players[3].access,
                )
                .await
            } else {
                post(
                    &app,
                    &format!("/api/v1/admin/users/{}/ban", players[3].id),
                    json!({"reason": "race"}),
                    &boss.access,
                )
                .await
            }
        };
        let (made, other) = futures_util::future::join(rematch, other).await;
        assert_eq!(made.status, 201, "{}", made.text);
        assert!(other.status.is_success(), "{}", other.text);
        if run % 2 == 1 {
            // A banned player holds no invitation: never sent, or declined by the ban.
            let made_id = made.json["id"].as_str().unwrap();
            let view = get(
                &app,
                &format!("/api/v1/games/{made_id}"),
                &players[0].access,
            )
            .await;
            assert!(view.json["seats"][3]["invited"].is_null(), "{}", view.text);
        }
    }
}
