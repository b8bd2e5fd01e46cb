//! The omniscient measuring bot: the expert's search with the hidden cards revealed.
//!
//! It reads every hand from the [`Game`], so it is no bot a seat could be given: only the
//! tournament (`leekha simulate`) can seat it. It measures the information limit of the
//! expert's family of search: every candidate is played out with heuristic rollouts in the
//! one true world (deterministic, so one rollout per candidate is exact), and the pass is
//! chosen by playing out every legal pass against the others' actual (or, while they have
//! not committed, predicted heuristic) passes. What the expert saves against the heuristic,
//! divided by what this bot saves, is the share of the bound the expert reaches.

use crate::rules::{Action, Card, CardSet, Game, LegalActions, Phase, Seat, legal_passes};

use super::expert::{Sim, team_points};
use super::heuristic;
use super::knowledge::Knowledge;

/// The omniscient bot's action for `seat` in `game` (`None` if the seat has nothing to do).
/// `history` is the round's plays, as for every bot.
pub(crate) fn choose_omniscient(
    game: &Game,
    seat: Seat,
    history: &[(Seat, Card)],
) -> Option<Action> {
    let view = game.view(seat);
    let view = &view;
    match view.legal_actions {
        LegalActions::Pass { cards, .. } => best_pass(game, seat)
            .or_else(|| heuristic::choose_pass(view.hand, cards, &view.rules, &heuristic::WEIGHTS))
            .map(|p| super::pass(seat, p)),
        LegalActions::Play { cards } => {
            if cards.len() == 1 {
                return cards.lowest().map(|card| Action::Play { seat, card });
            }
            let k = Knowledge::new(view, history)?;
            let hands: [CardSet; 4] = std::array::from_fn(|i| game.hand(Seat::ALL[i]));
            let known_by = known_by(game, &hands);
            let card = cards.iter().rev().min_by_key(|&card| {
                let mut sim = Sim {
                    hands,
                    trick: k.trick,
                    table: k.table,
                };
                sim.play(seat, card, &k.rules);
                sim.finish(&k.rules, &known_by);
                team_points(&k.rules, seat, &sim.table.points)
            })?;
            Some(Action::Play { seat, card })
        }
        LegalActions::None => None,
    }
}

/// Per seat: where it knows its own pass sits (the receiver holds what it has not played).
fn known_by(game: &Game, hands: &[CardSet; 4]) -> [[CardSet; 4]; 4] {
    let mut known = [[CardSet::EMPTY; 4]; 4];
    let Some(direction) = game.view(Seat::ALL[0]).pass_direction else {
        return known;
    };
    for seat in Seat::ALL {
        if let Some(passed) = game.passed(seat) {
            let receiver = direction.receiver(seat);
            known[seat.index()][receiver.index()] = passed & hands[receiver.index()];
        }
    }
    known
}

/// The legal pass whose heuristic play-out costs the fewest points, against the passes the
/// others committed (or would commit as the heuristic).
fn best_pass(game: &Game, me: Seat) -> Option<CardSet> {
    if game.phase() != Phase::Passing {
        return None;
    }
    let view = game.view(me);
    let rules = view.rules;
    let direction = view.pass_direction?;
    let hands: [CardSet; 4] = std::array::from_fn(|i| game.hand(Seat::ALL[i]));
    let mut passes = [CardSet::EMPTY; 4];
    for seat in Seat::ALL {
        if seat == me {
            continue;
        }
        let hand = hands[seat.index()];
        passes[seat.index()] = match game.passed(seat) {
            Some(p) => p,
            None => heuristic::choose_pass(
                hand,
                crate::rules::passable_cards(hand, &rules),
                &rules,
                &heuristic::WEIGHTS,
            )?,
        };
    }
    let leader = view.dealer.right();
    legal_passes(hands[me.index()], &rules).min_by_key(|&pass| {
        let mut passes = passes;
        passes[me.index()] = pass;
        super::expert::passed_round_points(&rules, me, &hands, &passes, direction, leader)
    })
}
