//! Seeds and deals (§2.1): every random draw of a game comes from its [`Seed`].
//!
//! The derivation is part of the replay contract and must never change for stored games:
//! a ChaCha8 stream keyed by the seed, stream 0 for the first dealer and stream `r` for
//! round `r`. The shuffle is our own partial Fisher–Yates with Lemire's unbiased bounded
//! draw rather than a library shuffle, so that a library upgrade cannot change the deals.

use std::fmt;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::cardset::CardSet;
use super::seat::{BySeat, Seat};

/// The 32-byte secret from which every deal of a game is drawn. The server draws it from a
/// CSPRNG; it is stored with the game (as 64 lowercase hex digits) and must never reach a
/// player while the game runs, so `Debug` does not print it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Seed([u8; 32]);

impl Seed {
    /// Wraps raw bytes.
    pub const fn new(bytes: [u8; 32]) -> Seed {
        Seed(bytes)
    }

    /// The raw bytes.
    pub const fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(char::from(DIGITS[usize::from(byte >> 4)]));
            out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
        }
        out
    }

    /// Parses 64 hex digits (either case).
    pub fn from_hex(hex: &str) -> Option<Seed> {
        let digits = hex.as_bytes();
        if digits.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
            let high = char::from(pair[0]).to_digit(16)?;
            let low = char::from(pair[1]).to_digit(16)?;
            // Two hex digits always fit a byte.
            *byte = (high * 16 + low) as u8;
        }
        Some(Seed(bytes))
    }

    /// The random stream of round `round` (1-based); stream 0 is the game's own draws.
    fn stream(&self, stream: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(self.0);
        rng.set_stream(stream);
        rng
    }

    /// The dealer of round 1, drawn from stream 0.
    pub fn first_dealer(&self) -> Seat {
        let n = below(&mut self.stream(0), 4);
        Seat::ALL[n as usize]
    }

    /// The four hands of round `round`, drawn from stream `round`.
    pub fn deal(&self, round: u32) -> BySeat<CardSet> {
        deal(&mut self.stream(u64::from(round)))
    }
}

impl From<[u8; 32]> for Seed {
    fn from(bytes: [u8; 32]) -> Seed {
        Seed(bytes)
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(<redacted>)")
    }
}

impl Serialize for Seed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Seed {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Seed, D::Error> {
        let hex = String::deserialize(deserializer)?;
        Seed::from_hex(&hex)
            .ok_or_else(|| serde::de::Error::custom("a seed is 64 hexadecimal digits"))
    }
}

/// A uniform integer in `0..n` (`n > 0`), by Lemire's multiply-and-reject method: unbiased,
/// and almost never divides.
#[inline(always)]
pub(crate) fn below<R: Rng + ?Sized>(rng: &mut R, n: u32) -> u32 {
    debug_assert!(n > 0);
    let mut product = u64::from(rng.next_u32()) * u64::from(n);
    if (product as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (product as u32) < threshold {
            product = u64::from(rng.next_u32()) * u64::from(n);
        }
    }
    (product >> 32) as u32
}

/// The card indices in dealing order: positions `13 i .. 13 i + 13` go to seat `i`.
#[inline]
pub(crate) fn shuffled_deck<R: Rng + ?Sized>(rng: &mut R) -> [u8; 52] {
    let mut deck: [u8; 52] = std::array::from_fn(|i| i as u8);
    for i in 0..39 {
        let j = i + below(rng, (52 - i) as u32) as usize;
        deck.swap(i, j);
    }
    deck
}

/// Shuffles the deck and deals 13 cards to each seat.
///
/// A partial Fisher–Yates: the first 39 positions are drawn, the last 13 are what remains.
/// Seat `i` gets positions `13 i .. 13 i + 13`.
pub fn deal<R: Rng + ?Sized>(rng: &mut R) -> BySeat<CardSet> {
    let deck = shuffled_deck(rng);
    let mut hands = [0u64; 4];
    for (hand, cards) in hands.iter_mut().zip(deck.chunks_exact(13)) {
        for &card in cards {
            *hand |= 1 << card;
        }
    }
    // Every index is below 52, so the sets are valid.
    BySeat::new(hands.map(|bits| CardSet::from_bits(bits).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deal_partitions_the_deck() {
        let seed = Seed::new([7; 32]);
        for round in 1..20 {
            let hands = seed.deal(round);
            let mut all = CardSet::EMPTY;
            for hand in hands.iter() {
                assert_eq!(hand.len(), 13);
                assert!(all.is_disjoint(*hand));
                all |= *hand;
            }
            assert_eq!(all, CardSet::FULL);
        }
        assert_ne!(seed.deal(1), seed.deal(2));
        assert_eq!(seed.deal(3), Seed::new([7; 32]).deal(3));
    }

    #[test]
    fn hex_round_trips_and_debug_hides_the_seed() {
        let seed = Seed::new(std::array::from_fn(|i| (i * 37) as u8));
        assert_eq!(Seed::from_hex(&seed.to_hex()), Some(seed));
        assert_eq!(Seed::from_hex(&seed.to_hex().to_uppercase()), Some(seed));
        assert!(!format!("{seed:?}").contains(&seed.to_hex()[..8]));
        assert_eq!(Seed::from_hex("zz"), None);
    }
}
