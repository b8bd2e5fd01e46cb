//! [`Event`]: what happened, for the server's event log, and [`EventSink`]: where it goes.

use serde::{Deserialize, Serialize};

use super::card::Card;
use super::cardset::CardSet;
use super::options::Direction;
use super::scoring::GameResult;
use super::seat::{BySeat, Seat};

/// Something that happened in the game, in order. Serialized with a snake_case `type` tag;
/// cards as canonical codes.
///
/// Several events carry private cards (the dealt hands, a pass, the received cards): the
/// server must strip the parts that belong to other seats before showing an event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A round was dealt. Private: each hand belongs to its seat.
    RoundDealt {
        /// The round number, from 1.
        round: u32,
        /// The dealer.
        dealer: Seat,
        /// The direction of this round's passes, `None` when the round has no passing.
        pass_direction: Option<Direction>,
        /// The 13 cards of each seat.
        hands: BySeat<CardSet>,
    },
    /// A seat committed its pass. The seat is public; the cards belong to the seat only.
    PassCommitted {
        /// The seat.
        seat: Seat,
        /// The 3 cards it passed.
        cards: CardSet,
    },
    /// All four seats committed: the passes were applied at once. Private: each received set
    /// belongs to its receiver.
    PassesExchanged {
        /// The direction of the passes.
        direction: Direction,
        /// The cards each seat received.
        received: BySeat<CardSet>,
    },
    /// A card was played (public).
    CardPlayed {
        /// The seat.
        seat: Seat,
        /// The card.
        card: Card,
    },
    /// A trick was completed (public).
    TrickWon {
        /// The seat that took the trick and leads the next one.
        seat: Seat,
        /// The seat that led the trick.
        leader: Seat,
        /// The four cards in play order, from the leader on.
        cards: [Card; 4],
        /// The points in the trick.
        points: u32,
    },
    /// The 13th trick was taken and the round scored (public).
    RoundScored {
        /// The round number.
        round: u32,
        /// The points each seat took this round (they add up to 36 in a full round).
        round_points: BySeat<u32>,
        /// The totals after this round.
        totals: BySeat<u32>,
    },
    /// The game ended (public).
    GameFinished {
        /// Winners and ranking.
        result: GameResult,
    },
}

/// Where [`Game`](super::Game) puts the events of an action. `Vec<Event>` collects them;
/// [`Discard`] drops them, and with it the compiler removes the event building from the
/// hot path of playouts.
pub trait EventSink {
    /// Whether this sink keeps events. `false` lets hot paths skip the bookkeeping that only
    /// events need (checked at compile time, so it costs nothing).
    const KEEPS_EVENTS: bool = true;

    /// Receives the next event.
    fn push(&mut self, event: Event);
}

impl EventSink for Vec<Event> {
    #[inline]
    fn push(&mut self, event: Event) {
        Vec::push(self, event);
    }
}

/// An [`EventSink`] that drops every event: for simulations and bots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Discard;

impl EventSink for Discard {
    const KEEPS_EVENTS: bool = false;

    #[inline(always)]
    fn push(&mut self, _event: Event) {}
}
