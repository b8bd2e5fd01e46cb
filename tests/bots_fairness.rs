//! No bot reads hidden cards: two games that give a seat the same view and history but
//! different hidden hands get the same decision from every level (same rng seed).

use std::time::Duration;

use leekha::bots::{BotLevel, ExpertConfig, choose, choose_expert};
use leekha::rules::{
    Action, BySeat, Card, CardSet, ForcedLeekha, Game, Mode, PassDirection, Phase, Position,
    RuleOptions, Seat, Talbees,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SMALL_EXPERT: ExpertConfig = ExpertConfig {
    max_iterations: 60,
    time_budget: Duration::from_secs(3600),
};

fn decide(
    level: BotLevel,
    game: &Game,
    seat: Seat,
    history: &[(Seat, Card)],
    seed: u64,
) -> Option<Action> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let view = game.view(seat);
    match level {
        BotLevel::Expert => choose_expert(&view, history, &SMALL_EXPERT, &mut rng),
        level => choose(level, &view, history, &mut rng),
    }
}

/// The game as a [`Position`], to rebuild it with other hidden hands.
fn position_of(game: &Game) -> Position {
    Position {
        options: *game.options(),
        seed: *game.seed().bytes(),
        round: game.round_number(),
        dealer: game.dealer(),
        phase: game.phase(),
        totals: game.totals(),
        hands: BySeat::from_fn(|s| game.hand(s)),
        passes: BySeat::from_fn(|s| game.passed(s)),
        won: BySeat::from_fn(|s| game.taken(s)),
        trick: *game.trick(),
        last_trick: game.last_trick().copied(),
    }
}

/// Swaps cards between the hands of two seats other than `me`, keeping everything `me`
/// knows true: same suit for each swapped pair (so no void is broken), never a Leekha (a
/// seat may be known to lack one) and never a card `me` passed (it knows where those are).
/// Returns the number of pairs swapped.
fn swap_hidden(position: &mut Position, me: Seat, a: Seat, b: Seat, protected: CardSet) -> usize {
    let leekhas: CardSet = "QS 10D".parse().unwrap();
    let mut swapped = 0;
    for suit in leekha::rules::Suit::ALL {
        let from_a = (position.hands[a].of_suit(suit) - leekhas - protected).lowest();
        let from_b = (position.hands[b].of_suit(suit) - leekhas - protected).highest();
        if let (Some(x), Some(y)) = (from_a, from_b) {
            position.hands[a] = position.hands[a].without(x).with(y);
            position.hands[b] = position.hands[b].without(y).with(x);
            swapped += 1;
        }
    }
    assert!(me != a && me != b);
    swapped
}

fn options_list() -> Vec<RuleOptions> {
    vec![
        RuleOptions::default(),
        RuleOptions::preset("partnership").unwrap(),
        RuleOptions {
            talbees: Talbees::On,
            forced_leekha: ForcedLeekha::QueenOnly,
            pass_direction: PassDirection::Left,
            ..RuleOptions::default()
        },
        RuleOptions {
            mode: Mode::Partnership,
            forced_leekha: ForcedLeekha::Off,
            pass_direction: PassDirection::NoPassing,
            ..RuleOptions::default()
        },
    ]
}

#[test]
fn no_bot_reads_hidden_cards() {
    let mut checked = 0;
    for seed in 0..40u64 {
        let options = options_list()[(seed % 4) as usize];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::from_rng(options, &mut rng);
        let mut history: Vec<(Seat, Card)> = Vec::new();
        // Play a random number of actions into the first round with the heuristic.
        let steps = rng.random_range(0..48);
        for _ in 0..steps {
            let seat = game.to_act().iter().next().unwrap();
            let action = choose(BotLevel::Heuristic, &game.view(seat), &history, &mut rng).unwrap();
            game.apply(&action).unwrap();
            if let Action::Play { seat, card } = action {
                history.push((seat, card));
            }
        }
        assert_eq!(game.round_number(), 1);
        let me = game.to_act().iter().next().unwrap();
        let passed = game.passed(me).unwrap_or_default();
        let mut position = position_of(&game);
        let swapped = swap_hidden(&mut position, me, me.right(), me.across(), passed)
            + swap_hidden(&mut position, me, me.across(), me.left(), passed);
        if swapped == 0 {
            continue;
        }
        let other = Game::from_position(position).unwrap();
        assert_ne!(
            BySeat::from_fn(|s| game.hand(s)),
            BySeat::from_fn(|s| other.hand(s)),
            "the hidden hands differ"
        );
        assert_eq!(game.view(me), other.view(me), "the seat sees the same");
        for level in BotLevel::ALL {
            for bot_seed in [seed, seed + 1000] {
                let a = decide(level, &game, me, &history, bot_seed);
                let b = decide(level, &other, me, &history, bot_seed);
                assert!(a.is_some(), "{level} acts for the seat to act");
                assert_eq!(
                    a, b,
                    "{level} decided differently on different hidden hands"
                );
            }
        }
        if game.phase() == Phase::Playing {
            checked += 1;
        }
    }
    assert!(
        checked >= 20,
        "enough playing positions were checked ({checked})"
    );
}
