//! Information-set Monte Carlo tree search (single-observer ISMCTS), the alternative to the
//! expert's flat determinized search that issue #21 asks to compare. It exists only in the
//! tournament (`leekha simulate --candidate ismcts`): no seat of a real game is given it.
//!
//! One tree over the plays of every seat from the current position. Each iteration deals a
//! world the way the expert does (consistent with what the seat knows, leaning towards the
//! plays seen: [`inferred_world`]), walks down the tree through the children whose card is
//! legal in that world, choosing by UCB among those already tried (each seat minimising its
//! own points, its team's in partnership), adds one untried play, finishes the round with
//! heuristic rollouts and credits every play on the path with what its seat lost. The
//! card of the most visited child of the root is played. The pass is the expert's.
//!
//! Against the heuristic this models the opponents as searching players, where flat
//! search plays them out with the heuristic itself; the tournament says which matters more.

use std::time::Instant;

use rand::{Rng, RngExt};

use crate::rules::{Action, Card, CardSet, LegalActions, Seat, SeatView, legal_plays};

use super::ExpertConfig;
use super::evidence::Evidence;
use super::expert::{Sampler, Sim, choose_expert, inferred_world, others_knowledge, team_points};
use super::knowledge::Knowledge;

/// The exploration constant of UCB, in points of a round: a play's mean loss is traded
/// against `EXPLORE * sqrt(ln(available) / visits)`.
const EXPLORE: f64 = 4.0;

/// The ISMCTS action for the seat of `view` (`None` if it has nothing to do). The same
/// budget as the expert's: `config.max_iterations` rollouts, `config.time_budget` at most.
pub(crate) fn choose_ismcts(
    view: &SeatView,
    history: &[(Seat, Card)],
    config: &ExpertConfig,
    rng: &mut (impl Rng + ?Sized),
) -> Option<Action> {
    let seat = view.seat?;
    if let LegalActions::Play { cards } = view.legal_actions
        && cards.len() > 1
        && let Some(card) = Knowledge::new(view, history)
            .and_then(|k| search(&k, cards, config, rng))
            .filter(|c| cards.contains(*c))
    {
        return Some(Action::Play { seat, card });
    }
    choose_expert(view, history, config, rng)
}

/// A play in the tree: `seat` played `card` after its parent's play.
struct Node {
    seat: Seat,
    card: Card,
    children: Vec<usize>,
    visits: u32,
    /// How often the play was legal when its parent was reached.
    available: u32,
    /// The points its seat (or team) lost, summed over the visits.
    lost: f64,
}

impl Node {
    fn new(seat: Seat, card: Card) -> Node {
        Node {
            seat,
            card,
            children: Vec::new(),
            visits: 0,
            available: 0,
            lost: 0.0,
        }
    }

    /// The upper confidence bound of the play's value to its seat (minus its mean loss).
    fn ucb(&self) -> f64 {
        let visits = f64::from(self.visits);
        -self.lost / visits + EXPLORE * (f64::from(self.available).ln() / visits).sqrt()
    }
}

/// The most visited play of `k`'s seat, or `None` when no world fits the knowledge.
fn search<R: Rng + ?Sized>(
    k: &Knowledge,
    legal: CardSet,
    config: &ExpertConfig,
    rng: &mut R,
) -> Option<Card> {
    let start = Instant::now();
    let sampler = Sampler::new(k)?;
    let evidence = Evidence::new(k, others_knowledge(k));
    let mut known_by = [[CardSet::EMPTY; 4]; 4];
    known_by[k.me.index()] = k.known;
    // The root stands for the position; its seat and card are never read.
    let mut nodes = vec![Node::new(k.me, legal.lowest()?)];
    // A world serves as many iterations as the seat has plays, as flat search plays every
    // candidate in each world: the same number of worlds for the same rollouts.
    let per_world = legal.len() as u32;
    let mut world = [CardSet::EMPTY; 4];
    let mut path = Vec::new();
    for iteration in 0..config.max_iterations {
        if iteration % per_world == 0 {
            if start.elapsed() > config.time_budget {
                break;
            }
            world = inferred_world(&sampler, &evidence, rng)?;
        }
        let mut sim = Sim {
            hands: world,
            trick: k.trick,
            table: k.table,
        };
        path.clear();
        let mut at = 0;
        loop {
            let seat = sim.trick.next_seat();
            let hand = sim.hands[seat.index()];
            if hand.is_empty() {
                break;
            }
            let legal = legal_plays(hand, &sim.trick, &k.rules);
            let mut tried = CardSet::EMPTY;
            let mut best: Option<(usize, f64)> = None;
            for i in 0..nodes[at].children.len() {
                let child = nodes[at].children[i];
                let node = &mut nodes[child];
                if legal.contains(node.card) {
                    node.available += 1;
                    tried.insert(node.card);
                    let score = node.ucb();
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((child, score));
                    }
                }
            }
            let untried = legal - tried;
            if let Some(card) = untried.nth(rng.random_range(0..untried.len().max(1))) {
                let mut node = Node::new(seat, card);
                node.available = 1;
                nodes.push(node);
                let child = nodes.len() - 1;
                nodes[at].children.push(child);
                sim.play(seat, card, &k.rules);
                path.push(child);
                break;
            }
            let (child, _) = best?;
            sim.play(seat, nodes[child].card, &k.rules);
            path.push(child);
            at = child;
        }
        sim.finish(&k.rules, &known_by);
        for &id in &path {
            let node = &mut nodes[id];
            node.visits += 1;
            node.lost += f64::from(team_points(&k.rules, node.seat, &sim.table.points));
        }
    }
    nodes[0]
        .children
        .iter()
        .map(|&i| &nodes[i])
        .max_by_key(|n| n.visits)
        .map(|n| n.card)
}
