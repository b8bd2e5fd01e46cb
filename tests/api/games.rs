//! Asynchronous play over HTTP.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use actix_web::test::TestRequest;
use futures_util::future::join_all;
use leekha::rules::{Card, CardSet, RuleOptions, check_pass};
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use crate::common::{self, Session, TestDb, bearer, post_json, register, send};

/// Creates a game by `creator` with the given body and lets the others join in order.
async fn start_game<S, B>(app: &S, players: &[Session], body: Value) -> String
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let created = send(
        app,
        bearer(post_json("/api/v1/games", body), &players[0].access),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.json["id"].as_str().unwrap().to_owned();
    for p in &players[1..] {
        let joined = send(
            app,
            bearer(
                post_json(&format!("/api/v1/games/{id}/join"), json!({})),
                &p.access,
            ),
        )
        .await;
        assert_eq!(joined.status, 200, "{}", joined.text);
    }
    id
}

async fn four_players<S, B>(app: &S) -> Vec<Session>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut players = Vec::new();
    for name in ["amal", "basel", "carim", "dalia"] {
        players.push(register(app, name).await);
    }
    players
}

fn cards_of(value: &Value) -> CardSet {
    value.as_array().map_or(CardSet::EMPTY, |a| {
        a.iter()
            .map(|c| c.as_str().unwrap().parse::<Card>().unwrap())
            .collect()
    })
}

/// A legal action for the seat of `view`, chosen at random, as a request body.
fn random_action(view: &Value, rng: &mut impl rand::Rng) -> Option<Value> {
    let legal = &view["legal_actions"];
    match legal["type"].as_str()? {
        "play" => {
            let cards = legal["cards"].as_array().unwrap();
            Some(json!({"type": "play", "card": cards[rng.random_range(0..cards.len())]}))
        }
        "pass" => {
            let rules: RuleOptions = serde_json::from_value(view["rules"].clone()).unwrap();
            let hand = cards_of(&view["round"]["hand"]);
            let passable: Vec<Card> = cards_of(&legal["cards"]).iter().collect();
            loop {
                let mut pick = CardSet::EMPTY;
                while pick.len() < 3 {
                    pick.insert(passable[rng.random_range(0..passable.len())]);
                }
                if check_pass(hand, pick, &rules).is_ok() {
                    let codes: Vec<String> = pick.iter().map(|c| c.to_string()).collect();
                    return Some(json!({"type": "pass", "cards": codes}));
                }
            }
        }
        _ => None,
    }
}

/// Plays the game to its end with random legal actions; returns the final view.
async fn play_to_end<S, B>(app: &S, id: &str, players: &[Session], seed: u64) -> Value
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for _ in 0..5000 {
        let view = send(
            app,
            bearer(
                TestRequest::get().uri(&format!("/api/v1/games/{id}")),
                &players[0].access,
            ),
        )
        .await
        .json;
        if view["status"] != "active" {
            return view;
        }
        let seats: Vec<u64> = view["turn"]["seats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_u64().unwrap())
            .collect();
        for seat in seats {
            let p = &players[seat as usize];
            let mine = send(
                app,
                bearer(
                    TestRequest::get().uri(&format!("/api/v1/games/{id}")),
                    &p.access,
                ),
            )
            .await
            .json;
            let Some(action) = random_action(&mine, &mut rng) else {
                continue;
            };
            let reply = send(
                app,
                bearer(
                    post_json(&format!("/api/v1/games/{id}/actions"), action),
                    &p.access,
                ),
            )
            .await;
            assert_eq!(reply.status, 200, "{}", reply.text);
        }
    }
    panic!("the game did not end");
}

/// Checks a finished game against the rules: replaying the revealed seed and actions gives
/// the same totals and result.
async fn check_against_rules<S, B>(app: &S, id: &str, player: &Session, view: &Value)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let replay = send(
        app,
        bearer(
            TestRequest::get().uri(&format!("/api/v1/games/{id}/replay")),
            &player.access,
        ),
    )
    .await;
    assert_eq!(replay.status, 200, "{}", replay.text);
    let rules: RuleOptions = serde_json::from_value(replay.json["rules"].clone()).unwrap();
    let seed = leekha::rules::Seed::from_hex(replay.json["seed"].as_str().unwrap()).unwrap();
    let actions: Vec<leekha::rules::Action> = replay.json["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let seat = leekha::rules::Seat::new(a["seat"].as_u64().unwrap() as u8).unwrap();
            match a["type"].as_str().unwrap() {
                "pass" => leekha::rules::Action::Pass {
                    seat,
                    cards: a["cards"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c.as_str().unwrap().parse().unwrap())
                        .collect(),
                },
                _ => leekha::rules::Action::Play {
                    seat,
                    card: a["card"].as_str().unwrap().parse().unwrap(),
                },
            }
        })
        .collect();
    let game = leekha::rules::replay(rules, *seed.bytes(), &actions).unwrap();
    let totals: Vec<u64> = view["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["total_score"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = game.totals().iter().map(|&t| u64::from(t)).collect();
    assert_eq!(totals, expected);
    let rounds = replay.json["rounds"].as_array().unwrap().len() as u64;
    assert_eq!(
        totals.iter().sum::<u64>(),
        36 * rounds,
        "36 points per round"
    );
    let result = game.result().expect("the rules say the game is over");
    let winners: Vec<u64> = result
        .winners
        .iter()
        .map(|s| u64::from(s.number()))
        .collect();
    assert_eq!(view["result"]["winners"], json!(winners));
    assert!(
        totals
            .iter()
            .any(|&t| t >= u64::from(rules.target_score.get()))
    );
}

#[actix_web::test]
async fn four_players_play_a_solo_game_to_the_end() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four_players(&app).await;
    let id = start_game(&app, &players, json!({})).await;
    let view = play_to_end(&app, &id, &players, 1).await;
    assert_eq!(view["status"], "finished");
    check_against_rules(&app, &id, &players[2], &view).await;

    let me = send(
        &app,
        bearer(TestRequest::get().uri("/api/v1/me"), &players[1].access),
    )
    .await;
    assert_eq!(me.json["stats"]["games_played"], 1);
}

#[actix_web::test]
async fn four_players_play_a_partnership_game_to_the_end() {
    let db = TestDb::migrated();
    let app = common::app(db.state()).await;
    let players = four_players(&app).await;
    let id = start_game(
        &app,
        &players,
        json!({"rules": {"preset": "partnership", "target_score": 51}}),
    )
    .await;
    let view = play_to_end(&app, &id, &players, 2).await;
    assert_eq!(view["status"], "finished");
    assert_eq!(view["rules"]["mode"], "partnership");
    assert_eq!(view["rules"]["pass_direction"], "alternate");
    assert!(view["result"]["losing_team"].is_u64());
    assert_eq!(view["seats"][0]["team"], 0);
    assert_eq!(view["seats"][3]["team"], 1);
    check_against_rules(&app, &id, &players[0], &view).await;
}
