//! [`Trick`]: up to four cards played in turn, and who takes them (§4).

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::card::{Card, Suit};
use super::cardset::CardSet;
use super::seat::Seat;

/// A trick: the leader and the cards played so far, in order (the `i`-th card was played
/// by `leader + i`). Fixed-size and `Copy`, so the hot path never allocates.
///
/// Serialized as `{"leader": 0, "cards": ["9D", "JD"]}`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Trick {
    /// The same cards as a set, for O(1) rule checks and points.
    set: CardSet,
    /// All cards of the led suit, or every card while the trick is empty (so that "the
    /// cards of the hand that follow" is one AND, without a branch on the lead).
    led: CardSet,
    /// The card indices in play order, byte `i` for the `i`-th card, zero past `len`.
    /// Packed in one word rather than a `[Card; 4]`: copying a trick right after its
    /// bytes were written one by one would stall on store forwarding, once per trick.
    cards: u32,
    leader: Seat,
    len: u8,
    /// The position of the highest card of the led suit so far: the winner is tracked as
    /// cards arrive instead of searched for at the end.
    best: u8,
    /// That card's index.
    best_card: u8,
}

impl Trick {
    /// An empty trick that `leader` will lead.
    #[inline]
    pub const fn new(leader: Seat) -> Trick {
        Trick {
            set: CardSet::EMPTY,
            led: CardSet::FULL,
            cards: 0,
            leader,
            len: 0,
            best: 0,
            best_card: 0,
        }
    }

    /// A trick led by `leader` with these cards in play order, or `None` for more than four
    /// cards or a repeated card.
    pub fn from_cards(leader: Seat, cards: &[Card]) -> Option<Trick> {
        if cards.len() > 4 {
            return None;
        }
        let mut trick = Trick::new(leader);
        for &card in cards {
            if trick.set.contains(card) {
                return None;
            }
            trick.push(card);
        }
        Some(trick)
    }

    /// The seat that led (or will lead) this trick.
    #[inline]
    pub const fn leader(&self) -> Seat {
        self.leader
    }

    /// How many cards were played.
    #[inline]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no card was played yet.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether all four seats played.
    #[inline]
    pub const fn is_complete(&self) -> bool {
        self.len == 4
    }

    /// The `i`-th card played (0-based), if any.
    #[inline]
    pub const fn card(&self, i: usize) -> Option<Card> {
        if i < self.len as usize {
            Card::from_index((self.cards >> (8 * i)) as u8)
        } else {
            None
        }
    }

    /// The cards in play order.
    pub fn cards(&self) -> impl ExactSizeIterator<Item = Card> + Clone + '_ {
        (0..self.len()).map(|i| self.card_at(i))
    }

    /// The card in slot `i` (the filler `2C` past `len`).
    #[inline]
    const fn card_at(&self, i: usize) -> Card {
        match Card::from_index((self.cards >> (8 * i)) as u8) {
            Some(card) => card,
            // Unreachable: every byte holds a card index.
            None => Card::QUEEN_OF_SPADES,
        }
    }

    /// The cards as a set.
    #[inline]
    pub const fn set(&self) -> CardSet {
        self.set
    }

    /// The suit of the first card, if any.
    #[inline]
    pub const fn led_suit(&self) -> Option<Suit> {
        match self.card(0) {
            Some(card) => Some(card.suit()),
            None => None,
        }
    }

    /// The seat that plays next (meaningful while the trick is incomplete).
    #[inline]
    pub const fn next_seat(&self) -> Seat {
        self.leader.offset(self.len)
    }

    /// Each card with the seat that played it, in play order.
    pub fn plays(&self) -> impl Iterator<Item = (Seat, Card)> + '_ {
        self.cards()
            .enumerate()
            .map(|(i, card)| (self.leader.offset(i as u8), card))
    }

    /// The seat holding the highest card of the led suit so far, and that card: the winner
    /// once the trick is complete. Off-suit cards never win.
    #[inline]
    pub const fn winner(&self) -> Option<(Seat, Card)> {
        if self.len == 0 {
            return None;
        }
        match Card::from_index(self.best_card) {
            Some(card) => Some((self.taker(), card)),
            None => None,
        }
    }

    /// The seat of [`Trick::winner`], or the leader while the trick is empty: who takes a
    /// complete trick and leads the next, with no `Option` to unwrap where a winner is
    /// certain.
    #[inline]
    pub const fn taker(&self) -> Seat {
        // An empty trick's best position is 0: the leader.
        self.leader.offset(self.best)
    }

    /// The points in this trick.
    #[inline]
    pub const fn points(&self) -> u32 {
        self.set.points()
    }

    /// The cards a player holding the led suit must choose from: the led suit, or every
    /// card while the trick is empty.
    #[inline]
    pub(crate) const fn follow_mask(&self) -> CardSet {
        self.led
    }

    /// The four cards in play order (the caller guarantees the trick is complete).
    #[inline]
    pub(crate) fn card_array(&self) -> [Card; 4] {
        std::array::from_fn(|i| self.card_at(i))
    }

    /// Adds the next card; the caller guarantees the trick is incomplete and the card new.
    #[inline]
    pub(crate) fn push(&mut self, card: Card) {
        debug_assert!(self.len < 4 && !self.set.contains(card));
        let index = card.index();
        // The first card sets the led suit (the mask is the whole deck until then).
        self.led = if self.len == 0 {
            CardSet::suit(card.suit())
        } else {
            self.led
        };
        // Does the card take the lead? Of the led suit and higher than the best so far (the
        // first card always does: the empty trick's best is index 0 and the led mask is
        // full). Selected arithmetically, without a branch: in random play this is a coin
        // flip that a branch predictor would get wrong half the time.
        let beats = u8::from(self.led.contains(card) & (index >= self.best_card));
        let keep = beats.wrapping_sub(1); // 0xff: keep the old best, 0x00: take the new card
        self.best = (self.best & keep) | (self.len & !keep);
        self.best_card = (self.best_card & keep) | (index & !keep);
        self.cards |= u32::from(index) << (8 * self.len);
        self.len += 1;
        self.set.insert(card);
    }
}

impl Serialize for Trick {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Trick", 2)?;
        s.serialize_field("leader", &self.leader)?;
        s.serialize_field("cards", &self.cards().collect::<Vec<Card>>())?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for Trick {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Trick, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Repr {
            leader: Seat,
            cards: Vec<Card>,
        }
        let repr = Repr::deserialize(deserializer)?;
        Trick::from_cards(repr.leader, &repr.cards)
            .ok_or_else(|| serde::de::Error::custom("a trick holds at most four distinct cards"))
    }
}

/// A card with the seat that played it, as views list a trick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlayedCard {
    /// Who played it.
    pub seat: Seat,
    /// The card.
    pub card: Card,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(code: &str) -> Card {
        code.parse().unwrap()
    }

    #[test]
    fn the_highest_card_of_the_led_suit_wins() {
        let leader = Seat::ALL[2];
        let trick =
            Trick::from_cards(leader, &[card("2C"), card("QS"), card("10D"), card("AH")]).unwrap();
        assert_eq!(trick.winner(), Some((leader, card("2C"))));
        assert_eq!(trick.points(), 24);
        assert!(trick.is_complete());
        let cards: Vec<Card> = trick.cards().collect();
        assert_eq!(cards, [card("2C"), card("QS"), card("10D"), card("AH")]);
    }

    #[test]
    fn a_later_higher_card_of_the_led_suit_takes_the_lead() {
        let leader = Seat::ALL[0];
        let trick =
            Trick::from_cards(leader, &[card("9D"), card("JD"), card("QS"), card("10D")]).unwrap();
        assert_eq!(trick.winner(), Some((Seat::ALL[1], card("JD"))));
        assert_eq!(trick.taker(), Seat::ALL[1]);
        assert_eq!(Trick::new(leader).taker(), leader);
        assert_eq!(trick.points(), 23);
    }
}
