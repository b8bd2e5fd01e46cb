//! The rule-based bot: passes the cards that are dangerous to keep and plays by a small
//! risk model (how likely a card takes the trick, and how many points the trick will then
//! hold), from nothing but the seat's own hand and the public record.
//!
//! It is also the policy of the expert's rollouts, so it must be cheap: no allocation, a
//! handful of float operations per candidate card.

use crate::rules::{
    Card, CardSet, GUARDS, Mode, PassRestriction, RuleOptions, Seat, Suit, Trick, check_pass,
};

use super::knowledge::{Table, above, below};

/// Tuning constants of the risk model and of passing, gathered in one place (the rest of
/// the model is structure, these are the knobs that were tuned).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Weights {
    /// How much the danger of keeping a card counts when choosing what to play.
    pub shed: f32,
    /// Bonus for leading the last card of a suit (a void lets us discard later).
    pub lead_void: f32,
    /// Bonus for leading under a Leekha that is still out, to flush it.
    pub flush: f32,
    /// Bonus for discarding the last card of a suit.
    pub discard_void: f32,
    /// Expected points a void follower throws on a trick besides a Leekha.
    pub dump_other: f32,
    /// Chance that a Leekha holder must play it under our lower card (no lower card).
    pub forced_under: f32,
    /// What a heart keeps catching, for the keep danger.
    pub catch_heart: f32,
    /// What a spade above the queen catches while the queen is out.
    pub catch_queen: f32,
    /// What a diamond above the ten catches while the ten is out.
    pub catch_ten: f32,
    /// Risk of taking back an own Leekha without lower cards of its suit.
    pub own_leekha: f32,
    /// Passing: value of a void.
    pub pass_void: f32,
    /// Passing: weight of high hearts.
    pub pass_heart: f32,
    /// Passing: weight of other high cards.
    pub pass_high: f32,
}

/// The weights the heuristic plays with.
pub(crate) const WEIGHTS: Weights = Weights {
    // Tuned by coordinate descent in duplicate tournaments of a variant seat against three
    // heuristics (10,000 deals per step); confirmed on fresh deals.
    shed: 0.56,
    lead_void: 0.96,
    flush: 1.6,
    discard_void: 1.6,
    dump_other: 0.7,
    forced_under: 0.075,
    catch_heart: 0.0,
    catch_queen: 6.5,
    catch_ten: 5.0,
    own_leekha: 0.8,
    pass_void: 2.5,
    pass_heart: 1.5,
    pass_high: 1.2,
};

/// Everything the play policy looks at: one seat's hand and legal cards, the trick, the
/// public record and the cards this seat knows others hold (its own pass).
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The seat to play.
    pub seat: Seat,
    /// Its hand.
    pub hand: CardSet,
    /// Its legal cards (never empty).
    pub legal: CardSet,
    /// The trick in progress.
    pub trick: &'a Trick,
    /// The public record of the round.
    pub table: &'a Table,
    /// The rules.
    pub rules: &'a RuleOptions,
    /// Per seat: cards this seat knows that seat holds.
    pub known: &'a [CardSet; 4],
    /// The tuning constants.
    pub weights: &'a Weights,
}

/// Per-decision estimates shared by every candidate card.
struct Est {
    unseen: CardSet,
    /// Probability that each seat holds `QS`.
    queen: [f32; 4],
    /// Probability that each seat holds `10D`.
    ten: [f32; 4],
    partner: Option<Seat>,
    /// The seats that play after us in this trick, `followers[..len]`.
    followers: [Seat; 3],
    len: usize,
    /// Per follower: the points it throws on the trick when void in the led suit.
    dump: [f32; 3],
    /// Per follower and suit: the chance it is void in the suit.
    void: [[f32; 4]; 3],
    /// `pow[k]`: the chance that a follower's hand misses `k` given unseen cards (the row
    /// of [`MISSES`] for this many unseen cards and this hand size).
    pow: &'static [f32; 14],
}

/// `MISSES[u][n][k] = (1 - k/u)^n`: the chance that a hand of `n` cards drawn (with
/// replacement, close enough and cheap) from `u` unseen cards misses `k` given ones.
/// Computed at compile time: the rollouts ask for it millions of times.
static MISSES: [[[f32; 14]; 14]; 53] = {
    let mut table = [[[0.0f32; 14]; 14]; 53];
    let mut u = 0;
    while u < 53 {
        let mut n = 0;
        while n < 14 {
            let mut k = 0;
            while k < 14 {
                let base = if u == 0 || k >= u {
                    0.0
                } else {
                    1.0 - k as f32 / u as f32
                };
                let mut power = 1.0f32;
                let mut i = 0;
                while i < n {
                    power *= base;
                    i += 1;
                }
                table[u][n][k] = power;
                k += 1;
            }
            n += 1;
        }
        u += 1;
    }
    table
};

impl Est {
    /// `(1 - k/u)^n`: the chance a follower holds none of `k` given unseen cards.
    #[inline]
    fn misses(&self, k: usize) -> f32 {
        self.pow[k.min(13)]
    }
}

impl Ctx<'_> {
    fn estimates(&self) -> Est {
        let unseen = CardSet::FULL - self.hand - self.table.played;
        let after = 3 - self.trick.len();
        let mut followers = [self.seat; 3];
        for (k, f) in followers.iter_mut().enumerate().take(after) {
            *f = self.seat.offset(k as u8 + 1);
        }
        let mut est = Est {
            unseen,
            queen: [0.0; 4],
            ten: [0.0; 4],
            partner: (self.rules.mode == Mode::Partnership).then(|| self.seat.across()),
            followers,
            len: after,
            dump: [0.0; 3],
            void: [[1.0; 4]; 3],
            pow: &MISSES[unseen.len().min(52)][self.hand.len().min(13)],
        };
        est.queen = self.holding(&est, Card::QUEEN_OF_SPADES);
        est.ten = self.holding(&est, Card::TEN_OF_DIAMONDS);
        for (j, &f) in followers.iter().enumerate().take(after) {
            let i = f.index();
            // A void follower must throw a forced Leekha it holds (without the forced rule
            // the heuristic throws one by choice), else its worst card, usually a heart.
            let held = est.queen[i] + est.ten[i];
            est.dump[j] = 13.0 * est.queen[i]
                + 10.0 * est.ten[i]
                + (1.0 - held).max(0.0) * self.weights.dump_other;
            for suit in Suit::ALL {
                if !self.table.is_void(f, suit) {
                    let out = (unseen & CardSet::suit(suit)).len();
                    est.void[j][suit.index() as usize] = est.misses(out);
                }
            }
        }
        est
    }

    /// The probability that each seat holds `card`: certain for our own pass, otherwise
    /// spread evenly over the seats that may hold it.
    fn holding(&self, est: &Est, card: Card) -> [f32; 4] {
        let mut p = [0.0; 4];
        if !est.unseen.contains(card) {
            return p;
        }
        for seat in Seat::ALL {
            if self.known[seat.index()].contains(card) {
                p[seat.index()] = 1.0;
                return p;
            }
        }
        let mut total = 0.0;
        for seat in Seat::ALL {
            if seat != self.seat
                && !self.table.is_void(seat, card.suit())
                && !self.table.lacks[seat.index()].contains(card)
            {
                p[seat.index()] = 1.0;
                total += 1.0;
            }
        }
        if total > 0.0 {
            for x in &mut p {
                *x /= total;
            }
        }
        p
    }

    /// The chance that `card` takes the trick (for the team in partnership), and the points
    /// the trick would then hold.
    #[inline]
    fn win_model(&self, est: &Est, card: Card) -> (f32, f32) {
        let suit = card.suit();
        if let Some((_, best)) = self.trick.winner()
            && (best.suit() != suit || best > card)
        {
            return (0.0, 0.0);
        }
        let out = est.unseen & CardSet::suit(suit);
        let no_lower = est.misses((out & below(card)).len());
        let mut p = 1.0;
        let mut points = (self.trick.points() + card.points()) as f32;
        for j in 0..est.len {
            let f = est.followers[j];
            let i = f.index();
            let void = est.void[j][suit.index() as usize];
            // It must go over us if it holds the suit but nothing lower.
            if est.partner != Some(f) && void < 1.0 {
                p *= 1.0 - (no_lower - void).max(0.0);
            }
            let follow = match suit {
                Suit::Hearts => 1.0,
                Suit::Spades if card > Card::QUEEN_OF_SPADES => 13.0 * est.queen[i],
                Suit::Spades => 13.0 * est.queen[i] * self.weights.forced_under,
                Suit::Diamonds if card > Card::TEN_OF_DIAMONDS => 10.0 * est.ten[i],
                Suit::Diamonds => 10.0 * est.ten[i] * self.weights.forced_under,
                Suit::Clubs => 0.0,
            };
            points += void * est.dump[j] + (1.0 - void) * follow;
        }
        (p, points)
    }

    /// How dangerous `card` is to keep for the rest of the round: the chance it takes a
    /// trick later times what such a trick catches, plus the risk of taking it back
    /// ourselves if it is worth points.
    #[inline]
    fn keep_danger(&self, est: &Est, card: Card) -> f32 {
        let suit = card.suit();
        let out = est.unseen & CardSet::suit(suit);
        let higher = (out & above(card)).len() as f32;
        let lower = (out & below(card)).len() as f32;
        let my_lower = (self.hand & below(card)).len() as f32;
        let wins = if out.is_empty() {
            // Everybody else is out of the suit: it wins whenever it is led.
            0.6
        } else {
            lower / (lower + 2.0 * higher + 1.0) / (1.0 + 0.5 * my_lower)
        };
        let mut catch = 1.0;
        match suit {
            Suit::Hearts => catch += self.weights.catch_heart,
            Suit::Spades if card > Card::QUEEN_OF_SPADES && out.contains(Card::QUEEN_OF_SPADES) => {
                catch += self.weights.catch_queen;
            }
            Suit::Diamonds
                if card > Card::TEN_OF_DIAMONDS && out.contains(Card::TEN_OF_DIAMONDS) =>
            {
                catch += self.weights.catch_ten;
            }
            _ => {}
        }
        let own = if card.is_leekha() {
            // Protected by our lower cards of the suit, exposed without them.
            card.points() as f32 * self.weights.own_leekha / (1.0 + 0.7 * my_lower)
        } else {
            0.3 * card.points() as f32
        };
        own + wins * catch
    }
}

/// The heuristic's card for the seat of `ctx`. `ctx.legal` must not be empty.
pub(crate) fn play(ctx: &Ctx<'_>) -> Card {
    let legal = ctx.legal;
    if legal.len() <= 1 {
        return legal.lowest().unwrap_or(Card::QUEEN_OF_SPADES);
    }
    let est = ctx.estimates();
    match ctx.trick.led_suit() {
        None => lead(ctx, &est),
        Some(led) if !(legal & CardSet::suit(led)).is_empty() => follow(ctx, &est),
        Some(_) => discard(ctx, &est),
    }
}

/// Leading: the card with the lowest expected cost, counting the chance it wins, what the
/// trick then holds, and a few strategic bonuses.
fn lead(ctx: &Ctx<'_>, est: &Est) -> Card {
    best_by(ctx.legal, |card| {
        let suit = card.suit();
        let (p, points) = ctx.win_model(est, card);
        let mut cost = p * points - ctx.weights.shed * ctx.keep_danger(est, card);
        if ctx.hand.of_suit(suit).len() == 1 {
            cost -= ctx.weights.lead_void;
        }
        if let Some(leekha) = suit.leekha()
            && card < leekha
            && est.unseen.contains(leekha)
            && (ctx.hand & above(leekha)).is_empty()
        {
            // Leading under a Leekha that is out eats its holder's protection.
            cost -= ctx.weights.flush * (1.0 - p);
        }
        cost
    })
}

/// Following suit: same cost as leading; a card under the current winner costs nothing
/// but its keep danger, so the policy ducks with its highest safe card and sheds a Leekha
/// under a higher card.
fn follow(ctx: &Ctx<'_>, est: &Est) -> Card {
    best_by(ctx.legal, |card| {
        let (p, points) = ctx.win_model(est, card);
        p * points - ctx.weights.shed * ctx.keep_danger(est, card)
    })
}

/// Discarding (void in the led suit): throw the card most dangerous to keep, preferring
/// points, unless the partner is taking the trick.
fn discard(ctx: &Ctx<'_>, est: &Est) -> Card {
    let partner_takes = match (est.partner, ctx.trick.winner()) {
        (Some(partner), Some((winner, _))) if partner == winner => {
            if ctx.trick.len() == 3 {
                1.0
            } else {
                0.6
            }
        }
        _ => 0.0,
    };
    best_by(ctx.legal, |card| {
        let points = card.points() as f32;
        let mut value = ctx.keep_danger(est, card) + points * (1.0 - 2.0 * partner_takes);
        if ctx.hand.of_suit(card.suit()).len() == 1 {
            value += ctx.weights.discard_void;
        }
        -value
    })
}

/// The card of `cards` with the lowest cost; ties go to the higher card (shedding).
#[inline]
fn best_by(cards: CardSet, mut cost: impl FnMut(Card) -> f32) -> Card {
    let mut best = None;
    let mut best_cost = f32::INFINITY;
    for card in cards.iter().rev() {
        let c = cost(card);
        if c < best_cost - 1e-6 || best.is_none() {
            best = Some(card);
            best_cost = c;
        }
    }
    best.unwrap_or(Card::QUEEN_OF_SPADES)
}

// ----- passing ---------------------------------------------------------------------------

/// Risk of keeping `QS` by the number of lower spades kept with it.
const QUEEN_RISK: [f32; 7] = [0.85, 0.65, 0.45, 0.3, 0.18, 0.1, 0.05];
/// Risk of keeping `10D` by the number of lower diamonds kept with it.
const TEN_RISK: [f32; 7] = [0.8, 0.6, 0.42, 0.28, 0.17, 0.1, 0.05];
/// Per card: risk that `KS`/`AS` catch the queen (or a diamond above the ten catches the
/// ten) by the number of protecting low cards.
const CATCH_RISK: [f32; 7] = [0.55, 0.4, 0.28, 0.18, 0.12, 0.08, 0.05];

#[inline]
fn risk(table: &[f32; 7], low: usize) -> f32 {
    table[low.min(6)]
}

/// How dangerous a hand is to play out: the sum of [`suit_danger`] over the suits (which
/// is what makes [`best_passes`] fast). The tests' reference; the code sums per suit.
#[cfg(test)]
pub(crate) fn hand_danger(kept: CardSet, w: &Weights) -> f32 {
    Suit::ALL
        .into_iter()
        .map(|suit| suit_danger(kept.of_suit(suit), suit, w))
        .sum()
}

/// How dangerous the kept cards `held` of `suit` are to play out: a Leekha without lower
/// cards to protect it, the high spades and diamonds that catch a Leekha still out, high
/// cards without low company; an empty suit is a bonus (a void to discard into).
fn suit_danger(held: CardSet, suit: Suit, w: &Weights) -> f32 {
    if held.is_empty() {
        return -w.pass_void;
    }
    let mut d = 0.0;
    // Per Leekha: the risk of keeping it, and the share of its points that a high card of
    // its suit kept without it stands to catch.
    let leekha_risk = match suit {
        Suit::Spades => Some((Card::QUEEN_OF_SPADES, &QUEEN_RISK, 1.0)),
        Suit::Diamonds => Some((Card::TEN_OF_DIAMONDS, &TEN_RISK, 0.6)),
        Suit::Clubs | Suit::Hearts => None,
    };
    if let Some((leekha, keep_risk, share)) = leekha_risk {
        let points = leekha.points() as f32;
        let low = (held & below(leekha)).len();
        if held.contains(leekha) {
            d += points * risk(keep_risk, low);
        } else {
            let high = (held & above(leekha)).len() as f32;
            d += high * points * share * risk(&CATCH_RISK, low);
        }
    }
    let weight = if suit == Suit::Hearts {
        w.pass_heart
    } else {
        w.pass_high
    };
    let mut lower = 0.0;
    for card in held {
        if card.is_leekha() || (suit == Suit::Spades && card > Card::QUEEN_OF_SPADES) {
            continue;
        }
        let rank = f32::from(card.rank().index()) / 12.0;
        d += weight * rank * rank / (1.0 + lower);
        lower += 1.0;
    }
    d
}

/// The heuristic's pass: the legal 3-card set that leaves the least dangerous hand.
pub(crate) fn choose_pass(
    hand: CardSet,
    passable: CardSet,
    rules: &RuleOptions,
    w: &Weights,
) -> Option<CardSet> {
    best_passes(hand, passable, rules, w, 1).first().copied()
}

/// The cards a pass takes from one suit, and what that suit then costs (its danger, minus
/// a tiny preference for passing high cards that breaks ties).
#[derive(Clone, Copy)]
struct Part {
    cards: CardSet,
    cost: f32,
}

/// The `count` legal passes that leave the least dangerous hands, best first.
///
/// The danger is a sum over suits and the pass restriction is a condition per suit (a
/// non-guard may not take a suit's last card), so each suit's ways of giving 0 to 3 cards
/// are scored once and the passes are assembled from them: a few dozen suit evaluations
/// instead of scoring all 286 triples on whole hands.
pub(crate) fn best_passes(
    hand: CardSet,
    passable: CardSet,
    rules: &RuleOptions,
    w: &Weights,
    count: usize,
) -> Vec<CardSet> {
    let restricted = rules.pass_restriction == PassRestriction::On;
    // parts[suit][k]: the legal ways to give k cards of the suit.
    let mut parts: [[Vec<Part>; 4]; 4] = Default::default();
    for suit in Suit::ALL {
        let held = hand.of_suit(suit);
        let mut cards = [Card::QUEEN_OF_SPADES; 13];
        let mut n = 0;
        for card in held & passable {
            cards[n] = card;
            n += 1;
        }
        let lists = &mut parts[suit.index() as usize];
        let mut add = |taken: CardSet| {
            if restricted && !(taken - GUARDS).is_empty() && taken == held {
                return;
            }
            let ranks: f32 = taken.iter().map(|c| f32::from(c.rank().index())).sum();
            lists[taken.len()].push(Part {
                cards: taken,
                cost: suit_danger(held - taken, suit, w) - 0.001 * ranks,
            });
        };
        add(CardSet::EMPTY);
        for i in 0..n {
            add(CardSet::single(cards[i]));
            for j in i + 1..n {
                add(CardSet::single(cards[i]).with(cards[j]));
                for &c in &cards[j + 1..n] {
                    add(CardSet::single(cards[i]).with(cards[j]).with(c));
                }
            }
        }
        if count == 1 {
            // Only the best way per size can be part of the best pass.
            for list in lists.iter_mut() {
                if let Some(best) = list
                    .iter()
                    .copied()
                    .min_by(|a, b| a.cost.total_cmp(&b.cost))
                {
                    list.clear();
                    list.push(best);
                }
            }
        }
    }
    let mut best: Vec<(f32, CardSet)> = Vec::with_capacity(count + 1);
    let [clubs, diamonds, hearts, spades] = &parts;
    // Every way to split the 3 cards over the suits, and every legal part of each size.
    for (kc, clubs) in clubs.iter().enumerate() {
        for (kd, diamonds) in diamonds.iter().enumerate().take(4 - kc) {
            for (kh, hearts) in hearts.iter().enumerate().take(4 - kc - kd) {
                for c in clubs {
                    for d in diamonds {
                        for h in hearts {
                            for s in &spades[3 - kc - kd - kh] {
                                let cost = c.cost + d.cost + h.cost + s.cost;
                                if best.len() < count || cost < best[best.len() - 1].0 {
                                    let pass = c.cards | d.cards | h.cards | s.cards;
                                    let at = best.partition_point(|&(x, _)| x <= cost);
                                    best.insert(at, (cost, pass));
                                    best.truncate(count);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Assembled from legal parts, each pass is legal; the check keeps that a guarantee.
    best.into_iter()
        .map(|(_, pass)| pass)
        .filter(|&pass| check_pass(hand, pass, rules).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::PassRestriction;

    /// The assembled search finds the same best danger as scoring every legal triple.
    #[test]
    fn best_passes_agrees_with_brute_force() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for restriction in [PassRestriction::On, PassRestriction::Off] {
            let rules = RuleOptions {
                pass_restriction: restriction,
                ..RuleOptions::default()
            };
            for _ in 0..300 {
                let hand = crate::rules::deal(&mut rng)[crate::rules::Seat::ALL[0]];
                let passable = crate::rules::passable_cards(hand, &rules);
                let mut brute = f32::INFINITY;
                for pass in crate::rules::legal_passes(hand, &rules) {
                    let ranks: f32 = pass.iter().map(|c| f32::from(c.rank().index())).sum();
                    brute = brute.min(hand_danger(hand - pass, &WEIGHTS) - 0.001 * ranks);
                }
                let top = best_passes(hand, passable, &rules, &WEIGHTS, 5);
                assert!(!top.is_empty());
                let first = top[0];
                let ranks: f32 = first.iter().map(|c| f32::from(c.rank().index())).sum();
                let got = hand_danger(hand - first, &WEIGHTS) - 0.001 * ranks;
                assert!((got - brute).abs() < 1e-3, "{hand}: {got} vs {brute}");
                assert_eq!(choose_pass(hand, passable, &rules, &WEIGHTS), Some(first));
                for pass in top {
                    assert!(check_pass(hand, pass, &rules).is_ok());
                }
            }
        }
    }
}
