//! Events the server adds to the rules' events, and the projection of a stored event for
//! one viewer: private parts (a hand, a pass, received cards) stay in their owner's copy.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::rules::Seat;

/// A seat as announced when the game starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeatInfo {
    /// 0..=3.
    pub seat: u8,
    /// The human, if any.
    pub user_id: Option<String>,
    /// Their username.
    pub username: Option<String>,
    /// The bot level, if a bot holds the seat.
    pub bot: Option<String>,
}

/// Events that come from the server rather than the rules.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerEvent {
    /// The fourth seat was taken and the cards dealt.
    GameStarted {
        /// Who sits where.
        seats: Vec<SeatInfo>,
    },
    /// A seat changed hands: a player joined or left, a bot took over, a player took it back.
    SeatChanged {
        /// The seat.
        seat: u8,
        /// The human now holding it (or who held it, when a bot took over).
        user_id: Option<String>,
        /// Their username.
        username: Option<String>,
        /// The bot now acting for it.
        bot: Option<String>,
        /// joined | left | resigned | timeout | admin | reclaimed | invite_declined |
        /// invite_withdrawn | away | returned | host.
        reason: String,
    },
    /// A seat's turn timed out and the server acted for it.
    TurnTimedOut {
        /// The seat.
        seat: u8,
        /// The deadline that passed.
        deadline: chrono::DateTime<chrono::Utc>,
    },
    /// An administrator ended the game without a result.
    GameAborted {
        /// Why.
        reason: String,
    },
    /// A seated player said something at the table.
    ChatMessage {
        /// The message (`GET /games/{id}/chat`).
        message_id: String,
        /// The author's seat.
        seat: u8,
        /// The author.
        user_id: String,
        /// Their username.
        username: String,
        /// Free text, or `None` for a phrase (and once hidden).
        text: Option<String>,
        /// A quick phrase's key, or `None` for free text (and once hidden).
        phrase: Option<String>,
        /// A moderator hid the message, or the viewer blocks its author: no text is shown.
        hidden: bool,
    },
}

/// The event as `viewer` may see it (`None`: a spectator). The stored form holds every
/// private part; this removes what belongs to other seats.
pub fn project(kind: &str, data: &str, viewer: Option<Seat>) -> Value {
    let mut value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let Value::Object(map) = &mut value else {
        return json!({});
    };
    map.remove("type");
    let mine = |seat: &Value| viewer.is_some_and(|v| seat.as_u64() == Some(u64::from(v.number())));
    match kind {
        // The four hands become the viewer's hand only.
        "round_dealt" => keep_own(map, "hands", "hand", viewer),
        "pass_committed" if !map.get("seat").is_some_and(mine) => {
            map.remove("cards");
        }
        // The four passes received become the one the viewer received.
        "passes_exchanged" => keep_own(map, "received", "received", viewer),
        _ => {}
    }
    value
}

/// Replaces the per-seat array `all` of an event with the viewer's element of it, named
/// `own`; a spectator sees neither.
fn keep_own(map: &mut Map<String, Value>, all: &str, own: &str, viewer: Option<Seat>) {
    let per_seat = map.remove(all);
    if let (Some(v), Some(Value::Array(per_seat))) = (viewer, per_seat) {
        let mine = per_seat.get(v.index()).cloned().unwrap_or(Value::Null);
        map.insert(own.into(), mine);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dealt_round_shows_only_the_viewers_hand() {
        let data = r#"{"type":"round_dealt","round":1,"dealer":3,"pass_direction":"right",
            "hands":[["2C"],["3C"],["4C"],["5C"]]}"#;
        let seen = project("round_dealt", data, Seat::new(1));
        assert_eq!(seen["hand"], json!(["3C"]));
        assert!(seen.get("hands").is_none());
        let spectator = project("round_dealt", data, None);
        assert!(spectator.get("hand").is_none() && spectator.get("hands").is_none());
    }

    #[test]
    fn a_pass_shows_its_cards_to_its_owner_only() {
        let data = r#"{"type":"pass_committed","seat":2,"cards":["QS","AS","2C"]}"#;
        assert_eq!(
            project("pass_committed", data, Seat::new(2))["cards"],
            json!(["QS", "AS", "2C"])
        );
        assert!(
            project("pass_committed", data, Seat::new(3))
                .get("cards")
                .is_none()
        );
        let data = r#"{"type":"passes_exchanged","direction":"right","received":[["2C"],["3C"],["4C"],["5C"]]}"#;
        assert_eq!(
            project("passes_exchanged", data, Seat::new(0))["received"],
            json!(["2C"])
        );
        assert!(
            project("passes_exchanged", data, None)
                .get("received")
                .is_none()
        );
    }
}
