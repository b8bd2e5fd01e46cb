//! Property tests over thousands of random games, with a fixed proptest seed so that CI is
//! deterministic: move generation and the legality check agree, every card and point is
//! accounted for, the game ends only after a round, replay and serde are exact, and no view
//! leaks another seat's cards.

mod rules_common;

use leekha::rules::{
    Action, BySeat, Card, CardSet, Discard, Event, GUARDS, Game, LegalActions, Mode,
    PassRestriction, Phase, Playout, RuleError, RuleOptions, Seat, TeamLoss, deal, replay,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules_common::{any_options, config};

/// An independent, deliberately naive statement of the pass rule of §3.
fn naive_pass_is_legal(hand: CardSet, pass: CardSet, options: &RuleOptions) -> bool {
    if pass.len() != 3 || !pass.is_subset(hand) {
        return false;
    }
    if options.pass_restriction == PassRestriction::Off {
        return true;
    }
    let kept = hand - pass;
    pass.iter()
        .all(|c| GUARDS.contains(c) || kept.iter().any(|k| k.suit() == c.suit()))
}

/// All 3-card subsets of a set.
fn triples(cards: CardSet) -> Vec<CardSet> {
    let list: Vec<Card> = cards.iter().collect();
    let mut out = Vec::new();
    for i in 0..list.len() {
        for j in i + 1..list.len() {
            for k in j + 1..list.len() {
                out.push(CardSet::single(list[i]).with(list[j]).with(list[k]));
            }
        }
    }
    out
}

/// Where every card is: hands, taken cards, the trick, passes in transit. They must be
/// disjoint and cover the deck.
fn assert_cards_conserved(game: &Game) -> Result<(), TestCaseError> {
    let mut all = CardSet::EMPTY;
    let mut count = 0;
    let mut add = |cards: CardSet| {
        all |= cards;
        count += cards.len();
    };
    for seat in Seat::ALL {
        add(game.hand(seat));
        add(game.taken(seat));
        if game.phase() == Phase::Passing {
            add(game.passed(seat).unwrap_or_default());
        }
    }
    add(game.trick().set());
    prop_assert_eq!(count, 52, "every card is in exactly one place");
    prop_assert_eq!(all, CardSet::FULL);
    Ok(())
}

/// The card codes anywhere in a JSON value.
fn codes_in(value: &serde_json::Value, out: &mut CardSet) {
    match value {
        serde_json::Value::String(s) => {
            if let Ok(card) = s.parse::<Card>() {
                out.insert(card);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| codes_in(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| codes_in(v, out)),
        _ => {}
    }
}

/// A view of `seat` names only its own cards, its pass, what it received (after the
/// barrier), the current and the last trick: never a card another seat holds or took
/// earlier, and never the seed.
fn assert_view_is_private(game: &Game, seat: Seat) -> Result<(), TestCaseError> {
    let view = game.view(seat);
    let json = serde_json::to_value(&view).expect("a view serializes");
    let mut shown = CardSet::EMPTY;
    codes_in(&json, &mut shown);
    let mut allowed = game.hand(seat) | game.trick().set();
    allowed |= game.passed(seat).unwrap_or_default();
    allowed |= game.received(seat).unwrap_or_default();
    if let Some(last) = game.last_trick() {
        allowed |= last.set();
    }
    prop_assert!(
        shown.is_subset(allowed),
        "seat {} sees {} it may not",
        seat,
        shown - allowed
    );
    for other in Seat::ALL.into_iter().filter(|&o| o != seat) {
        // What the viewer passed is now in the receiver's hand, and the viewer knows it.
        let unknown = game.hand(other) - game.passed(seat).unwrap_or_default();
        prop_assert!(shown.is_disjoint(unknown));
    }
    if game.phase() == Phase::Passing {
        prop_assert_eq!(view.received, None);
    }
    prop_assert_eq!(view.hand, game.hand(seat));
    let text = json.to_string();
    prop_assert!(!text.contains(&game.seed().to_hex()), "the seed leaked");
    Ok(())
}

/// Checks that legal-move generation and `check`/`apply` agree in the current state.
fn assert_generation_agrees(game: &Game) -> Result<(), TestCaseError> {
    for seat in Seat::ALL {
        match game.legal_actions(seat) {
            LegalActions::Play { cards } => {
                prop_assert_eq!(game.turn(), Some(seat));
                for card in Card::all() {
                    let action = Action::Play { seat, card };
                    let verdict = game.check(&action);
                    prop_assert_eq!(verdict.is_ok(), cards.contains(card), "{:?}", action);
                    let mut copy = game.clone();
                    let applied = copy.apply(&action);
                    prop_assert_eq!(applied.as_ref().err().copied(), verdict.err());
                    if applied.is_err() {
                        prop_assert_eq!(&copy, game, "a refused play changed the game");
                    }
                }
            }
            LegalActions::Pass {
                count,
                cards,
                may_empty_suit,
            } => {
                prop_assert_eq!(count, 3);
                let hand = game.hand(seat);
                let mut union = CardSet::EMPTY;
                for pass in triples(hand) {
                    let legal = naive_pass_is_legal(hand, pass, game.options());
                    // The client's rule from the API contract, from the view's fields alone.
                    let by_view = pass.iter().all(|c| {
                        cards.contains(c)
                            && (may_empty_suit.contains(c)
                                || !(hand - pass).of_suit(c.suit()).is_empty())
                    });
                    prop_assert_eq!(by_view, legal, "view rule on {:?}", pass);
                    let action = Action::Pass {
                        seat,
                        cards: pass.iter().collect(),
                    };
                    prop_assert_eq!(game.check(&action).is_ok(), legal, "{:?}", action);
                    if legal {
                        union |= pass;
                    }
                }
                prop_assert_eq!(union, cards, "passable cards = union of legal passes");
                prop_assert!(!cards.is_empty(), "every hand has a legal pass");
            }
            LegalActions::None => {
                for card in Card::all() {
                    let refused = game.check(&Action::Play { seat, card }).is_err();
                    prop_assert!(refused, "seat {} may not play now", seat);
                }
            }
        }
    }
    Ok(())
}

/// How thoroughly to check each state of a random game.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    /// Invariants only: cards, points, phases, events.
    Invariants,
    /// Also generation against the checker, and views, at every state.
    Everything,
}

/// Plays a random game to the end, checking invariants on the way; returns the final game
/// and the actions.
fn random_game(
    options: RuleOptions,
    seed: [u8; 32],
    choices: u64,
    depth: Depth,
) -> Result<(Game, Vec<Action>), TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(choices);
    let (mut game, opening) = Game::with_events(options, seed);
    let dealt = matches!(opening.as_slice(), [Event::RoundDealt { round: 1, .. }]);
    prop_assert!(dealt, "a new game opens with the deal of round 1");
    let mut actions = Vec::new();
    let mut rounds = 1;
    while !game.is_finished() {
        prop_assert!(rounds < 200, "a game of random play should end");
        assert_cards_conserved(&game)?;
        if depth == Depth::Everything {
            assert_generation_agrees(&game)?;
            for seat in Seat::ALL {
                assert_view_is_private(&game, seat)?;
            }
        }
        let action = match game.phase() {
            Phase::Passing => {
                // Commit in a random order: passes are independent of each other.
                let waiting: Vec<Seat> = game.to_act().iter().collect();
                let seat = waiting[rand::RngExt::random_range(&mut rng, 0..waiting.len())];
                let cards = game
                    .random_pass(seat, &mut rng)
                    .expect("a legal pass exists");
                Action::Pass {
                    seat,
                    cards: cards.iter().collect(),
                }
            }
            Phase::Playing => {
                let (seat, card) = game.random_play(&mut rng).expect("a legal play exists");
                Action::Play { seat, card }
            }
            Phase::Finished => unreachable!("the loop stops at the end"),
        };
        let round_before = game.round_number();
        let events = game.apply(&action).expect("a generated action is legal");
        actions.push(action);
        for (i, event) in events.iter().enumerate() {
            match event {
                Event::RoundScored { round_points, .. } => {
                    prop_assert_eq!(round_points.iter().sum::<u32>(), 36, "36 points per round");
                    rounds += 1;
                }
                Event::GameFinished { result } => {
                    prop_assert!(
                        i > 0 && matches!(events[i - 1], Event::RoundScored { .. }),
                        "the game ends only right after a round is scored"
                    );
                    prop_assert_eq!(Some(result), game.result());
                }
                Event::RoundDealt { round, .. } => {
                    prop_assert_eq!(*round, round_before + 1);
                }
                _ => {}
            }
        }
        if !game.is_finished() && game.round_number() == round_before {
            prop_assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, Event::RoundScored { .. })),
                "a round is scored only after its 13th trick"
            );
        }
    }
    // The final state: all 52 cards taken in the last round, a result, nothing to do.
    let taken: usize = Seat::ALL.iter().map(|&s| game.taken(s).len()).sum();
    prop_assert_eq!(taken, 52);
    prop_assert_eq!(game.tricks_played(), 13);
    prop_assert!(game.to_act().is_empty());
    let result = game.result().expect("a finished game has a result");
    prop_assert!(!result.winners.is_empty());
    let totals = game.totals();
    let target = options.target_score.get();
    let reached = if options.mode == Mode::Partnership
        && options.team_loss == TeamLoss::TeamSumReachesTarget
    {
        totals[Seat::ALL[0]] + totals[Seat::ALL[2]] >= target
            || totals[Seat::ALL[1]] + totals[Seat::ALL[3]] >= target
    } else {
        totals.iter().any(|&t| t >= target)
    };
    prop_assert!(reached, "the game ended before the target: {:?}", totals);
    Ok((game, actions))
}

proptest! {
    #![proptest_config(config(3000))]

    /// 3 000 random games under random options: cards conserved at every step, 36 points
    /// per round, the game ends only after a round, a result at the end.
    #[test]
    fn random_games_keep_the_invariants(
        options in any_options(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        random_game(options, seed, choices, Depth::Invariants)?;
    }
}

proptest! {
    #![proptest_config(config(40))]

    /// In every state of 40 random games: a card is in the legal list iff playing it is
    /// accepted, every legal play applies, a refused one changes nothing; the passable
    /// cards are exactly the union of the legal passes, found by brute force against a
    /// naive statement of the rule; and no view shows another seat's card or the seed.
    #[test]
    fn generation_agrees_with_the_checker_and_views_stay_private(
        options in any_options(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
    ) {
        random_game(options, seed, choices, Depth::Everything)?;
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Replaying the actions from the seed gives the identical game; serde round-trips the
    /// game exactly at the end and at a random point in the middle.
    #[test]
    fn replay_and_serde_reproduce_the_game(
        options in any_options(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
        cut in 0usize..400,
    ) {
        let (game, actions) = random_game(options, seed, choices, Depth::Invariants)?;
        let replayed = replay(options, seed, &actions).expect("the actions replay");
        prop_assert_eq!(&replayed, &game);

        let json = serde_json::to_string(&game).expect("a game serializes");
        let back: Game = serde_json::from_str(&json).expect("a game deserializes");
        prop_assert_eq!(&back, &game);

        let middle = replay(options, seed, &actions[..cut.min(actions.len())])
            .expect("a prefix replays");
        let json = serde_json::to_string(&middle).expect("a game serializes");
        let back: Game = serde_json::from_str(&json).expect("a game deserializes");
        prop_assert_eq!(&back, &middle);
    }

    /// Passes commit in any order to the same state: they are secret and simultaneous.
    #[test]
    fn pass_order_does_not_matter(
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
        order in Just(Seat::ALL).prop_shuffle(),
    ) {
        let options = RuleOptions::default();
        let mut rng = ChaCha8Rng::seed_from_u64(choices);
        let fresh = Game::new(options, seed);
        let passes = BySeat::from_fn(|s| fresh.random_pass(s, &mut rng).expect("a legal pass"));
        let mut in_order = fresh.clone();
        for seat in Seat::ALL {
            in_order.pass(seat, passes[seat], &mut Discard).expect("a legal pass");
        }
        let mut shuffled = fresh.clone();
        for &seat in &order {
            shuffled.pass(seat, passes[seat], &mut Discard).expect("a legal pass");
        }
        prop_assert_eq!(in_order, shuffled);
    }
}

proptest! {
    #![proptest_config(config(1000))]

    /// 1 000 random deals (4 000 hands): every hand has a legal pass, the passable cards are exactly the
    /// union of the legal passes, and the random pass is one of them.
    #[test]
    fn every_random_hand_has_a_legal_pass(
        deck_seed in any::<u64>(),
        restriction in prop_oneof![Just(PassRestriction::On), Just(PassRestriction::Off)],
    ) {
        let options = RuleOptions { pass_restriction: restriction, ..RuleOptions::default() };
        let hands = deal(&mut ChaCha8Rng::seed_from_u64(deck_seed));
        for hand in hands.iter() {
            prop_assert_eq!(hand.len(), 13);
            let legal: Vec<CardSet> = triples(*hand)
                .into_iter()
                .filter(|&p| naive_pass_is_legal(*hand, p, &options))
                .collect();
            prop_assert!(!legal.is_empty());
            let union = legal.iter().fold(CardSet::EMPTY, |acc, &p| acc | p);
            prop_assert_eq!(leekha::rules::passable_cards(*hand, &options), union);
            for &p in &legal {
                prop_assert_eq!(leekha::rules::check_pass(*hand, p, &options), Ok(()));
            }
        }
    }

    /// Card codes: every canonical code round-trips, lower case and `T` parse, and random
    /// strings either parse to a card whose code matches them or fail.
    #[test]
    fn card_parsing_is_exact(input in "[0-9TtJjQqKkAaCcDdHhSsXx]{0,4}") {
        match input.parse::<Card>() {
            Ok(card) => {
                let canonical = input.to_uppercase().replace('T', "10");
                prop_assert_eq!(card.to_string(), canonical);
            }
            Err(error) => {
                prop_assert!(!error.to_string().is_empty());
            }
        }
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// The fast simulator plays by the same rules: from a random point of a random first
    /// round, every move of a playout is accepted by `Game::apply`, the game reports the very
    /// same passes, plays and tricks, and the playout's round points are the game's.
    #[test]
    fn playouts_make_only_moves_the_game_accepts(
        options in any_options(),
        seed in any::<[u8; 32]>(),
        choices in any::<u64>(),
        steps in 0usize..60,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(choices);
        let mut game = Game::new(options, seed);
        for _ in 0..steps {
            if game.round_number() != 1 || game.is_finished() {
                break;
            }
            match game.phase() {
                Phase::Passing => {
                    let seat = game.to_act().iter().next().expect("a seat to pass");
                    game.pass_random(seat, &mut rng, &mut Discard).expect("a legal pass");
                }
                _ => {
                    game.play_random(&mut rng, &mut Discard).expect("a legal play");
                }
            }
        }
        prop_assume!(game.round_number() == 1 && !game.is_finished());
        let mut playout = Playout::from_game(&game).expect("a round in progress");
        let mut simulated = Vec::new();
        let points = playout.run(&mut rng, &mut simulated);

        let mut reported = Vec::new();
        for event in &simulated {
            match *event {
                Event::PassCommitted { seat, cards } => {
                    game.pass(seat, cards, &mut reported).expect("the game accepts the pass");
                }
                Event::CardPlayed { seat, card } => {
                    game.play(seat, card, &mut reported).expect("the game accepts the play");
                }
                _ => {}
            }
        }
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
        prop_assert_eq!(points.iter().sum::<u32>(), 36);
    }

    /// Fresh simulated deals are deals: 4 × 13 distinct cards, and a full playout scores 36.
    #[test]
    fn simulated_deals_are_full_rounds(
        options in any_options(),
        choices in any::<u64>(),
        dealer in 0u8..4,
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(choices);
        let dealer = Seat::new(dealer).expect("a seat");
        let mut playout = Playout::deal(&options, 1, dealer, &mut rng);
        let hands = playout.hands();
        let all = hands.iter().fold(CardSet::EMPTY, |acc, &h| {
            assert!(acc.is_disjoint(h));
            acc | h
        });
        prop_assert_eq!(all, CardSet::FULL);
        let mut events = Vec::new();
        let points = playout.run(&mut rng, &mut events);
        prop_assert_eq!(points.iter().sum::<u32>(), 36);
        let played: CardSet = events
            .iter()
            .filter_map(|e| match e {
                Event::CardPlayed { card, .. } => Some(*card),
                _ => None,
            })
            .collect();
        prop_assert_eq!(played, CardSet::FULL);
        let first = events.iter().find(|e| matches!(e, Event::CardPlayed { .. }));
        let leads_right = matches!(first, Some(Event::CardPlayed { seat, .. }) if *seat == dealer.right());
        prop_assert!(leads_right, "the dealer's right leads");
    }
}

/// Illegal actions of random states change nothing, and `apply` and `check` agree on why.
#[test]
fn refused_actions_leave_random_states_untouched() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for game_number in 0..20u8 {
        let mut game = Game::new(RuleOptions::default(), [game_number; 32]);
        while !game.is_finished() {
            for seat in Seat::ALL {
                for action in [
                    Action::Play {
                        seat,
                        card: Card::QUEEN_OF_SPADES,
                    },
                    Action::Pass {
                        seat,
                        cards: game.hand(seat).iter().take(2).collect(),
                    },
                ] {
                    let before = game.clone();
                    if let Err(error) = game.apply(&action) {
                        assert_eq!(game, before, "{error} changed the game");
                        assert_eq!(before.check(&action), Err(error));
                        game = before;
                    }
                }
            }
            if game.is_finished() {
                break;
            }
            game.playout_round(&mut rng, &mut Discard);
        }
        assert_eq!(
            game.apply(&Action::Play {
                seat: Seat::ALL[0],
                card: Card::QUEEN_OF_SPADES
            }),
            Err(RuleError::GameOver)
        );
    }
}
