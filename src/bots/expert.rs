//! The expert: determinized Monte Carlo ("perfect-information Monte Carlo").
//!
//! For a play decision it samples complete deals of the hidden cards that agree with
//! everything the seat knows (hand sizes, voids, the forced-Leekha and talbees inferences,
//! its own pass sitting in the receiver's hand), plays each candidate card in every sampled
//! world and finishes the round with the heuristic policy for all four seats, and keeps the
//! card whose rollouts cost the fewest points (the team's, in partnership). All candidates
//! are scored on the same worlds, which cancels most of the sampling noise between them.
//!
//! The worlds also lean towards what the others' plays reveal: of a few consistent deals
//! the expert keeps the one in which the heuristic would have made the most of the plays
//! actually seen this round, then trades cards between the other hands while that explains
//! the plays no worse (see [`super::evidence`]), and starts again a couple of times while
//! plays remain unexplained: a cheap stand-in for weighting by likelihood, which collapses
//! the sample when the evidence is sharp.
//!
//! For the pass it takes the few least dangerous legal passes by the heuristic's measure
//! and plays each of them out the same way: the other hands are dealt at random, the other
//! seats pass as the heuristic would, and the round is played with the heuristic.
//!
//! Candidates race: after each batch of worlds a candidate clearly worse than the best on
//! the same worlds (a paired z-test) is dropped, so the budget goes to the close calls.

use std::time::{Duration, Instant};

use rand::{Rng, RngExt};

use crate::rules::{
    Action, Card, CardSet, Direction, LegalActions, Mode, RuleOptions, Seat, SeatView, Trick,
    legal_plays,
};

use super::evidence::{Evidence, interchangeable};
use super::heuristic::{self, Ctx};
use super::knowledge::{Knowledge, Table, push};

/// How much work the expert may do per decision. The search stops at whichever limit comes
/// first; with the iteration cap binding the decision is a pure function of the view, the
/// history and the rng, while the time budget is the safety net that keeps a slow machine
/// responsive (at the price of determinism when it binds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpertConfig {
    /// The maximum number of rollouts: one rollout plays one candidate card in one sampled
    /// world to the end of the round. Worlds are added while the next one fits.
    pub max_iterations: u32,
    /// The wall-clock budget of one decision, checked between sampled worlds.
    pub time_budget: Duration,
}

impl ExpertConfig {
    /// The configuration used by [`choose`](super::choose) (hints, bot seats). The cap of
    /// 2,000 rollouts binds first (p99 under 30 ms on one core, see the README); the 45 ms
    /// budget only guards a slow or loaded machine, and keeps the 99th percentile of a
    /// decision under 50 ms. On 150 duplicate deals (seed 7) 2,000 rollouts with an
    /// inference pool of 12 saved +1.88 points/round against +1.65 for 1,000 and 6.
    pub const DEFAULT: ExpertConfig = ExpertConfig {
        max_iterations: 2000,
        time_budget: Duration::from_millis(45),
    };
}

impl Default for ExpertConfig {
    fn default() -> ExpertConfig {
        ExpertConfig::DEFAULT
    }
}

/// The expert's action for the seat of `view` (`None` if it has nothing to do).
///
/// Deterministic for a given rng state as long as the iteration cap, not the time budget,
/// ends the search. Falls back to the heuristic if the view admits no consistent deal
/// (a history that does not fit it, say).
pub fn choose_expert<R: Rng + ?Sized>(
    view: &SeatView,
    history: &[(Seat, Card)],
    config: &ExpertConfig,
    rng: &mut R,
) -> Option<Action> {
    let seat = view.seat?;
    let start = Instant::now();

    let weights = &heuristic::WEIGHTS;
    match view.legal_actions {
        LegalActions::Pass { cards, .. } => {
            match pass_search(view, seat, cards, config, start, rng) {
                Some(pass) => Some(super::pass(seat, pass)),
                None => super::heuristic_action(view, history, weights),
            }
        }
        LegalActions::Play { cards } => {
            let card = match Knowledge::new(view, history) {
                Some(knowledge) if cards.len() > 1 => {
                    search(&knowledge, cards, config, start, rng).filter(|c| cards.contains(*c))
                }
                _ => None,
            };
            match card {
                Some(card) => Some(Action::Play { seat, card }),
                None => super::heuristic_action(view, history, weights),
            }
        }
        LegalActions::None => None,
    }
}

/// The points that count for `me`: its own, plus its partner's in partnership.
#[inline]
pub(super) fn team_points(rules: &RuleOptions, me: Seat, points: &[u32; 4]) -> u8 {
    let mut total = points[me.index()];
    if rules.mode == Mode::Partnership {
        total += points[me.across().index()];
    }
    // At most 36 points in a round.
    total.min(255) as u8
}

/// The best card of `legal` by rollouts, or `None` when no world fits the knowledge (an
/// inconsistent view), in which case the caller falls back to the heuristic.
fn search<R: Rng + ?Sized>(
    k: &Knowledge,
    legal: CardSet,
    config: &ExpertConfig,
    start: Instant,
    rng: &mut R,
) -> Option<Card> {
    let candidates = candidates(k, legal);
    if candidates.len() == 1 {
        return Some(candidates[0]);
    }
    let heuristic_card = heuristic::play(&Ctx {
        seat: k.me,
        hand: k.hand,
        legal,
        trick: &k.trick,
        table: &k.table,
        rules: &k.rules,
        known: &k.known,
        weights: &heuristic::WEIGHTS,
    });
    let sampler = Sampler::new(k)?;
    let mut known_by = [[CardSet::EMPTY; 4]; 4];
    known_by[k.me.index()] = k.known;
    let evidence = Evidence::new(k, others_knowledge(k));
    let preferred = candidates
        .iter()
        .position(|&c| same_group(k, c, heuristic_card));
    let best = race(
        candidates.len(),
        preferred,
        config,
        start,
        rng,
        |rng| inferred_world(&sampler, &evidence, rng),
        |hands, i| {
            let mut sim = Sim {
                hands: *hands,
                trick: k.trick,
                table: k.table,
            };
            sim.play(k.me, candidates[i], &k.rules);
            sim.finish(&k.rules, &known_by);
            team_points(&k.rules, k.me, &sim.table.points)
        },
    )?;
    // Within the heuristic's group, play the heuristic's own card (they are equivalent).
    Some(if Some(best) == preferred {
        heuristic_card
    } else {
        candidates[best]
    })
}

/// A world to play out: of a few consistent worlds, the one whose hands best explain how
/// the others played so far, walked towards a better explanation. When that still leaves
/// plays unexplained it starts again, up to [`WORLD_ATTEMPTS`] times, and keeps the best.
pub(super) fn inferred_world<R: Rng + ?Sized>(
    sampler: &Sampler,
    evidence: &Evidence,
    rng: &mut R,
) -> Option<[CardSet; 4]> {
    let mut kept: Option<([CardSet; 4], u32)> = None;
    for _ in 0..WORLD_ATTEMPTS {
        let mut best = sampler.sample(rng)?;
        if evidence.is_empty() {
            return Some(best);
        }
        let mut best_misses = evidence.surprise(&best, u32::MAX);
        for _ in 1..INFERENCE_POOL {
            if best_misses == 0 {
                break;
            }
            let hands = sampler.sample(rng)?;
            let misses = evidence.surprise(&hands, best_misses);
            if misses < best_misses {
                best = hands;
                best_misses = misses;
            }
        }
        if best_misses > 0 {
            best_misses = evidence.refine(&mut best, REFINE_SWAPS, rng);
        }
        if kept.is_none_or(|(_, misses)| best_misses < misses) {
            kept = Some((best, best_misses));
        }
        if best_misses == 0 {
            break;
        }
    }
    kept.map(|(world, _)| world)
}

/// What the other seats know of the hands, as far as `k`'s seat can tell: what each knows
/// of its own pass is hidden, except for the seat that passed to us, which knows we hold
/// what it gave us.
pub(super) fn others_knowledge(k: &Knowledge) -> [[CardSet; 4]; 4] {
    let mut known = [[CardSet::EMPTY; 4]; 4];
    if let Some((giver, received)) = k.giver {
        known[giver.index()][k.me.index()] = received;
    }
    known
}

/// How many passes the pass search considers: the least dangerous by the heuristic. On 150
/// duplicate deals (seed 7), 12 saved +1.79 points/round against +1.65 for 6.
const PASS_CANDIDATES: usize = 12;

/// The best pass by rollouts among the heuristic's favourite few, or `None` if the view
/// does not allow a search (then the heuristic decides).
fn pass_search<R: Rng + ?Sized>(
    view: &SeatView,
    me: Seat,
    passable: CardSet,
    config: &ExpertConfig,
    start: Instant,
    rng: &mut R,
) -> Option<CardSet> {
    let rules = view.rules;
    let direction = view.pass_direction?;
    let weights = &heuristic::WEIGHTS;
    let candidates = heuristic::best_passes(view.hand, passable, &rules, weights, PASS_CANDIDATES);
    if candidates.len() <= 1 {
        return candidates.first().copied();
    }
    // Every hand holds as many cards as ours before passing (13 in a real deal).
    let size = view.hand.len();
    let unknown = CardSet::FULL - view.hand;
    if unknown.len() != 3 * size {
        return None;
    }
    let others = [me.offset(1), me.offset(2), me.offset(3)];
    let leader = view.dealer.right();
    let best = race(
        candidates.len(),
        Some(0),
        config,
        start,
        rng,
        |rng| {
            // A uniform deal of the unknown cards, and the others' heuristic passes.
            let mut cards: [Card; 52] = [Card::QUEEN_OF_SPADES; 52];
            let mut n = 0;
            for card in unknown {
                cards[n] = card;
                n += 1;
            }
            shuffle(&mut cards[..n], rng);
            let mut hands = [CardSet::EMPTY; 4];
            hands[me.index()] = view.hand;
            for (j, seat) in others.iter().enumerate() {
                hands[seat.index()] = cards[j * size..(j + 1) * size].iter().copied().collect();
            }
            let mut passes = [CardSet::EMPTY; 4];
            for seat in others {
                let hand = hands[seat.index()];
                let passable = crate::rules::passable_cards(hand, &rules);
                passes[seat.index()] = heuristic::choose_pass(hand, passable, &rules, weights)?;
            }
            Some((hands, passes))
        },
        |(hands, passes), i| {
            let mut passes = *passes;
            passes[me.index()] = candidates[i];
            passed_round_points(&rules, me, hands, &passes, direction, leader)
        },
    )?;
    Some(candidates[best])
}

/// The most candidates a race handles.
const MAX_CANDIDATES: usize = 16;
/// Worlds before the first racing check, and between checks.
const RACE_START: usize = 16;
const RACE_EVERY: usize = 8;
/// How many standard errors worse than the best a candidate must be to be dropped.
const RACE_Z: f64 = 3.0;

/// Evaluates `n` candidates on common sampled worlds until the iteration cap or the time
/// budget, dropping those clearly worse than the best as it goes, and returns the index
/// of the one with the lowest total cost (`preferred` on an exact tie). `None` if no world
/// could be sampled.
///
/// `sample` draws a world; `eval(world, i)` is the cost (points) of candidate `i` there.
fn race<R: Rng + ?Sized, W>(
    n: usize,
    preferred: Option<usize>,
    config: &ExpertConfig,
    start: Instant,
    rng: &mut R,
    mut sample: impl FnMut(&mut R) -> Option<W>,
    mut eval: impl FnMut(&W, usize) -> u8,
) -> Option<usize> {
    let n = n.min(MAX_CANDIDATES);
    let mut active = [false; MAX_CANDIDATES];
    active[..n].fill(true);
    let mut live = n;
    let mut totals = [0u32; MAX_CANDIDATES];
    let mut results: Vec<[u8; MAX_CANDIDATES]> = Vec::with_capacity(256);
    let cap = config.max_iterations.max(n as u32);
    let mut iterations = 0u32;
    while iterations + live as u32 <= cap && live > 1 {
        if !results.is_empty() && start.elapsed() >= config.time_budget {
            break;
        }
        let Some(world) = sample(rng) else {
            break;
        };
        iterations += live as u32;
        let mut row = [0u8; MAX_CANDIDATES];
        for i in 0..n {
            if active[i] {
                row[i] = eval(&world, i);
                totals[i] += u32::from(row[i]);
            }
        }
        results.push(row);
        if results.len() >= RACE_START && results.len().is_multiple_of(RACE_EVERY) {
            live = drop_losers(&results, &totals, &mut active[..n]);
        }
    }
    if results.is_empty() {
        return None;
    }
    // The survivors all saw every world: compare their totals.
    let best = (0..n).filter(|&i| active[i]).min_by_key(|&i| totals[i])?;
    Some(match preferred {
        Some(p) if p < n && active[p] && totals[p] == totals[best] => p,
        _ => best,
    })
}

/// Drops the candidates that are significantly worse than the current best on the worlds
/// played so far (a paired z-test: same worlds, so the luck of the deal cancels). Returns
/// how many remain.
fn drop_losers(
    results: &[[u8; MAX_CANDIDATES]],
    totals: &[u32; MAX_CANDIDATES],
    active: &mut [bool],
) -> usize {
    let Some(best) = (0..active.len())
        .filter(|&i| active[i])
        .min_by_key(|&i| totals[i])
    else {
        return 0;
    };
    let w = results.len() as f64;
    for i in 0..active.len() {
        if !active[i] || i == best {
            continue;
        }
        let mut sum = 0.0;
        let mut squares = 0.0;
        for row in results {
            let d = f64::from(row[i]) - f64::from(row[best]);
            sum += d;
            squares += d * d;
        }
        let mean = sum / w;
        let var = (squares / w - mean * mean).max(0.0);
        // A floor on the spread keeps a few identical worlds from looking certain.
        let se = (var.max(0.25) / w).sqrt();
        if mean > RACE_Z * se {
            active[i] = false;
        }
    }
    active.iter().filter(|&&a| a).count()
}

/// How many consistent worlds are drawn for each world played out; the one that best
/// explains the others' plays is kept (see [`Evidence::surprise`]). Measured against the
/// heuristic: 1 (no inference) +1.30 points/round, 6 +1.79 on the same 300 deals, at about
/// twice the work; 12 (with 2,000 rollouts) a little more again. A Metropolis walk over
/// card swaps between the other hands, accepting by `exp(-β·Δsurprise)`, did not beat the
/// best-of-pool choice (+1.63 against +1.65 on 150 deals) and was dropped; the greedy,
/// partly aimed walk of [`REFINE_SWAPS`] after the pool did. Against people, who do not
/// play like the heuristic, both only narrow the sample to worlds where their plays look
/// sensible.
const INFERENCE_POOL: usize = 12;

/// How many card swaps [`Evidence::refine`] may try on the pool's best world while it still
/// leaves plays unexplained. On 300 duplicate deals (seed 7, 2,000 rollouts): none +1.98
/// points/round, 30 +2.35, 60 +2.38 at more cost; a pool of 4 with 60 swaps +2.24.
const REFINE_SWAPS: u32 = 30;

/// How many times [`inferred_world`] may start again from fresh samples while its world
/// still leaves plays unexplained. On 300 duplicate deals (seed 7, 2,000 rollouts, 45 ms
/// net): one attempt +2.39 points/round, three +2.49.
const WORLD_ATTEMPTS: u32 = 3;

/// The legal cards worth evaluating: cards of one suit with nothing but our own or played
/// cards between them (and the same points) are interchangeable, so one of each group is
/// enough. The kept card is the highest of its group.
fn candidates(k: &Knowledge, legal: CardSet) -> Vec<Card> {
    let mut out: Vec<Card> = Vec::with_capacity(13);
    for card in legal.iter().rev() {
        if let Some(&last) = out.last()
            && same_group(k, last, card)
        {
            continue;
        }
        out.push(card);
    }
    out
}

/// Whether `a` and `b` are interchangeable for this seat: no card another seat may hold
/// lies between them.
fn same_group(k: &Knowledge, a: Card, b: Card) -> bool {
    interchangeable(a, b, k.unseen())
}

/// The points that count for `me` when the round is played out with the heuristic policy
/// after these passes are exchanged in `direction` (each seat knowing where its own went).
pub(super) fn passed_round_points(
    rules: &RuleOptions,
    me: Seat,
    hands: &[CardSet; 4],
    passes: &[CardSet; 4],
    direction: Direction,
    leader: Seat,
) -> u8 {
    let mut dealt = *hands;
    let mut known_by = [[CardSet::EMPTY; 4]; 4];
    for seat in Seat::ALL {
        let giver = direction.giver(seat);
        dealt[seat.index()] = (hands[seat.index()] - passes[seat.index()]) | passes[giver.index()];
        known_by[seat.index()][direction.receiver(seat).index()] = passes[seat.index()];
    }
    let mut sim = Sim {
        hands: dealt,
        trick: Trick::new(leader),
        table: Table::default(),
    };
    sim.finish(rules, &known_by);
    team_points(rules, me, &sim.table.points)
}

// ----- rollouts ----------------------------------------------------------------------------

/// A sampled world being played out: all four hands, the trick and the public record.
#[derive(Clone, Copy)]
pub(super) struct Sim {
    pub hands: [CardSet; 4],
    pub trick: Trick,
    pub table: Table,
}

impl Sim {
    /// Plays `card` for `seat`, taking the trick when it completes.
    #[inline]
    pub fn play(&mut self, seat: Seat, card: Card, rules: &RuleOptions) {
        self.table.observe(seat, card, &self.trick, rules);
        self.hands[seat.index()].remove(card);
        self.trick = push(self.trick, card);
        if self.trick.is_complete() {
            let winner = self.trick.taker();
            self.table.points[winner.index()] += self.trick.points();
            self.trick = Trick::new(winner);
        }
    }

    /// Plays the round to its end with the heuristic policy for every seat.
    pub fn finish(&mut self, rules: &RuleOptions, known_by: &[[CardSet; 4]; 4]) {
        loop {
            let seat = self.trick.next_seat();
            let hand = self.hands[seat.index()];
            if hand.is_empty() {
                return;
            }
            let legal = legal_plays(hand, &self.trick, rules);
            let card = if legal.len() == 1 {
                legal.lowest()
            } else {
                Some(heuristic::play(&Ctx {
                    seat,
                    hand,
                    legal,
                    trick: &self.trick,
                    table: &self.table,
                    rules,
                    known: &known_by[seat.index()],
                    weights: &heuristic::WEIGHTS,
                }))
            };
            match card {
                Some(card) => self.play(seat, card, rules),
                None => return,
            }
        }
    }
}

// ----- sampling ----------------------------------------------------------------------------

/// Deals the hidden cards to the other seats consistently with the knowledge.
///
/// Each card gets the set of "buckets" it may go to: the three other seats (not void in
/// its suit, not known to lack it) and, when the history is incomplete, a fourth bucket for
/// cards that were in fact already played. Constrained cards are placed first, one by one,
/// each to a bucket drawn in proportion to the room left, keeping only draws after which a
/// complete placement still exists (Hall's condition over the buckets, exact for this
/// transportation problem). The unconstrained cards then fill the remaining room uniformly.
/// So sampling never fails on a consistent knowledge and never needs a retry loop.
pub(super) struct Sampler {
    others: [Seat; 3],
    base: [CardSet; 4],
    cap: [u8; 4],
    constrained: Vec<(Card, u8)>,
    free: Vec<Card>,
    /// How many constrained cards have each bucket mask.
    count: [u8; 16],
}

const ALL_BUCKETS: u8 = 0b1111;

impl Sampler {
    pub(super) fn new(k: &Knowledge) -> Option<Sampler> {
        let others = [k.me.offset(1), k.me.offset(2), k.me.offset(3)];
        let mut base = [CardSet::EMPTY; 4];
        base[k.me.index()] = k.hand;
        let mut pinned = CardSet::EMPTY;
        let mut cap = [0u8; 4];
        for (b, seat) in others.iter().enumerate() {
            let known = k.known[seat.index()];
            base[seat.index()] = known;
            pinned |= known;
            cap[b] = k.counts[seat.index()].checked_sub(known.len() as u8)?;
        }
        let pool = k.unseen() - pinned;
        let room: usize = cap[..3].iter().map(|&c| usize::from(c)).sum();
        // Cards missing from an incomplete history were played: they go to bucket 3.
        cap[3] = u8::try_from(pool.len().checked_sub(room)?).ok()?;
        let mut sampler = Sampler {
            others,
            base,
            cap,
            constrained: Vec::with_capacity(pool.len()),
            free: Vec::with_capacity(pool.len()),
            count: [0; 16],
        };
        for card in pool {
            let mut mask = 0b1000;
            for (b, &seat) in others.iter().enumerate() {
                if !k.table.is_void(seat, card.suit())
                    && !k.table.lacks[seat.index()].contains(card)
                {
                    mask |= 1 << b;
                }
            }
            if mask == ALL_BUCKETS {
                sampler.free.push(card);
            } else {
                sampler.constrained.push((card, mask));
                sampler.count[usize::from(mask)] += 1;
            }
        }
        sampler
            .feasible(&sampler.cap, &sampler.count)
            .then_some(sampler)
    }

    /// Hall's condition: for every set `S` of buckets, the cards that may only go into `S`
    /// fit into the room of `S` (the free cards may go anywhere: they count for the full
    /// set only, which the totals guarantee).
    fn feasible(&self, cap: &[u8; 4], count: &[u8; 16]) -> bool {
        for set in 1..ALL_BUCKETS {
            let room: u32 = (0..4)
                .filter(|b| set & (1 << b) != 0)
                .map(|b| u32::from(cap[b]))
                .sum();
            let mut need = 0u32;
            let mut mask = set;
            // Every non-empty sub-mask of `set`.
            while mask != 0 {
                need += u32::from(count[usize::from(mask)]);
                mask = (mask - 1) & set;
            }
            if need > room {
                return false;
            }
        }
        true
    }

    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<[CardSet; 4]> {
        let mut hands = self.base;
        let mut cap = self.cap;
        let mut count = self.count;
        let mut order: [(Card, u8); 52] = [(Card::QUEEN_OF_SPADES, 0); 52];
        let n = self.constrained.len();
        order[..n].copy_from_slice(&self.constrained);
        shuffle(&mut order[..n], rng);
        for &(card, mask) in &order[..n] {
            count[usize::from(mask)] -= 1;
            let mut options = mask;
            let bucket = loop {
                let room: u32 = (0..4)
                    .filter(|b| options & (1 << b) != 0)
                    .map(|b| u32::from(cap[b]))
                    .sum();
                if room == 0 {
                    return None;
                }
                let mut r = rng.random_range(0..room);
                let mut pick = 0;
                for (b, &room_b) in cap.iter().enumerate() {
                    if options & (1 << b) == 0 {
                        continue;
                    }
                    let c = u32::from(room_b);
                    if r < c {
                        pick = b;
                        break;
                    }
                    r -= c;
                }
                cap[pick] -= 1;
                if self.feasible(&cap, &count) {
                    break pick;
                }
                cap[pick] += 1;
                options &= !(1 << pick);
            };
            self.give(&mut hands, bucket, card);
        }
        let mut free: [Card; 52] = [Card::QUEEN_OF_SPADES; 52];
        let m = self.free.len();
        free[..m].copy_from_slice(&self.free);
        shuffle(&mut free[..m], rng);
        let mut next = 0;
        for (bucket, &room) in cap.iter().enumerate() {
            for _ in 0..room {
                let card = *free.get(next).filter(|_| next < m)?;
                self.give(&mut hands, bucket, card);
                next += 1;
            }
        }
        Some(hands)
    }

    #[inline]
    fn give(&self, hands: &mut [CardSet; 4], bucket: usize, card: Card) {
        if let Some(seat) = self.others.get(bucket) {
            hands[seat.index()].insert(card);
        }
    }
}

fn shuffle<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::bots::{BotLevel, choose};
    use crate::rules::{ForcedLeekha, Game, PassDirection, Suit, Talbees};

    /// Plays games with the heuristic and calls `check(game, seat, knowledge)` for the seat
    /// to play at every step, under several rule sets.
    fn for_each_position(mut check: impl FnMut(&Game, Seat, &Knowledge)) {
        let rule_sets = [
            RuleOptions::default(),
            RuleOptions {
                forced_leekha: ForcedLeekha::QueenOnly,
                talbees: Talbees::On,
                pass_direction: PassDirection::Left,
                ..RuleOptions::default()
            },
            RuleOptions {
                forced_leekha: ForcedLeekha::Off,
                mode: Mode::Partnership,
                pass_direction: PassDirection::NoPassing,
                ..RuleOptions::default()
            },
        ];
        for (i, rules) in rule_sets.into_iter().enumerate() {
            for seed in 0..12u64 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed * 10 + i as u64);
                let mut game = Game::from_rng(rules, &mut rng);
                let mut history = Vec::new();
                while game.round_number() == 1 && !game.is_finished() {
                    for seat in game.to_act().iter().collect::<Vec<_>>() {
                        let view = game.view(seat);
                        if let Some(k) = Knowledge::new(&view, &history) {
                            check(&game, seat, &k);
                        }
                        let action = choose(BotLevel::Heuristic, &view, &history, &mut rng);
                        let action = action.unwrap();
                        game.apply(&action).unwrap();
                        if let Action::Play { seat, card } = action {
                            history.push((seat, card));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_inferences_hold_for_the_real_hands() {
        let mut voids = 0;
        let mut lacks = 0;
        for_each_position(|game, me, k| {
            assert_eq!(k.hand, game.hand(me));
            for seat in Seat::ALL {
                let hand = game.hand(seat);
                for suit in Suit::ALL {
                    if k.table.is_void(seat, suit) {
                        voids += 1;
                        assert!(hand.of_suit(suit).is_empty(), "{seat} void in {suit}");
                    }
                }
                lacks += k.table.lacks[seat.index()].len();
                assert!(hand.is_disjoint(k.table.lacks[seat.index()]));
                assert!(
                    k.known[seat.index()].is_subset(hand),
                    "our pass is with {seat}"
                );
                assert_eq!(usize::from(k.counts[seat.index()]), hand.len());
            }
        });
        assert!(
            voids > 100 && lacks > 100,
            "the checks saw inferences ({voids}, {lacks})"
        );
    }

    /// Asserts that `hands` is a deal `me` could believe in: its own hand, every other
    /// hand of the right size, voids, inferences and our pass respected, no card twice.
    fn assert_agrees(game: &Game, me: Seat, k: &Knowledge, hands: &[CardSet; 4]) {
        let mut all = CardSet::EMPTY;
        for seat in Seat::ALL {
            let hand = hands[seat.index()];
            assert!(all.is_disjoint(hand));
            all |= hand;
            assert_eq!(hand.len(), game.hand(seat).len());
            assert!(hand.is_disjoint(k.table.lacks[seat.index()]));
            assert!(k.known[seat.index()].is_subset(hand));
            for suit in Suit::ALL {
                if k.table.is_void(seat, suit) {
                    assert!(hand.of_suit(suit).is_empty());
                }
            }
        }
        assert_eq!(hands[me.index()], game.hand(me));
        assert_eq!(all, k.hand | k.unseen());
    }

    #[test]
    fn sampled_worlds_agree_with_everything_the_seat_knows() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut worlds = 0;
        for_each_position(|game, me, k| {
            let sampler = Sampler::new(k).expect("the real deal is consistent");
            for _ in 0..4 {
                let hands = sampler.sample(&mut rng).expect("sampling never fails");
                worlds += 1;
                assert_agrees(game, me, k, &hands);
            }
        });
        assert!(worlds > 1000);
    }

    #[test]
    fn an_incomplete_history_still_samples_the_right_hand_sizes() {
        // Without history, the played cards the seat cannot see go to the "played" bucket.
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for_each_position(|game, _, k| {
            let view = game.view(k.me);
            let Some(blind) = Knowledge::new(&view, &[]) else {
                return;
            };
            let sampler = Sampler::new(&blind).expect("still consistent");
            let hands = sampler.sample(&mut rng).unwrap();
            for seat in Seat::ALL {
                assert_eq!(hands[seat.index()].len(), game.hand(seat).len());
            }
        });
    }

    #[test]
    fn refined_worlds_keep_every_constraint_and_explain_the_plays_better() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let (mut truth_fits, mut uniform_fits, mut refined_fits, mut positions) = (0, 0, 0, 0);
        for_each_position(|game, me, k| {
            let evidence = Evidence::new(k, others_knowledge(k));
            if evidence.is_empty() {
                return;
            }
            positions += 1;
            let truth: [CardSet; 4] = std::array::from_fn(|i| game.hand(Seat::ALL[i]));
            truth_fits += u32::from(evidence.surprise(&truth, u32::MAX) == 0);
            let sampler = Sampler::new(k).expect("the real deal is consistent");
            let mut world = sampler.sample(&mut rng).unwrap();
            let before = evidence.surprise(&world, u32::MAX);
            uniform_fits += u32::from(before == 0);
            let after = evidence.refine(&mut world, REFINE_SWAPS, &mut rng);
            assert!(after <= before, "refining never adds surprise");
            assert_eq!(after, evidence.surprise(&world, u32::MAX));
            refined_fits += u32::from(after == 0);
            assert_agrees(game, me, k, &world);
        });
        // The heuristic explains its own plays (its pass aside); a uniform deal rarely
        // does, a refined one mostly.
        assert!(positions > 500, "{positions}");
        assert!(
            truth_fits * 10 > positions * 8,
            "{truth_fits} of {positions}"
        );
        assert!(
            refined_fits > 2 * uniform_fits,
            "{refined_fits} against {uniform_fits}"
        );
    }

    #[test]
    fn the_search_is_deterministic_for_a_seed() {
        let config = ExpertConfig {
            max_iterations: 200,
            time_budget: Duration::from_secs(3600),
        };
        let mut checked = 0;
        for_each_position(|game, me, k| {
            if checked > 40 || game.legal_plays(me).len() < 2 {
                return;
            }
            checked += 1;
            let legal = game.legal_plays(me);
            let a = search(
                k,
                legal,
                &config,
                Instant::now(),
                &mut ChaCha8Rng::seed_from_u64(1),
            );
            let b = search(
                k,
                legal,
                &config,
                Instant::now(),
                &mut ChaCha8Rng::seed_from_u64(1),
            );
            assert_eq!(a, b);
            assert!(legal.contains(a.unwrap()));
        });
    }
}
