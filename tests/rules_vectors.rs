//! The test vectors V1–V20 of the rule book (`shared/rules/LEEKHA.md` §9), one test each.

use leekha::rules::{
    Action, BySeat, Card, CardSet, DealerRotation, Event, ForcedLeekha, Game, Mode,
    PassRestriction, Phase, Position, RuleError, RuleOptions, Seat, Talbees, Team, TeamLoss, Trick,
    game_outcome,
};

const HA: &str = "QS AS 4S AH 10D JD 9D 2C 3C 5C 6C 7C 8C";
const HB: &str = "QS KS 2H 3H 4H AD KD QD 10D 2C 3C 4C 5C";

fn cards(codes: &str) -> CardSet {
    codes.parse().expect("valid card codes")
}

fn card(code: &str) -> Card {
    code.parse().expect("a valid card code")
}

fn seat(n: u8) -> Seat {
    Seat::new(n).expect("a seat number below 4")
}

fn talbees() -> RuleOptions {
    RuleOptions {
        talbees: Talbees::On,
        ..RuleOptions::default()
    }
}

/// A round-1 passing position where seat 0 holds `hand` and the other seats 13 other cards.
fn passing(hand: &str, options: RuleOptions) -> Game {
    let mut position = Position {
        phase: Phase::Passing,
        ..Position::new(options)
    };
    position.hands[seat(0)] = cards(hand);
    for s in 1..4 {
        position = position.fill(seat(s), 13, CardSet::EMPTY);
    }
    Game::from_position(position).expect("a sound passing position")
}

fn pass(seat: Seat, codes: &str) -> Action {
    Action::Pass {
        seat,
        cards: codes.split_whitespace().map(card).collect(),
    }
}

fn play(seat: Seat, code: &str) -> Action {
    Action::Play {
        seat,
        card: card(code),
    }
}

/// A playing position: `leader` has played `trick`, and the next seat holds `hand`; every
/// other seat holds filler cards (one less for those who played), avoiding `avoid`.
fn mid_trick(options: RuleOptions, leader: Seat, trick: &str, hand: &str, avoid: &str) -> Game {
    let played: Vec<Card> = trick.split_whitespace().map(card).collect();
    let to_play = leader.offset(played.len() as u8);
    let mut position = Position {
        trick: Trick::from_cards(leader, &played).expect("a valid trick"),
        dealer: leader.left(),
        ..Position::new(options)
    };
    position.hands[to_play] = cards(hand);
    let size = cards(hand).len();
    for i in 0..4u8 {
        let other = leader.offset(i);
        if other != to_play {
            let count = if usize::from(i) < played.len() {
                size - 1
            } else {
                size
            };
            position = position.fill(other, count, cards(avoid) | cards(hand));
        }
    }
    Game::from_position(position).expect("a sound playing position")
}

fn legal_after(options: RuleOptions, trick: &str, hand: &str) -> CardSet {
    let game = mid_trick(options, seat(0), trick, hand, "");
    game.legal_plays(game.turn().expect("a seat to play"))
}

#[test]
fn v01_pass_qs_as_2c_is_legal() {
    let mut game = passing(HA, RuleOptions::default());
    game.apply(&pass(seat(0), "QS AS 2C"))
        .expect("QS, AS and 2C may be passed");
    assert_eq!(game.passed(seat(0)), Some(cards("QS AS 2C")));
}

#[test]
fn v02_pass_qs_as_4s_empties_spades_through_a_non_guard() {
    let game = passing(HA, RuleOptions::default());
    assert_eq!(
        game.check(&pass(seat(0), "QS AS 4S")),
        Err(RuleError::PassRestriction { card: card("4S") })
    );
}

#[test]
fn v03_pass_ah_2c_3c_is_illegal_as_ah_is_the_only_heart() {
    let game = passing(HA, RuleOptions::default());
    assert_eq!(
        game.check(&pass(seat(0), "AH 2C 3C")),
        Err(RuleError::PassRestriction { card: card("AH") })
    );
}

#[test]
fn v04_pass_10d_jd_9d_is_illegal_and_10d_jd_2c_legal() {
    let game = passing(HA, RuleOptions::default());
    assert_eq!(
        game.check(&pass(seat(0), "10D JD 9D")),
        Err(RuleError::PassRestriction { card: card("9D") })
    );
    assert_eq!(game.check(&pass(seat(0), "10D JD 2C")), Ok(()));
}

#[test]
fn v05_pass_qs_ks_2c_from_hb_is_legal_as_every_spade_is_a_guard() {
    let mut game = passing(HB, RuleOptions::default());
    game.apply(&pass(seat(0), "QS KS 2C"))
        .expect("a suit of guards may be emptied");
}

#[test]
fn v06_bad_passes_are_rejected_and_change_nothing() {
    let mut game = passing(HA, RuleOptions::default());
    let before = game.clone();
    let cases = [
        (
            pass(seat(0), "QS AS"),
            RuleError::WrongCardCount {
                expected: 3,
                got: 2,
            },
        ),
        (
            pass(seat(0), "QS AS 2C 3C"),
            RuleError::WrongCardCount {
                expected: 3,
                got: 4,
            },
        ),
        (
            pass(seat(0), "QS QS 2C"),
            RuleError::DuplicateCard { card: card("QS") },
        ),
        (
            pass(seat(0), "QS AS KH"),
            RuleError::CardNotInHand { card: card("KH") },
        ),
    ];
    for (action, expected) in cases {
        assert_eq!(game.apply(&action), Err(expected), "{action:?}");
        assert_eq!(game, before, "a refused {action:?} changed the game");
    }
    game.apply(&pass(seat(0), "QS AS 2C"))
        .expect("a legal pass");
    let committed = game.clone();
    assert_eq!(
        game.apply(&pass(seat(0), "3C 5C 6C")),
        Err(RuleError::AlreadyCommitted { seat: seat(0) })
    );
    assert_eq!(game, committed);

    let off = RuleOptions {
        pass_restriction: PassRestriction::Off,
        ..RuleOptions::default()
    };
    for legal_when_off in ["QS AS 4S", "AH 2C 3C", "10D JD 9D"] {
        let game = passing(HA, off);
        assert_eq!(
            game.check(&pass(seat(0), legal_when_off)),
            Ok(()),
            "{legal_when_off}"
        );
    }
}

#[test]
fn v07_passes_stay_secret_until_all_four_commit_then_apply_at_once() {
    let mut game = Game::new(RuleOptions::default(), [7; 32]);
    let before = game.clone();
    // Any legal pass will do: take a random one for each seat.
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
    let passes = BySeat::from_fn(|s| game.random_pass(s, &mut rng).expect("a legal pass"));
    game.pass(seat(0), passes[seat(0)], &mut Vec::new())
        .expect("a legal pass");

    let view = game.view(seat(0));
    assert_eq!(view.hand.len(), 10);
    assert_eq!(view.hand, before.hand(seat(0)) - passes[seat(0)]);
    assert_eq!(view.passed, Some(passes[seat(0)]));
    assert_eq!(view.received, None);
    assert_eq!(
        view.passes_committed,
        BySeat::new([true, false, false, false])
    );
    for other in 1..4 {
        let other_view = game.view(seat(other));
        assert_eq!(other_view.passed, None);
        assert_eq!(other_view.hand, before.hand(seat(other)));
    }

    for s in 1..4 {
        game.pass(seat(s), passes[seat(s)], &mut Vec::new())
            .expect("a legal pass");
    }
    assert_eq!(game.phase(), Phase::Playing);
    for s in Seat::ALL {
        let from = s.left();
        let expected = (before.hand(s) - passes[s]) | passes[from];
        assert_eq!(
            game.hand(s),
            expected,
            "seat {s} holds what seat {from} passed"
        );
        assert_eq!(game.view(s).received, Some(passes[from]));
    }
}

#[test]
fn v08_any_card_may_lead() {
    let game = mid_trick(RuleOptions::default(), seat(0), "", "QS 10D 2H 5C", "");
    assert_eq!(game.legal_plays(seat(0)), cards("QS 10D 2H 5C"));
    assert_eq!(game.tricks_played(), 0);
}

#[test]
fn v09_holding_the_led_suit_means_following_it() {
    assert_eq!(
        legal_after(RuleOptions::default(), "5S", "QS 3S 10D AH"),
        cards("QS 3S")
    );
    let game = mid_trick(RuleOptions::default(), seat(0), "5S", "QS 3S 10D AH", "");
    assert_eq!(
        game.check(&play(seat(1), "10D")),
        Err(RuleError::MustFollowSuit {
            suit: leekha::rules::Suit::Spades
        })
    );
}

#[test]
fn v10_talbees_forces_qs_under_an_ace_of_spades() {
    assert_eq!(
        legal_after(RuleOptions::default(), "5S AS", "QS 3S 10D"),
        cards("QS 3S")
    );
    assert_eq!(legal_after(talbees(), "5S AS", "QS 3S 10D"), cards("QS"));
    let game = mid_trick(talbees(), seat(0), "5S AS", "QS 3S 10D", "");
    assert_eq!(
        game.check(&play(seat(2), "3S")),
        Err(RuleError::Talbees { leekha: card("QS") })
    );
}

#[test]
fn v11_talbees_counts_the_lead() {
    assert_eq!(
        legal_after(RuleOptions::default(), "JD", "10D 3D 7D"),
        cards("10D 3D 7D")
    );
    assert_eq!(legal_after(talbees(), "JD", "10D 3D 7D"), cards("10D"));
}

#[test]
fn v12_a_void_player_holding_qs_must_play_it() {
    assert_eq!(
        legal_after(RuleOptions::default(), "4C", "QS 2S 9H 9D"),
        cards("QS")
    );
    let game = mid_trick(RuleOptions::default(), seat(0), "4C", "QS 2S 9H 9D", "");
    assert_eq!(
        game.check(&play(seat(1), "2S")),
        Err(RuleError::MustPlayLeekha {
            led: leekha::rules::Suit::Clubs,
            allowed: cards("QS")
        })
    );
}

#[test]
fn v13_forced_leekha_options() {
    let with = |forced_leekha| RuleOptions {
        forced_leekha,
        ..RuleOptions::default()
    };
    assert_eq!(
        legal_after(with(ForcedLeekha::Both), "4C", "QS 10D 2H"),
        cards("QS 10D")
    );
    assert_eq!(
        legal_after(with(ForcedLeekha::QueenOnly), "4C", "QS 10D 2H"),
        cards("QS")
    );
    assert_eq!(
        legal_after(with(ForcedLeekha::Off), "4C", "QS 10D 2H"),
        cards("QS 10D 2H")
    );
}

#[test]
fn v14_a_void_player_holding_10d_must_play_it() {
    assert_eq!(
        legal_after(RuleOptions::default(), "7S", "10D 3D KH"),
        cards("10D")
    );
}

#[test]
fn v15_void_without_a_leekha_discards_freely() {
    assert_eq!(
        legal_after(RuleOptions::default(), "6H", "AS KS JD 2C"),
        cards("AS KS JD 2C")
    );
}

#[test]
fn v16_the_highest_led_card_takes_both_leekhas() {
    let mut position = Position::new(RuleOptions::default()); // dealer 3: seat 0 leads
    position.hands = BySeat::new([
        cards("9D 2C"),
        cards("JD 3C"),
        cards("QS 4C"),
        cards("10D 5C"),
    ]);
    let mut game = Game::from_position(position).expect("a sound position");
    let mut events = Vec::new();
    for (s, code) in [(0, "9D"), (1, "JD"), (2, "QS"), (3, "10D")] {
        events = game.apply(&play(seat(s), code)).expect("a legal play");
    }
    assert!(events.contains(&Event::TrickWon {
        seat: seat(1),
        leader: seat(0),
        cards: [card("9D"), card("JD"), card("QS"), card("10D")],
        points: 23,
    }));
    assert_eq!(game.turn(), Some(seat(1)));
    assert_eq!(game.round_points()[seat(1)], 23);
    let last = game.view(seat(0)).last_trick.expect("a completed trick");
    assert_eq!((last.winner, last.points), (seat(1), 23));
}

#[test]
fn v17_off_suit_cards_never_win() {
    let mut position = Position {
        dealer: seat(1), // seat 2 leads
        ..Position::new(RuleOptions::default())
    };
    position.trick = Trick::new(seat(2));
    position.hands = BySeat::new([
        cards("10D 3H"),
        cards("AH 4H"),
        cards("2C 3C"),
        cards("QS 2H"),
    ]);
    let mut game = Game::from_position(position).expect("a sound position");
    let mut events = Vec::new();
    for (s, code) in [(2, "2C"), (3, "QS"), (0, "10D"), (1, "AH")] {
        events = game.apply(&play(seat(s), code)).expect("a legal play");
    }
    assert!(matches!(
        events.last(),
        Some(Event::TrickWon { seat: s, points: 24, .. }) if *s == seat(2)
    ));
    assert_eq!(game.turn(), Some(seat(2)));
}

/// V18's deal: seat 0 leads 2S, seat 1's AS is its only spade and seat 2's QS its only one,
/// so seat 1 takes QS in the first trick.
fn v18_round(dealer_rotation: DealerRotation) -> (Game, Vec<Event>) {
    let options = RuleOptions {
        dealer_rotation,
        pass_direction: leekha::rules::PassDirection::NoPassing,
        ..RuleOptions::default()
    };
    let mut position = Position::new(options); // dealer 3, seat 0 leads
    position.hands = BySeat::new([
        cards("2S 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC"),
        cards("AS AC 2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD"),
        cards("QS KD AD 2H 3H 4H 5H 6H 7H 8H 9H 10H JH"),
        cards("3S 4S 5S 6S 7S 8S 9S 10S JS KS QH KH AH"),
    ]);
    let mut game = Game::from_position(position).expect("a sound position");
    let mut events = game.apply(&play(seat(0), "2S")).expect("a legal lead");
    // Everyone then plays their lowest legal card.
    while game.round_number() == 1 && !game.is_finished() {
        let s = game.turn().expect("a seat to play");
        let c = game.legal_plays(s).lowest().expect("a legal card");
        events.extend(
            game.apply(&Action::Play { seat: s, card: c })
                .expect("a legal play"),
        );
    }
    (game, events)
}

#[test]
fn v18_a_full_round_scores_36_and_the_qs_taker_deals_next() {
    let (game, events) = v18_round(DealerRotation::QueenOfSpadesTaker);
    let tricks: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::TrickWon { .. }))
        .collect();
    assert_eq!(tricks.len(), 13);
    let played: CardSet = events
        .iter()
        .filter_map(|e| match e {
            Event::CardPlayed { card, .. } => Some(*card),
            _ => None,
        })
        .collect();
    assert_eq!(played, CardSet::FULL, "52 distinct cards were played");
    assert!(matches!(
        tricks[0],
        Event::TrickWon { seat: s, points: 13, .. } if *s == seat(1)
    ));
    let scored = events
        .iter()
        .find_map(|e| match e {
            Event::RoundScored { round_points, .. } => Some(*round_points),
            _ => None,
        })
        .expect("the round was scored");
    assert_eq!(scored.iter().sum::<u32>(), 36);
    assert_eq!(game.round_number(), 2);
    assert_eq!(game.dealer(), seat(1));
    assert_eq!(game.trick().leader(), seat(2));
    assert_eq!(game.totals(), scored);

    let (rotated, _) = v18_round(DealerRotation::RotateRight);
    assert_eq!(rotated.dealer(), seat(0));
    assert_eq!(rotated.trick().leader(), seat(1));
}

#[test]
fn v19_solo_totals_at_or_over_the_target_end_the_game_and_low_ties_co_win() {
    let options = RuleOptions::default();
    let totals = BySeat::new([90, 50, 40, 36]);
    let round = BySeat::new([13, 5, 7, 11]);
    let after = BySeat::from_fn(|s| totals[s] + round[s]);
    assert_eq!(after, BySeat::new([103, 55, 47, 47]));
    let result = game_outcome(&options, &after).expect("103 >= 101 ends the game");
    assert_eq!(result.winners, vec![seat(2), seat(3)]);
    let ranks: Vec<(u8, u32)> = result
        .ranking
        .iter()
        .map(|s| (s.seat.number(), s.rank))
        .collect();
    assert_eq!(ranks, vec![(2, 1), (3, 1), (1, 3), (0, 4)]);
    assert_eq!(result.losing_team, None);

    let exactly = game_outcome(&options, &BySeat::new([101, 55, 47, 40])).expect("101 ends it");
    assert_eq!(exactly.winners, vec![seat(3)]);
    assert_eq!(
        game_outcome(&options, &BySeat::new([100, 55, 47, 40])),
        None
    );

    let sudden_death = RuleOptions {
        solo_tie: leekha::rules::SoloTie::SuddenDeath,
        ..options
    };
    assert_eq!(
        game_outcome(&sudden_death, &after),
        None,
        "tied lowest plays on"
    );
}

#[test]
fn v19_the_last_trick_of_a_round_ends_the_game_through_apply() {
    let mut position = Position {
        totals: BySeat::new([90, 50, 40, 36]),
        ..Position::new(RuleOptions::default())
    };
    position.won = BySeat::new([
        cards("QS 2C 3C 4C"),
        cards("2H 3H 4H 5H 6H 5C 6C 7C"),
        cards("7H 8H 9H 10H JH QH KH 8C"),
        cards("10D AH 9C 10C"),
    ]);
    position.hands = BySeat::new([cards("JC"), cards("QC"), cards("KC"), cards("AC")]);
    let mut game = Game::from_position(position).expect("a sound position");
    let mut events = Vec::new();
    for (s, code) in [(0, "JC"), (1, "QC"), (2, "KC"), (3, "AC")] {
        assert!(!game.is_finished(), "the game ends only after the round");
        events = game.apply(&play(seat(s), code)).expect("a legal play");
    }
    assert!(events.contains(&Event::RoundScored {
        round: 1,
        round_points: BySeat::new([13, 5, 7, 11]),
        totals: BySeat::new([103, 55, 47, 47]),
    }));
    assert!(game.is_finished());
    assert_eq!(game.phase(), Phase::Finished);
    let result = game.result().expect("a result");
    assert_eq!(result.winners, vec![seat(2), seat(3)]);
    assert!(matches!(events.last(), Some(Event::GameFinished { .. })));
    assert_eq!(game.apply(&play(seat(0), "2C")), Err(RuleError::GameOver));
}

#[test]
fn v20_partnership_the_busted_team_loses_and_both_busted_compare_team_totals() {
    let options = RuleOptions {
        mode: Mode::Partnership,
        ..RuleOptions::default()
    };
    let a = game_outcome(&options, &BySeat::new([104, 70, 0, 42])).expect("seat 0 busted");
    assert_eq!(a.losing_team, Team::new(0));
    assert_eq!(a.winners, vec![seat(1), seat(3)]);

    let b = game_outcome(&options, &BySeat::new([101, 102, 30, 19])).expect("both busted");
    assert_eq!(
        b.losing_team,
        Team::new(0),
        "team {{1,3}} wins with 121 < 131"
    );
    assert_eq!(b.winners, vec![seat(1), seat(3)]);
    let ranks: Vec<(u8, u32)> = b
        .ranking
        .iter()
        .map(|s| (s.seat.number(), s.rank))
        .collect();
    assert_eq!(ranks, vec![(1, 1), (3, 1), (0, 2), (2, 2)]);

    assert_eq!(
        game_outcome(&options, &BySeat::new([101, 102, 30, 29])),
        None,
        "equal team totals play one more round"
    );
    assert_eq!(game_outcome(&options, &BySeat::new([100, 70, 0, 42])), None);

    let team_sum = RuleOptions {
        team_loss: TeamLoss::TeamSumReachesTarget,
        ..options
    };
    assert_eq!(
        game_outcome(&team_sum, &BySeat::new([60, 10, 41, 20])).map(|r| r.losing_team),
        Some(Team::new(0)),
        "60 + 41 = 101 reaches the target"
    );
    assert_eq!(
        game_outcome(&team_sum, &BySeat::new([104, 0, 0, 0])).map(|r| r.losing_team),
        Some(Team::new(0))
    );
    assert_eq!(
        game_outcome(&team_sum, &BySeat::new([50, 10, 50, 20])),
        None
    );
}
