//! [`Position`]: plain data to set up a game mid-round, for tests and tools.

use super::cardset::CardSet;
use super::game::Phase;
use super::options::RuleOptions;
use super::seat::{BySeat, Seat};
use super::trick::Trick;

/// A game position as plain data, turned into a [`Game`](super::Game) by
/// [`Game::from_position`](super::Game::from_position). **For tests and tools** (rule
/// vectors, puzzles, bot training); a real game starts with [`Game::new`](super::Game::new).
///
/// The position need not hold all 52 cards (a test may give each seat four), but it must
/// be sound, else `from_position` refuses it:
/// - no card in two places (hands, taken cards, the trick, pending passes);
/// - passing: the round has a pass direction, nothing was played, every seat holds the
///   same number of cards (counting a committed pass), at least 3, and not all four have
///   committed; the trick's leader is the dealer's right;
/// - playing: the trick has at most 3 cards, the seat to play holds a card, and the seats
///   that played this trick hold one card less than the others; recorded passes are all
///   four or none;
/// - taken cards are whole tricks, and a last trick is complete and with its winner, who
///   leads the current trick.
///
/// ```
/// use leekha::rules::{BySeat, CardSet, Game, Position, RuleOptions, Seat, Trick};
///
/// let cards = |codes: &str| codes.parse::<CardSet>().unwrap();
/// let leader = Seat::ALL[0];
/// let game = Game::from_position(Position {
///     hands: BySeat::new([cards("2C"), cards("QS 3S"), cards("4D 5D"), cards("6H 7H")]),
///     trick: Trick::from_cards(leader, &["5S".parse().unwrap()]).unwrap(),
///     ..Position::new(RuleOptions::default())
/// })
/// .unwrap();
/// assert_eq!(game.legal_plays(Seat::ALL[1]), cards("QS 3S"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The rule set.
    pub options: RuleOptions,
    /// The seed for the following rounds' deals.
    pub seed: [u8; 32],
    /// The round number, from 1 (it decides the pass direction under `alternate`).
    pub round: u32,
    /// The dealer.
    pub dealer: Seat,
    /// [`Phase::Passing`] or [`Phase::Playing`].
    pub phase: Phase,
    /// The totals of the rounds already scored.
    pub totals: BySeat<u32>,
    /// The cards each seat holds (without a committed pending pass).
    pub hands: BySeat<CardSet>,
    /// The committed passes of this round.
    pub passes: BySeat<Option<CardSet>>,
    /// The cards each seat took this round.
    pub won: BySeat<CardSet>,
    /// The trick in progress.
    pub trick: Trick,
    /// The last completed trick of this round.
    pub last_trick: Option<Trick>,
}

impl Position {
    /// An empty position under `options`: round 1, dealer seat 3 (so seat 0 leads), playing
    /// phase, no cards anywhere, zero totals, seed all zeros. Fill in what the test needs.
    pub fn new(options: RuleOptions) -> Position {
        let dealer = Seat::ALL[3];
        Position {
            options,
            seed: [0; 32],
            round: 1,
            dealer,
            phase: Phase::Playing,
            totals: BySeat::default(),
            hands: BySeat::default(),
            passes: BySeat::default(),
            won: BySeat::default(),
            trick: Trick::new(dealer.right()),
            last_trick: None,
        }
    }

    /// The cards placed nowhere yet: handy to fill the other seats' hands.
    pub fn unplaced(&self) -> CardSet {
        let mut placed = self.trick.set();
        for seat in Seat::ALL {
            placed |= self.hands[seat] | self.won[seat] | self.passes[seat].unwrap_or_default();
        }
        !placed
    }

    /// Gives `seat` the `count` lowest unplaced cards that are not in `avoid`, and returns
    /// the position: a quick way to complete hands around the cards a test is about.
    #[must_use]
    pub fn fill(mut self, seat: Seat, count: usize, avoid: CardSet) -> Position {
        let extra: CardSet = (self.unplaced() - avoid)
            .iter()
            .take(count)
            .collect::<CardSet>();
        self.hands[seat] |= extra;
        self
    }
}
