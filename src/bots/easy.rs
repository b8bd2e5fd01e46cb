//! The beginner: plays sensibly, but makes the mistakes people make when they learn.
//!
//! - It passes its three highest cards (what beginners do), where the rules let it, instead
//!   of weighing voids and protection.
//! - It plays the heuristic's risk model, but without reading the others: it notices which
//!   cards are gone, not who showed out of what or who cannot hold a Leekha.
//! - Now and then (see [`SLIP`]) it plays by a rule of thumb instead: lead its lowest card,
//!   or any card at all, follow with the highest card that still ducks (else its lowest),
//!   discard its highest card. Sound rules most of the time, and the slips a person makes under them: leading
//!   into a Leekha it should have flushed, holding on to a Leekha it could have dropped.
//!
//! Deterministic for a given rng state, and a function of the seat's view and the public
//! history only, like every bot.

use rand::{Rng, RngExt};

use crate::rules::{Action, Card, CardSet, LegalActions, SeatView, check_pass};

use super::heuristic::{self, Ctx};
use super::knowledge::{Knowledge, Table, below};

/// How often a decision follows the rule of thumb instead of the risk model.
const SLIP: f64 = 0.5;

/// The beginner's action for the seat of `view` (`None` if it has nothing to do).
pub(crate) fn choose_easy<R: Rng + ?Sized>(
    view: &SeatView,
    history: &[(crate::rules::Seat, Card)],
    rng: &mut R,
) -> Option<Action> {
    let seat = view.seat?;
    match view.legal_actions {
        LegalActions::Pass { cards, .. } => highest_pass(view, cards)
            .or_else(|| heuristic::choose_pass(view.hand, cards, &view.rules, &heuristic::WEIGHTS))
            .map(|p| super::pass(seat, p)),
        LegalActions::Play { cards } => {
            let fallback = cards.lowest()?;
            let knowledge = (cards.len() > 1).then(|| Knowledge::new(view, history));
            let Some(Some(k)) = knowledge else {
                return Some(Action::Play {
                    seat,
                    card: fallback,
                });
            };
            let card = if rng.random_bool(SLIP) {
                rule_of_thumb(&k, cards, rng)
            } else {
                // It remembers the cards played and the points taken, nothing more.
                let table = Table {
                    played: k.table.played,
                    points: k.table.points,
                    ..Table::default()
                };
                heuristic::play(&Ctx {
                    seat,
                    hand: k.hand,
                    legal: cards,
                    trick: &k.trick,
                    table: &table,
                    rules: &k.rules,
                    known: &k.known,
                    weights: &heuristic::WEIGHTS,
                })
            };
            let card = if cards.contains(card) { card } else { fallback };
            Some(Action::Play { seat, card })
        }
        LegalActions::None => None,
    }
}

/// The three highest passable cards (by rank, then suit order), if that set is legal.
fn highest_pass(view: &SeatView, passable: CardSet) -> Option<CardSet> {
    let mut cards: Vec<Card> = passable.iter().collect();
    cards.sort_by_key(|c| std::cmp::Reverse((c.rank(), c.suit())));
    let pass: CardSet = cards.into_iter().take(3).collect();
    (pass.len() == 3 && check_pass(view.hand, pass, &view.rules).is_ok()).then_some(pass)
}

/// A beginner's rule of thumb: lead low (or on a whim); follow with the highest card under
/// the trick's best (else the lowest); discard the highest card.
fn rule_of_thumb<R: Rng + ?Sized>(k: &Knowledge, legal: CardSet, rng: &mut R) -> Card {
    let lowest_rank = |cards: CardSet| cards.iter().min_by_key(|c| c.rank());
    let highest_rank = |cards: CardSet| cards.iter().max_by_key(|c| c.rank());
    let pick = match (k.trick.led_suit(), k.trick.winner()) {
        (Some(led), Some((_, best))) if !legal.of_suit(led).is_empty() => {
            let under = legal & below(best);
            if under.is_empty() {
                lowest_rank(legal)
            } else {
                highest_rank(under)
            }
        }
        (Some(_), _) => highest_rank(legal),
        (None, _) if rng.random_bool(0.5) => legal.iter().nth(rng.random_range(0..legal.len())),
        (None, _) => lowest_rank(legal),
    };
    pick.unwrap_or(Card::QUEEN_OF_SPADES)
}
