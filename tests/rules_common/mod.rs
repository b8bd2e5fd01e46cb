//! Helpers shared by the rules property tests (`rules_properties.rs`, `rules_playout.rs`).

use leekha::rules::{
    DealerRotation, ForcedLeekha, Mode, PassDirection, PassRestriction, RuleOptions, SoloTie,
    Talbees, TargetScore, TeamLoss,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Deterministic runs: a fixed seed, no regression files, modest shrinking.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x1eec4a),
        failure_persistence: None,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// Every option of §8, with small targets mixed in so that many games end quickly.
pub fn any_options() -> impl Strategy<Value = RuleOptions> {
    (
        prop_oneof![Just(Mode::Solo), Just(Mode::Partnership)],
        prop::sample::select(vec![1i64, 13, 30, 51, 101]),
        prop::sample::select(vec![
            PassDirection::Right,
            PassDirection::Left,
            PassDirection::Alternate,
            PassDirection::NoPassing,
        ]),
        prop_oneof![Just(PassRestriction::On), Just(PassRestriction::Off)],
        prop::sample::select(vec![
            ForcedLeekha::Both,
            ForcedLeekha::QueenOnly,
            ForcedLeekha::Off,
        ]),
        prop_oneof![Just(Talbees::Off), Just(Talbees::On)],
        prop_oneof![
            Just(DealerRotation::QueenOfSpadesTaker),
            Just(DealerRotation::RotateRight)
        ],
        prop_oneof![Just(SoloTie::CoWinners), Just(SoloTie::SuddenDeath)],
        prop_oneof![
            Just(TeamLoss::BustedTeamLoses),
            Just(TeamLoss::TeamSumReachesTarget)
        ],
    )
        .prop_map(
            |(
                mode,
                target,
                pass_direction,
                pass_restriction,
                forced_leekha,
                talbees,
                dealer_rotation,
                solo_tie,
                team_loss,
            )| RuleOptions {
                mode,
                target_score: TargetScore::new(target).expect("a valid target"),
                pass_direction,
                pass_restriction,
                forced_leekha,
                talbees,
                dealer_rotation,
                solo_tie,
                team_loss,
            },
        )
}
