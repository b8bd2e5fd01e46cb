//! [`Game`]: the complete state of one game, and every transition of it.

use std::fmt;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::action::{Action, ActionKind};
use super::card::Card;
use super::cardset::CardSet;
use super::deal::Seed;
use super::error::{PositionError, ReplayError, RuleError};
use super::event::{Discard, Event, EventSink};
use super::legality;
use super::options::{DealerRotation, Direction, PassRestriction, RuleOptions};
use super::playout::Playout;
use super::position::Position;
use super::scoring::{GameResult, game_outcome};
use super::seat::{BySeat, Seat, SeatSet};
use super::trick::Trick;

/// The phase of the current round, or the end of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Every seat commits a secret pass of 3 cards (§3).
    Passing,
    /// Thirteen tricks are played (§4).
    Playing,
    /// The game is over; [`Game::result`] says how it ended.
    Finished,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Passing => "passing",
            Phase::Playing => "playing",
            Phase::Finished => "finished",
        })
    }
}

/// What one seat may do now. Serialized with a `type` tag, as the API's `legal_actions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LegalActions {
    /// Commit a pass of `count` (3) cards; `cards` are those that belong to at least one
    /// legal pass.
    Pass {
        /// How many cards a pass holds: 3.
        count: usize,
        /// The cards that appear in at least one legal pass.
        cards: CardSet,
        /// The held cards that may leave their suit empty (the guards of §3, or the whole
        /// hand without the restriction): a set of 3 distinct `cards` is legal iff each of
        /// its cards outside this set leaves a card of its suit in the hand.
        #[serde(default)]
        may_empty_suit: CardSet,
    },
    /// Play one of `cards`.
    Play {
        /// The legal cards.
        cards: CardSet,
    },
    /// Nothing: not this seat's turn, its pass is committed, or the game is over.
    None,
}

impl LegalActions {
    /// The cards listed (empty for [`LegalActions::None`]).
    pub const fn cards(&self) -> CardSet {
        match self {
            LegalActions::Pass { cards, .. } | LegalActions::Play { cards } => *cards,
            LegalActions::None => CardSet::EMPTY,
        }
    }
}

/// The complete state of a game: rule set, seed, scores, hands, passes, tricks.
///
/// Plain data: `Clone`, comparable and serializable. Deserialization checks the invariants
/// (no card in two places, hand sizes that fit the trick, …) and refuses a broken state, so a
/// corrupted record cannot make the engine misbehave. The `Serialize` form holds every
/// hand and the seed: it is for storage and admins, never for players — they get
/// [`Game::view`].
///
/// Transitions go through [`Game::apply`] (or the allocation-free [`Game::pass`] and
/// [`Game::play`]); a refused action leaves the state untouched.
///
/// ```
/// use leekha::rules::{Action, Game, Phase, RuleOptions, Seat};
///
/// let mut game = Game::new(RuleOptions::default(), [42; 32]);
/// assert_eq!(game.phase(), Phase::Passing);
/// for seat in Seat::ALL {
///     let cards = game.hand(seat).iter().take(3).collect();
///     let _ = game.apply(&Action::Pass { seat, cards });
/// }
/// ```
// `remote = "Self"` makes the derives inherent functions, so that the trait impls below can
// check a stored game before it becomes one.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct Game {
    options: RuleOptions,
    seed: Seed,
    /// The current round, from 1.
    round: u32,
    dealer: Seat,
    phase: Phase,
    /// Totals of the rounds already scored; the current round's points are in `won`.
    totals: BySeat<u32>,
    hands: BySeat<CardSet>,
    /// The committed passes of this round. While passing, these cards have left the
    /// hand and are not yet anyone else's; after the exchange they stay for the views.
    passes: BySeat<Option<CardSet>>,
    /// The cards each seat took this round: the round points and the `QS` taker follow.
    won: BySeat<CardSet>,
    /// The trick in progress (empty between tricks; its leader leads next).
    trick: Trick,
    last_trick: Option<Trick>,
    result: Option<GameResult>,
}

impl Serialize for Game {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Game::serialize(self, serializer)
    }
}

/// A stored game is checked (`Game::validate`) before it becomes one.
impl<'de> Deserialize<'de> for Game {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Game, D::Error> {
        let game = Game::deserialize(deserializer)?;
        game.validate().map_err(serde::de::Error::custom)?;
        Ok(game)
    }
}

/// Turns the wire form of a pass into a set, refusing a wrong count before duplicates.
fn pass_set(cards: &[Card]) -> Result<CardSet, RuleError> {
    if cards.len() != 3 {
        return Err(RuleError::WrongCardCount {
            expected: 3,
            got: cards.len(),
        });
    }
    let mut set = CardSet::EMPTY;
    for &card in cards {
        if !set.insert(card) {
            return Err(RuleError::DuplicateCard { card });
        }
    }
    Ok(set)
}

impl Game {
    /// A new game: the first dealer and the deal of round 1 come from `seed` (see
    /// [`Seed`]). The server draws the seed from a CSPRNG and keeps it secret.
    pub fn new(options: RuleOptions, seed: [u8; 32]) -> Game {
        Game::new_into(options, seed, &mut Discard)
    }

    /// [`Game::new`], also returning the opening [`Event::RoundDealt`].
    pub fn with_events(options: RuleOptions, seed: [u8; 32]) -> (Game, Vec<Event>) {
        let mut events = Vec::new();
        let game = Game::new_into(options, seed, &mut events);
        (game, events)
    }

    /// [`Game::new`], pushing the opening [`Event::RoundDealt`] into `sink`.
    pub fn new_into<S: EventSink>(options: RuleOptions, seed: [u8; 32], sink: &mut S) -> Game {
        // The empty position has the zero totals of a new game; dealing round 1 sets the rest.
        let mut game = Game::unchecked(Position {
            seed,
            ..Position::new(options)
        });
        let dealer = game.seed.first_dealer();
        game.start_round(1, dealer, sink);
        game
    }

    /// A new game whose seed is drawn from `rng`: for tests, benches and simulations (the
    /// game is still replayable from [`Game::seed`]).
    pub fn from_rng<R: Rng + ?Sized>(options: RuleOptions, rng: &mut R) -> Game {
        let mut seed = [0; 32];
        rng.fill_bytes(&mut seed);
        Game::new(options, seed)
    }

    /// A game in an arbitrary position, for tests and tools (puzzles, bot training). The
    /// position need not hold all 52 cards, but it must be sound: see [`Position`].
    ///
    /// # Errors
    ///
    /// A [`PositionError`] naming the broken invariant.
    pub fn from_position(position: Position) -> Result<Game, PositionError> {
        let game = Game::unchecked(position);
        game.validate()?;
        Ok(game)
    }

    /// The game in `position`, of which the caller checks the invariants (or deals a new
    /// round over it).
    fn unchecked(position: Position) -> Game {
        Game {
            options: position.options,
            seed: Seed::new(position.seed),
            round: position.round,
            dealer: position.dealer,
            phase: position.phase,
            totals: position.totals,
            hands: position.hands,
            passes: position.passes,
            won: position.won,
            trick: position.trick,
            last_trick: position.last_trick,
            result: None,
        }
    }

    // ----- reading the state -------------------------------------------------------------

    /// The resolved rule set.
    #[inline]
    pub const fn options(&self) -> &RuleOptions {
        &self.options
    }

    /// The seed: secret while the game runs (storage, audit and replay only).
    #[inline]
    pub const fn seed(&self) -> &Seed {
        &self.seed
    }

    /// The current round, from 1 (the last round once finished).
    #[inline]
    pub const fn round_number(&self) -> u32 {
        self.round
    }

    /// The dealer of the current round.
    #[inline]
    pub const fn dealer(&self) -> Seat {
        self.dealer
    }

    /// The current phase.
    #[inline]
    pub const fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether the game is over.
    #[inline]
    pub const fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    /// How the game ended, once it has.
    #[inline]
    pub const fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }

    /// Each seat's total over the scored rounds (the final totals once finished).
    #[inline]
    pub const fn totals(&self) -> BySeat<u32> {
        self.totals
    }

    /// The points each seat took in the current round so far (in the last round, once
    /// finished).
    #[inline]
    pub fn round_points(&self) -> BySeat<u32> {
        self.won.map(CardSet::points)
    }

    /// The cards `seat` holds. Secret: only that seat (and admins) may see it.
    #[inline]
    pub fn hand(&self, seat: Seat) -> CardSet {
        self.hands[seat]
    }

    /// The cards `seat` took in the current round. Completed tricks are face down: this is
    /// for admins and tools, not for views.
    #[inline]
    pub fn taken(&self, seat: Seat) -> CardSet {
        self.won[seat]
    }

    /// The direction of this round's passes, `None` when the round has no passing.
    #[inline]
    pub const fn pass_direction(&self) -> Option<Direction> {
        self.options.pass_direction.for_round(self.round)
    }

    /// The cards `seat` passed this round, once committed. Secret to that seat.
    #[inline]
    pub fn passed(&self, seat: Seat) -> Option<CardSet> {
        self.passes[seat]
    }

    /// The cards `seat` received this round: only after all four passes were exchanged.
    /// Secret to that seat.
    pub fn received(&self, seat: Seat) -> Option<CardSet> {
        if self.phase == Phase::Passing {
            return None;
        }
        let direction = self.pass_direction()?;
        self.passes[direction.giver(seat)]
    }

    /// Which seats have committed their pass this round (public).
    #[inline]
    pub fn passes_committed(&self) -> BySeat<bool> {
        self.passes.map(|p| p.is_some())
    }

    /// The trick in progress (empty between tricks: its leader leads next).
    #[inline]
    pub const fn trick(&self) -> &Trick {
        &self.trick
    }

    /// The last completed trick of this round, if any.
    #[inline]
    pub const fn last_trick(&self) -> Option<&Trick> {
        self.last_trick.as_ref()
    }

    /// How many tricks of this round were completed.
    #[inline]
    pub fn tricks_played(&self) -> u8 {
        let taken: usize = self.won.iter().map(|w| w.len()).sum();
        // At most 52 cards, so at most 13 tricks.
        (taken / 4) as u8
    }

    /// The seat to play, in the playing phase.
    #[inline]
    pub fn turn(&self) -> Option<Seat> {
        (self.phase == Phase::Playing).then(|| self.trick.next_seat())
    }

    /// The seats that may act: those that have not committed while passing, the seat to
    /// play while playing, nobody once finished.
    pub fn to_act(&self) -> SeatSet {
        match self.phase {
            Phase::Passing => Seat::ALL
                .into_iter()
                .filter(|&s| self.passes[s].is_none())
                .collect(),
            Phase::Playing => SeatSet::single(self.trick.next_seat()),
            Phase::Finished => SeatSet::EMPTY,
        }
    }

    // ----- legality ------------------------------------------------------------------------

    /// The cards `seat` may play now (empty unless it is that seat's turn).
    #[inline]
    pub fn legal_plays(&self, seat: Seat) -> CardSet {
        if self.phase == Phase::Playing && self.trick.next_seat() == seat {
            legality::legal_plays(self.hands[seat], &self.trick, &self.options)
        } else {
            CardSet::EMPTY
        }
    }

    /// The cards that belong to at least one legal pass of `seat` (empty unless the seat
    /// still has to pass).
    pub fn passable_cards(&self, seat: Seat) -> CardSet {
        if self.phase == Phase::Passing && self.passes[seat].is_none() {
            legality::passable_cards(self.hands[seat], &self.options)
        } else {
            CardSet::EMPTY
        }
    }

    /// What `seat` may do now. Agrees exactly with [`Game::check`]: a card is listed for
    /// play iff playing it is accepted; a listed passable card belongs to some accepted pass.
    pub fn legal_actions(&self, seat: Seat) -> LegalActions {
        match self.phase {
            Phase::Passing if self.passes[seat].is_none() => LegalActions::Pass {
                count: 3,
                cards: self.passable_cards(seat),
                may_empty_suit: legality::may_empty_suit(self.hands[seat], &self.options),
            },
            Phase::Playing if self.trick.next_seat() == seat => LegalActions::Play {
                cards: self.legal_plays(seat),
            },
            _ => LegalActions::None,
        }
    }

    /// Whether `action` would be accepted now, and if not why; changes nothing.
    ///
    /// # Errors
    ///
    /// The [`RuleError`] that [`Game::apply`] would return.
    pub fn check(&self, action: &Action) -> Result<(), RuleError> {
        match action {
            Action::Pass { seat, cards } => {
                self.check_pass_state(*seat)?;
                self.check_pass(*seat, pass_set(cards)?)
            }
            Action::Play { seat, card } => self.check_play(*seat, *card),
        }
    }

    fn check_pass_state(&self, seat: Seat) -> Result<(), RuleError> {
        match self.phase {
            Phase::Passing if self.passes[seat].is_some() => {
                Err(RuleError::AlreadyCommitted { seat })
            }
            Phase::Passing => Ok(()),
            Phase::Playing => Err(RuleError::WrongPhase {
                phase: Phase::Playing,
                action: ActionKind::Pass,
            }),
            Phase::Finished => Err(RuleError::GameOver),
        }
    }

    fn check_pass(&self, seat: Seat, cards: CardSet) -> Result<(), RuleError> {
        self.check_pass_state(seat)?;
        legality::check_pass(self.hands[seat], cards, &self.options)
    }

    #[inline]
    fn check_play(&self, seat: Seat, card: Card) -> Result<(), RuleError> {
        match self.phase {
            Phase::Playing => {}
            Phase::Passing => {
                return Err(RuleError::WrongPhase {
                    phase: Phase::Passing,
                    action: ActionKind::Play,
                });
            }
            Phase::Finished => return Err(RuleError::GameOver),
        }
        let turn = self.trick.next_seat();
        if seat != turn {
            return Err(RuleError::NotYourTurn { seat, turn });
        }
        legality::check_play(self.hands[seat], &self.trick, &self.options, card)
    }

    // ----- transitions ---------------------------------------------------------------------

    /// Applies `action` and returns the events it caused (a pass may also exchange all
    /// passes; a play may also complete a trick, score the round, deal the next round or
    /// end the game).
    ///
    /// # Errors
    ///
    /// The precise [`RuleError`]; the state is then unchanged.
    pub fn apply(&mut self, action: &Action) -> Result<Vec<Event>, RuleError> {
        let mut events = Vec::new();
        self.apply_into(action, &mut events)?;
        Ok(events)
    }

    /// [`Game::apply`], pushing the events into `sink` (use [`Discard`] to drop them).
    ///
    /// # Errors
    ///
    /// The precise [`RuleError`]; the state is then unchanged and nothing was pushed.
    #[inline]
    pub fn apply_into<S: EventSink>(
        &mut self,
        action: &Action,
        sink: &mut S,
    ) -> Result<(), RuleError> {
        match action {
            Action::Pass { seat, cards } => {
                self.check_pass_state(*seat)?;
                self.pass(*seat, pass_set(cards)?, sink)
            }
            Action::Play { seat, card } => self.play(*seat, *card, sink),
        }
    }

    /// Commits `seat`'s pass of `cards` (allocation-free). The fourth commit applies all
    /// passes at once, each computed from the pre-pass hands, and starts the playing phase.
    ///
    /// # Errors
    ///
    /// `game_over`, `wrong_phase`, `already_committed`, `wrong_card_count`,
    /// `card_not_in_hand` or `pass_restriction`; the state is then unchanged.
    pub fn pass<S: EventSink>(
        &mut self,
        seat: Seat,
        cards: CardSet,
        sink: &mut S,
    ) -> Result<(), RuleError> {
        self.check_pass(seat, cards)?;
        self.commit_pass(seat, cards, sink);
        Ok(())
    }

    /// Commits a pass known to be legal.
    fn commit_pass<S: EventSink>(&mut self, seat: Seat, cards: CardSet, sink: &mut S) {
        self.hands[seat] -= cards;
        self.passes[seat] = Some(cards);
        sink.push(Event::PassCommitted { seat, cards });
        if self.passes.iter().all(Option::is_some) {
            self.exchange_passes(sink);
        }
    }

    /// Plays `card` for `seat` (allocation-free). Completing the 13th trick scores the round
    /// and then either ends the game or deals the next round.
    ///
    /// # Errors
    ///
    /// `game_over`, `wrong_phase`, `not_your_turn`, `card_not_in_hand`, `must_follow_suit`,
    /// `talbees` or `must_play_leekha`; the state is then unchanged.
    #[inline]
    pub fn play<S: EventSink>(
        &mut self,
        seat: Seat,
        card: Card,
        sink: &mut S,
    ) -> Result<(), RuleError> {
        // The fast test is membership in the generated legal set; the reason for a refusal
        // is worked out only on the cold path, by the independent checker.
        if self.phase == Phase::Playing
            && self.trick.next_seat() == seat
            && legality::legal_plays(self.hands[seat], &self.trick, &self.options).contains(card)
        {
            self.play_legal(seat, card, sink);
            Ok(())
        } else {
            Err(self.play_error(seat, card))
        }
    }

    #[cold]
    #[inline(never)]
    fn play_error(&self, seat: Seat, card: Card) -> RuleError {
        // The property tests hold the generator and the checker to agree, so the checker
        // always finds the reason; the fallback only keeps this path panic-free.
        self.check_play(seat, card)
            .err()
            .unwrap_or(RuleError::CardNotInHand { card })
    }

    /// Plays a uniformly random legal card for the seat to play and returns it (`None`
    /// outside the playing phase). The playout primitive for bots and simulations: no
    /// allocation, no re-validation (the card is legal by construction).
    #[inline]
    pub fn play_random<R: Rng + ?Sized, S: EventSink>(
        &mut self,
        rng: &mut R,
        sink: &mut S,
    ) -> Option<(Seat, Card)> {
        if self.phase != Phase::Playing {
            return None;
        }
        let seat = self.trick.next_seat();
        let card =
            legality::legal_plays(self.hands[seat], &self.trick, &self.options).choose(rng)?;
        self.play_legal(seat, card, sink);
        Some((seat, card))
    }

    /// Commits a random legal pass for `seat` and returns it (`None` if the seat has
    /// nothing to pass now). See [`Game::random_pass`].
    pub fn pass_random<R: Rng + ?Sized, S: EventSink>(
        &mut self,
        seat: Seat,
        rng: &mut R,
        sink: &mut S,
    ) -> Option<CardSet> {
        let cards = self.random_pass(seat, rng)?;
        self.commit_pass(seat, cards, sink);
        Some(cards)
    }

    /// Plays the rest of the current round with random legal moves (passes first if the
    /// round is still passing); stops after the round is scored (the next round is dealt,
    /// or the game is over). A full random playout, allocation-free with [`Discard`].
    ///
    /// The moves come from the lean simulator ([`Playout`]), which emits the same events as
    /// the game would; then the game records the passes, the taken cards and the last trick,
    /// and scores the round. Odd test positions where a seat might have no legal pass take
    /// the move-by-move path.
    pub fn playout_round<R: Rng + ?Sized, S: EventSink>(&mut self, rng: &mut R, sink: &mut S) {
        let passing = self.phase == Phase::Passing;
        // With 7 cards or more a hand always has a legal pass (see `passable_cards`).
        if passing
            && Seat::ALL
                .iter()
                .any(|&s| self.passes[s].is_none() && self.hands[s].len() < 7)
        {
            return self.playout_round_by_moves(rng, sink);
        }
        let Some(mut playout) = Playout::from_game(self) else {
            return;
        };
        playout.run(rng, sink);
        let outcome = playout.outcome();
        let Some((leader, cards)) = outcome.last else {
            // Unreachable: a round in progress has a trick to play.
            return;
        };
        let Some(last) = Trick::from_cards(leader, &cards) else {
            return;
        };
        if passing {
            self.passes = outcome.passes;
        }
        self.phase = Phase::Playing;
        self.hands = BySeat::default();
        self.won = BySeat::from_fn(|s| self.won[s] | outcome.won[s]);
        let winner = last.taker();
        self.last_trick = Some(last);
        self.trick = Trick::new(winner);
        self.end_round(sink);
    }

    /// [`Game::playout_round`] one checked move at a time.
    fn playout_round_by_moves<R: Rng + ?Sized, S: EventSink>(&mut self, rng: &mut R, sink: &mut S) {
        let round = self.round;
        if self.phase == Phase::Passing {
            for seat in Seat::ALL {
                self.pass_random(seat, rng, sink);
            }
        }
        while self.round == round && self.play_random(rng, sink).is_some() {}
    }

    /// Plays a card known to be legal.
    #[inline]
    fn play_legal<S: EventSink>(&mut self, seat: Seat, card: Card, sink: &mut S) {
        self.hands[seat] = self.hands[seat].without(card);
        self.trick.push(card);
        sink.push(Event::CardPlayed { seat, card });
        if self.trick.is_complete() {
            self.take_trick(sink);
        }
    }

    fn exchange_passes<S: EventSink>(&mut self, sink: &mut S) {
        // A passing phase exists only in rounds with a direction (checked by `validate`).
        let direction = self.pass_direction().unwrap_or(Direction::Right);
        let passes = self.passes.map(Option::unwrap_or_default);
        let received = BySeat::from_fn(|seat| passes[direction.giver(seat)]);
        for seat in Seat::ALL {
            self.hands[seat] |= received[seat];
        }
        self.phase = Phase::Playing;
        self.trick = Trick::new(self.dealer.right());
        sink.push(Event::PassesExchanged {
            direction,
            received,
        });
    }

    #[inline]
    fn take_trick<S: EventSink>(&mut self, sink: &mut S) {
        let trick = self.trick;
        let winner = trick.taker();
        self.won[winner] |= trick.set();
        sink.push(Event::TrickWon {
            seat: winner,
            leader: trick.leader(),
            cards: trick.card_array(),
            points: trick.points(),
        });
        self.last_trick = Some(trick);
        self.trick = Trick::new(winner);
        if self.hands.iter().all(|h| h.is_empty()) {
            self.end_round(sink);
        }
    }

    fn end_round<S: EventSink>(&mut self, sink: &mut S) {
        let round_points = self.round_points();
        self.totals = BySeat::from_fn(|s| self.totals[s].saturating_add(round_points[s]));
        sink.push(Event::RoundScored {
            round: self.round,
            round_points,
            totals: self.totals,
        });
        match game_outcome(&self.options, &self.totals) {
            Some(result) => {
                self.phase = Phase::Finished;
                sink.push(Event::GameFinished {
                    result: result.clone(),
                });
                self.result = Some(result);
            }
            None => {
                let dealer = self.next_dealer();
                self.start_round(self.round.saturating_add(1), dealer, sink);
            }
        }
    }

    /// Who deals after this round (§6): the `QS` taker, or the dealer's right.
    fn next_dealer(&self) -> Seat {
        match self.options.dealer_rotation {
            DealerRotation::QueenOfSpadesTaker => Seat::ALL
                .into_iter()
                .find(|&s| self.won[s].contains(Card::QUEEN_OF_SPADES))
                // Only a test position without QS lacks a taker.
                .unwrap_or(self.dealer.right()),
            DealerRotation::RotateRight => self.dealer.right(),
        }
    }

    fn start_round<S: EventSink>(&mut self, round: u32, dealer: Seat, sink: &mut S) {
        let hands = self.seed.deal(round);
        let pass_direction = self.options.pass_direction.for_round(round);
        self.round = round;
        self.dealer = dealer;
        self.hands = hands;
        self.passes = BySeat::default();
        self.won = BySeat::default();
        self.trick = Trick::new(dealer.right());
        self.last_trick = None;
        self.phase = if pass_direction.is_some() {
            Phase::Passing
        } else {
            Phase::Playing
        };
        sink.push(Event::RoundDealt {
            round,
            dealer,
            pass_direction,
            hands,
        });
    }

    // ----- random moves --------------------------------------------------------------------

    /// A uniformly random legal card for the seat to play, with that seat; `None` outside the
    /// playing phase. Allocation-free.
    #[inline]
    pub fn random_play<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<(Seat, Card)> {
        let seat = self.turn()?;
        Some((seat, self.legal_plays(seat).choose(rng)?))
    }

    /// A uniformly random legal pass for `seat`, or `None` if the seat has nothing to pass
    /// now. Draws 3 passable cards until the set keeps the restriction (most draws do;
    /// rejection keeps the choice uniform over legal passes), with a deterministic search
    /// as a backstop.
    pub fn random_pass<R: Rng + ?Sized>(&self, seat: Seat, rng: &mut R) -> Option<CardSet> {
        let passable = self.passable_cards(seat);
        if passable.len() < 3 {
            return None;
        }
        let hand = self.hands[seat];
        let restricted = self.options.pass_restriction == PassRestriction::On;
        for _ in 0..64 {
            let pass = passable.choose_three(rng)?;
            if !restricted || legality::keeps_suits(hand, pass) {
                return Some(pass);
            }
        }
        legality::first_legal_pass(hand, restricted)
    }

    // ----- invariants ----------------------------------------------------------------------

    /// Checks every invariant the transitions rely on.
    fn validate(&self) -> Result<(), PositionError> {
        use PositionError::Inconsistent;

        if self.round == 0 {
            return Err(PositionError::RoundZero);
        }
        let mut seen = CardSet::EMPTY;
        let mut place = |cards: CardSet| match (seen & cards).lowest() {
            Some(card) => Err(PositionError::CardInTwoPlaces { card }),
            None => {
                seen |= cards;
                Ok(())
            }
        };
        for seat in Seat::ALL {
            place(self.hands[seat])?;
            place(self.won[seat])?;
        }
        place(self.trick.set())?;
        if self.phase == Phase::Passing {
            // Only pending passes are cards in transit; afterwards they are in hands.
            for pass in self.passes.iter().flatten() {
                place(*pass)?;
            }
        }
        for (seat, pass) in self.passes.iter_seats() {
            if pass.is_some_and(|p| p.len() != 3) {
                return Err(PositionError::BadPass { seat });
            }
        }
        let taken: usize = self.won.iter().map(|w| w.len()).sum();
        if !taken.is_multiple_of(4) {
            return Err(Inconsistent("the taken cards are not whole tricks"));
        }
        if let Some(last) = &self.last_trick {
            let winner = match last.winner() {
                Some((winner, _)) if last.is_complete() => winner,
                _ => return Err(Inconsistent("the last trick is not complete")),
            };
            if !last.set().is_subset(self.won[winner]) {
                return Err(Inconsistent(
                    "the last trick's cards are not with its winner",
                ));
            }
            if self.phase != Phase::Finished && self.trick.leader() != winner {
                return Err(Inconsistent("the winner of the last trick must lead"));
            }
        }
        let committed = self.passes.iter().filter(|p| p.is_some()).count();
        match self.phase {
            Phase::Passing => {
                if self.pass_direction().is_none() {
                    return Err(Inconsistent("a passing phase in a round without passing"));
                }
                if !self.trick.is_empty() || taken != 0 || self.last_trick.is_some() {
                    return Err(Inconsistent("cards were played during the passing phase"));
                }
                if committed == 4 {
                    return Err(Inconsistent(
                        "all four passes are committed but not exchanged",
                    ));
                }
                let size = |s: Seat| self.hands[s].len() + self.passes[s].map_or(0, |p| p.len());
                let first = size(Seat::ALL[0]);
                if first < 3 || Seat::ALL.iter().any(|&s| size(s) != first) {
                    return Err(Inconsistent(
                        "before passing every seat must hold the same number of cards, at least 3",
                    ));
                }
                if self.trick.leader() != self.dealer.right() {
                    return Err(Inconsistent("the dealer's right must lead the first trick"));
                }
            }
            Phase::Playing => {
                if self.trick.is_complete() {
                    return Err(Inconsistent(
                        "the current trick is complete but was not taken",
                    ));
                }
                if committed != 0 && (committed != 4 || self.pass_direction().is_none()) {
                    return Err(Inconsistent("the recorded passes do not fit the round"));
                }
                let next = self.trick.next_seat();
                let size = self.hands[next].len();
                if size == 0 {
                    return Err(Inconsistent("the seat to play holds no card"));
                }
                for i in 0..4u8 {
                    let seat = self.trick.leader().offset(i);
                    let expected = if usize::from(i) < self.trick.len() {
                        size - 1
                    } else {
                        size
                    };
                    if self.hands[seat].len() != expected {
                        return Err(Inconsistent(
                            "the hands do not fit the trick: those who played it hold one card less",
                        ));
                    }
                }
            }
            Phase::Finished => {
                if self.hands.iter().any(|h| !h.is_empty()) || !self.trick.is_empty() {
                    return Err(Inconsistent("a finished game still has cards in play"));
                }
            }
        }
        if (self.phase == Phase::Finished) != self.result.is_some() {
            return Err(Inconsistent(
                "a game has a result exactly when it is finished",
            ));
        }
        Ok(())
    }
}

/// Replays `actions` on a new game from `options` and `seed`. The result is identical (`==`)
/// to the game those actions produced live.
///
/// # Errors
///
/// The first refused action, with its index.
pub fn replay(
    options: RuleOptions,
    seed: [u8; 32],
    actions: &[Action],
) -> Result<Game, ReplayError> {
    let mut game = Game::new(options, seed);
    for (index, action) in actions.iter().enumerate() {
        game.apply_into(action, &mut Discard)
            .map_err(|error| ReplayError {
                index,
                action: action.clone(),
                error,
            })?;
    }
    Ok(game)
}
