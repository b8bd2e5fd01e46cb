//! [`Playout`]: a lean simulator that finishes one round with random legal moves, for bots
//! (Monte Carlo evaluation) and benchmarks.
//!
//! [`Game`] is the reference: it validates, records and scores. A bot that evaluates a move
//! by thousands of random playouts needs something leaner. The rules are the same ones (the
//! pass restriction comes from [`legality`]; the property tests hold the plays to
//! [`Game::apply`]); what differs is the machinery:
//! - the deal is a partial Fisher–Yates whose 42 draws come from 4 generator calls: each
//!   64-bit word yields a fixed batch of bounded integers by successive multiplications,
//!   with one exact rejection test per batch (Lemire's method on the batch's product);
//! - the deal also settles each hand's first pass proposal: the first 3 cards a hand gets
//!   are a uniformly random 3-card subset of it (see [`Playout::deal`]);
//! - during play, each trick takes one 64-bit word from the generator and each of its (at
//!   most four) draws a 16-bit chunk of it, by Lemire's method: exactly uniform, as a
//!   biased chunk (at most 13 in 65536) is redrawn from fresh words on a cold path;
//! - a uniformly random card of one suit is one lookup in a table indexed by the suit's
//!   13-bit lane (count and positions packed in a word) instead of a popcount and a bit
//!   select; a trick is one lead and three follows in straight-line code, with the led
//!   suit's shift and the best rank so far in registers; the last trick, where every seat
//!   has one card, draws nothing;
//! - points are counted once per seat at the end, from the cards each seat took.
//!
//! [`Game::playout_round`] runs on this simulator too: it emits the same events as the
//! game's own moves and leaves the game in the same state (a property test replays its
//! moves through the checked API and compares).
//!
//! The property tests replay every playout's moves through [`Game::apply`] and require each
//! one to be accepted and the round points to match; statistical tests hold the deal, the
//! passes and the plays to uniformity.

use std::hint::select_unpredictable;

use rand::Rng;

use super::card::Card;
use super::cardset::{CardSet, LANE_MASK, LANES, LaneIndex, size};
use super::event::{Event, EventSink};
use super::game::{Game, Phase};
use super::legality;
use super::options::{Direction, PassRestriction, RuleOptions, Talbees};
use super::seat::{BySeat, Seat};

const QUEEN_OF_SPADES: u32 = Card::QUEEN_OF_SPADES.index() as u32;
const TEN_OF_DIAMONDS: u32 = Card::TEN_OF_DIAMONDS.index() as u32;
/// The hearts lane (suit 2).
const HEARTS: u64 = LANE_MASK << 26;

/// The Leekha's rank in each suit's lane (13, beyond any rank, for clubs and hearts): what
/// talbees forces once a higher card of the suit is in the trick.
const LEEKHA_RANK: [u32; 4] = [13, TEN_OF_DIAMONDS % 13, 13, QUEEN_OF_SPADES % 13];

/// The number of cards of each 13-bit lane: the count nibble of [`LANES`], in 8 KiB instead
/// of 64 so that the counting lookups stay in the first-level cache.
static LANE_COUNTS: [u8; 8192] = {
    let mut counts = [0u8; 8192];
    let mut lane = 0;
    while lane < 8192 {
        counts[lane] = (lane as u32).count_ones() as u8;
        lane += 1;
    }
    counts
};

/// The points of a set of cards (§5).
#[inline(always)]
fn points_of(set: u64) -> u32 {
    u32::from(LANE_COUNTS[((set & HEARTS) >> 26) as usize])
        + 13 * ((set >> QUEEN_OF_SPADES) & 1) as u32
        + 10 * ((set >> TEN_OF_DIAMONDS) & 1) as u32
}

#[inline(always)]
fn card_of(index: u32) -> Card {
    // Every index computed here is below 52.
    Card::from_index(index as u8).unwrap_or(Card::QUEEN_OF_SPADES)
}

#[inline(always)]
fn set_of(bits: u64) -> CardSet {
    CardSet::from_bits(bits).unwrap_or_default()
}

/// The `r`-th card (in index order) of `hand`, `r` below its size, as (lane, rank): three
/// counting lookups, the lane by conditional moves, one position lookup.
#[inline(always)]
fn nth(hand: u64, r: u32) -> (u32, u32) {
    let count = |shift: u32| u32::from(LANE_COUNTS[((hand >> shift) & LANE_MASK) as usize]);
    let c0 = count(0);
    let c1 = c0 + count(13);
    let c2 = c1 + count(26);
    let (a, b, c) = (r >= c0, r >= c1, r >= c2);
    let lane = u32::from(a) + u32::from(b) + u32::from(c);
    let base = select_unpredictable(
        c,
        c2,
        select_unpredictable(b, c1, select_unpredictable(a, c0, 0)),
    );
    let entry = LANES[((hand >> (13 * lane)) & LANE_MASK) as usize];
    (lane, ((entry >> (4 + 4 * (r - base))) & 15) as u32)
}

/// Three independent uniform integers in `0..n`, `0..n - 1` and `0..n - 2` (`3 <= n <= 52`)
/// from one 64-bit word: the batched form of Lemire's method (see [`draw_batch`]).
#[inline(always)]
fn draw_three<R: Rng + ?Sized>(n: u32, rng: &mut R) -> (u32, u32, u32) {
    let product = u64::from(n) * u64::from(n - 1) * u64::from(n - 2);
    loop {
        let mut x = rng.next_u64();
        let mut next = |bound: u32| {
            let wide = u128::from(x) * u128::from(bound);
            x = wide as u64;
            (wide >> 64) as u32
        };
        let drawn = (next(n), next(n - 1), next(n - 2));
        // `2^64 mod product` is below `product`: the division is rarely needed.
        if x >= product || x >= product.wrapping_neg() % product {
            return drawn;
        }
    }
}

/// A uniform integer in `0..n` (`0 < n <= 52`) from the 16-bit `chunk` of a random word:
/// Lemire's multiply-and-reject, with fresh words from `rng` in the rare rejection case
/// (at most `n` chunks in 65536). In a trick every draw has its own chunk of one word.
#[inline(always)]
fn below_chunk<R: Rng + ?Sized>(chunk: u64, n: u32, rng: &mut R) -> u32 {
    let product = (chunk as u32 & 0xffff) * n;
    if product & 0xffff < n {
        return below_slow(product, n, rng);
    }
    product >> 16
}

/// The rare end of [`below_chunk`]: accept `product` unless it is one of the biased low
/// ones, then redraw with fresh words.
#[cold]
#[inline(never)]
fn below_slow<R: Rng + ?Sized>(product: u32, n: u32, rng: &mut R) -> u32 {
    let threshold = (0x1_0000 - n) % n;
    let mut product = product;
    while product & 0xffff < threshold {
        product = (rng.next_u64() as u32 & 0xffff) * n;
    }
    product >> 16
}

/// The deal's draws: step `i` of the partial Fisher–Yates picks among the `52 - i` cards
/// left. 42 steps (13 cards for each of three hands, then the first 3 of the fourth hand)
/// in four batches whose bound products stay below 2^58.
const BATCHES: [(usize, usize); 4] = [(0, 10), (10, 11), (21, 12), (33, 9)];

/// For each batch, `2^64 mod p` where `p` is the product of its bounds: a final remainder
/// below it is rejected (and the batch redrawn), which makes the batch exactly uniform.
/// At most 0.9 % of draws are rejected.
const THRESHOLDS: [u64; 4] = {
    let mut thresholds = [0u64; 4];
    let mut b = 0;
    while b < 4 {
        let (start, len) = BATCHES[b];
        let mut product: u128 = 1;
        let mut i = start;
        while i < start + len {
            product *= (52 - i) as u128;
            i += 1;
        }
        assert!(product < 1 << 58);
        let p = product as u64;
        thresholds[b] = p.wrapping_neg() % p;
        b += 1;
    }
    assert!(BATCHES[3].0 + BATCHES[3].1 == 42);
    thresholds
};

/// Draws batch `B` of the deal's random indices: `out[i]` uniform in `0..52 - (start + i)`,
/// all independent. `x * p = R * 2^64 + rest` where `R` is the mixed-radix number of the
/// outputs; rejecting `rest < 2^64 mod p` is Lemire's exact method for `R` in `0..p`.
#[inline(always)]
fn draw_batch<R: Rng + ?Sized, const B: usize, const N: usize>(rng: &mut R) -> [u8; N] {
    let start = BATCHES[B].0;
    loop {
        let mut x = rng.next_u64();
        let mut out = [0u8; N];
        for (i, slot) in out.iter_mut().enumerate() {
            let product = u128::from(x) * (52 - (start + i)) as u128;
            *slot = (product >> 64) as u8;
            x = product as u64;
        }
        if x >= THRESHOLDS[B] {
            return out;
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
#[derive(Debug)]
pub struct Playout {
    hands: [u64; 4],
    /// Passes committed before the playout (cards in transit), by seat; once the passes
    /// are exchanged, every seat's pass of the round.
    pending: [Option<u64>; 4],
    /// A first pass proposal per seat (3 cards), or 0: uniformly random 3-card subsets of
    /// the hands, drawn with the deal. Used once, and not cloned (see [`Clone`]).
    proposals: [u64; 4],
    /// The direction of the passes still to make; `None` once passing is over (or absent).
    direction: Option<Direction>,
    forced: u64,
    talbees: bool,
    restricted: bool,
    trick: TrickState,
    points: [u32; 4],
    /// The cards each seat took during the playout.
    won: [u64; 4],
    /// The last trick completed during the playout: its leader and cards (one byte each).
    last: Option<(u32, u32)>,
}

impl Clone for Playout {
    /// A copy that will draw its own passes: the deal's pass proposals are left out, so
    /// that clones run from one deal make independent passes.
    fn clone(&self) -> Playout {
        Playout {
            proposals: [0; 4],
            ..*self
        }
    }
}

/// What a finished playout leaves for [`Game::playout_round`].
pub(crate) struct Outcome {
    /// Each seat's pass of the round, if the round had passes.
    pub(crate) passes: BySeat<Option<CardSet>>,
    /// The cards each seat took during the playout.
    pub(crate) won: BySeat<CardSet>,
    /// The last trick: its leader and its cards in play order.
    pub(crate) last: Option<(Seat, [Card; 4])>,
}

/// The trick in progress, as plain numbers.
#[derive(Clone, Copy, Debug)]
struct TrickState {
    leader: u32,
    played: u32,
    led: u32,
    best_card: u32,
    best_seat: u32,
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
            cards: 0,
            set: 0,
        }
    }

    fn push(&mut self, seat: u32, card: u32) {
        if self.played == 0 {
            self.led = card / 13;
            self.best_card = card;
            self.best_seat = seat;
        } else if (card / 13 == self.led) & (card > self.best_card) {
            self.best_card = card;
            self.best_seat = seat;
        }
        self.cards |= card << (8 * self.played);
        self.set |= 1 << card;
        self.played += 1;
    }
}

/// The trick being played, in registers: the led suit's shift, the best rank of the led
/// suit so far and who played it, the cards.
#[derive(Clone, Copy)]
struct Current {
    leader: u32,
    shift: u32,
    best_rank: u32,
    best_seat: u32,
    set: u64,
    /// The cards in play order, one byte each (only kept for events).
    cards: u32,
}

impl Playout {
    fn empty(options: &RuleOptions, leader: Seat) -> Playout {
        Playout {
            hands: [0; 4],
            pending: [None; 4],
            proposals: [0; 4],
            direction: None,
            forced: options.forced_leekha.cards().bits(),
            talbees: options.talbees == Talbees::On,
            restricted: options.pass_restriction == PassRestriction::On,
            trick: TrickState::new(u32::from(leader.number())),
            points: [0; 4],
            won: [0; 4],
            last: None,
        }
    }

    /// A fresh deal for round `round` (its pass direction follows `options`) with `dealer`,
    /// drawn from `rng` — any fast generator will do: this is a simulation, not a game.
    ///
    /// A partial Fisher–Yates shuffle: positions `0..13`, `13..26` and `26..39` of the
    /// shuffled deck are the first three hands, and three more steps draw positions
    /// `39..42`, the first cards of the fourth hand (the rest of the deck). Given the hands,
    /// the first 3 cards of each are a uniformly random 3-card subset of it, independent
    /// across seats: the first pass proposals of [`Playout::run`], for free.
    pub fn deal<R: Rng + ?Sized>(
        options: &RuleOptions,
        round: u32,
        dealer: Seat,
        rng: &mut R,
    ) -> Playout {
        let mut playout = Playout::empty(options, dealer.right());
        // 64 slots so that the random index needs no bounds check.
        let mut deck: [u8; 64] = std::array::from_fn(|i| i as u8);
        let mut hands = [0u64; 4];
        let mut proposals = [0u64; 4];
        // Position `i`, the card taken among positions `i..52`: the card at `i + r` moves
        // to position `i` (only its hand records it), and the card at `i` takes its slot.
        let mut step = |i: usize, r: u8| {
            let j = (i + usize::from(r)) & 63;
            let card = deck[j];
            deck[j] = deck[i & 63];
            let (hand, position) = if i < 39 {
                (i / 13, i % 13)
            } else {
                (3, i - 39)
            };
            hands[hand] |= 1 << card;
            if position < 3 {
                proposals[hand] |= 1 << card;
            }
        };
        // Straight-line code: every position is a constant, so is its hand.
        macro_rules! batch {
            ($b:literal, $n:literal, $start:literal: $($k:literal)*) => {
                let r: [u8; $n] = draw_batch::<R, $b, $n>(rng);
                $(step($start + $k, r[$k]);)*
            };
        }
        batch!(0, 10, 0: 0 1 2 3 4 5 6 7 8 9);
        batch!(1, 11, 10: 0 1 2 3 4 5 6 7 8 9 10);
        batch!(2, 12, 21: 0 1 2 3 4 5 6 7 8 9 10 11);
        batch!(3, 9, 33: 0 1 2 3 4 5 6 7 8);
        hands[3] = CardSet::FULL.bits() ^ hands[0] ^ hands[1] ^ hands[2];
        playout.hands = hands;
        playout.direction = options.pass_direction.for_round(round);
        if playout.direction.is_some() {
            playout.proposals = proposals;
        }
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
                        .push(u32::from(seat.number()), u32::from(card.index()));
                }
            }
        }
        Some(playout)
    }

    /// Each seat's cards now.
    pub fn hands(&self) -> BySeat<CardSet> {
        BySeat::new(self.hands.map(set_of))
    }

    /// What a finished playout leaves for [`Game::playout_round`].
    pub(crate) fn outcome(&self) -> Outcome {
        Outcome {
            passes: BySeat::new(self.pending.map(|p| p.map(set_of))),
            won: BySeat::new(self.won.map(set_of)),
            last: self.last.map(|(leader, cards)| {
                (
                    Seat::ALL[(leader & 3) as usize],
                    cards.to_le_bytes().map(|c| card_of(u32::from(c))),
                )
            }),
        }
    }

    /// Plays the round out with uniformly random legal moves — the pending passes first,
    /// then every remaining card — and returns each seat's points for the whole round.
    /// Events go to `sink` (`PassCommitted`, `PassesExchanged`, `CardPlayed`, `TrickWon`;
    /// no scoring events: a playout knows no totals); with [`Discard`](super::Discard)
    /// nothing is built.
    pub fn run<R: Rng + ?Sized, S: EventSink>(&mut self, rng: &mut R, sink: &mut S) -> BySeat<u32> {
        if let Some(direction) = self.direction.take()
            && !self.pass(direction, rng, sink)
        {
            return BySeat::new(self.points);
        }
        if self.talbees {
            self.play::<R, S, true>(rng, sink);
        } else {
            self.play::<R, S, false>(rng, sink);
        }
        BySeat::new(self.points)
    }

    /// Plays every remaining card: the trick in progress, then whole tricks.
    #[inline(always)]
    fn play<R: Rng + ?Sized, S: EventSink, const TALBEES: bool>(
        &mut self,
        rng: &mut R,
        sink: &mut S,
    ) {
        let forced = self.forced;
        let mut hands = self.hands;
        let mut won = [0u64; 4];
        let state = self.trick;
        let leader = state.leader & 3;
        // Every seat that has not played in the current trick holds `remaining` cards;
        // after the passes, all hold the same number.
        let mut remaining = size(hands[((leader + state.played) & 3) as usize]);
        let mut leader = if state.played == 0 {
            leader
        } else {
            // A trick in progress (from a game): finish it.
            let shift = 13 * (state.led & 3);
            let mut trick = Current {
                leader,
                shift,
                best_rank: state.best_card - shift,
                best_seat: state.best_seat & 3,
                set: state.set,
                cards: state.cards,
            };
            let word = rng.next_u64();
            for k in state.played..4 {
                let chunk = word >> (16 * k);
                follow::<R, S, TALBEES>(
                    &mut trick, k, &mut hands, forced, remaining, chunk, true, rng, sink,
                );
            }
            remaining -= 1;
            self.last = Some((leader, trick.cards));
            finish(&trick, &mut won, sink)
        };
        while remaining > 1 {
            // The lead: any card.
            let hand = hands[leader as usize];
            // One random word per trick: a 16-bit chunk for each of the four draws.
            let word = rng.next_u64();
            let (lane, rank) = nth(hand, below_chunk(word, remaining, rng));
            let shift = 13 * lane;
            let card = shift + rank;
            hands[leader as usize] = hand & !(1 << card);
            if S::KEEPS_EVENTS {
                sink.push(Event::CardPlayed {
                    seat: Seat::ALL[leader as usize],
                    card: card_of(card),
                });
            }
            let mut trick = Current {
                leader,
                shift,
                best_rank: rank,
                best_seat: leader,
                set: 1 << card,
                cards: card,
            };
            // Straight-line code: each follower's seat offset and chunk are constants.
            macro_rules! follower {
                ($k:literal) => {
                    follow::<R, S, TALBEES>(
                        &mut trick,
                        $k,
                        &mut hands,
                        forced,
                        remaining,
                        word >> (16 * $k),
                        false,
                        rng,
                        sink,
                    )
                };
            }
            follower!(1);
            follower!(2);
            follower!(3);
            remaining -= 1;
            leader = finish(&trick, &mut won, sink);
        }
        if remaining == 1 {
            // The last trick: every seat plays its last card.
            let cards: [u32; 4] =
                std::array::from_fn(|k| hands[(leader as usize + k) & 3].trailing_zeros() & 63);
            let shift = 13 * (cards[0] / 13);
            let mut trick = Current {
                leader,
                shift,
                best_rank: cards[0] - shift,
                best_seat: leader,
                set: 0,
                cards: 0,
            };
            for (k, &card) in cards.iter().enumerate() {
                let seat = (leader + k as u32) & 3;
                let rank = card.wrapping_sub(shift);
                // Of the led suit (a rank below 13) and higher than the best so far.
                let better = (rank < 13) & (rank > trick.best_rank);
                trick.best_rank = select_unpredictable(better, rank, trick.best_rank);
                trick.best_seat = select_unpredictable(better, seat, trick.best_seat);
                trick.set |= 1 << card;
                trick.cards |= card << (8 * k);
                if S::KEEPS_EVENTS {
                    sink.push(Event::CardPlayed {
                        seat: Seat::ALL[seat as usize],
                        card: card_of(card),
                    });
                }
            }
            hands = [0; 4];
            self.last = Some((leader, trick.cards));
            leader = finish(&trick, &mut won, sink);
        }
        self.hands = hands;
        self.trick = TrickState::new(leader);
        for ((taken, points), won) in self.won.iter_mut().zip(&mut self.points).zip(won) {
            *taken |= won;
            *points += points_of(won);
        }
    }

    /// Draws and exchanges the passes (each from the pre-pass hands); `false` if some seat
    /// has no legal pass (only possible in odd test positions).
    fn pass<R: Rng + ?Sized, S: EventSink>(
        &mut self,
        direction: Direction,
        rng: &mut R,
        sink: &mut S,
    ) -> bool {
        let mut passes = [0u64; 4];
        for seat in Seat::ALL {
            let pass = match self.pending[seat.index()] {
                Some(pending) => pending,
                None => {
                    let hand = self.hands[seat.index()];
                    // The deal's proposal first, then fresh draws: the first legal one of a
                    // sequence of independent uniform proposals is uniform over legal passes.
                    let proposal = self.proposals[seat.index()];
                    let pass = if proposal != 0
                        && (!self.restricted
                            || legality::keeps_suits(set_of(hand), set_of(proposal)))
                    {
                        proposal
                    } else {
                        let Some(pass) = self.draw_pass(hand, rng) else {
                            return false;
                        };
                        pass
                    };
                    self.hands[seat.index()] = hand & !pass;
                    if S::KEEPS_EVENTS {
                        sink.push(Event::PassCommitted {
                            seat,
                            cards: set_of(pass),
                        });
                    }
                    pass
                }
            };
            passes[seat.index()] = pass;
            self.pending[seat.index()] = Some(pass);
        }
        self.proposals = [0; 4];
        let received = BySeat::from_fn(|to| passes[direction.giver(to).index()]);
        for to in Seat::ALL {
            self.hands[to.index()] |= received[to];
        }
        if S::KEEPS_EVENTS {
            sink.push(Event::PassesExchanged {
                direction,
                received: received.map(set_of),
            });
        }
        true
    }

    /// A uniformly random legal pass from `hand`: three distinct cards by position, redrawn
    /// until the restriction holds (rejection keeps the choice uniform over legal passes),
    /// with an exhaustive search as a backstop.
    #[inline(never)]
    fn draw_pass<R: Rng + ?Sized>(&self, hand: u64, rng: &mut R) -> Option<u64> {
        let index = LaneIndex::new(hand);
        let held = index.size;
        if held < 3 {
            return None;
        }
        let cards = set_of(hand);
        for _ in 0..64 {
            let (first, second, third) = draw_three(held, rng);
            let second = second + u32::from(second >= first);
            let (low, high) = (first.min(second), first.max(second));
            let mut third = third;
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

/// The `k`-th card (`k > 0`) of the trick: a uniformly random legal card of the seat's
/// hand, which holds `held` cards, drawn with the random 16-bit `chunk`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn follow<R: Rng + ?Sized, S: EventSink, const TALBEES: bool>(
    trick: &mut Current,
    k: u32,
    hands: &mut [u64; 4],
    forced: u64,
    held: u32,
    chunk: u64,
    keep_cards: bool,
    rng: &mut R,
    sink: &mut S,
) {
    let seat = (trick.leader + k) & 3;
    let hand = hands[seat as usize];
    let lane = (hand >> trick.shift) & LANE_MASK;
    let card = if lane != 0 {
        // Following suit.
        let leekha = LEEKHA_RANK[(trick.shift / 13) as usize & 3];
        let rank = if TALBEES && trick.best_rank > leekha && (lane >> leekha) & 1 != 0 {
            // Talbees: a higher card of the suit is in the trick, the Leekha must go.
            leekha
        } else {
            let entry = LANES[lane as usize];
            let r = below_chunk(chunk, (entry & 15) as u32, rng);
            ((entry >> (4 + 4 * r)) & 15) as u32
        };
        let better = rank > trick.best_rank;
        trick.best_rank = select_unpredictable(better, rank, trick.best_rank);
        trick.best_seat = select_unpredictable(better, seat, trick.best_seat);
        trick.shift + rank
    } else {
        let leekhas = hand & forced;
        if leekhas != 0 {
            // One or both Leekhas: the player's choice, here a coin flip.
            let both = leekhas & leekhas.wrapping_sub(1) != 0;
            if both && chunk & 1 == 1 {
                63 - leekhas.leading_zeros()
            } else {
                leekhas.trailing_zeros()
            }
        } else {
            // A free discard, which never wins.
            let (lane, rank) = nth(hand, below_chunk(chunk, held, rng));
            13 * lane + rank
        }
    };
    hands[seat as usize] = hand & !(1 << card);
    trick.set |= 1 << card;
    if S::KEEPS_EVENTS || keep_cards {
        trick.cards |= card << (8 * k);
    }
    if S::KEEPS_EVENTS {
        sink.push(Event::CardPlayed {
            seat: Seat::ALL[seat as usize],
            card: card_of(card),
        });
    }
}

/// Credits the trick to its winner and reports it; returns the winner, who leads next.
#[inline(always)]
fn finish<S: EventSink>(trick: &Current, won: &mut [u64; 4], sink: &mut S) -> u32 {
    let winner = trick.best_seat & 3;
    won[winner as usize] |= trick.set;
    if S::KEEPS_EVENTS {
        sink.push(Event::TrickWon {
            seat: Seat::ALL[winner as usize],
            leader: Seat::ALL[(trick.leader & 3) as usize],
            cards: trick.cards.to_le_bytes().map(|c| card_of(u32::from(c))),
            points: points_of(trick.set),
        });
    }
    winner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_tables_select_like_iteration() {
        for lane in [0u64, 1, 0b1_0110_0000_0001, LANE_MASK, 0b1000_0000_0000] {
            let entry = LANES[lane as usize];
            let bits: Vec<u64> = (0..13).filter(|b| lane >> b & 1 == 1).collect();
            assert_eq!((entry & 15) as usize, bits.len());
            assert_eq!(usize::from(LANE_COUNTS[lane as usize]), bits.len());
            for (k, &b) in bits.iter().enumerate() {
                assert_eq!((entry >> (4 + 4 * k)) & 15, b);
            }
        }
        let hand = "2C 5C 9D QS AS 3H".parse::<CardSet>().unwrap().bits();
        let listed: Vec<u32> = set_of(hand).iter().map(|c| u32::from(c.index())).collect();
        assert_eq!(size(hand), 6);
        for (r, &card) in listed.iter().enumerate() {
            let (lane, rank) = nth(hand, r as u32);
            assert_eq!(13 * lane + rank, card);
        }
    }

    #[test]
    fn points_of_sets_match_the_cards() {
        for set in [
            0u64,
            CardSet::FULL.bits(),
            1 << 49,
            1 << 21 | 1 << 30,
            HEARTS | 1,
        ] {
            let expected: u32 = set_of(set).iter().map(Card::points).sum();
            assert_eq!(points_of(set), expected);
        }
    }

    #[test]
    fn deal_batches_are_below_two_to_the_58() {
        // Checked at compile time by `THRESHOLDS`; this keeps the claim in the docs honest.
        for (b, &(start, len)) in BATCHES.iter().enumerate() {
            let product: u128 = (start..start + len).map(|i| (52 - i) as u128).product();
            assert!(product < 1 << 58);
            let p = product as u64;
            assert_eq!(u128::from(THRESHOLDS[b]), (1u128 << 64) % product);
            assert!((THRESHOLDS[b] as f64) / 2f64.powi(64) < 0.01, "{b}: {p}");
        }
    }
}
