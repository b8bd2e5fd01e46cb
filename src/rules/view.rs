//! [`SeatView`]: exactly what one seat may know of a game (§4, API "game view").

use serde::{Deserialize, Serialize};

use super::cardset::CardSet;
use super::game::{Game, LegalActions, Phase};
use super::options::{Direction, RuleOptions};
use super::scoring::GameResult;
use super::seat::{BySeat, Seat, SeatSet, Team};
use super::trick::{PlayedCard, Trick};

/// What a seat (or a spectator) may see of a game, as plain data.
///
/// It holds the viewer's own hand, pass and received cards, and public facts. It never
/// holds another seat's hand, another seat's pass, cards of earlier tricks than the last
/// one, or the seed: the property tests check every view of thousands of games for that.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatView {
    /// The viewer's seat, `None` for a spectator.
    pub seat: Option<Seat>,
    /// The resolved rule set.
    pub rules: RuleOptions,
    /// The round number, from 1.
    pub round: u32,
    /// The dealer of this round.
    pub dealer: Seat,
    /// The phase.
    pub phase: Phase,
    /// The direction of this round's passes (`None`: no passing this round).
    pub pass_direction: Option<Direction>,
    /// The viewer's cards (empty for a spectator).
    pub hand: CardSet,
    /// The cards the viewer passed this round, once committed.
    pub passed: Option<CardSet>,
    /// The cards the viewer received, only once all four passes were exchanged.
    pub received: Option<CardSet>,
    /// Which seats committed their pass this round.
    pub passes_committed: BySeat<bool>,
    /// The trick in progress.
    pub trick: TrickView,
    /// The last completed trick of this round.
    pub last_trick: Option<LastTrickView>,
    /// Tricks completed this round.
    pub tricks_played: u8,
    /// Public facts about each seat.
    pub seats: BySeat<SeatSummary>,
    /// The seat to play (playing phase only).
    pub turn: Option<Seat>,
    /// The seats that may act now (while passing: those that have not committed).
    pub to_act: SeatSet,
    /// What the viewer may do now.
    pub legal_actions: LegalActions,
    /// How the game ended, once it has.
    pub result: Option<GameResult>,
}

/// The public facts about one seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatSummary {
    /// The seat.
    pub seat: Seat,
    /// Its total over the scored rounds.
    pub total_score: u32,
    /// The points it took this round (who took which points is public).
    pub round_points: u32,
    /// How many cards it holds.
    pub cards_in_hand: u8,
    /// Its team in partnership mode, `None` in solo.
    pub team: Option<Team>,
}

/// The trick in progress, as a view shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrickView {
    /// Who led (or leads, while empty).
    pub leader: Seat,
    /// The cards played so far, in order.
    pub cards: Vec<PlayedCard>,
}

/// The last completed trick, as a view shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastTrickView {
    /// Who led.
    pub leader: Seat,
    /// The four cards, in order.
    pub cards: Vec<PlayedCard>,
    /// Who took it.
    pub winner: Seat,
    /// Its points.
    pub points: u32,
}

fn played_cards(trick: &Trick) -> Vec<PlayedCard> {
    trick
        .plays()
        .map(|(seat, card)| PlayedCard { seat, card })
        .collect()
}

impl Game {
    /// What `seat` may see.
    pub fn view(&self, seat: Seat) -> SeatView {
        self.view_for(Some(seat))
    }

    /// What a spectator (no seat) may see: public facts only.
    pub fn spectator_view(&self) -> SeatView {
        self.view_for(None)
    }

    fn view_for(&self, viewer: Option<Seat>) -> SeatView {
        let totals = self.totals();
        let round_points = self.round_points();
        let partnership = self.options().is_partnership();
        let seats = BySeat::from_fn(|seat| SeatSummary {
            seat,
            total_score: totals[seat],
            round_points: round_points[seat],
            // A hand holds at most 13 cards.
            cards_in_hand: self.hand(seat).len() as u8,
            team: partnership.then(|| seat.team()),
        });
        let last_trick = self.last_trick().map(|trick| LastTrickView {
            leader: trick.leader(),
            cards: played_cards(trick),
            winner: trick.taker(),
            points: trick.points(),
        });
        SeatView {
            seat: viewer,
            rules: *self.options(),
            round: self.round_number(),
            dealer: self.dealer(),
            phase: self.phase(),
            pass_direction: self.pass_direction(),
            hand: viewer.map_or(CardSet::EMPTY, |s| self.hand(s)),
            passed: viewer.and_then(|s| self.passed(s)),
            received: viewer.and_then(|s| self.received(s)),
            passes_committed: self.passes_committed(),
            trick: TrickView {
                leader: self.trick().leader(),
                cards: played_cards(self.trick()),
            },
            last_trick,
            tricks_played: self.tricks_played(),
            seats,
            turn: self.turn(),
            to_act: self.to_act(),
            legal_actions: viewer.map_or(LegalActions::None, |s| self.legal_actions(s)),
            result: self.result().cloned(),
        }
    }
}
