//! Every bot level always returns a legal action, under every rule option combination, and
//! nothing when its seat has nothing to do.

use std::time::Duration;

use leekha::bots::{BotLevel, ExpertConfig, choose, choose_expert};
use leekha::rules::{
    Action, BySeat, Card, CardSet, ForcedLeekha, Game, LegalActions, Mode, PassDirection,
    PassRestriction, Position, RuleOptions, Seat, Talbees, TargetScore, Trick,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A small search, so that debug-build tests stay fast; the cap binds, never the clock.
const SMALL_EXPERT: ExpertConfig = ExpertConfig {
    max_iterations: 24,
    time_budget: Duration::from_secs(3600),
};

fn decide(
    level: BotLevel,
    game: &Game,
    seat: Seat,
    history: &[(Seat, Card)],
    rng: &mut ChaCha8Rng,
) -> Option<Action> {
    let view = game.view(seat);
    match level {
        BotLevel::Expert => choose_expert(&view, history, &SMALL_EXPERT, rng),
        level => choose(level, &view, history, rng),
    }
}

/// Every combination of the options that change what is legal or what a bot must reason
/// about: mode, pass direction, pass restriction, forced Leekha and talbees.
fn all_options() -> Vec<RuleOptions> {
    let mut out = Vec::new();
    for mode in [Mode::Solo, Mode::Partnership] {
        for pass_direction in [
            PassDirection::Right,
            PassDirection::Left,
            PassDirection::Alternate,
            PassDirection::NoPassing,
        ] {
            for pass_restriction in [PassRestriction::On, PassRestriction::Off] {
                for forced_leekha in [
                    ForcedLeekha::Both,
                    ForcedLeekha::QueenOnly,
                    ForcedLeekha::Off,
                ] {
                    for talbees in [Talbees::Off, Talbees::On] {
                        out.push(RuleOptions {
                            mode,
                            pass_direction,
                            pass_restriction,
                            forced_leekha,
                            talbees,
                            // Short games: several rounds (so `alternate` also passes left)
                            // without running for long.
                            target_score: TargetScore::new(40).unwrap(),
                            ..RuleOptions::default()
                        });
                    }
                }
            }
        }
    }
    out
}

/// Plays a whole game with `levels` in the seats, checking every decision of every seat
/// (also of the seats that must not act) against the engine.
fn play_game(options: RuleOptions, seed: u64, levels: [BotLevel; 4]) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::from_rng(options, &mut rng);
    let mut history: Vec<(Seat, Card)> = Vec::new();
    let mut round = game.round_number();
    let mut steps = 0;
    while !game.is_finished() {
        if game.round_number() != round {
            round = game.round_number();
            history.clear();
        }
        let to_act = game.to_act();
        for seat in Seat::ALL {
            let action = decide(levels[seat.index()], &game, seat, &history, &mut rng);
            if !to_act.contains(seat) {
                assert_eq!(action, None, "{seat} has nothing to do");
                continue;
            }
            let action = action
                .unwrap_or_else(|| panic!("{} gave no action for {seat}", levels[seat.index()]));
            assert_eq!(action.seat(), seat);
            let legal = game.view(seat).legal_actions;
            match (&action, legal) {
                (Action::Play { card, .. }, LegalActions::Play { cards }) => {
                    assert!(cards.contains(*card), "{card} is not among {cards}");
                }
                (
                    Action::Pass { cards, .. },
                    LegalActions::Pass {
                        cards: passable, ..
                    },
                ) => {
                    assert!(cards.iter().all(|c| passable.contains(*c)));
                }
                _ => panic!("action {action:?} does not fit {legal:?}"),
            }
            game.check(&action).unwrap_or_else(|e| {
                panic!(
                    "{} bot: illegal {action:?} under {options:?}: {e}",
                    levels[seat.index()]
                )
            });
            game.apply(&action).unwrap();
            if let Action::Play { seat, card } = action {
                history.push((seat, card));
            }
            // Playing: one seat acts per step; re-read the state before the next seat.
            break;
        }
        steps += 1;
        assert!(steps < 10_000, "the game does not end");
    }
}

#[test]
fn random_and_heuristic_are_legal_under_every_option_combination() {
    for (i, options) in all_options().into_iter().enumerate() {
        let i = i as u64;
        play_game(options, i, [BotLevel::Heuristic; 4]);
        play_game(
            options,
            1000 + i,
            [
                BotLevel::Random,
                BotLevel::Heuristic,
                BotLevel::Random,
                BotLevel::Heuristic,
            ],
        );
    }
}

#[test]
fn the_expert_is_legal_under_every_option_combination() {
    for (i, options) in all_options().into_iter().enumerate() {
        // One round per combination is enough for the expert (it is the slow one).
        let options = RuleOptions {
            target_score: TargetScore::new(1).unwrap(),
            ..options
        };
        let expert_seat = i % 4;
        let mut levels = [
            BotLevel::Heuristic,
            BotLevel::Random,
            BotLevel::Heuristic,
            BotLevel::Random,
        ];
        levels[expert_seat] = BotLevel::Expert;
        play_game(options, 5000 + i as u64, levels);
    }
}

#[test]
fn the_default_expert_configuration_plays_a_legal_round() {
    // `choose` with the default configuration, as the server calls it.
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let options = RuleOptions {
        target_score: TargetScore::new(1).unwrap(),
        ..RuleOptions::default()
    };
    let mut game = Game::from_rng(options, &mut rng);
    let mut history = Vec::new();
    let expert = Seat::ALL[0];
    while !game.is_finished() {
        for seat in game.to_act().iter().collect::<Vec<_>>() {
            let level = if seat == expert {
                BotLevel::Expert
            } else {
                BotLevel::Heuristic
            };
            let action = choose(level, &game.view(seat), &history, &mut rng).unwrap();
            game.apply(&action).unwrap();
            if let Action::Play { seat, card } = action {
                history.push((seat, card));
            }
        }
    }
}

fn cards(codes: &str) -> CardSet {
    codes.parse().unwrap()
}

fn card(code: &str) -> Card {
    code.parse().unwrap()
}

/// A trick led by seat 0 with `lead`; the next seat is to play with `hand`; the others
/// get filler cards (never a Leekha), one less for those who played.
fn position(options: RuleOptions, lead: &[&str], hand: &str) -> (Game, Seat, Vec<(Seat, Card)>) {
    let leader = Seat::ALL[0];
    let lead: Vec<Card> = lead.iter().map(|c| card(c)).collect();
    let me = leader.offset(lead.len() as u8);
    let mine = cards(hand);
    let n = mine.len();
    let mut hands = BySeat::new([CardSet::EMPTY; 4]);
    hands[me] = mine;
    let mut position = Position {
        hands,
        trick: Trick::from_cards(leader, &lead).unwrap(),
        ..Position::new(options)
    };
    let avoid = cards("QS 10D");
    for k in 0..4u8 {
        let seat = leader.offset(k);
        if seat != me {
            let played = usize::from(usize::from(k) < lead.len());
            position = position.fill(seat, n - played, avoid);
        }
    }
    let history = lead
        .iter()
        .enumerate()
        .map(|(k, &c)| (leader.offset(k as u8), c))
        .collect();
    (Game::from_position(position).unwrap(), me, history)
}

#[test]
fn forced_leekha_and_talbees_positions_are_respected_by_every_level() {
    let both = RuleOptions::default();
    let queen_only = RuleOptions {
        forced_leekha: ForcedLeekha::QueenOnly,
        ..RuleOptions::default()
    };
    let talbees = RuleOptions {
        talbees: Talbees::On,
        ..RuleOptions::default()
    };
    // (options, trick, hand, the legal cards): rule book vectors V9 to V14.
    let cases = [
        (both, vec!["5S"], "QS 3S 10D AH", "QS 3S"),
        (both, vec!["5S", "AS"], "QS 3S 10D", "QS 3S"),
        (talbees, vec!["5S", "AS"], "QS 3S 10D", "QS"),
        (talbees, vec!["JD"], "10D 3D 7D", "10D"),
        (both, vec!["4C"], "QS 2S 9H 9D", "QS"),
        (both, vec!["4C"], "QS 10D 2H", "QS 10D"),
        (queen_only, vec!["4C"], "QS 10D 2H", "QS"),
        (both, vec!["7S"], "10D 3D KH", "10D"),
    ];
    for (options, lead, hand, expected) in cases {
        let (game, seat, history) = position(options, &lead, hand);
        assert_eq!(game.legal_plays(seat), cards(expected), "{lead:?} {hand}");
        for level in BotLevel::ALL {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let action = decide(level, &game, seat, &history, &mut rng).unwrap();
            let Action::Play { card, .. } = action else {
                panic!("not a play")
            };
            assert!(
                cards(expected).contains(card),
                "{level}: {card} not in {expected}"
            );
        }
    }
}

#[test]
fn the_heuristic_sheds_a_leekha_under_a_higher_card_and_ducks() {
    let options = RuleOptions::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // KS is winning: QS goes under it.
    let (game, seat, history) = position(options, &["5S", "KS"], "QS 3S 4C 5C");
    let action = decide(BotLevel::Heuristic, &game, seat, &history, &mut rng);
    assert_eq!(
        action,
        Some(Action::Play {
            seat,
            card: card("QS")
        })
    );
    // Hearts led with the 9: the highest heart below it.
    let (game, seat, history) = position(options, &["9H"], "2H 8H KH 4C");
    let action = decide(BotLevel::Heuristic, &game, seat, &history, &mut rng);
    assert_eq!(
        action,
        Some(Action::Play {
            seat,
            card: card("8H")
        })
    );
    // Void in clubs holding both Leekhas: one of them must go, the queen first.
    let (game, seat, history) = position(options, &["4C"], "QS 10D 2H 3H");
    let action = decide(BotLevel::Heuristic, &game, seat, &history, &mut rng);
    assert_eq!(
        action,
        Some(Action::Play {
            seat,
            card: card("QS")
        })
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// Random option combinations, seeds and seatings of every level.
    #[test]
    fn every_level_is_legal_in_random_games(
        seed in any::<u64>(),
        option in 0usize..96,
        seating in prop::array::uniform4(0usize..BotLevel::ALL.len()),
    ) {
        let options = RuleOptions {
            target_score: TargetScore::new(1).unwrap(),
            ..all_options()[option]
        };
        let levels = seating.map(|i| BotLevel::ALL[i]);
        play_game(options, seed, levels);
    }
}
