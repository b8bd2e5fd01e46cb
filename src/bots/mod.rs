//! Computer opponents. A bot sees exactly what a player of its seat sees, the seat's
//! [`SeatView`], plus the public record of the round's plays, and nothing else: it cannot
//! read hidden cards because it is never given them.
//!
//! Four levels ([`BotLevel`]): `random` (a uniform legal action), `easy` (a beginner who
//! passes its highest cards, does not read the others and often plays by a rule of thumb,
//! see `easy.rs`), `heuristic` (rule-based
//! passing and a small risk model for play, with void and Leekha inferences) and `expert`
//! (determinized Monte Carlo over the hidden cards, rollouts with the heuristic policy).
//! [`tournament`] measures them against each other on duplicate deals.

use std::fmt;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::rules::{Action, Card, CardSet, LegalActions, Seat, SeatView, check_pass, legal_passes};

mod easy;
mod evidence;
mod expert;
mod heuristic;
mod ismcts;
mod knowledge;
mod omniscient;
pub mod tournament;

pub use expert::{ExpertConfig, choose_expert};

/// How strong a bot plays.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    diesel::AsExpression,
    diesel::FromSqlRow,
)]
#[diesel(sql_type = diesel::sql_types::Text)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// A uniformly random legal action.
    Random,
    /// A beginner: passes its highest cards, plays the heuristic's risk model without
    /// reading the others' voids, and often plays by a simple rule of thumb instead.
    Easy,
    /// Rule-based: passes dangerous cards, ducks, sheds Leekhas and high cards, reads voids.
    Heuristic,
    /// Determinized Monte Carlo with heuristic rollouts ([`ExpertConfig::DEFAULT`]).
    Expert,
}

impl BotLevel {
    /// Every level, weakest first.
    pub const ALL: [BotLevel; 4] = [
        BotLevel::Random,
        BotLevel::Easy,
        BotLevel::Heuristic,
        BotLevel::Expert,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            BotLevel::Random => "random",
            BotLevel::Easy => "easy",
            BotLevel::Heuristic => "heuristic",
            BotLevel::Expert => "expert",
        }
    }

    /// Parses a stored or wire name.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == raw)
    }

    /// The level a bot gets when it takes over a seat (resign, timeouts, admin): strong
    /// enough to keep the game fair for the others, and instant.
    pub const fn takeover() -> Self {
        BotLevel::Heuristic
    }
}

impl fmt::Display for BotLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The bot's action for the seat of `view` (`view.seat`), or `None` if that seat has
/// nothing to do (its `legal_actions` are [`LegalActions::None`], or it is a spectator view).
///
/// `history` is the public record of the current round: every card played so far, in
/// play order (trick by trick, each led by the previous winner, the first by the dealer's
/// right), the current trick included. The bot uses nothing else; a history that does not
/// fit the view is not trusted for inferences (only its cards are).
///
/// The returned action is always legal for the view.
pub fn choose<R: Rng + ?Sized>(
    level: BotLevel,
    view: &SeatView,
    history: &[(Seat, Card)],
    rng: &mut R,
) -> Option<Action> {
    match level {
        BotLevel::Random => random_action(view, rng),
        BotLevel::Easy => easy::choose_easy(view, history, rng),
        BotLevel::Heuristic => heuristic_action(view, history, &heuristic::WEIGHTS),
        BotLevel::Expert => choose_expert(view, history, &ExpertConfig::DEFAULT, rng),
    }
}

/// A uniformly random legal action.
fn random_action<R: Rng + ?Sized>(view: &SeatView, rng: &mut R) -> Option<Action> {
    let seat = view.seat?;
    match view.legal_actions {
        LegalActions::Pass { cards, .. } => random_pass(view, cards, rng).map(|p| pass(seat, p)),
        LegalActions::Play { cards } => pick(cards, rng).map(|card| Action::Play { seat, card }),
        LegalActions::None => None,
    }
}

/// The heuristic's action: deterministic, no randomness needed.
pub(crate) fn heuristic_action(
    view: &SeatView,
    history: &[(Seat, Card)],
    weights: &heuristic::Weights,
) -> Option<Action> {
    let seat = view.seat?;
    match view.legal_actions {
        LegalActions::Pass { cards, .. } => {
            heuristic::choose_pass(view.hand, cards, &view.rules, weights)
                .or_else(|| first_legal_pass(view))
                .map(|p| pass(seat, p))
        }
        LegalActions::Play { cards } => {
            let fallback = cards.lowest()?;
            if cards.len() == 1 {
                return Some(Action::Play {
                    seat,
                    card: fallback,
                });
            }
            let card = match knowledge::Knowledge::new(view, history) {
                Some(k) => heuristic::play(&heuristic::Ctx {
                    seat,
                    hand: k.hand,
                    legal: cards,
                    trick: &k.trick,
                    table: &k.table,
                    rules: &k.rules,
                    known: &k.known,
                    weights,
                }),
                None => fallback,
            };
            // The policy only ever picks among `cards`; the check keeps that a guarantee.
            let card = if cards.contains(card) { card } else { fallback };
            Some(Action::Play { seat, card })
        }
        LegalActions::None => None,
    }
}

/// The action that passes `cards` for `seat`.
pub(crate) fn pass(seat: Seat, cards: CardSet) -> Action {
    Action::Pass {
        seat,
        cards: cards.iter().collect(),
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
    first_legal_pass(view)
}

/// The first legal pass in card order: the exhaustive backstop of the pass choosers (a
/// legal pass always exists, rule book §3).
fn first_legal_pass(view: &SeatView) -> Option<CardSet> {
    legal_passes(view.hand, &view.rules).next()
}
