//! `POST /games/{id}/actions`.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, post};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::error::Error;
use crate::games::act::{Idempotency, Wanted};
use crate::games::{self, Act, Acted};
use crate::http::extract::Call;
use crate::http::json_body::UniqueKeys;
use crate::http::preconditions::{etag, if_match};
use crate::http::problem::{PROBLEM_JSON, Problem};
use crate::http::reply::Reply;
use crate::http::views::game::{CardCode, GameView, render};
use crate::rules::Card;

use super::OnGameByToken;

/// An action for the caller's seat.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ActionRequest {
    /// Pass cards to the seat the round's direction names.
    Pass {
        /// Exactly 3 cards of the hand (422 `wrong_card_count` otherwise); a list longer than
        /// a deck is 400 `validation_failed`.
        #[schema(max_items = 52)]
        cards: Vec<CardCode>,
        /// Refuse with 409 `version_conflict` unless the game is at this version (same as
        /// the `If-Match` header).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_version: Option<i64>,
    },
    /// Play a card to the current trick.
    Play {
        /// The card.
        card: CardCode,
        /// Refuse with 409 `version_conflict` unless the game is at this version (same as
        /// the `If-Match` header).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_version: Option<i64>,
    },
}

/// The request as first stored with an `Idempotency-Key`: its fingerprint must not change
/// when the wire type's shape does, or retries across an upgrade would be refused.
#[derive(Serialize)]
struct Fingerprinted<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    cards: Option<&'a [CardCode]>,
    card: Option<&'a CardCode>,
    expected_version: Option<i64>,
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
    fn expected_version(&self) -> Option<i64> {
        match self {
            ActionRequest::Pass {
                expected_version, ..
            }
            | ActionRequest::Play {
                expected_version, ..
            } => *expected_version,
        }
    }

    fn fingerprint(&self, game_id: &str) -> String {
        let (kind, cards, card) = match self {
            ActionRequest::Pass { cards, .. } => ("pass", Some(cards.as_slice()), None),
            ActionRequest::Play { card, .. } => ("play", None, Some(card)),
        };
        let mut h = Sha256::new();
        h.update(game_id.as_bytes());
        h.update(
            serde_json::to_vec(&Fingerprinted {
                kind,
                cards,
                card,
                expected_version: self.expected_version(),
            })
            .unwrap_or_default(),
        );
        hex::encode(h.finalize())
    }

    /// The command: the action, the expected version (body or `If-Match`) and the retry
    /// key. `body` is any JSON: its shape is judged here, after the caller's account.
    fn command(
        body: serde_json::Value,
        game_id: &str,
        user_id: &str,
        req: &HttpRequest,
    ) -> Result<Act, Error> {
        let this: ActionRequest = crate::http::json_body::object(body)?;
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
        let expected_version = match (this.expected_version(), if_match(req)?) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::bad_request("expected_version and If-Match disagree"));
            }
            (a, b) => a.or(b),
        };
        let wanted = match &this {
            ActionRequest::Pass { cards, .. } => {
                if cards.len() > 52 {
                    return Err(Error::validation("too many cards"));
                }
                Wanted::Pass(cards.iter().map(parse_card).collect::<Result<_, _>>()?)
            }
            ActionRequest::Play { card, .. } => Wanted::Play(parse_card(card)?),
        };
        let idempotency = key.map(|key| Idempotency {
            key,
            fingerprint: this.fingerprint(game_id),
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

/// Pass or play for the caller.
///
/// Passes or plays for the caller's seat. The action is judged against the latest state:
/// the four passes of a round may arrive at the same instant and all succeed, while two
/// copies of one play apply once. Bots whose turn follows act in the same transaction.
#[utoipa::path(operation_id = "submit_action", tag = "games", security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("If-Match" = Option<String>, Header, description = "Expected version, the ETag of a view, e.g. \"12\" (or use expected_version); `*` asks for no version"),
        ("Idempotency-Key" = Option<String>, Header, description = "A retry with the same key returns the first response, a refusal (409, 422) included, and changes nothing (kept 48 h); 1–255 visible ASCII characters")),
    request_body = ActionRequest,
    responses(
        (status = 200, description = "Applied; the new game view", body = GameView, headers(
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`; absent otherwise"))),
        (status = 400, description = "Malformed action or card code (`invalid_card`)"),
        (status = 403, description = "The caller has no seat (`not_seated`), or banned"),
        (status = 409, description = "`version_conflict`, `game_not_active`, `seat_controlled_by_bot`", headers(
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored refusal of an earlier request with the same `Idempotency-Key`; absent otherwise"))),
        (status = 422, description = "Illegal: `not_your_turn`, `wrong_phase`, `card_not_in_hand`, `must_follow_suit`, `must_play_leekha`, `talbees`, `pass_restriction`, `wrong_card_count`, `duplicate_card`, `already_committed`, `game_over`, `idempotency_key_reused`", headers(
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored refusal of an earlier request with the same `Idempotency-Key`; absent otherwise")))))]
#[post("/games/{id}/actions")]
pub async fn act(on: OnGameByToken<(HttpRequest, UniqueKeys)>) -> Reply {
    let Call {
        state,
        user: caller,
        path,
        input: (req, body),
    } = on;
    let id = path.into_inner().to_string();
    // Judged by the service after the account check, so a banned caller hears 403 whatever
    // it sent.
    let command = ActionRequest::command(body.0, &id, &caller.user_id, &req);
    let submission = games::Submission {
        game_id: id.clone(),
        user_id: caller.user_id.clone(),
        command,
        render,
        refusal: Problem::rendered,
    };
    let acted = games::submit(&state.db, &state.hot, submission).await?;
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
        Acted::Replayed { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut res = HttpResponse::build(status);
            res.insert_header(("idempotent-replayed", "true"));
            if status.is_success() {
                // The first answer's ETag: the version its view shows.
                if let Ok(Versioned { version }) = serde_json::from_str(&body) {
                    res.insert_header((header::ETAG, etag(version)));
                }
                res.content_type("application/json");
            } else {
                res.content_type(PROBLEM_JSON);
            }
            Ok(res.body(body))
        }
    }
}

/// The version of a stored game view.
#[derive(Deserialize)]
struct Versioned {
    version: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_keeps_the_first_release_layout() {
        let play = ActionRequest::Play {
            card: CardCode("QS".into()),
            expected_version: Some(3),
        };
        let mut h = Sha256::new();
        h.update(b"g");
        h.update(br#"{"type":"play","cards":null,"card":"QS","expected_version":3}"#);
        assert_eq!(play.fingerprint("g"), hex::encode(h.finalize()));
    }
}
