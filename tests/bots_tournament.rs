//! The CI smoke tournament and the determinism of tournaments. No timing assertions: the
//! timing figures vary with the machine.

use std::time::Duration;

use leekha::bots::tournament::{Contestant, TournamentConfig, run, run_on};
use leekha::bots::{BotLevel, ExpertConfig};
use leekha::rules::RuleOptions;

fn config(candidate: BotLevel, baseline: BotLevel, deals: usize, seed: u64) -> TournamentConfig {
    TournamentConfig {
        candidate: candidate.into(),
        baseline: baseline.into(),
        deals,
        seed,
        options: RuleOptions::default(),
        // Cap-bound searches keep the expert's games a pure function of the seed.
        expert: ExpertConfig {
            max_iterations: 24,
            time_budget: Duration::from_secs(3600),
        },
    }
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

#[test]
fn threads_change_nothing_but_the_time() {
    for (candidate, baseline, deals) in [
        (BotLevel::Heuristic, BotLevel::Random, 23),
        (BotLevel::Expert, BotLevel::Heuristic, 5),
    ] {
        let c = config(candidate, baseline, deals, 13);
        let one = run(&c);
        for threads in [2, 3, 64] {
            let many = run_on(&c, threads);
            assert_eq!(many.results, one.results, "{threads} threads");
            assert_eq!(many.timing.decisions, one.timing.decisions);
            assert_eq!(many.timing.choices, one.timing.choices);
        }
    }
}

#[test]
fn smoke_heuristic_beats_random_by_its_confidence_interval() {
    let report = run(&config(BotLevel::Heuristic, BotLevel::Random, 60, 2024));
    println!("{report}");
    let r = &report.results;
    assert_eq!(r.deals, 60);
    assert!(
        r.ci_low > 0.0,
        "heuristic should beat random: {:+.2} (CI {:+.2} .. {:+.2})",
        r.mean_saved,
        r.ci_low,
        r.ci_high
    );
    // Duplicate deals: the reference tables deal out all 36 points of each round.
    assert!((r.baseline_points - 9.0).abs() < 1e-9);
    assert_eq!(report.timing.rounds, 60 * 5);
}

#[test]
fn smoke_easy_sits_between_random_and_heuristic() {
    let easy = run(&config(BotLevel::Easy, BotLevel::Random, 60, 2026)).results;
    assert!(
        easy.ci_low > 0.0,
        "easy beats random: {:+.2}",
        easy.mean_saved
    );
    let heuristic = run(&config(BotLevel::Heuristic, BotLevel::Easy, 200, 2026)).results;
    assert!(
        heuristic.ci_low > 0.0,
        "heuristic beats easy: {:+.2} (CI {:+.2} .. {:+.2})",
        heuristic.mean_saved,
        heuristic.ci_low,
        heuristic.ci_high
    );
}

#[test]
fn the_omniscient_bot_bounds_the_expert() {
    let mut c = config(BotLevel::Heuristic, BotLevel::Heuristic, 30, 2027);
    c.candidate = Contestant::Omniscient;
    let report = run(&c);
    assert!(report.to_string().contains("candidate omniscient"));
    assert!(
        report.results.ci_low > 3.0,
        "seeing every hand is worth a lot: {:+.2}",
        report.results.mean_saved
    );
    assert_eq!(
        Contestant::parse("omniscient"),
        Some(Contestant::Omniscient)
    );
    // No seat of a real game can be given it: it is no bot level.
    assert_eq!(BotLevel::parse("omniscient"), None);
    assert_eq!(
        Contestant::parse("expert"),
        Some(Contestant::Bot(BotLevel::Expert))
    );
}

#[test]
fn smoke_partnership_counts_team_points() {
    let mut c = config(BotLevel::Heuristic, BotLevel::Random, 20, 7);
    c.options = RuleOptions::preset("partnership").unwrap();
    let report = run(&c);
    // A team takes half the points on average over the reference tables.
    assert!((report.results.baseline_points - 18.0).abs() < 1e-9);
    assert!(report.to_string().contains("team points"));
}

#[test]
fn same_seed_same_report_except_timing() {
    for (candidate, baseline, deals) in [
        (BotLevel::Heuristic, BotLevel::Random, 12),
        (BotLevel::Random, BotLevel::Heuristic, 12),
        (BotLevel::Expert, BotLevel::Heuristic, 2),
    ] {
        let a = run(&config(candidate, baseline, deals, 11));
        let b = run(&config(candidate, baseline, deals, 11));
        assert_eq!(a.results, b.results, "{candidate} vs {baseline}");
        assert_eq!(a.config, b.config);
        assert_eq!(a.timing.decisions, b.timing.decisions);
    }
    let a = run(&config(BotLevel::Heuristic, BotLevel::Random, 12, 1));
    let b = run(&config(BotLevel::Heuristic, BotLevel::Random, 12, 2));
    assert_ne!(
        a.results.per_deal, b.results.per_deal,
        "another seed, other deals"
    );
}

#[test]
fn a_bot_against_itself_saves_nothing() {
    // A seat's bot draws from the same stream at every table of a deal, so a level in its
    // own seat replays the reference table exactly: the duplicate design cancels all luck.
    for level in [BotLevel::Random, BotLevel::Easy, BotLevel::Heuristic] {
        let report = run(&config(level, level, 10, 5));
        assert!(report.results.per_deal.iter().all(|&x| x == 0.0), "{level}");
    }
}

#[test]
fn smoke_expert_beats_heuristic_by_its_confidence_interval() {
    let mut c = config(BotLevel::Expert, BotLevel::Heuristic, 24, 2028);
    c.expert.max_iterations = 400;
    // The slowest test of the suite on one thread (a debug build): every core helps, and
    // the results are those of one thread (`threads_change_nothing_but_the_time`).
    let report = run_on(&c, threads());
    println!("{report}");
    let r = &report.results;
    assert!(
        r.ci_low > 0.0,
        "expert should beat heuristic: {:+.2} (CI {:+.2} .. {:+.2})",
        r.mean_saved,
        r.ci_low,
        r.ci_high
    );
}

#[test]
fn ismcts_plays_whole_rounds_legally_and_only_in_the_tournament() {
    assert_eq!(Contestant::parse("ismcts"), Some(Contestant::Ismcts));
    assert_eq!(BotLevel::parse("ismcts"), None);
    let c = TournamentConfig {
        candidate: Contestant::Ismcts,
        ..config(BotLevel::Heuristic, BotLevel::Heuristic, 8, 2028)
    };
    // The tournament panics on an illegal move; the same seed gives the same games.
    let (first, again) = (run(&c), run(&c));
    assert!(first.to_string().contains("candidate ismcts"));
    assert_eq!(first.results.mean_saved, again.results.mean_saved);
}
