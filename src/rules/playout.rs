//! [`Playout`]: a lean simulator that finishes one round with random legal moves, for bots
//! (Monte Carlo evaluation) and benchmarks.
//!
//! [`Game`] is the reference: it validates, records and scores. A bot that evaluates a move
//! by thousands of random playouts needs something leaner. The rules are the same ones (the
//! masks come from [`legality`]); what differs is the machinery:
//! - a uniformly random card of one suit is one lookup in a table indexed by the suit's
//!   13-bit lane (count and positions packed in a word) instead of a popcount and a bit
//!   select;
//! - random numbers are drawn 16 bits at a time from 64-bit words (Lemire's method with
//!   rejection, so still exactly uniform), a quarter of the generator calls.
//!
//! The property tests replay every playout's moves through [`Game::apply`] and require each
//! one to be accepted and the round points to match.

use rand::Rng;

use super::card::{Card, Suit};
use super::cardset::{CardSet, LANE_MASK, LANES, LaneIndex, nth_card, size};
use super::event::{Event, EventSink};
use super::game::{Game, Phase};
use super::legality;
use super::options::{Direction, PassRestriction, RuleOptions, Talbees};
use super::seat::{BySeat, Seat};

/// Points of each card index (§5); 64 entries so that indexing by `card & 63` needs no
/// bounds check.
static POINTS: [u8; 64] = {
    let mut points = [0u8; 64];
    let mut i = 0;
    while i < 52 {
        if let Some(card) = Card::from_index(i as u8) {
            points[i] = card.points() as u8;
        }
        i += 1;
    }
    points
};

#[inline(always)]
fn card_of(index: u32) -> Card {
    // Every index computed here is below 52.
    Card::from_index(index as u8).unwrap_or(Card::QUEEN_OF_SPADES)
}

#[inline(always)]
fn set_of(bits: u64) -> CardSet {
    CardSet::from_bits(bits).unwrap_or_default()
}

/// Random numbers below small bounds, 16 bits at a time from 64-bit draws.
struct Pool<'a, R: Rng + ?Sized> {
    rng: &'a mut R,
    bits: u64,
    left: u32,
}

impl<R: Rng + ?Sized> Pool<'_, R> {
    /// A uniform integer in `0..n`, `0 < n <= 52`: Lemire's multiply-and-reject on 16 bits.
    #[inline(always)]
    fn below(&mut self, n: u32) -> u32 {
        loop {
            if self.left == 0 {
                self.bits = self.rng.next_u64();
                self.left = 4;
            }
            let product = (self.bits as u32 & 0xffff) * n;
            self.bits >>= 16;
            self.left -= 1;
            // Reject the few low products that would bias the result (at most n in 65536).
            if (product & 0xffff) >= n || (product & 0xffff) >= (0x1_0000 - n) % n {
                return product >> 16;
            }
        }
    }
}

/// The rest of one round, set up for fast random play: from a fresh deal
/// ([`Playout::deal`]) or from any position of a game ([`Playout::from_game`]).
/// [`Playout::run`] plays it out — pending passes first, then every trick — with uniformly
/// random legal moves and returns the round's points.
///
/// ```
/// use leekha::rules::{Discard, Playout, RuleOptions, Seat};
/// use rand::SeedableRng;
///
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let mut playout = Playout::deal(&RuleOptions::default(), 1, Seat::ALL[3], &mut rng);
/// let points = playout.run(&mut rng, &mut Discard);
/// assert_eq!(points.iter().sum::<u32>(), 36);
/// ```
#[derive(Clone, Debug)]
pub struct Playout {
    hands: [u64; 4],
    /// Passes committed before the playout (cards in transit), by seat.
    pending: [Option<u64>; 4],
    /// The direction of the passes still to make; `None` once passing is over (or absent).
    direction: Option<Direction>,
    forced: u64,
    talbees: bool,
    restricted: bool,
    trick: TrickState,
    /// How many cards the seat to play holds: every seat that has not played in the current
    /// trick holds this many, so it is tracked instead of counted.
    remaining: u32,
    points: [u32; 4],
}

/// The trick in progress, as plain numbers.
#[derive(Clone, Copy, Debug)]
struct TrickState {
    leader: u32,
    played: u32,
    led: u32,
    best_card: u32,
    best_seat: u32,
    points: u32,
    /// The cards in play order, one byte each (for events).
    cards: u32,
    set: u64,
}

impl TrickState {
    const fn new(leader: u32) -> TrickState {
        TrickState {
            leader,
            played: 0,
            led: 0,
            best_card: 0,
            best_seat: leader,
            points: 0,
            cards: 0,
            set: 0,
        }
    }

    #[inline(always)]
    fn push<S: EventSink>(&mut self, seat: u32, card: u32) {
        if self.played == 0 {
            self.led = card / 13;
            self.best_card = card;
            self.best_seat = seat;
        } else if (card / 13 == self.led) & (card > self.best_card) {
            self.best_card = card;
            self.best_seat = seat;
        }
        self.points += u32::from(POINTS[card as usize & 63]);
        if S::KEEPS_EVENTS {
            self.cards |= card << (8 * self.played);
        }
        self.set |= 1 << card;
        self.played += 1;
    }
}

impl Playout {
    fn empty(options: &RuleOptions, leader: Seat) -> Playout {
        Playout {
            hands: [0; 4],
            pending: [None; 4],
            direction: None,
            forced: options.forced_leekha.cards().bits(),
            talbees: options.talbees == Talbees::On,
            restricted: options.pass_restriction == PassRestriction::On,
            trick: TrickState::new(u32::from(leader.number())),
            remaining: 0,
            points: [0; 4],
        }
    }

    /// A fresh deal for round `round` (its pass direction follows `options`) with `dealer`,
    /// drawn from `rng` — any fast generator will do: this is a simulation, not a game.
    pub fn deal<R: Rng + ?Sized>(
        options: &RuleOptions,
        round: u32,
        dealer: Seat,
        rng: &mut R,
    ) -> Playout {
        let mut playout = Playout::empty(options, dealer.right());
        let mut pool = Pool {
            rng,
            bits: 0,
            left: 0,
        };
        // The partial Fisher–Yates of `deal`, with 16-bit draws.
        // 64 slots so that the random index needs no bounds check.
        let mut deck: [u8; 64] = std::array::from_fn(|i| i as u8);
        for i in 0..39 {
            let j = (i + pool.below((52 - i) as u32) as usize) & 63;
            deck.swap(i, j);
        }
        for (hand, cards) in playout.hands.iter_mut().zip(deck.chunks_exact(13)) {
            *hand = cards.iter().fold(0, |bits, &card| bits | 1 << card);
        }
        playout.direction = options.pass_direction.for_round(round);
        playout
    }

    /// The current round of `game` from where it stands (pending passes, a trick in
    /// progress, points already taken), or `None` once the game is over. A bot would first
    /// replace the hidden hands by a sample consistent with its view.
    pub fn from_game(game: &Game) -> Option<Playout> {
        let trick = game.trick();
        let mut playout = Playout::empty(game.options(), trick.leader());
        for seat in Seat::ALL {
            playout.hands[seat.index()] = game.hand(seat).bits();
            playout.points[seat.index()] = game.taken(seat).points();
        }
        match game.phase() {
            Phase::Finished => return None,
            Phase::Passing => {
                playout.direction = game.pass_direction();
                for seat in Seat::ALL {
                    playout.pending[seat.index()] = game.passed(seat).map(CardSet::bits);
                }
            }
            Phase::Playing => {
                for (seat, card) in trick.plays() {
                    playout
                        .trick
                        .push::<Vec<Event>>(u32::from(seat.number()), u32::from(card.index()));
                }
            }
        }
        Some(playout)
    }

    /// Each seat's cards now.
    pub fn hands(&self) -> BySeat<CardSet> {
        BySeat::new(self.hands.map(set_of))
    }

    /// Plays the round out with uniformly random legal moves — the pending passes first,
    /// then every remaining card — and returns each seat's points for the whole round.
    /// Events go to `sink` (`PassCommitted`, `PassesExchanged`, `CardPlayed`, `TrickWon`;
    /// no scoring events: a playout knows no totals); with [`Discard`](super::Discard)
    /// nothing is built.
    pub fn run<R: Rng + ?Sized, S: EventSink>(&mut self, rng: &mut R, sink: &mut S) -> BySeat<u32> {
        let mut pool = Pool {
            rng,
            bits: 0,
            left: 0,
        };
        if let Some(direction) = self.direction.take()
            && !self.pass(direction, &mut pool, sink)
        {
            return BySeat::new(self.points);
        }
        // The seat to play holds `remaining` cards, as does every seat that has not played
        // in this trick; after the passes, all hold the same number.
        let to_play = (self.trick.leader + self.trick.played) & 3;
        self.remaining = size(self.hands[to_play as usize]);
        while self.remaining != 0 {
            let seat = (self.trick.leader + self.trick.played) & 3;
            let hand = self.hands[seat as usize];
            let card = self.choose(hand, &mut pool);
            self.hands[seat as usize] = hand & !(1 << card);
            sink.push(Event::CardPlayed {
                seat: Seat::ALL[seat as usize],
                card: card_of(card),
            });
            self.trick.push::<S>(seat, card);
            if self.trick.played == 4 {
                self.finish_trick(sink);
                self.remaining -= 1;
            }
        }
        BySeat::new(self.points)
    }

    /// A uniformly random legal card of `hand` for the trick in progress.
    #[inline(always)]
    fn choose<R: Rng + ?Sized>(&self, hand: u64, pool: &mut Pool<'_, R>) -> u32 {
        if self.trick.played != 0 {
            let led = self.trick.led;
            let lane = (hand >> (13 * led)) & LANE_MASK;
            if lane != 0 {
                if self.talbees
                    && let Some(leekha) = self.talbees_card(hand, led)
                {
                    return leekha;
                }
                let entry = LANES[lane as usize];
                let r = pool.below((entry & 15) as u32);
                return 13 * led + ((entry >> (4 + 4 * r)) & 15) as u32;
            }
            let forced = hand & self.forced;
            if forced != 0 {
                // One or both Leekhas: the player's choice, here a coin flip.
                let both = forced & forced.wrapping_sub(1) != 0;
                return if both && pool.below(2) == 1 {
                    63 - forced.leading_zeros()
                } else {
                    forced.trailing_zeros()
                };
            }
        }
        nth_card(hand, pool.below(self.remaining))
    }

    /// The Leekha that talbees forces on a holder of `hand` following `led`, if any.
    #[inline]
    fn talbees_card(&self, hand: u64, led: u32) -> Option<u32> {
        let suit = Suit::from_index(led as u8)?;
        let leekha = suit.leekha()?;
        let above = legality::above_leekha(suit);
        (set_of(hand).contains(leekha) && !set_of(self.trick.set).is_disjoint(above))
            .then_some(u32::from(leekha.index()))
    }

    #[inline]
    fn finish_trick<S: EventSink>(&mut self, sink: &mut S) {
        let trick = self.trick;
        let winner = trick.best_seat & 3;
        self.points[winner as usize] += trick.points;
        sink.push(Event::TrickWon {
            seat: Seat::ALL[winner as usize],
            leader: Seat::ALL[(trick.leader & 3) as usize],
            cards: trick.cards.to_le_bytes().map(|c| card_of(u32::from(c))),
            points: trick.points,
        });
        self.trick = TrickState::new(winner);
    }

    /// Draws and exchanges the passes (each from the pre-pass hands); `false` if some seat
    /// has no legal pass (only possible in odd test positions).
    fn pass<R: Rng + ?Sized, S: EventSink>(
        &mut self,
        direction: Direction,
        pool: &mut Pool<'_, R>,
        sink: &mut S,
    ) -> bool {
        let mut passes = [0u64; 4];
        for seat in Seat::ALL {
            let pass = match self.pending[seat.index()] {
                Some(pending) => pending,
                None => {
                    let Some(pass) = self.draw_pass(self.hands[seat.index()], pool) else {
                        return false;
                    };
                    self.hands[seat.index()] &= !pass;
                    sink.push(Event::PassCommitted {
                        seat,
                        cards: set_of(pass),
                    });
                    pass
                }
            };
            passes[seat.index()] = pass;
        }
        let received = BySeat::from_fn(|to| passes[direction.giver(to).index()]);
        for to in Seat::ALL {
            self.hands[to.index()] |= received[to];
        }
        sink.push(Event::PassesExchanged {
            direction,
            received: received.map(set_of),
        });
        true
    }

    /// A uniformly random legal pass from `hand`: three distinct cards by position, redrawn
    /// until the restriction holds (rejection keeps the choice uniform over legal passes),
    /// with an exhaustive search as a backstop.
    fn draw_pass<R: Rng + ?Sized>(&self, hand: u64, pool: &mut Pool<'_, R>) -> Option<u64> {
        let index = LaneIndex::new(hand);
        let held = index.size;
        if held < 3 {
            return None;
        }
        let cards = set_of(hand);
        for _ in 0..64 {
            let first = pool.below(held);
            let mut second = pool.below(held - 1);
            second += u32::from(second >= first);
            let (low, high) = (first.min(second), first.max(second));
            let mut third = pool.below(held - 2);
            third += u32::from(third >= low);
            third += u32::from(third >= high);
            let pass = (1u64 << index.nth(first))
                | (1u64 << index.nth(second))
                | (1u64 << index.nth(third));
            if !self.restricted || legality::keeps_suits(cards, set_of(pass)) {
                return Some(pass);
            }
        }
        legality::first_legal_pass(cards, self.restricted).map(CardSet::bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_table_selects_like_iteration() {
        for lane in [0u64, 1, 0b1_0110_0000_0001, LANE_MASK, 0b1000_0000_0000] {
            let entry = LANES[lane as usize];
            let bits: Vec<u64> = (0..13).filter(|b| lane >> b & 1 == 1).collect();
            assert_eq!((entry & 15) as usize, bits.len());
            for (k, &b) in bits.iter().enumerate() {
                assert_eq!((entry >> (4 + 4 * k)) & 15, b);
            }
        }
        let hand = "2C 5C 9D QS AS 3H".parse::<CardSet>().unwrap().bits();
        let listed: Vec<u32> = set_of(hand).iter().map(|c| u32::from(c.index())).collect();
        assert_eq!(size(hand), 6);
        for (r, &card) in listed.iter().enumerate() {
            assert_eq!(nth_card(hand, r as u32), card);
        }
    }
}
