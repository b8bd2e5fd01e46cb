//! `POST /games/{id}/actions`.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::app::AppState;
use crate::error::Error;
use crate::games::act::{Idempotency, Wanted};
use crate::games::{self, Act, Acted};
use crate::http::extract::Caller;
use crate::http::preconditions::{etag, if_match};
use crate::http::problem::{ApiError, Problem};
use crate::http::views::game::{CardCode, GameView, render};
use crate::rules::Card;

/// An action: `{type: "pass", cards: [3 codes]}` or `{type: "play", card}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    /// `pass` or `play`.
    #[serde(rename = "type")]
    #[schema(example = "play")]
    pub kind: String,
    /// For a pass: exactly 3 cards of the hand.
    pub cards: Option<Vec<CardCode>>,
    /// For a play: the card.
    pub card: Option<CardCode>,
    /// Refuse with 409 `version_conflict` unless the game is at this version (same as the
    /// `If-Match` header).
    pub expected_version: Option<i64>,
}

fn parse_card(code: &CardCode) -> Result<Card, Error> {
    code.0.parse::<Card>().map_err(|e| {
        Error::new(
            crate::error::Kind::BadRequest,
            "invalid_card",
            e.to_string(),
        )
    })
}

impl ActionRequest {
    /// The command: the action, the expected version (body or `If-Match`) and the retry key.
    fn command(self, game_id: &str, user_id: &str, req: &HttpRequest) -> Result<Act, Error> {
        let key = match req.headers().get("idempotency-key") {
            None => None,
            Some(v) => {
                let k = v.to_str().unwrap_or("");
                if k.is_empty() || k.len() > 255 || !k.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err(Error::bad_request(
                        "Idempotency-Key must be 1–255 visible ASCII characters",
                    ));
                }
                Some(k.to_owned())
            }
        };
        let expected_version = match (self.expected_version, if_match(req)?) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::bad_request("expected_version and If-Match disagree"));
            }
            (a, b) => a.or(b),
        };
        let wanted = match self.kind.as_str() {
            "pass" => {
                if self.card.is_some() {
                    return Err(Error::validation("a pass takes `cards`, not `card`"));
                }
                let cards = self
                    .cards
                    .as_ref()
                    .ok_or_else(|| Error::validation("a pass needs `cards`"))?;
                if cards.len() > 52 {
                    return Err(Error::validation("too many cards"));
                }
                Wanted::Pass(cards.iter().map(parse_card).collect::<Result<_, _>>()?)
            }
            "play" => {
                if self.cards.is_some() {
                    return Err(Error::validation("a play takes `card`, not `cards`"));
                }
                let card = self
                    .card
                    .as_ref()
                    .ok_or_else(|| Error::validation("a play needs `card`"))?;
                Wanted::Play(parse_card(card)?)
            }
            other => {
                return Err(Error::validation(format!(
                    "type must be pass or play, not {other:?}"
                )));
            }
        };
        let idempotency = key.map(|key| {
            let mut h = Sha256::new();
            h.update(game_id.as_bytes());
            h.update(serde_json::to_vec(&self).unwrap_or_default());
            Idempotency {
                key,
                fingerprint: hex::encode(h.finalize()),
            }
        });
        Ok(Act {
            game_id: game_id.to_owned(),
            user_id: user_id.to_owned(),
            wanted,
            expected_version,
            idempotency,
        })
    }
}

/// Passes or plays for the caller's seat. The action is judged against the latest state:
/// the four passes of a round may arrive at the same instant and all succeed, while two
/// copies of one play apply once. Bots whose turn follows act in the same transaction.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("If-Match" = Option<String>, Header, description = "Expected version, e.g. \"12\" (or use expected_version)"),
        ("Idempotency-Key" = Option<String>, Header, description = "A retry with the same key returns the first response and changes nothing (kept 48 h); 1–255 visible ASCII characters"),
    ),
    request_body = ActionRequest,
    responses(
        (status = 200, description = "Applied; the new game view", body = GameView),
        (status = 400, description = "Malformed action or card code (`invalid_card`)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The caller has no seat (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`version_conflict`, `game_not_active`, `seat_controlled_by_bot`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Illegal: `not_your_turn`, `wrong_phase`, `card_not_in_hand`, `must_follow_suit`, `must_play_leekha`, `talbees`, `pass_restriction`, `wrong_card_count`, `duplicate_card`, `already_committed`, `game_over`, `idempotency_key_reused`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/actions")]
pub async fn act(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<uuid::Uuid>,
    req: HttpRequest,
    body: web::Json<ActionRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    // Judged by the service after the account check, so a banned caller hears 403 whatever
    // it sent.
    let command = body.into_inner().command(&id, &caller.user_id, &req);
    let hot = state.hot.clone();
    let gid = id.clone();
    let acted = state
        .db
        .run(move |conn| games::act(conn, &hot, &gid, &caller.user_id, command, render))
        .await?;
    match acted {
        Acted::Fresh {
            body,
            version,
            notified,
            applied,
        } => {
            state.announce(&id, &notified);
            state.metrics.actions_applied(applied);
            Ok(HttpResponse::Ok()
                .insert_header((header::ETAG, etag(version)))
                .content_type("application/json")
                .body(body))
        }
        Acted::Replayed { status, body } => Ok(HttpResponse::build(
            actix_web::http::StatusCode::from_u16(status)
                .unwrap_or(actix_web::http::StatusCode::OK),
        )
        .insert_header(("idempotent-replayed", "true"))
        .content_type("application/json")
        .body(body)),
    }
}
