//! The legality rules of passing (§3) and playing (§4, talbees of §8), as pure functions of
//! a hand, a trick and the options. [`Game`](super::Game) calls these; bots and tools may too.
//!
//! Each rule has a generator (`legal_plays`, `passable_cards`) and a checker (`check_play`,
//! `check_pass`) that gives the reason; the property tests hold them to agree exactly.

use super::card::{Card, Rank, Suit};
use super::cardset::CardSet;
use super::error::RuleError;
use super::options::{PassRestriction, RuleOptions, Talbees};
use super::trick::Trick;

/// The guards of the pass restriction: each Leekha and the cards of its suit above it,
/// `{QS, KS, AS, 10D, JD, QD, KD, AD}`. A pass may empty a suit only through guards.
pub const GUARDS: CardSet = CardSet::single(Card::QUEEN_OF_SPADES)
    .union(CardSet::above(Rank::Queen, Suit::Spades))
    .union(CardSet::single(Card::TEN_OF_DIAMONDS))
    .union(CardSet::above(Rank::Ten, Suit::Diamonds));

/// The cards of `suit` above its Leekha (`KS AS`, `JD QD KD AD`; none for clubs and
/// hearts): under talbees, one of these in the trick forces a follower holding the Leekha
/// to play it.
#[inline]
pub const fn above_leekha(suit: Suit) -> CardSet {
    match suit {
        Suit::Spades => CardSet::above(Rank::Queen, Suit::Spades),
        Suit::Diamonds => CardSet::above(Rank::Ten, Suit::Diamonds),
        Suit::Clubs | Suit::Hearts => CardSet::EMPTY,
    }
}

/// The Leekha that talbees (§8) forces on a follower of `trick` who holds it: the led suit's
/// Leekha, when talbees is on and a card above that Leekha is already in the trick. A seat
/// that follows suit with another card therefore shows it does not hold that Leekha.
#[inline]
pub fn talbees_leekha(trick: &Trick, options: &RuleOptions) -> Option<Card> {
    if options.talbees != Talbees::On {
        return None;
    }
    let led = trick.led_suit()?;
    let leekha = led.leekha()?;
    (!trick.set().is_disjoint(above_leekha(led))).then_some(leekha)
}

/// The Leekha that talbees forces on a player following with `follow` (the held cards of
/// the led suit), if any.
#[inline]
fn talbees_card(follow: CardSet, trick: &Trick, options: &RuleOptions) -> Option<Card> {
    talbees_leekha(trick, options).filter(|&leekha| follow.contains(leekha))
}

/// The cards of `hand` that may be played to `trick` (§4): any card when leading; else the
/// led suit if held (only its Leekha under talbees); else the forced Leekhas if held; else
/// any card.
#[inline]
pub fn legal_plays(hand: CardSet, trick: &Trick, options: &RuleOptions) -> CardSet {
    // Computed without branches on the cards (they become conditional moves): in random
    // playouts every one of these conditions is a coin flip for the branch predictor.
    // While leading, the follow mask is the whole deck, so `follow` is the hand.
    let follow = hand & trick.follow_mask();
    let forced = hand & options.forced_leekha.cards();
    let void = if forced.is_empty() { hand } else { forced };
    let legal = if follow.is_empty() { void } else { follow };
    if let Some(leekha) = talbees_card(follow, trick, options) {
        return CardSet::single(leekha);
    }
    legal
}

/// Checks that `card`, held in `hand`, may be played to `trick`.
///
/// # Errors
///
/// [`RuleError::CardNotInHand`], [`RuleError::MustFollowSuit`] (an off-suit card while
/// holding the led suit, even when talbees also applies), [`RuleError::Talbees`] or
/// [`RuleError::MustPlayLeekha`].
#[inline]
pub fn check_play(
    hand: CardSet,
    trick: &Trick,
    options: &RuleOptions,
    card: Card,
) -> Result<(), RuleError> {
    if !hand.contains(card) {
        return Err(RuleError::CardNotInHand { card });
    }
    let Some(led) = trick.led_suit() else {
        return Ok(());
    };
    let follow = hand.of_suit(led);
    if !follow.is_empty() {
        if card.suit() != led {
            return Err(RuleError::MustFollowSuit { suit: led });
        }
        return match talbees_card(follow, trick, options) {
            Some(leekha) if leekha != card => Err(RuleError::Talbees { leekha }),
            _ => Ok(()),
        };
    }
    let forced = hand & options.forced_leekha.cards();
    if forced.is_empty() || forced.contains(card) {
        Ok(())
    } else {
        Err(RuleError::MustPlayLeekha {
            led,
            allowed: forced,
        })
    }
}

/// The cards of `hand` that belong to at least one legal pass (§3).
///
/// Without the restriction that is the whole hand (if it has 3 cards). With it, count how
/// many cards each suit can give: all of them when every held card of the suit is a guard,
/// else all but one (one card must stay, and any one will do). Given a total capacity of at
/// least 3 — always true for 13 cards, which keep 9 — a card is in some legal pass unless it
/// is a non-guard alone in its suit. Tested against brute force over all 3-card subsets.
pub fn passable_cards(hand: CardSet, options: &RuleOptions) -> CardSet {
    let len = hand.len();
    if len < 3 {
        return CardSet::EMPTY;
    }
    if options.pass_restriction == PassRestriction::Off {
        return hand;
    }
    // Every guard held, and every card of a suit held at least twice.
    let mut passable = hand & GUARDS;
    for suit in Suit::ALL {
        let held = hand.of_suit(suit).bits();
        // `held & (held - 1)` drops the lowest card: non-zero iff two or more.
        let twice = if held & held.wrapping_sub(1) != 0 {
            held
        } else {
            0
        };
        passable |= CardSet::from_bits(twice).unwrap_or_default();
    }
    // The capacity is the hand minus one card per suit holding a non-guard: at least 3 for
    // any hand of 7 or more cards (there are 4 suits), so only test positions need it.
    let capacity = len - suits_held(hand - GUARDS).count_ones() as usize;
    if capacity >= 3 {
        passable
    } else {
        CardSet::EMPTY
    }
}

/// The cards of `hand` that a pass may take even when they leave their suit empty (§3): the
/// guards under the restriction, every card without it. With [`passable_cards`] this decides
/// any 3-card selection without a search, which is what the API gives clients.
pub fn may_empty_suit(hand: CardSet, options: &RuleOptions) -> CardSet {
    match options.pass_restriction {
        PassRestriction::Off => hand,
        PassRestriction::On => hand & GUARDS,
    }
}

/// A 4-bit mask of the suits that `cards` holds.
#[inline]
const fn suits_held(cards: CardSet) -> u8 {
    (!cards.of_suit(Suit::Clubs).is_empty() as u8)
        | (!cards.of_suit(Suit::Diamonds).is_empty() as u8) << 1
        | (!cards.of_suit(Suit::Hearts).is_empty() as u8) << 2
        | (!cards.of_suit(Suit::Spades).is_empty() as u8) << 3
}

/// The pass restriction alone, as a branch-free test for generators: no suit that the pass
/// touches with a non-guard is missing from what the hand keeps. Assumes `pass ⊆ hand`.
#[inline]
pub(crate) const fn keeps_suits(hand: CardSet, pass: CardSet) -> bool {
    lanes_held(pass.difference(GUARDS).bits()) & !lanes_held(hand.difference(pass).bits()) == 0
}

/// The top bit (rank ace) of each suit's 13-bit lane set iff `cards` holds that suit: the
/// low 12 bits of each lane plus `0xfff` carry into the top bit when any is set, and never
/// beyond it. Four operations for all suits at once.
#[inline]
const fn lanes_held(cards: u64) -> u64 {
    const LOW: u64 = 0xfff | 0xfff << 13 | 0xfff << 26 | 0xfff << 39;
    const TOP: u64 = 1 << 12 | 1 << 25 | 1 << 38 | 1 << 51;
    (((cards & LOW) + LOW) | cards) & TOP
}

/// Every legal pass of `hand` (§3) in index order, by exhaustive search over its 3-card
/// subsets (286 for 13 cards): for brute-force checks and for backstops that need any legal
/// pass; [`passable_cards`] is the fast way to their union.
pub fn legal_passes(hand: CardSet, options: &RuleOptions) -> impl Iterator<Item = CardSet> {
    let restricted = options.pass_restriction == PassRestriction::On;
    triples(hand).filter(move |&pass| !restricted || keeps_suits(hand, pass))
}

/// The first of [`legal_passes`], for the random pass generators, which hold the restriction
/// as a flag: their backstop for hands where random draws keep failing.
pub(crate) fn first_legal_pass(hand: CardSet, restricted: bool) -> Option<CardSet> {
    triples(hand).find(|&pass| !restricted || keeps_suits(hand, pass))
}

/// Every 3-card subset of `cards`, in index order (by lowest card, then the next).
fn triples(cards: CardSet) -> impl Iterator<Item = CardSet> {
    cards.iter().flat_map(move |a| {
        let rest = after(cards, a);
        rest.iter().flat_map(move |b| {
            after(rest, b)
                .iter()
                .map(move |c| CardSet::single(a).with(b).with(c))
        })
    })
}

/// The cards of `cards` that come after `card` in index order.
#[inline]
fn after(cards: CardSet, card: Card) -> CardSet {
    // The mask of `card` and every lower index: at most the 52 bits of the deck.
    let up_to = CardSet::from_bits((2 << card.index()) - 1).unwrap_or(CardSet::FULL);
    cards - up_to
}

/// Checks that `pass` is a legal pass from `hand`: 3 cards of the hand, and with the
/// restriction on, no card outside [`GUARDS`] empties its suit. The rule is checked on the
/// whole set: what counts is what the hand keeps.
///
/// # Errors
///
/// [`RuleError::WrongCardCount`], [`RuleError::CardNotInHand`] (the lowest such card) or
/// [`RuleError::PassRestriction`] (the lowest offending card).
pub fn check_pass(hand: CardSet, pass: CardSet, options: &RuleOptions) -> Result<(), RuleError> {
    if pass.len() != 3 {
        return Err(RuleError::WrongCardCount {
            expected: 3,
            got: pass.len(),
        });
    }
    if let Some(card) = (pass - hand).lowest() {
        return Err(RuleError::CardNotInHand { card });
    }
    if options.pass_restriction == PassRestriction::On {
        let kept = hand - pass;
        for card in pass - GUARDS {
            if kept.of_suit(card.suit()).is_empty() {
                return Err(RuleError::PassRestriction { card });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// Every legal 3-card pass by brute force: each subset that the checker accepts.
    fn brute_force_passes(hand: CardSet, options: &RuleOptions) -> Vec<CardSet> {
        triples(hand)
            .filter(|&pass| check_pass(hand, pass, options).is_ok())
            .collect()
    }

    #[test]
    fn triples_are_every_three_card_subset_once_in_index_order() {
        let hand: CardSet = "2C QS AS 10D AH".parse().unwrap();
        let all: Vec<CardSet> = triples(hand).collect();
        assert!(all.iter().all(|t| t.len() == 3 && t.is_subset(hand)));
        // Strictly increasing card indices, lexicographically: no repeats, and with all
        // C(5, 3) = 10 of them, exactly the sorted list.
        let indices = |t: &CardSet| t.iter().map(Card::index).collect::<Vec<u8>>();
        assert!(all.windows(2).all(|w| indices(&w[0]) < indices(&w[1])));
        assert_eq!(all.len(), 10);
        assert_eq!(triples(CardSet::FULL).count(), 22_100);
    }

    #[test]
    fn lanes_held_marks_the_suits_held() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        for _ in 0..2000 {
            let size = CardSet::FULL.choose(&mut rng).map_or(0, |c| c.index() % 14);
            let mut cards = CardSet::EMPTY;
            while cards.len() < usize::from(size) {
                if let Some(card) = (CardSet::FULL - cards).choose(&mut rng) {
                    cards.insert(card);
                }
            }
            let held = lanes_held(cards.bits());
            for suit in Suit::ALL {
                let top = 1u64 << (13 * suit.index() + 12);
                assert_eq!(held & top != 0, !cards.of_suit(suit).is_empty(), "{cards}");
            }
            assert_eq!(held.count_ones(), suits_held(cards).count_ones());
        }
    }

    #[test]
    fn passable_cards_match_brute_force_for_hands_of_every_size() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let options = RuleOptions::default();
        for _ in 0..3000 {
            let size = 3 + CardSet::FULL.choose(&mut rng).map_or(0, |c| c.index() % 11);
            let mut hand = CardSet::EMPTY;
            while hand.len() < usize::from(size) {
                // Favour the guards, where the capacity rule matters; any card once every
                // guard is held.
                let guards_left = GUARDS - hand;
                let pool = if hand.len().is_multiple_of(2) && !guards_left.is_empty() {
                    guards_left
                } else {
                    CardSet::FULL - hand
                };
                if let Some(card) = pool.choose(&mut rng) {
                    hand.insert(card);
                }
            }
            let brute = brute_force_passes(hand, &options);
            let union = brute
                .iter()
                .fold(CardSet::EMPTY, |union, &pass| union | pass);
            assert_eq!(passable_cards(hand, &options), union, "{hand}");
            assert_eq!(first_legal_pass(hand, true), brute.first().copied());
            assert!(legal_passes(hand, &options).eq(brute), "{hand}");
        }
    }
}
