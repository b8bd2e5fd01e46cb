//! [`CardSet`]: a set of cards as a 64-bit mask, the workhorse of the engine.

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not, Sub, SubAssign};
use std::str::FromStr;

use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::card::{Card, ParseCardError, Rank, Suit};
use super::deal::below;

/// A set of cards: bit `i` is the card with [`Card::index`] `i`. `Copy`, 8 bytes, and every
/// operation is a few instructions, which is what keeps rule checks and playouts free of
/// allocation.
///
/// Iteration goes in index order (clubs 2..A, diamonds, hearts, spades). Serde writes a
/// list of canonical codes in that order and refuses duplicates on input.
///
/// ```
/// use leekha::rules::{Card, CardSet, Suit};
///
/// let hand: CardSet = ["QS", "AS", "2C"].iter().map(|c| c.parse::<Card>().unwrap()).collect();
/// assert_eq!(hand.len(), 3);
/// assert_eq!(hand.of_suit(Suit::Spades).highest(), Some("AS".parse().unwrap()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CardSet(u64);

const SUIT_MASK: u64 = (1 << 13) - 1;

impl CardSet {
    /// The empty set.
    pub const EMPTY: CardSet = CardSet(0);
    /// All 52 cards.
    pub const FULL: CardSet = CardSet((1 << 52) - 1);

    /// The set with these bits, if no bit above 51 is set.
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<CardSet> {
        if bits & !CardSet::FULL.0 == 0 {
            Some(CardSet(bits))
        } else {
            None
        }
    }

    /// The raw bits.
    #[inline]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The set holding just `card`.
    #[inline]
    pub const fn single(card: Card) -> CardSet {
        CardSet(1 << card.index())
    }

    /// All 13 cards of `suit`.
    #[inline]
    pub const fn suit(suit: Suit) -> CardSet {
        CardSet(SUIT_MASK << (13 * suit as u32))
    }

    /// The cards of `suit` ranked strictly above `rank`.
    #[inline]
    pub const fn above(rank: Rank, suit: Suit) -> CardSet {
        let in_suit = SUIT_MASK & !((2 << rank as u32) - 1);
        CardSet(in_suit << (13 * suit as u32))
    }

    /// The number of cards.
    #[inline]
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `card` is in the set.
    #[inline]
    pub const fn contains(self, card: Card) -> bool {
        self.0 & (1 << card.index()) != 0
    }

    /// Adds `card`; returns whether it was absent.
    #[inline]
    pub fn insert(&mut self, card: Card) -> bool {
        let absent = !self.contains(card);
        self.0 |= 1 << card.index();
        absent
    }

    /// Removes `card`; returns whether it was present.
    #[inline]
    pub fn remove(&mut self, card: Card) -> bool {
        let present = self.contains(card);
        self.0 &= !(1 << card.index());
        present
    }

    /// This set plus `card`.
    #[inline]
    #[must_use]
    pub const fn with(self, card: Card) -> CardSet {
        CardSet(self.0 | 1 << card.index())
    }

    /// This set without `card`.
    #[inline]
    #[must_use]
    pub const fn without(self, card: Card) -> CardSet {
        CardSet(self.0 & !(1 << card.index()))
    }

    /// Cards in either set.
    #[inline]
    #[must_use]
    pub const fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    /// Cards in both sets.
    #[inline]
    #[must_use]
    pub const fn intersection(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    /// Cards in `self` but not in `other`.
    #[inline]
    #[must_use]
    pub const fn difference(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// The 52 cards not in this set.
    #[inline]
    #[must_use]
    pub const fn complement(self) -> CardSet {
        CardSet(!self.0 & CardSet::FULL.0)
    }

    /// Whether every card of `self` is in `other`.
    #[inline]
    pub const fn is_subset(self, other: CardSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether the sets share no card.
    #[inline]
    pub const fn is_disjoint(self, other: CardSet) -> bool {
        self.0 & other.0 == 0
    }

    /// The cards of this set that belong to `suit`.
    #[inline]
    #[must_use]
    pub const fn of_suit(self, suit: Suit) -> CardSet {
        CardSet(self.0 & CardSet::suit(suit).0)
    }

    /// The card with the highest index. Within one suit (see [`CardSet::of_suit`]) that is
    /// the highest-ranked card; across suits, spades beat hearts beat diamonds beat clubs,
    /// which has no meaning in play.
    #[inline]
    pub const fn highest(self) -> Option<Card> {
        if self.0 == 0 {
            None
        } else {
            Card::from_index(63 - self.0.leading_zeros() as u8)
        }
    }

    /// The card with the lowest index (the lowest-ranked card within one suit).
    #[inline]
    pub const fn lowest(self) -> Option<Card> {
        if self.0 == 0 {
            None
        } else {
            Card::from_index(self.0.trailing_zeros() as u8)
        }
    }

    /// The `n`-th card in index order (0-based), if the set has more than `n` cards.
    #[inline]
    pub fn nth(self, n: usize) -> Option<Card> {
        let prefix = byte_prefix_counts(self.0);
        if n >= (prefix >> 56) as usize {
            return None;
        }
        // n < 52 here, so the conversion is lossless.
        Card::from_index(select(self.0, prefix, n as u32))
    }

    /// A uniformly random card of the set (`None` if empty): how playouts pick a legal card
    /// without allocating or branching on the set's shape.
    #[inline(always)]
    pub fn choose<R: Rng + ?Sized>(self, rng: &mut R) -> Option<Card> {
        let x = self.0;
        if x == 0 {
            return None;
        }
        // Most legal sets lie in one suit (following suit): then one table lookup gives the
        // count and the positions. Other sets take the general broadword path.
        let base = 13 * (x.trailing_zeros() / 13);
        let lane = x >> base;
        if lane <= LANE_MASK {
            let entry = LANES[lane as usize];
            let r = below(rng, (entry & 15) as u32);
            return Card::from_index((base + ((entry >> (4 + 4 * r)) & 15) as u32) as u8);
        }
        let prefix = byte_prefix_counts(x);
        let n = (prefix >> 56) as u32;
        Card::from_index(select(x, prefix, below(rng, n)))
    }

    /// Three distinct cards drawn uniformly (`None` below three cards): one popcount and
    /// three independent selections instead of three dependent draws.
    #[inline]
    pub(crate) fn choose_three<R: Rng + ?Sized>(self, rng: &mut R) -> Option<CardSet> {
        let prefix = byte_prefix_counts(self.0);
        let n = (prefix >> 56) as u32;
        if n < 3 {
            return None;
        }
        // Uniform ordered positions among n, n-1 and n-2 remaining, mapped past the ones
        // already taken.
        let first = below(rng, n);
        let mut second = below(rng, n - 1);
        second += u32::from(second >= first);
        let (low, high) = (first.min(second), first.max(second));
        let mut third = below(rng, n - 2);
        third += u32::from(third >= low);
        third += u32::from(third >= high);
        let bits = (1u64 << select(self.0, prefix, first))
            | (1u64 << select(self.0, prefix, second))
            | (1u64 << select(self.0, prefix, third));
        CardSet::from_bits(bits)
    }

    /// The points of these cards (§5).
    #[inline]
    pub const fn points(self) -> u32 {
        let hearts = (self.0 & CardSet::suit(Suit::Hearts).0).count_ones();
        let queen = if self.contains(Card::QUEEN_OF_SPADES) {
            13
        } else {
            0
        };
        let ten = if self.contains(Card::TEN_OF_DIAMONDS) {
            10
        } else {
            0
        };
        hearts + queen + ten
    }

    /// Iterates over the cards in index order.
    #[inline]
    pub const fn iter(self) -> CardSetIter {
        CardSetIter(self.0)
    }
}

/// Byte `i` of the result is the number of set bits in bytes `0..=i` of `x` (so the top byte
/// is the population count): the classic SWAR count, kept per byte for [`select`].
#[inline]
const fn byte_prefix_counts(x: u64) -> u64 {
    let s = x - ((x >> 1) & 0x5555_5555_5555_5555);
    let s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
    let s = (s + (s >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    s.wrapping_mul(BYTES_ONE)
}

const BYTES_ONE: u64 = 0x0101_0101_0101_0101;
const BYTES_HIGH: u64 = 0x8080_8080_8080_8080;

/// `SELECT_IN_BYTE[b][k]`: the position of the `k`-th set bit of byte `b` (8 if none).
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut k = 0;
        let mut bit = 0;
        while bit < 8 {
            if (byte >> bit) & 1 == 1 {
                table[byte][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// The position of the `r`-th (0-based) set bit of `x`, given `prefix =
/// byte_prefix_counts(x)` and `r < x.count_ones()`. Branch-free broadword selection: the
/// bytes whose inclusive prefix count is at most `r` are exactly the bytes before the one
/// holding the bit, and a table finishes inside that byte. A loop that clears `r` low bits
/// would mispredict its exit on nearly every random pick.
#[inline]
fn select(x: u64, prefix: u64, r: u32) -> u8 {
    debug_assert!(u64::from(r) < prefix >> 56);
    // Per byte: (r + 128) - prefix keeps its high bit iff prefix <= r (both are below 128,
    // so no byte borrows from its neighbour).
    let at_most_r = (((u64::from(r) * BYTES_ONE) | BYTES_HIGH) - prefix) & BYTES_HIGH;
    let byte = ((at_most_r >> 7).wrapping_mul(BYTES_ONE) >> 56) as u32;
    // The count before that byte: the prefix shifted up one byte, read at `byte`.
    let before = ((prefix << 8) >> (8 * byte)) & 0xff;
    let within = (r - before as u32) as usize;
    let bits = ((x >> (8 * byte)) & 0xff) as usize;
    8 * byte as u8 + SELECT_IN_BYTE[bits][within & 7]
}

/// One suit's 13 bits.
pub(crate) const LANE_MASK: u64 = (1 << 13) - 1;

/// `LANES[v]`, for a 13-bit suit lane `v`: bits 0..4 hold the number of set bits, and each
/// following nibble `k` the position of the `k`-th set bit. 64 KiB, built at compile time.
pub(crate) static LANES: [u64; 8192] = {
    let mut table = [0u64; 8192];
    let mut lane = 0;
    while lane < 8192 {
        let mut entry = 0u64;
        let mut count = 0u64;
        let mut bit = 0;
        while bit < 13 {
            if (lane >> bit) & 1 == 1 {
                entry |= (bit as u64) << (4 + 4 * count);
                count += 1;
            }
            bit += 1;
        }
        table[lane] = entry | count;
        lane += 1;
    }
    table
};

/// A hand's four lane entries with their running counts: after four lookups, the `r`-th
/// card is a couple of comparisons and one nibble away.
#[derive(Clone, Copy)]
pub(crate) struct LaneIndex {
    entries: [u64; 4],
    /// Cards in the lanes before lane `i`.
    before: [u32; 4],
    /// Cards in all lanes.
    pub(crate) size: u32,
}

impl LaneIndex {
    #[inline(always)]
    pub(crate) fn new(hand: u64) -> LaneIndex {
        let entries = [
            LANES[(hand & LANE_MASK) as usize],
            LANES[((hand >> 13) & LANE_MASK) as usize],
            LANES[((hand >> 26) & LANE_MASK) as usize],
            LANES[((hand >> 39) & LANE_MASK) as usize],
        ];
        let c0 = (entries[0] & 15) as u32;
        let c1 = c0 + (entries[1] & 15) as u32;
        let c2 = c1 + (entries[2] & 15) as u32;
        LaneIndex {
            entries,
            before: [0, c0, c1, c2],
            size: c2 + (entries[3] & 15) as u32,
        }
    }

    /// The index of the `r`-th card (`r < size`).
    #[inline(always)]
    pub(crate) fn nth(&self, r: u32) -> u32 {
        let [_, c0, c1, c2] = self.before;
        let lane = u32::from(r >= c0) + u32::from(r >= c1) + u32::from(r >= c2);
        let base = self.before[lane as usize & 3];
        let entry = self.entries[lane as usize & 3];
        13 * lane + ((entry >> (4 + 4 * (r - base))) & 15) as u32
    }
}

/// The number of cards of `hand`.
#[inline(always)]
pub(crate) fn size(hand: u64) -> u32 {
    (0..4)
        .map(|lane| (LANES[((hand >> (13 * lane)) & LANE_MASK) as usize] & 15) as u32)
        .sum()
}

/// Iterator over a [`CardSet`], in index order.
#[derive(Clone, Debug)]
pub struct CardSetIter(u64);

impl Iterator for CardSetIter {
    type Item = Card;

    #[inline]
    fn next(&mut self) -> Option<Card> {
        let card = CardSet(self.0).lowest()?;
        self.0 &= self.0 - 1;
        Some(card)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for CardSetIter {
    #[inline]
    fn next_back(&mut self) -> Option<Card> {
        let card = CardSet(self.0).highest()?;
        self.0 &= !(1 << card.index());
        Some(card)
    }
}

impl ExactSizeIterator for CardSetIter {}

impl std::iter::FusedIterator for CardSetIter {}

impl IntoIterator for CardSet {
    type Item = Card;
    type IntoIter = CardSetIter;

    fn into_iter(self) -> CardSetIter {
        self.iter()
    }
}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> CardSet {
        let mut set = CardSet::EMPTY;
        set.extend(iter);
        set
    }
}

impl Extend<Card> for CardSet {
    fn extend<I: IntoIterator<Item = Card>>(&mut self, iter: I) {
        for card in iter {
            self.insert(card);
        }
    }
}

impl From<Card> for CardSet {
    fn from(card: Card) -> CardSet {
        CardSet::single(card)
    }
}

/// A set operator and its assigning form, both the named `const` method (`a | b` is
/// `a.union(b)`), so that the operators and the methods cannot disagree.
macro_rules! set_operator {
    ($op:ident :: $op_fn:ident, $assign:ident :: $assign_fn:ident, $method:ident) => {
        impl $op for CardSet {
            type Output = CardSet;
            #[inline]
            fn $op_fn(self, rhs: CardSet) -> CardSet {
                self.$method(rhs)
            }
        }

        impl $assign for CardSet {
            #[inline]
            fn $assign_fn(&mut self, rhs: CardSet) {
                *self = self.$method(rhs);
            }
        }
    };
}

set_operator!(BitOr::bitor, BitOrAssign::bitor_assign, union);
set_operator!(BitAnd::bitand, BitAndAssign::bitand_assign, intersection);
set_operator!(Sub::sub, SubAssign::sub_assign, difference);

impl Not for CardSet {
    type Output = CardSet;
    #[inline]
    fn not(self) -> CardSet {
        self.complement()
    }
}

impl fmt::Display for CardSet {
    /// The codes separated by single spaces, in index order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, card) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(card.code())?;
        }
        Ok(())
    }
}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CardSet[{self}]")
    }
}

impl FromStr for CardSet {
    type Err = ParseCardError;

    /// Parses card codes separated by whitespace (`"QS 10D td"`); repeats are merged.
    fn from_str(s: &str) -> Result<CardSet, ParseCardError> {
        s.split_whitespace().map(str::parse::<Card>).collect()
    }
}

impl Serialize for CardSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for CardSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CardSet, D::Error> {
        struct SetVisitor;

        impl<'de> serde::de::Visitor<'de> for SetVisitor {
            type Value = CardSet;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of distinct card codes")
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<CardSet, A::Error> {
                let mut set = CardSet::EMPTY;
                while let Some(card) = seq.next_element::<Card>()? {
                    if !set.insert(card) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate card {card} in a card set"
                        )));
                    }
                }
                Ok(set)
            }
        }

        deserializer.deserialize_seq(SetVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn above_is_strict_and_stays_in_suit() {
        let above_queen = CardSet::above(Rank::Queen, Suit::Spades);
        assert_eq!(above_queen.to_string(), "KS AS");
        assert!(CardSet::above(Rank::Ace, Suit::Clubs).is_empty());
        assert_eq!(CardSet::above(Rank::Two, Suit::Hearts).len(), 12);
    }

    #[test]
    fn select_agrees_with_iteration_on_many_sets() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let set = CardSet(x & CardSet::FULL.0);
            let listed: Vec<Card> = set.iter().collect();
            for (n, card) in listed.iter().enumerate() {
                assert_eq!(set.nth(n), Some(*card));
            }
            assert_eq!(set.nth(listed.len()), None);
        }
    }

    #[test]
    fn choose_three_draws_three_distinct_members_covering_the_set() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let set: CardSet = "QS AS 4S AH 10D".parse().unwrap();
        let mut seen = CardSet::EMPTY;
        for _ in 0..500 {
            let three = set.choose_three(&mut rng).unwrap();
            assert_eq!(three.len(), 3);
            assert!(three.is_subset(set));
            seen |= three;
        }
        assert_eq!(seen, set);
        assert_eq!(
            "QS AS".parse::<CardSet>().unwrap().choose_three(&mut rng),
            None
        );
    }

    #[test]
    fn nth_walks_in_index_order() {
        let set: CardSet = [3u8, 17, 40]
            .iter()
            .filter_map(|&i| Card::from_index(i))
            .collect();
        let listed: Vec<Card> = (0..4).filter_map(|n| set.nth(n)).collect();
        assert_eq!(listed, set.iter().collect::<Vec<_>>());
        assert_eq!(set.iter().next_back(), set.highest());
    }
}
