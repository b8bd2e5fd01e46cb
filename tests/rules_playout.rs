//! The fast paths of the simulator held to the reference game: fresh simulated deals (with
//! the deal's pass proposals), [`Game::playout_round`] (which runs on the simulator), and
//! the uniformity of every random choice: the deal, the passes and the plays.

mod rules_common;

use leekha::rules::{
    BySeat, Card, CardSet, Event, ForcedLeekha, GUARDS, Game, PassDirection, PassRestriction,
    Phase, Playout, Position, RuleOptions, Seat, Talbees, Trick,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules_common::{any_options, config};

/// A game at the start of a round with these hands (passing first if the round has a
/// direction).
fn game_with(options: RuleOptions, round: u32, dealer: Seat, hands: BySeat<CardSet>) -> Game {
    let phase = if options.pass_direction.for_round(round).is_some() {
        Phase::Passing
    } else {
        Phase::Playing
    };
    Game::from_position(Position {
        round,
        dealer,
        phase,
        hands,
        trick: Trick::new(dealer.right()),
        ..Position::new(options)
    })
    .expect("a sound position")
}

/// Applies the passes and plays of `events` to `game` and returns what the game reports.
fn replay_moves(game: &mut Game, events: &[Event]) -> Vec<Event> {
    let mut reported = Vec::new();
    for event in events {
        match *event {
            Event::PassCommitted { seat, cards } => {
                game.pass(seat, cards, &mut reported)
                    .expect("the game accepts the pass");
            }
            Event::CardPlayed { seat, card } => {
                game.play(seat, card, &mut reported)
                    .expect("the game accepts the play");
            }
            _ => {}
        }
    }
    reported
}

proptest! {
    #![proptest_config(config(400))]

    /// A fresh simulated deal, played out (its passes start with the deal's proposals): a
    /// game set up with the same hands accepts every pass and play, reports the very same
    /// events, and scores the playout's points.
    #[test]
    fn fresh_playouts_make_only_moves_the_game_accepts(
        options in any_options(),
        round in 1u32..3,
        dealer in 0u8..4,
        choices in any::<u64>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(choices);
        let dealer = Seat::new(dealer).expect("a seat");
        let mut playout = Playout::deal(&options, round, dealer, &mut rng);
        let mut game = game_with(options, round, dealer, playout.hands());
        let mut simulated = Vec::new();
        let points = playout.run(&mut rng, &mut simulated);
        let mut reported = replay_moves(&mut game, &simulated);
        let scored = reported.iter().find_map(|e| match e {
            Event::RoundScored { round_points, .. } => Some(*round_points),
            _ => None,
        });
        reported.retain(|e| {
            !matches!(
                e,
                Event::RoundScored { .. } | Event::RoundDealt { .. } | Event::GameFinished { .. }
            )
        });
        prop_assert_eq!(&reported, &simulated);
        prop_assert_eq!(scored, Some(points));
    }

    /// `Game::playout_round` from any point of a game leaves the game exactly as its moves,
    /// replayed one by one through the checked API, would: same events, same state.
    #[test]
    fn playout_round_equals_its_moves_replayed(
        options in any_options(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
        steps in 0usize..120,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(choices);
        let mut game = Game::new(options, seed);
        for _ in 0..steps {
            if game.is_finished() {
                break;
            }
            match game.phase() {
                Phase::Passing => {
                    let seat = game.to_act().iter().next().expect("a seat to pass");
                    game.pass_random(seat, &mut rng, &mut Vec::new()).expect("a legal pass");
                }
                _ => {
                    game.play_random(&mut rng, &mut Vec::new()).expect("a legal play");
                }
            }
        }
        prop_assume!(!game.is_finished());
        let mut fast = game.clone();
        let mut events = Vec::new();
        fast.playout_round(&mut rng, &mut events);
        let mut slow = game.clone();
        let reported = replay_moves(&mut slow, &events);
        prop_assert_eq!(&reported, &events);
        prop_assert_eq!(&slow, &fast);
        prop_assert!(fast.is_finished() || fast.round_number() == game.round_number() + 1);
    }
}

/// `|observed - expected| <= 5 σ` for a count of `n` trials of probability `p`.
fn assert_binomial(observed: u64, n: u64, p: f64, what: &str) {
    let expected = n as f64 * p;
    let sigma = (n as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (observed as f64 - expected).abs() <= 5.0 * sigma + 1.0,
        "{what}: {observed} observed, {expected:.0} expected (σ = {sigma:.1})"
    );
}

/// The position of each card of `cards` among `hand` in index order.
fn positions(hand: CardSet, cards: CardSet) -> impl Iterator<Item = usize> {
    hand.iter()
        .enumerate()
        .filter(move |(_, c)| cards.contains(*c))
        .map(|(i, _)| i)
}

/// Every card lands in every seat's hand a quarter of the time.
#[test]
fn simulated_deals_are_uniform() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let options = RuleOptions::default();
    let n = 20_000u64;
    let mut counts = [[0u64; 4]; 52];
    let mut pairs = 0u64;
    for _ in 0..n {
        let hands = Playout::deal(&options, 1, Seat::ALL[3], &mut rng).hands();
        for seat in Seat::ALL {
            for card in hands[seat].iter() {
                counts[usize::from(card.index())][seat.index()] += 1;
            }
        }
        // A joint property: the two Leekhas in one hand (12/51 of the time).
        if Seat::ALL.iter().any(|&s| {
            hands[s].contains(Card::QUEEN_OF_SPADES) && hands[s].contains(Card::TEN_OF_DIAMONDS)
        }) {
            pairs += 1;
        }
    }
    for (card, by_seat) in counts.iter().enumerate() {
        for (seat, &count) in by_seat.iter().enumerate() {
            assert_binomial(count, n, 0.25, &format!("card {card} to seat {seat}"));
        }
    }
    assert_binomial(pairs, n, 12.0 / 51.0, "both Leekhas in one hand");
}

/// The passes of fresh deals (the deal's proposals, redrawn under the restriction) are
/// uniform over the legal passes of each hand: without the restriction every card and
/// every pair of cards of a hand is passed equally often; with it, the passes show the same
/// statistics as `Game::random_pass` on the same hands.
#[test]
fn simulated_passes_are_uniform() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let n = 12_000u64;

    let free = RuleOptions {
        pass_restriction: PassRestriction::Off,
        ..RuleOptions::default()
    };
    let mut single = [0u64; 13];
    let mut pair = [[0u64; 13]; 13];
    for _ in 0..n {
        let mut playout = Playout::deal(&free, 1, Seat::ALL[3], &mut rng);
        let hands = playout.hands();
        let mut events = Vec::new();
        playout.run(&mut rng, &mut events);
        for event in &events {
            if let Event::PassCommitted { seat, cards } = *event {
                let at: Vec<usize> = positions(hands[seat], cards).collect();
                assert_eq!(at.len(), 3);
                for &i in &at {
                    single[i] += 1;
                }
                pair[at[0]][at[1]] += 1;
                pair[at[0]][at[2]] += 1;
                pair[at[1]][at[2]] += 1;
            }
        }
    }
    for (i, &count) in single.iter().enumerate() {
        assert_binomial(count, 4 * n, 3.0 / 13.0, &format!("position {i} passed"));
    }
    for (i, row) in pair.iter().enumerate() {
        for (j, &count) in row.iter().enumerate().skip(i + 1) {
            assert_binomial(count, 4 * n, 1.0 / 26.0, &format!("positions {i}, {j}"));
        }
    }

    // With the restriction: simulated passes against the reference generator, on the same
    // hands. Per statistic, the sum of the differences has mean 0 if both are uniform over
    // the legal passes, and the sum of their squares estimates its variance.
    let options = RuleOptions::default();
    let stats = |hand: CardSet, pass: CardSet| {
        let mut stats = [0i64; 15];
        for i in positions(hand, pass) {
            stats[i] += 1;
        }
        stats[13] = (pass & GUARDS).len() as i64;
        stats[14] = i64::from(pass.contains(Card::QUEEN_OF_SPADES));
        stats
    };
    let mut difference = [0i64; 15];
    let mut variance = [0i64; 15];
    for _ in 0..n {
        let mut playout = Playout::deal(&options, 1, Seat::ALL[3], &mut rng);
        let hands = playout.hands();
        let game = game_with(options, 1, Seat::ALL[3], hands);
        let mut events = Vec::new();
        playout.run(&mut rng, &mut events);
        for event in &events {
            if let Event::PassCommitted { seat, cards } = *event {
                let other = game.random_pass(seat, &mut rng).expect("a legal pass");
                let (x, y) = (stats(hands[seat], cards), stats(hands[seat], other));
                for k in 0..15 {
                    difference[k] += x[k] - y[k];
                    variance[k] += (x[k] - y[k]).pow(2);
                }
            }
        }
    }
    for k in 0..15 {
        let sigma = (variance[k] as f64).sqrt();
        assert!(
            (difference[k] as f64).abs() <= 5.0 * sigma + 1.0,
            "statistic {k}: difference {} (σ = {sigma:.1})",
            difference[k]
        );
    }
}

/// Every play is uniform over the legal cards of the position: counted by the size of the
/// legal set, each of its cards (in index order) is played equally often.
#[test]
fn simulated_plays_are_uniform() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for options in [
        RuleOptions::default(),
        RuleOptions {
            pass_direction: PassDirection::NoPassing,
            talbees: Talbees::On,
            forced_leekha: ForcedLeekha::QueenOnly,
            ..RuleOptions::default()
        },
    ] {
        // By the size of the legal set, the position of the card played in it.
        let mut counts = [[0u64; 13]; 14];
        for round in 0..4_000u32 {
            let dealer = Seat::ALL[(round % 4) as usize];
            let mut playout = Playout::deal(&options, 1, dealer, &mut rng);
            let mut events = Vec::new();
            playout.run(&mut rng, &mut events);
            let mut hands = hands_in_play(&events);
            let mut trick = Vec::new();
            let mut leader = dealer.right();
            for event in &events {
                match *event {
                    Event::CardPlayed { seat, card } => {
                        let state = Trick::from_cards(leader, &trick).expect("a trick");
                        let legal = leekha::rules::legal_plays(hands[seat], &state, &options);
                        let at = positions(legal, CardSet::single(card))
                            .next()
                            .expect("legal");
                        counts[legal.len()][at] += 1;
                        hands[seat].remove(card);
                        trick.push(card);
                    }
                    Event::TrickWon { seat, .. } => {
                        leader = seat;
                        trick.clear();
                    }
                    _ => {}
                }
            }
        }
        for (size, by_position) in counts.iter().enumerate().skip(2) {
            let total: u64 = by_position.iter().sum();
            for (at, &count) in by_position[..size].iter().enumerate() {
                assert_binomial(count, total, 1.0 / size as f64, &format!("{at} of {size}"));
            }
        }
    }
}

/// The hands when the play began, from the events of a whole round: every card played was
/// held by its player.
fn hands_in_play(events: &[Event]) -> BySeat<CardSet> {
    let mut hands: BySeat<CardSet> = BySeat::default();
    for event in events {
        if let Event::CardPlayed { seat, card } = *event {
            hands[seat].insert(card);
        }
    }
    hands
}
