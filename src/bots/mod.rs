//! Computer opponents. A bot sees exactly what a player of its seat sees, the seat's
//! [`SeatView`], and nothing else: it cannot read hidden cards because it is never given them.

use std::fmt;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::rules::{Action, Card, CardSet, LegalActions, Seat, SeatView, check_pass};

/// How strong a bot plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// A uniformly random legal action.
    Random,
}

impl BotLevel {
    /// Every level, weakest first.
    pub const ALL: [BotLevel; 1] = [BotLevel::Random];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            BotLevel::Random => "random",
        }
    }

    /// Parses a stored or wire name.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == raw)
    }

    /// The level a bot gets when it takes over a seat (resign, timeouts, admin).
    pub const fn takeover() -> Self {
        BotLevel::Random
    }
}

impl fmt::Display for BotLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The bot's action for the seat of `view`, or `None` if the seat has nothing to do.
/// `history` is the current round's public card plays in order (what the seat has seen).
pub fn choose<R: Rng + ?Sized>(
    level: BotLevel,
    view: &SeatView,
    history: &[(Seat, Card)],
    rng: &mut R,
) -> Option<Action> {
    let _ = history;
    let seat = view.seat?;
    match level {
        BotLevel::Random => match view.legal_actions {
            LegalActions::Pass { cards, .. } => {
                random_pass(view, cards, rng).map(|p| Action::Pass {
                    seat,
                    cards: p.iter().collect(),
                })
            }
            LegalActions::Play { cards } => {
                pick(cards, rng).map(|card| Action::Play { seat, card })
            }
            LegalActions::None => None,
        },
    }
}

fn pick<R: Rng + ?Sized>(cards: CardSet, rng: &mut R) -> Option<Card> {
    let n = cards.len();
    if n == 0 {
        return None;
    }
    cards.iter().nth(rng.random_range(0..n))
}

/// A uniformly random legal pass: draw 3 passable cards until the whole set is legal.
fn random_pass<R: Rng + ?Sized>(
    view: &SeatView,
    passable: CardSet,
    rng: &mut R,
) -> Option<CardSet> {
    for _ in 0..256 {
        let a = pick(passable, rng)?;
        let b = pick(passable.without(a), rng)?;
        let c = pick(passable.without(a).without(b), rng)?;
        let pass = CardSet::single(a).with(b).with(c);
        if check_pass(view.hand, pass, &view.rules).is_ok() {
            return Some(pass);
        }
    }
    // Exhaustive backstop: a legal pass always exists (rule book §3).
    let cards: Vec<Card> = passable.iter().collect();
    for (i, &a) in cards.iter().enumerate() {
        for (j, &b) in cards.iter().enumerate().skip(i + 1) {
            for &c in &cards[j + 1..] {
                let pass = CardSet::single(a).with(b).with(c);
                if check_pass(view.hand, pass, &view.rules).is_ok() {
                    return Some(pass);
                }
            }
        }
    }
    None
}
