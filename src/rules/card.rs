//! Suits, ranks and cards, with the wire codes of the rule book (§1).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One of the four suits. The discriminant is the suit's block in a
/// [`CardSet`](super::CardSet): clubs are bits 0..13, diamonds 13..26, and so on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suit {
    /// ♣, code `C`.
    Clubs = 0,
    /// ♦, code `D` (holds the red Leekha, `10D`).
    Diamonds = 1,
    /// ♥, code `H` (each heart is worth one point).
    Hearts = 2,
    /// ♠, code `S` (holds the black Leekha, `QS`).
    Spades = 3,
}

impl Suit {
    /// The four suits in index order.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The suit with this index (0..4), if any.
    #[inline]
    pub const fn from_index(index: u8) -> Option<Suit> {
        match index {
            0 => Some(Suit::Clubs),
            1 => Some(Suit::Diamonds),
            2 => Some(Suit::Hearts),
            3 => Some(Suit::Spades),
            _ => None,
        }
    }

    /// The suit's index (0..4).
    #[inline]
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The one-letter wire code: `C`, `D`, `H` or `S`.
    pub const fn char(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    /// The suit's English name in the plural ("spades"), for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Suit::Clubs => "clubs",
            Suit::Diamonds => "diamonds",
            Suit::Hearts => "hearts",
            Suit::Spades => "spades",
        }
    }

    /// The suit's English name in the singular ("a spade"), for messages.
    pub const fn singular(self) -> &'static str {
        match self {
            Suit::Clubs => "a club",
            Suit::Diamonds => "a diamond",
            Suit::Hearts => "a heart",
            Suit::Spades => "a spade",
        }
    }

    /// The Leekha of this suit: `QS` for spades, `10D` for diamonds.
    #[inline]
    pub const fn leekha(self) -> Option<Card> {
        match self {
            Suit::Spades => Some(Card::QUEEN_OF_SPADES),
            Suit::Diamonds => Some(Card::TEN_OF_DIAMONDS),
            Suit::Clubs | Suit::Hearts => None,
        }
    }

    /// Parses a suit letter, in either case.
    pub const fn from_char(c: char) -> Option<Suit> {
        match c {
            'C' | 'c' => Some(Suit::Clubs),
            'D' | 'd' => Some(Suit::Diamonds),
            'H' | 'h' => Some(Suit::Hearts),
            'S' | 's' => Some(Suit::Spades),
            _ => None,
        }
    }
}

impl fmt::Display for Suit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// A rank, from [`Rank::Two`] (lowest) to [`Rank::Ace`] (highest). The discriminant (counted
/// up from 0 in declaration order) is the offset inside the suit's block of a
/// [`CardSet`](super::CardSet), so a higher bit is a higher card of the same suit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rank {
    /// 2
    Two = 0,
    /// 3
    Three,
    /// 4
    Four,
    /// 5
    Five,
    /// 6
    Six,
    /// 7
    Seven,
    /// 8
    Eight,
    /// 9
    Nine,
    /// 10 (code `10`; `T` is accepted on input)
    Ten,
    /// Jack, `J`
    Jack,
    /// Queen, `Q`
    Queen,
    /// King, `K`
    King,
    /// Ace, `A` (the highest)
    Ace,
}

impl Rank {
    /// The thirteen ranks, lowest first.
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// The rank with this index (0 = two … 12 = ace), if any.
    #[inline]
    pub const fn from_index(index: u8) -> Option<Rank> {
        if index < 13 {
            Some(Rank::ALL[index as usize])
        } else {
            None
        }
    }

    /// The rank's index (0 = two … 12 = ace).
    #[inline]
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The canonical wire code of the rank: `2`…`10`, `J`, `Q`, `K`, `A`.
    pub const fn code(self) -> &'static str {
        match self {
            Rank::Two => "2",
            Rank::Three => "3",
            Rank::Four => "4",
            Rank::Five => "5",
            Rank::Six => "6",
            Rank::Seven => "7",
            Rank::Eight => "8",
            Rank::Nine => "9",
            Rank::Ten => "10",
            Rank::Jack => "J",
            Rank::Queen => "Q",
            Rank::King => "K",
            Rank::Ace => "A",
        }
    }

    /// Parses a rank code in either case; `T` is accepted for ten.
    pub fn from_code(code: &str) -> Option<Rank> {
        Some(match code {
            "2" => Rank::Two,
            "3" => Rank::Three,
            "4" => Rank::Four,
            "5" => Rank::Five,
            "6" => Rank::Six,
            "7" => Rank::Seven,
            "8" => Rank::Eight,
            "9" => Rank::Nine,
            "10" | "T" | "t" => Rank::Ten,
            "J" | "j" => Rank::Jack,
            "Q" | "q" => Rank::Queen,
            "K" | "k" => Rank::King,
            "A" | "a" => Rank::Ace,
            _ => return None,
        })
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One of the 52 cards: an index `suit * 13 + rank` in `0..52`, the card's bit in a
/// [`CardSet`](super::CardSet).
///
/// On the wire a card is its code (`QS`, `10D`, `AH`): [`FromStr`] also accepts `T` for ten
/// and lower case, [`Display`](fmt::Display) and serde always write the canonical form.
///
/// ```
/// use leekha::rules::{Card, Rank, Suit};
///
/// let ten: Card = "td".parse().unwrap();
/// assert_eq!(ten, Card::new(Rank::Ten, Suit::Diamonds));
/// assert_eq!(ten.to_string(), "10D");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(u8);

/// The 52 canonical codes, in [`Card::index`] order (all clubs from 2 to ace, then diamonds,
/// hearts, spades). Handy for schemas that enumerate the codes.
pub const CARD_CODES: [&str; 52] = [
    "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", "AC", //
    "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", "AD", //
    "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", "AH", //
    "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS", "AS",
];

impl Card {
    /// The black Leekha, `QS` (13 points).
    pub const QUEEN_OF_SPADES: Card = Card::new(Rank::Queen, Suit::Spades);
    /// The red Leekha, `10D` (10 points).
    pub const TEN_OF_DIAMONDS: Card = Card::new(Rank::Ten, Suit::Diamonds);

    /// The card of this rank and suit.
    #[inline]
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank as u8)
    }

    /// The card with this index (`0..52`), if any.
    #[inline]
    pub const fn from_index(index: u8) -> Option<Card> {
        if index < 52 { Some(Card(index)) } else { None }
    }

    /// The card's index in `0..52` (its bit in a [`CardSet`](super::CardSet)).
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The card's suit.
    #[inline]
    pub const fn suit(self) -> Suit {
        match Suit::from_index(self.0 / 13) {
            Some(suit) => suit,
            // Unreachable: the constructors keep the index below 52.
            None => Suit::Spades,
        }
    }

    /// The card's rank.
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank::ALL[(self.0 % 13) as usize]
    }

    /// The canonical wire code (`10D`, never `TD`).
    #[inline]
    pub const fn code(self) -> &'static str {
        CARD_CODES[self.0 as usize]
    }

    /// The points this card is worth (§5): `QS` 13, `10D` 10, a heart 1, else 0.
    #[inline]
    pub const fn points(self) -> u32 {
        if self.0 == Card::QUEEN_OF_SPADES.0 {
            13
        } else if self.0 == Card::TEN_OF_DIAMONDS.0 {
            10
        } else if self.0 / 13 == Suit::Hearts as u8 {
            1
        } else {
            0
        }
    }

    /// Whether this card is one of the two Leekhas.
    #[inline]
    pub const fn is_leekha(self) -> bool {
        self.0 == Card::QUEEN_OF_SPADES.0 || self.0 == Card::TEN_OF_DIAMONDS.0
    }

    /// All 52 cards in index order (the order of [`CARD_CODES`]).
    pub fn all() -> impl DoubleEndedIterator<Item = Card> + ExactSizeIterator + Clone {
        (0..52u8).map(Card)
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Why a card code did not parse; see [`ParseCardError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseCardErrorKind {
    /// The code was empty.
    Empty,
    /// The code had a suit letter but nothing before it.
    MissingRank,
    /// The last character is not one of `C`, `D`, `H`, `S`.
    UnknownSuit(char),
    /// The part before the suit is not a rank (`2`…`10`, `T`, `J`, `Q`, `K`, `A`).
    UnknownRank(String),
}

/// A card code that does not name a card, with the offending input (cut to 16 characters)
/// and the precise reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid card code {input:?}: {}", describe(.kind))]
pub struct ParseCardError {
    /// The input, cut to at most 16 characters so a hostile input cannot bloat messages.
    pub input: String,
    /// What is wrong with it.
    pub kind: ParseCardErrorKind,
}

fn describe(kind: &ParseCardErrorKind) -> String {
    match kind {
        ParseCardErrorKind::Empty => "empty code".to_owned(),
        ParseCardErrorKind::MissingRank => "missing rank before the suit".to_owned(),
        ParseCardErrorKind::UnknownSuit(c) => {
            format!("unknown suit {c:?} (expected C, D, H or S as the last character)")
        }
        ParseCardErrorKind::UnknownRank(r) => {
            format!("unknown rank {r:?} (expected 2-10, T, J, Q, K or A)")
        }
    }
}

impl FromStr for Card {
    type Err = ParseCardError;

    fn from_str(s: &str) -> Result<Card, ParseCardError> {
        let error = |kind| ParseCardError {
            input: s.chars().take(16).collect(),
            kind,
        };
        let Some((suit_at, suit_char)) = s.char_indices().next_back() else {
            return Err(error(ParseCardErrorKind::Empty));
        };
        let suit = Suit::from_char(suit_char)
            .ok_or_else(|| error(ParseCardErrorKind::UnknownSuit(suit_char)))?;
        let rank_code = &s[..suit_at];
        if rank_code.is_empty() {
            return Err(error(ParseCardErrorKind::MissingRank));
        }
        let rank = Rank::from_code(rank_code).ok_or_else(|| {
            error(ParseCardErrorKind::UnknownRank(
                rank_code.chars().take(8).collect(),
            ))
        })?;
        Ok(Card::new(rank, suit))
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Card, D::Error> {
        struct CodeVisitor;

        impl serde::de::Visitor<'_> for CodeVisitor {
            type Value = Card;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a card code such as \"QS\" or \"10D\"")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Card, E> {
                v.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(CodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_parse_and_display() {
        for (card, code) in Card::all().zip(CARD_CODES) {
            assert_eq!(card.code(), code);
            assert_eq!(code.parse::<Card>(), Ok(card));
            assert_eq!(code.to_lowercase().parse::<Card>(), Ok(card));
        }
    }

    #[test]
    fn points_match_the_rule_book() {
        let total: u32 = Card::all().map(Card::points).sum();
        assert_eq!(total, 36);
        assert_eq!(Card::QUEEN_OF_SPADES.points(), 13);
        assert_eq!(Card::TEN_OF_DIAMONDS.points(), 10);
    }
}
