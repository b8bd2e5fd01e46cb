//! Bots in the server: bot seats, hints, takeover.

use actix_web::test::TestRequest;
use serde_json::json;

use crate::common::{self, TestDb, bearer, post_json, register, send};

#[actix_web::test]
async fn one_human_plays_a_game_to_the_end_against_three_bots_following_the_hints() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "lonely").await;
    let created = send(
        &app,
        bearer(
            post_json(
                "/api/v1/games",
                json!({"rules": {"target_score": 20},
                       "seats": [{"kind": "me"}, {"kind": "bot", "level": "expert"}, {"kind": "bot"}, {"kind": "bot", "level": "random"}]}),
            ),
            &me.access,
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(
        created.json["seats"][2]["bot"], "heuristic",
        "a bot seat defaults to heuristic"
    );
    let id = created.json["id"].as_str().unwrap().to_owned();
    for _ in 0..400 {
        let view = send(
            &app,
            bearer(
                TestRequest::get().uri(&format!("/api/v1/games/{id}")),
                &me.access,
            ),
        )
        .await
        .json;
        if view["status"] == "finished" {
            assert!(view["result"]["winners"].is_array());
            let totals: u64 = view["seats"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["total_score"].as_u64().unwrap())
                .sum();
            assert_eq!(totals % 36, 0, "36 points per round");
            return;
        }
        let hint = send(
            &app,
            bearer(
                TestRequest::get().uri(&format!("/api/v1/games/{id}/hint")),
                &me.access,
            ),
        )
        .await;
        assert_eq!(hint.status, 200, "{}", hint.text);
        assert_eq!(hint.json["level"], "expert");
        let legal = view["legal_actions"]["cards"].as_array().unwrap();
        let body = match hint.json["type"].as_str().unwrap() {
            "play" => {
                assert!(
                    legal.contains(&hint.json["card"]),
                    "the hint {} is legal: {legal:?}",
                    hint.json
                );
                json!({"type": "play", "card": hint.json["card"]})
            }
            _ => {
                let cards = hint.json["cards"].as_array().unwrap();
                assert_eq!(cards.len(), 3);
                assert!(cards.iter().all(|c| legal.contains(c)));
                json!({"type": "pass", "cards": cards})
            }
        };
        let acted = send(
            &app,
            bearer(
                post_json(&format!("/api/v1/games/{id}/actions"), body),
                &me.access,
            ),
        )
        .await;
        assert_eq!(
            acted.status, 200,
            "the hinted action is accepted: {}",
            acted.text
        );
    }
    panic!("the game did not end");
}

#[actix_web::test]
async fn a_hint_needs_a_seat_and_a_running_game() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "hinter").await;
    let other = register(&app, "peeker").await;
    let created = send(
        &app,
        bearer(post_json("/api/v1/games", json!({})), &me.access),
    )
    .await;
    let id = created.json["id"].as_str().unwrap().to_owned();
    send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}/hint")),
            &me.access,
        ),
    )
    .await
    .assert_problem(409, "game_not_active");
    send(
        &app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}/hint")),
            &other.access,
        ),
    )
    .await
    .assert_problem(403, "not_seated");
}

#[actix_web::test]
async fn an_easy_bot_takes_a_seat_and_plays() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let me = register(&app, "beginner").await;
    let created = send(
        &app,
        bearer(
            post_json(
                "/api/v1/games",
                json!({"seats": [{"kind": "me"}, {"kind": "bot", "level": "easy"},
                                 {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]}),
            ),
            &me.access,
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    for seat in 1..4 {
        assert_eq!(created.json["seats"][seat]["bot"], "easy");
    }
    // The bots passed as soon as the game started: only the human's pass is pending.
    assert_eq!(
        created.json["round"]["passes_committed"],
        json!([false, true, true, true]),
        "{}",
        created.json
    );
}
