//! Helpers for tests that play: requests with a token, games of several players, a legal
//! action for a view, the number of actions applied to a game.

use actix_web::dev::{Service, ServiceResponse};
use actix_web::test::TestRequest;
use leekha::rules::{Card, CardSet};
use serde_json::{Value, json};

use super::{Reply, Session, bearer, post_json, register, send};

/// GET with a token.
pub async fn get<S, B>(app: &S, uri: &str, token: &str) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    send(app, bearer(TestRequest::get().uri(uri), token)).await
}

/// POST a JSON body with a token.
pub async fn post<S, B>(app: &S, uri: &str, body: Value, token: &str) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    send(app, bearer(post_json(uri, body), token)).await
}

/// Creates a game with `body` by `players[0]`; the others join in order.
pub async fn game_of<S, B>(app: &S, players: &[Session], body: Value) -> String
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let created = post(app, "/api/v1/games", body, &players[0].access).await;
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.json["id"].as_str().unwrap().to_owned();
    for p in &players[1..] {
        let joined = post(
            app,
            &format!("/api/v1/games/{id}/join"),
            json!({}),
            &p.access,
        )
        .await;
        assert_eq!(joined.status, 200, "{}", joined.text);
    }
    id
}

/// Four registered players with the given name prefix.
pub async fn four<S, B>(app: &S, prefix: &str) -> Vec<Session>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let mut players = Vec::new();
    for i in 0..4 {
        players.push(register(app, &format!("{prefix}{i}")).await);
    }
    players
}

/// A legal action for the caller of `view`, as a request body: the first legal card, or the
/// first legal set of three passable cards.
pub fn legal_action(view: &Value) -> Option<Value> {
    let legal = &view["legal_actions"];
    let cards: Vec<Card> = legal["cards"]
        .as_array()?
        .iter()
        .map(|c| c.as_str().unwrap().parse().unwrap())
        .collect();
    match legal["type"].as_str()? {
        "play" => Some(json!({"type": "play", "card": cards[0].to_string()})),
        "pass" => {
            // Decided from the view alone, by the contract's rule: no rules code, no retries.
            let may_empty: CardSet = legal["may_empty_suit"]
                .as_array()?
                .iter()
                .map(|c| c.as_str().unwrap().parse::<Card>().unwrap())
                .collect();
            let hand: CardSet = view["round"]["hand"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().parse::<Card>().unwrap())
                .collect();
            let legal_by_view = |pass: CardSet| {
                pass.iter()
                    .all(|c| may_empty.contains(c) || !(hand - pass).of_suit(c.suit()).is_empty())
            };
            for (i, a) in cards.iter().enumerate() {
                for (j, b) in cards.iter().enumerate().skip(i + 1) {
                    for c in &cards[j + 1..] {
                        let pass = CardSet::single(*a).with(*b).with(*c);
                        if legal_by_view(pass) {
                            let codes: Vec<String> = pass.iter().map(|c| c.to_string()).collect();
                            return Some(json!({"type": "pass", "cards": codes}));
                        }
                    }
                }
            }
            None
        }
        _ => None,
    }
}

/// How many actions (passes and plays, bots' included) a game has applied, counted from the
/// events `token`'s owner sees.
pub async fn action_count<S, B>(app: &S, game: &str, token: &str) -> usize
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let page = get(
        app,
        &format!("/api/v1/games/{game}/events?limit=500"),
        token,
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.text);
    page.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "pass_committed" || e["type"] == "card_played")
        .count()
}
