//! Benchmarks of the rules engine: legal-action generation, applying one action, and random
//! full-round playouts (deal + 4 random legal passes + 52 random legal plays + scoring).
//!
//! Run with `cargo bench --bench rules`. The playout group reports rounds per second
//! (criterion's "elem/s"); the goal is at least 2 million per core.
//!
//! Three kinds of full round are measured:
//! - `simulator_*`: [`Playout`], the bot simulator: deal from the fast RNG, random legal
//!   passes, 52 random legal plays, scoring;
//! - `game_*`: the same through [`Game::playout_round`], which also keeps the complete game
//!   state, scores the round and deals the next one from the game's seed (ChaCha8);
//! - `game_checked_api`: through the validating `random_pass`/`pass`, `random_play`/`play`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use leekha::rules::{Action, Card, Discard, Game, Phase, Playout, RuleOptions, Seat};
use rand::SeedableRng;
use rand::rngs::SmallRng;

/// A game in the playing phase after `plays` random plays, from a fixed seed.
fn game_after(options: RuleOptions, plays: usize) -> Game {
    let mut rng = SmallRng::seed_from_u64(0x1eec4a);
    let mut game = Game::new(options, [3; 32]);
    for seat in Seat::ALL {
        game.pass_random(seat, &mut rng, &mut Discard);
    }
    for _ in 0..plays {
        game.play_random(&mut rng, &mut Discard)
            .expect("a legal play");
    }
    game
}

/// One full round through the checked public API, as a server or a simple bot would use
/// it: a random legal pass per seat, then 52 random legal plays, each validated by
/// `Game::pass` / `Game::play`. The 52nd play scores the round and deals the next one
/// (a ChaCha8 deal from the game's seed), or ends the game, and then a new game is dealt.
#[inline]
fn checked_round(game: &mut Game, options: RuleOptions, rng: &mut SmallRng) {
    if game.is_finished() {
        *game = Game::from_rng(options, rng);
    }
    if game.phase() == Phase::Passing {
        for seat in Seat::ALL {
            let cards = game
                .random_pass(seat, rng)
                .expect("every hand has a legal pass");
            game.pass(seat, cards, &mut Discard).expect("a legal pass");
        }
    }
    for _ in 0..52 {
        let (seat, card) = game.random_play(rng).expect("a seat to play");
        game.play(seat, card, &mut Discard).expect("a legal play");
    }
}

/// The same round through the playout primitive (`Game::playout_round`): moves are legal
/// by construction, so they are not re-validated.
#[inline]
fn playout_round(game: &mut Game, options: RuleOptions, rng: &mut SmallRng) {
    if game.is_finished() {
        *game = Game::from_rng(options, rng);
    }
    game.playout_round(rng, &mut Discard);
}

/// Plays one round of a game (see [`playout_round`] and [`checked_round`]).
type RoundFn = fn(&mut Game, RuleOptions, &mut SmallRng);

fn legal_actions(c: &mut Criterion) {
    let mut group = c.benchmark_group("legal_actions");
    let options = RuleOptions::default();
    let passing = Game::new(options, [3; 32]);
    let seat = Seat::ALL[0];
    group.bench_function("pass_cards", |b| {
        b.iter(|| black_box(&passing).legal_actions(black_box(seat)))
    });
    // Mid-trick: the second card of the fifth trick.
    let playing = game_after(options, 17);
    let to_play = playing.turn().expect("playing");
    group.bench_function("legal_plays_mid_trick", |b| {
        b.iter(|| black_box(&playing).legal_plays(black_box(to_play)))
    });
    group.bench_function("legal_actions_mid_trick", |b| {
        b.iter(|| black_box(&playing).legal_actions(black_box(to_play)))
    });
    group.finish();
}

fn apply_one(c: &mut Criterion) {
    let mut group = c.benchmark_group("apply");
    let options = RuleOptions::default();
    let playing = game_after(options, 17);
    let seat = playing.turn().expect("playing");
    let card: Card = playing.legal_plays(seat).lowest().expect("a legal card");
    group.bench_function("play_discard_events", |b| {
        b.iter_batched_ref(
            || playing.clone(),
            |game| game.play(seat, black_box(card), &mut Discard),
            BatchSize::SmallInput,
        )
    });
    let action = Action::Play { seat, card };
    group.bench_function("apply_play_vec_events", |b| {
        b.iter_batched_ref(
            || playing.clone(),
            |game| game.apply(black_box(&action)),
            BatchSize::SmallInput,
        )
    });
    let passing = Game::new(options, [3; 32]);
    let mut rng = SmallRng::seed_from_u64(5);
    let pass_seat = Seat::ALL[1];
    let cards = passing
        .random_pass(pass_seat, &mut rng)
        .expect("a legal pass");
    let pass = Action::Pass {
        seat: pass_seat,
        cards: cards.iter().collect(),
    };
    group.bench_function("apply_pass_vec_events", |b| {
        b.iter_batched_ref(
            || passing.clone(),
            |game| game.apply(black_box(&pass)),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn playout(c: &mut Criterion) {
    let mut group = c.benchmark_group("playout");
    group.throughput(Throughput::Elements(1));
    let classic = RuleOptions::default();
    let partnership = RuleOptions::preset("partnership").expect("a preset");
    for (name, options) in [
        ("simulator_classic", classic),
        ("simulator_partnership", partnership),
    ] {
        let mut rng = SmallRng::seed_from_u64(42);
        let mut round = 0u32;
        group.bench_function(name, |b| {
            b.iter(|| {
                round = round.wrapping_add(1);
                let dealer = Seat::ALL[(round % 4) as usize];
                let mut playout = Playout::deal(&options, round, dealer, &mut rng);
                playout.run(&mut rng, &mut Discard)
            })
        });
    }
    let rounds: [(&str, RuleOptions, RoundFn); 3] = [
        ("game_classic", classic, playout_round),
        ("game_partnership", partnership, playout_round),
        ("game_checked_api", classic, checked_round),
    ];
    for (name, options, round) in rounds {
        let mut rng = SmallRng::seed_from_u64(42);
        let mut game = Game::from_rng(options, &mut rng);
        group.bench_function(name, |b| b.iter(|| round(&mut game, options, &mut rng)));
    }
    group.finish();
}

criterion_group!(benches, legal_actions, apply_one, playout);
criterion_main!(benches);
