//! [`Action`]: what a seat asks to do, as it arrives over the wire.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::card::Card;
use super::seat::Seat;

/// An action of one seat: commit a pass or play a card. The closed set of moves of the game.
///
/// Serialized with a `type` tag:
/// `{"type":"pass","seat":0,"cards":["QS","AS","2C"]}`, `{"type":"play","seat":1,"card":"10D"}`.
///
/// A pass carries a list rather than a set on purpose: a client may send 2 or 4 cards or
/// a card twice, and each of those has its own [`RuleError`](super::RuleError)
/// (`wrong_card_count`, `duplicate_card`) instead of vanishing into a set. The allocation-free
/// entry points [`Game::pass`](super::Game::pass) and [`Game::play`](super::Game::play) take
/// a [`CardSet`](super::CardSet) and a [`Card`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Commit a pass of exactly 3 distinct cards of the hand (§3).
    Pass {
        /// The passing seat.
        seat: Seat,
        /// The cards, as sent.
        cards: Vec<Card>,
    },
    /// Play a card to the current trick (§4).
    Play {
        /// The playing seat.
        seat: Seat,
        /// The card.
        card: Card,
    },
}

impl Action {
    /// The acting seat.
    pub const fn seat(&self) -> Seat {
        match self {
            Action::Pass { seat, .. } | Action::Play { seat, .. } => *seat,
        }
    }

    /// Pass or play.
    pub const fn kind(&self) -> ActionKind {
        match self {
            Action::Pass { .. } => ActionKind::Pass,
            Action::Play { .. } => ActionKind::Play,
        }
    }
}

/// The kind of an [`Action`], without its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// A pass.
    Pass,
    /// A play.
    Play,
}

impl ActionKind {
    /// The verb for messages: "pass cards" or "play a card".
    pub const fn verb(self) -> &'static str {
        match self {
            ActionKind::Pass => "pass cards",
            ActionKind::Play => "play a card",
        }
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ActionKind::Pass => "pass",
            ActionKind::Play => "play",
        })
    }
}
