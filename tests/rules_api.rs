//! The public surface of `leekha::rules`: card codes, options, wire formats, every rule
//! error with its code, and the game's bookkeeping (phases, turns, dealers, views).

use leekha::rules::{
    Action, BySeat, CARD_CODES, Card, CardSet, Direction, Discard, Event, Game, LegalActions, Mode,
    OptionsError, ParseCardErrorKind, PassDirection, Phase, Position, Preset, RuleError,
    RuleOptions, RuleOverrides, Seat, SeatSet, Suit, Talbees, TargetScore, Trick,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

fn cards(codes: &str) -> CardSet {
    codes.parse().expect("valid card codes")
}

fn card(code: &str) -> Card {
    code.parse().expect("a valid card code")
}

fn seat(n: u8) -> Seat {
    Seat::new(n).expect("a seat number below 4")
}

// ----- cards -----------------------------------------------------------------------------

#[test]
fn card_codes_parse_with_t_and_lower_case_and_print_canonically() {
    assert_eq!(card("QS"), Card::QUEEN_OF_SPADES);
    assert_eq!(card("10D"), Card::TEN_OF_DIAMONDS);
    assert_eq!(card("TD"), Card::TEN_OF_DIAMONDS);
    assert_eq!(card("td"), Card::TEN_OF_DIAMONDS);
    assert_eq!(card("qs"), Card::QUEEN_OF_SPADES);
    assert_eq!(card("aH").to_string(), "AH");
    assert_eq!(card("TD").to_string(), "10D");
    assert_eq!(Card::all().count(), 52);
    let codes: Vec<&str> = Card::all().map(Card::code).collect();
    assert_eq!(codes, CARD_CODES);
    assert_eq!(CARD_CODES[0], "2C");
    assert_eq!(CARD_CODES[51], "AS");
}

#[test]
fn bad_card_codes_give_a_precise_error() {
    let kind = |input: &str| input.parse::<Card>().expect_err(input).kind;
    assert_eq!(kind(""), ParseCardErrorKind::Empty);
    assert_eq!(kind("S"), ParseCardErrorKind::MissingRank);
    assert_eq!(kind("QX"), ParseCardErrorKind::UnknownSuit('X'));
    assert_eq!(kind("1D"), ParseCardErrorKind::UnknownRank("1".into()));
    assert_eq!(kind("11S"), ParseCardErrorKind::UnknownRank("11".into()));
    assert_eq!(kind("QSS"), ParseCardErrorKind::UnknownRank("QS".into()));
    assert_eq!(kind(" QS"), ParseCardErrorKind::UnknownRank(" Q".into()));
    assert_eq!(kind("QSé"), ParseCardErrorKind::UnknownSuit('é'));
    let message = "1D".parse::<Card>().expect_err("1D").to_string();
    assert_eq!(
        message,
        "invalid card code \"1D\": unknown rank \"1\" (expected 2-10, T, J, Q, K or A)"
    );
    let error = serde_json::from_value::<Card>(json!("ZZ")).expect_err("ZZ");
    assert!(error.to_string().contains("unknown suit 'Z'"), "{error}");
}

#[test]
fn card_sets_are_bit_sets_with_set_algebra() {
    let hand = cards("QS AS 4S AH 10D");
    assert_eq!(hand.len(), 5);
    assert!(hand.contains(card("AH")));
    assert_eq!(hand.of_suit(Suit::Spades), cards("4S QS AS"));
    assert_eq!(hand.of_suit(Suit::Spades).highest(), Some(card("AS")));
    assert_eq!(hand.of_suit(Suit::Spades).lowest(), Some(card("4S")));
    assert_eq!(hand & cards("AH KH"), cards("AH"));
    assert_eq!(hand | cards("2C"), cards("2C QS AS 4S AH 10D"));
    assert_eq!(hand - cards("QS"), cards("AS 4S AH 10D"));
    assert_eq!(hand.points(), 13 + 1 + 10);
    assert_eq!(CardSet::FULL.points(), 36);
    assert_eq!(!CardSet::FULL, CardSet::EMPTY);
    let mut set = CardSet::EMPTY;
    assert!(set.insert(card("2C")));
    assert!(!set.insert(card("2C")));
    assert!(set.remove(card("2C")));
    assert!(set.is_empty());
    assert_eq!(hand.to_string(), "10D AH 4S QS AS");
    assert_eq!(
        serde_json::to_value(cards("td qs")).unwrap(),
        json!(["10D", "QS"])
    );
    assert!(serde_json::from_value::<CardSet>(json!(["QS", "QS"])).is_err());
}

// ----- seats -----------------------------------------------------------------------------

#[test]
fn seats_know_their_neighbours_and_serialize_as_numbers() {
    assert_eq!(Seat::new(4), None);
    assert_eq!(seat(0).right(), seat(1));
    assert_eq!(seat(0).left(), seat(3));
    assert_eq!(seat(1).across(), seat(3));
    assert_eq!(seat(3).index(), 3);
    assert_eq!(serde_json::to_value(seat(2)).unwrap(), json!(2));
    assert!(serde_json::from_value::<Seat>(json!(4)).is_err());
    let totals = BySeat::new([1, 2, 3, 4]);
    assert_eq!(totals[seat(2)], 3);
    assert_eq!(serde_json::to_value(totals).unwrap(), json!([1, 2, 3, 4]));
    let back: BySeat<u32> = serde_json::from_value(json!([4, 3, 2, 1])).unwrap();
    assert_eq!(back.map(|t| t * 10), BySeat::new([40, 30, 20, 10]));
    let set: SeatSet = [seat(3), seat(1)].into_iter().collect();
    assert_eq!(serde_json::to_value(set).unwrap(), json!([1, 3]));
}

// ----- options ---------------------------------------------------------------------------

#[test]
fn classic_options_serialize_with_the_rule_book_names() {
    assert_eq!(
        serde_json::to_value(RuleOptions::default()).unwrap(),
        json!({
            "mode": "solo",
            "target_score": 101,
            "pass_direction": "right",
            "pass_restriction": "on",
            "forced_leekha": "both",
            "talbees": "off",
            "dealer_rotation": "queen_of_spades_taker",
            "solo_tie": "co_winners",
            "team_loss": "busted_team_loses",
        })
    );
    assert_eq!(RuleOptions::preset("classic"), Ok(RuleOptions::default()));
    let partnership = RuleOptions::preset("partnership").unwrap();
    assert_eq!(partnership.mode, Mode::Partnership);
    assert_eq!(partnership.pass_direction, PassDirection::Alternate);
    assert_eq!(
        serde_json::to_value(partnership).unwrap()["pass_direction"],
        "alternate"
    );
    let none: RuleOptions = serde_json::from_value(json!({
        "mode": "solo", "target_score": 51, "pass_direction": "none", "pass_restriction": "off",
        "forced_leekha": "queen_only", "talbees": "on", "dealer_rotation": "rotate_right",
        "solo_tie": "sudden_death", "team_loss": "team_sum_reaches_target"
    }))
    .unwrap();
    assert_eq!(none.pass_direction, PassDirection::NoPassing);
    assert_eq!(none.target_score.get(), 51);
}

#[test]
fn unknown_presets_values_and_fields_are_refused_clearly() {
    let error = RuleOptions::preset("hearts").unwrap_err();
    assert_eq!(error.code(), "unknown_preset");
    assert_eq!(
        error.to_string(),
        "unknown preset \"hearts\" (expected \"classic\" or \"partnership\")"
    );
    let error = serde_json::from_value::<RuleOverrides>(json!({"pass_direction": "sideways"}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown variant `sideways`"), "{error}");
    assert!(
        error.contains("`right`, `left`, `alternate`, `none`"),
        "{error}"
    );
    let error = serde_json::from_value::<RuleOverrides>(json!({"talbes": "on"}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown field `talbes`"), "{error}");
    assert!(serde_json::from_value::<RuleOverrides>(json!({"preset": "hearts"})).is_err());
    let error = serde_json::from_value::<RuleOptions>(
        json!({"mode": "solo", "target_score": 0, "pass_direction": "right",
               "pass_restriction": "on", "forced_leekha": "both", "talbees": "off",
               "dealer_rotation": "rotate_right", "solo_tie": "co_winners",
               "team_loss": "busted_team_loses"}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("target_score must be between 1 and 1000, got 0"),
        "{error}"
    );
}

#[test]
fn overrides_lay_over_a_preset_and_validate_the_target() {
    let overrides: RuleOverrides = serde_json::from_value(
        json!({"preset": "partnership", "talbees": "on", "target_score": 151}),
    )
    .unwrap();
    assert_eq!(overrides.validate(), Ok(()));
    let rules = overrides.clone().resolve().unwrap();
    assert_eq!(rules.mode, Mode::Partnership);
    assert_eq!(rules.talbees, Talbees::On);
    assert_eq!(rules.target_score.get(), 151);
    let base = RuleOptions {
        talbees: Talbees::On,
        ..RuleOptions::default()
    };
    let applied = RuleOverrides {
        mode: Some(Mode::Partnership),
        ..RuleOverrides::default()
    }
    .apply(base)
    .unwrap();
    assert_eq!(
        (applied.mode, applied.talbees),
        (Mode::Partnership, Talbees::On)
    );
    assert_eq!(
        RuleOverrides {
            preset: Some(Preset::Classic),
            ..RuleOverrides::default()
        }
        .apply(base),
        Ok(RuleOptions::default())
    );
    for bad in [0, 1001, -5] {
        let overrides = RuleOverrides {
            target_score: Some(bad),
            ..RuleOverrides::default()
        };
        let expected = OptionsError::TargetScoreOutOfRange { value: bad };
        assert_eq!(overrides.validate(), Err(expected.clone()));
        assert_eq!(
            overrides.apply(RuleOptions::default()),
            Err(expected.clone())
        );
        assert_eq!(expected.code(), "target_score_out_of_range");
    }
    assert_eq!(TargetScore::new(1).unwrap().get(), 1);
    assert_eq!(TargetScore::new(1000).unwrap().get(), 1000);
    assert_eq!(
        RuleOverrides::default().resolve(),
        Ok(RuleOptions::default())
    );
}

// ----- actions and events on the wire ----------------------------------------------------

#[test]
fn actions_use_a_type_tag_and_card_codes() {
    let pass: Action =
        serde_json::from_value(json!({"type": "pass", "seat": 0, "cards": ["QS", "as", "2C"]}))
            .unwrap();
    assert_eq!(
        pass,
        Action::Pass {
            seat: seat(0),
            cards: vec![card("QS"), card("AS"), card("2C")]
        }
    );
    assert_eq!(
        serde_json::to_value(&pass).unwrap(),
        json!({"type": "pass", "seat": 0, "cards": ["QS", "AS", "2C"]})
    );
    let play: Action =
        serde_json::from_value(json!({"type": "play", "seat": 1, "card": "TD"})).unwrap();
    assert_eq!(
        serde_json::to_value(&play).unwrap(),
        json!({"type": "play", "seat": 1, "card": "10D"})
    );
    assert!(
        serde_json::from_value::<Action>(json!({"type": "play", "seat": 5, "card": "QS"})).is_err()
    );
    assert!(serde_json::from_value::<Action>(json!({"type": "bid", "seat": 1})).is_err());
}

#[test]
fn events_use_snake_case_type_tags() {
    let (game, events) = Game::with_events(RuleOptions::default(), [5; 32]);
    let dealt = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(dealt["type"], "round_dealt");
    assert_eq!(dealt["round"], 1);
    assert_eq!(dealt["dealer"], json!(game.dealer().number()));
    assert_eq!(dealt["pass_direction"], "right");
    assert_eq!(dealt["hands"].as_array().map(Vec::len), Some(4));
    let played = Event::CardPlayed {
        seat: seat(1),
        card: card("10D"),
    };
    assert_eq!(
        serde_json::to_value(&played).unwrap(),
        json!({"type": "card_played", "seat": 1, "card": "10D"})
    );
    let won = Event::TrickWon {
        seat: seat(2),
        leader: seat(0),
        cards: [card("2C"), card("QS"), card("10D"), card("AH")],
        points: 24,
    };
    assert_eq!(serde_json::to_value(&won).unwrap()["type"], "trick_won");
    let back: Event = serde_json::from_value(serde_json::to_value(&won).unwrap()).unwrap();
    assert_eq!(back, won);
}

// ----- every rule error, with its code, and nothing changed ------------------------------

/// Applies `action`, expects `expected`, and checks that the game did not change.
fn refused(game: &mut Game, action: Action, expected: RuleError, code: &str) -> String {
    let before = game.clone();
    assert_eq!(game.apply(&action), Err(expected), "{action:?}");
    assert_eq!(expected.code(), code);
    assert_eq!(*game, before, "a refused {action:?} changed the game");
    expected.to_string()
}

#[test]
fn every_rule_error_has_a_stable_code_and_a_message_and_changes_nothing() {
    // Passing phase.
    let mut game = Game::new(RuleOptions::default(), [9; 32]);
    let hand: Vec<Card> = game.hand(seat(0)).iter().collect();
    let elsewhere = game.hand(seat(1)).lowest().unwrap();
    let message = refused(
        &mut game,
        Action::Play {
            seat: seat(0),
            card: hand[0],
        },
        RuleError::WrongPhase {
            phase: Phase::Passing,
            action: leekha::rules::ActionKind::Play,
        },
        "wrong_phase",
    );
    assert_eq!(message, "you cannot play a card during the passing phase");
    refused(
        &mut game,
        Action::Pass {
            seat: seat(0),
            cards: hand[..2].to_vec(),
        },
        RuleError::WrongCardCount {
            expected: 3,
            got: 2,
        },
        "wrong_card_count",
    );
    refused(
        &mut game,
        Action::Pass {
            seat: seat(0),
            cards: vec![hand[0], hand[0], hand[1]],
        },
        RuleError::DuplicateCard { card: hand[0] },
        "duplicate_card",
    );
    refused(
        &mut game,
        Action::Pass {
            seat: seat(0),
            cards: vec![hand[0], hand[1], elsewhere],
        },
        RuleError::CardNotInHand { card: elsewhere },
        "card_not_in_hand",
    );
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let pass = game.random_pass(seat(0), &mut rng).unwrap();
    game.pass(seat(0), pass, &mut Discard).unwrap();
    assert_eq!(game.legal_actions(seat(0)), LegalActions::None);
    let again = game.hand(seat(0)).iter().take(3).collect();
    let message = refused(
        &mut game,
        Action::Pass {
            seat: seat(0),
            cards: again,
        },
        RuleError::AlreadyCommitted { seat: seat(0) },
        "already_committed",
    );
    assert_eq!(message, "seat 0 has already passed this round");

    // A pass that empties hearts through a non-guard.
    let mut position = Position {
        phase: Phase::Passing,
        ..Position::new(RuleOptions::default())
    };
    position.hands[seat(0)] = cards("QS AS 4S AH 10D JD 9D 2C 3C 5C 6C 7C 8C");
    for s in 1..4 {
        position = position.fill(seat(s), 13, CardSet::EMPTY);
    }
    let mut passing = Game::from_position(position).unwrap();
    let message = refused(
        &mut passing,
        Action::Pass {
            seat: seat(0),
            cards: vec![card("AH"), card("2C"), card("3C")],
        },
        RuleError::PassRestriction { card: card("AH") },
        "pass_restriction",
    );
    assert_eq!(
        message,
        "passing AH would leave you without hearts: only QS, 10D and the cards above them may empty their suit"
    );

    // Playing phase: seat 0 led 5S, seat 1 holds QS 3S 10D AH.
    let mut position = Position {
        options: RuleOptions {
            talbees: Talbees::On,
            ..RuleOptions::default()
        },
        ..Position::new(RuleOptions::default())
    };
    position.trick = Trick::from_cards(seat(0), &[card("AS")]).unwrap();
    position.hands = BySeat::new([
        cards("2C 3C 4C"),
        cards("QS 3S 10D AH"),
        cards("5C 6C 7C 8C"),
        cards("9C 10C JC QC"),
    ]);
    let mut game = Game::from_position(position).unwrap();
    refused(
        &mut game,
        Action::Pass {
            seat: seat(1),
            cards: vec![card("QS"), card("3S"), card("10D")],
        },
        RuleError::WrongPhase {
            phase: Phase::Playing,
            action: leekha::rules::ActionKind::Pass,
        },
        "wrong_phase",
    );
    let message = refused(
        &mut game,
        Action::Play {
            seat: seat(2),
            card: card("5C"),
        },
        RuleError::NotYourTurn {
            seat: seat(2),
            turn: seat(1),
        },
        "not_your_turn",
    );
    assert_eq!(message, "it is seat 1's turn to play, not seat 2's");
    refused(
        &mut game,
        Action::Play {
            seat: seat(1),
            card: card("KS"),
        },
        RuleError::CardNotInHand { card: card("KS") },
        "card_not_in_hand",
    );
    let message = refused(
        &mut game,
        Action::Play {
            seat: seat(1),
            card: card("AH"),
        },
        RuleError::MustFollowSuit { suit: Suit::Spades },
        "must_follow_suit",
    );
    assert_eq!(message, "you hold a spade: you must follow suit");
    let message = refused(
        &mut game,
        Action::Play {
            seat: seat(1),
            card: card("3S"),
        },
        RuleError::Talbees { leekha: card("QS") },
        "talbees",
    );
    assert_eq!(
        message,
        "a card above QS is in the trick: you must play QS (talbees)"
    );
    game.apply(&Action::Play {
        seat: seat(1),
        card: card("QS"),
    })
    .unwrap();
    // Seat 2 is void in spades and holds no Leekha: free. Seat 3 then, after a new lead.
    let mut position = Position::new(RuleOptions::default());
    position.trick = Trick::from_cards(seat(0), &[card("4C")]).unwrap();
    position.hands = BySeat::new([
        cards("2H 3H"),
        cards("QS 10D 9H"),
        cards("5C 6C 7C"),
        cards("9D 10C JC"),
    ]);
    let mut game = Game::from_position(position).unwrap();
    let message = refused(
        &mut game,
        Action::Play {
            seat: seat(1),
            card: card("9H"),
        },
        RuleError::MustPlayLeekha {
            led: Suit::Clubs,
            allowed: cards("QS 10D"),
        },
        "must_play_leekha",
    );
    assert_eq!(
        message,
        "you have no clubs and hold a Leekha: you must play 10D QS"
    );

    // The end of the game.
    let mut game = Game::new(
        RuleOptions {
            target_score: TargetScore::new(1).unwrap(),
            ..RuleOptions::default()
        },
        [2; 32],
    );
    game.playout_round(&mut rng, &mut Discard);
    assert!(game.is_finished());
    let message = refused(
        &mut game,
        Action::Play {
            seat: seat(0),
            card: card("2C"),
        },
        RuleError::GameOver,
        "game_over",
    );
    assert_eq!(message, "the game is over");
    refused(
        &mut game,
        Action::Pass {
            seat: seat(0),
            cards: vec![],
        },
        RuleError::GameOver,
        "game_over",
    );
}

// ----- the game's bookkeeping ------------------------------------------------------------

#[test]
fn a_seed_decides_the_first_dealer_and_every_deal() {
    let a = Game::new(RuleOptions::default(), [1; 32]);
    let b = Game::new(RuleOptions::default(), [1; 32]);
    assert_eq!(a, b);
    let dealers: SeatSet = (0..40u8)
        .map(|i| Game::new(RuleOptions::default(), [i; 32]).dealer())
        .collect();
    assert_eq!(dealers.len(), 4, "every seat deals first for some seed");
    assert_ne!(
        Game::new(RuleOptions::default(), [2; 32]).hand(seat(0)),
        a.hand(seat(0))
    );
    assert_eq!(a.round_number(), 1);
    assert_eq!(a.phase(), Phase::Passing);
    assert_eq!(a.to_act(), SeatSet::ALL);
    assert_eq!(
        a.trick().leader(),
        a.dealer().right(),
        "the dealer's right leads"
    );
    assert!(
        !format!("{a:?}").contains(&a.seed().to_hex()),
        "Debug hides the seed"
    );
}

#[test]
fn without_passing_a_round_starts_with_play_and_alternate_switches_direction() {
    let none = RuleOptions {
        pass_direction: PassDirection::NoPassing,
        ..RuleOptions::default()
    };
    let game = Game::new(none, [4; 32]);
    assert_eq!(game.phase(), Phase::Playing);
    assert_eq!(game.pass_direction(), None);
    assert_eq!(game.turn(), Some(game.dealer().right()));
    assert_eq!(game.to_act(), SeatSet::single(game.dealer().right()));

    let mut game = Game::new(RuleOptions::preset("partnership").unwrap(), [4; 32]);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    assert_eq!(game.pass_direction(), Some(Direction::Right));
    game.playout_round(&mut rng, &mut Discard);
    assert_eq!(game.round_number(), 2);
    assert_eq!(game.pass_direction(), Some(Direction::Left));
    let before: BySeat<CardSet> = BySeat::from_fn(|s| game.hand(s));
    let passes = BySeat::from_fn(|s| game.random_pass(s, &mut rng).unwrap());
    for s in Seat::ALL {
        game.pass(s, passes[s], &mut Discard).unwrap();
    }
    for s in Seat::ALL {
        assert_eq!(game.hand(s), (before[s] - passes[s]) | passes[s.right()]);
        assert_eq!(
            game.received(s),
            Some(passes[s.right()]),
            "left: from the right"
        );
    }
    game.playout_round(&mut rng, &mut Discard);
    assert_eq!(game.pass_direction(), Some(Direction::Right));
}

#[test]
fn the_queen_of_spades_taker_deals_the_next_round() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for n in 0..10u8 {
        let mut game = Game::new(RuleOptions::default(), [n; 32]);
        let mut events = Vec::new();
        game.playout_round(&mut rng, &mut events);
        let taker = events.iter().find_map(|e| match e {
            Event::TrickWon { seat, cards, .. } if cards.contains(&Card::QUEEN_OF_SPADES) => {
                Some(*seat)
            }
            _ => None,
        });
        assert_eq!(Some(game.dealer()), taker);
        assert_eq!(game.trick().leader(), game.dealer().right());
    }
}

#[test]
fn views_show_public_facts_and_the_viewers_own_cards() {
    let mut game = Game::new(RuleOptions::preset("partnership").unwrap(), [6; 32]);
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for s in Seat::ALL {
        game.pass_random(s, &mut rng, &mut Discard).unwrap();
    }
    for _ in 0..6 {
        game.play_random(&mut rng, &mut Discard).unwrap();
    }
    let viewer = seat(2);
    let view = game.view(viewer);
    assert_eq!(view.seat, Some(viewer));
    assert_eq!(view.hand, game.hand(viewer));
    assert_eq!(view.tricks_played, 1);
    assert_eq!(view.trick.cards.len(), 2);
    let last = view.last_trick.as_ref().expect("one trick is complete");
    assert_eq!(last.cards.len(), 4);
    assert_eq!(view.trick.leader, last.winner);
    assert_eq!(view.seats[seat(1)].team.map(|t| t.number()), Some(1));
    assert_eq!(
        view.seats
            .iter()
            .map(|s| u32::from(s.cards_in_hand))
            .sum::<u32>(),
        52 - 6
    );
    assert_eq!(view.turn, game.turn());
    assert_eq!(view.received, game.received(viewer));
    assert_eq!(view.rules, *game.options());
    match view.legal_actions {
        LegalActions::Play { cards } => {
            assert_eq!(Some(viewer), game.turn());
            assert_eq!(cards, game.legal_plays(viewer));
        }
        LegalActions::None => assert_ne!(Some(viewer), game.turn()),
        LegalActions::Pass { .. } => panic!("the passing phase is over"),
    }
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["phase"], "playing");
    assert_eq!(json["pass_direction"], "right");
    assert!(json.get("seed").is_none());

    let spectator = game.spectator_view();
    assert_eq!(spectator.seat, None);
    assert!(spectator.hand.is_empty());
    assert_eq!(spectator.passed, None);
    assert_eq!(spectator.legal_actions, LegalActions::None);
}

#[test]
fn a_tampered_stored_game_is_refused() {
    let game = Game::new(RuleOptions::default(), [8; 32]);
    let mut json = serde_json::to_value(&game).unwrap();
    let stolen = json["hands"][1][0].clone();
    json["hands"][0].as_array_mut().unwrap().push(stolen);
    let error = serde_json::from_value::<Game>(json)
        .unwrap_err()
        .to_string();
    assert!(error.contains("is in two places"), "{error}");
    let mut json = serde_json::to_value(&game).unwrap();
    json["seed"] = json!("not hex");
    assert!(serde_json::from_value::<Game>(json).is_err());
}
