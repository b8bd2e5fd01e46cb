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

/// PUT without a body, with a token.
pub async fn put<S, B>(app: &S, uri: &str, token: &str) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    send(app, bearer(TestRequest::put().uri(uri), token)).await
}

/// The notifications of `kind` in a page of the feed (`GET /me/notifications`).
pub fn of_kind<'a>(feed: &'a Value, kind: &str) -> Vec<&'a Value> {
    feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == kind)
        .collect()
}

/// PUT with a JSON body and a token.
pub async fn put_json<S, B>(app: &S, uri: &str, body: Value, token: &str) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    send(
        app,
        bearer(TestRequest::put().uri(uri).set_json(body), token),
    )
    .await
}

/// DELETE with a token.
pub async fn delete<S, B>(app: &S, uri: &str, token: &str) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    send(app, bearer(TestRequest::delete().uri(uri), token)).await
}

/// GET of a list by `seq` (a game's events, the feed) read to its end, page after page of
/// the most the API gives (200): the last page's reply, its list (under `key`) holding
/// every item.
pub async fn get_all<S, B>(app: &S, uri: &str, key: &str, token: &str) -> Reply
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let sep = if uri.contains('?') { '&' } else { '?' };
    let mut items = Vec::new();
    let mut after = 0;
    loop {
        let mut page = get(app, &format!("{uri}{sep}after={after}&limit=200"), token).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let got = page.json[key].as_array().unwrap().clone();
        let full = got.len() == 200;
        items.extend(got);
        after = page.json["last_seq"].as_i64().unwrap();
        if !full {
            page.json[key] = Value::Array(items);
            page.text = page.json.to_string();
            return page;
        }
    }
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

/// A request body of [`legal_action`] as the service's command: the cards passed or played.
pub fn wanted(action: &Value) -> leekha::games::act::Wanted {
    use leekha::games::act::Wanted;
    let card = |c: &Value| c.as_str().unwrap().parse().unwrap();
    match action["type"].as_str() {
        Some("play") => Wanted::Play(card(&action["card"])),
        _ => Wanted::Pass(
            action["cards"]
                .as_array()
                .unwrap()
                .iter()
                .map(card)
                .collect(),
        ),
    }
}

/// How many actions (passes and plays, bots' included) a game has applied, counted from the
/// events `token`'s owner sees.
pub async fn action_count<S, B>(app: &S, game: &str, token: &str) -> usize
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: actix_web::body::MessageBody,
{
    let page = get_all(
        app,
        &format!("/api/v1/games/{game}/events"),
        "events",
        token,
    )
    .await;
    page.json["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "pass_committed" || e["type"] == "card_played")
        .count()
}
