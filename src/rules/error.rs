//! Why an action, a position or a replay was refused.

use super::action::{Action, ActionKind};
use super::card::{Card, Suit};
use super::cardset::CardSet;
use super::game::Phase;
use super::seat::Seat;

/// An illegal action, with the precise reason. A refused action never changes the game.
///
/// [`RuleError::code`] gives a stable snake_case code for the API's problem documents; the
/// `Display` text is a sentence addressed to the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The game has finished; no action is accepted. Code `game_over`.
    #[error("the game is over")]
    GameOver,
    /// A pass during the playing phase or a play during the passing phase. Code `wrong_phase`.
    #[error("you cannot {} during the {phase} phase", .action.verb())]
    WrongPhase {
        /// The current phase.
        phase: Phase,
        /// What was attempted.
        action: ActionKind,
    },
    /// Another seat is to play. Code `not_your_turn`.
    #[error("it is seat {turn}'s turn to play, not seat {seat}'s")]
    NotYourTurn {
        /// The seat that tried to act.
        seat: Seat,
        /// The seat whose turn it is.
        turn: Seat,
    },
    /// The card is not in the acting seat's hand. Code `card_not_in_hand`.
    #[error("you do not hold {card}")]
    CardNotInHand {
        /// The card played or passed.
        card: Card,
    },
    /// The seat holds the led suit and played another. Code `must_follow_suit`.
    #[error("you hold {}: you must follow suit", .suit.singular())]
    MustFollowSuit {
        /// The led suit.
        suit: Suit,
    },
    /// The seat is void in the led suit and holds a forced Leekha, but played something
    /// else. Code `must_play_leekha`.
    #[error("you have no {} and hold a Leekha: you must play {allowed}", .led.name())]
    MustPlayLeekha {
        /// The led suit.
        led: Suit,
        /// The Leekhas the seat may play (one or both).
        allowed: CardSet,
    },
    /// Talbees: a card above the led suit's Leekha is in the trick and the seat holds that
    /// Leekha, but played another card of the suit. Code `talbees`.
    #[error("a card above {leekha} is in the trick: you must play {leekha} (talbees)")]
    Talbees {
        /// The Leekha the seat must play.
        leekha: Card,
    },
    /// The pass would empty a suit through a card that is not a guard (§3). Code
    /// `pass_restriction`.
    #[error(
        "passing {card} would leave you without {}: only QS, 10D and the cards above them may empty their suit",
        .card.suit().name()
    )]
    PassRestriction {
        /// A card of the pass that is not a guard and whose suit the pass empties.
        card: Card,
    },
    /// A pass of other than 3 cards. Code `wrong_card_count`.
    #[error("a pass is exactly {expected} cards, got {got}")]
    WrongCardCount {
        /// Always 3.
        expected: usize,
        /// How many cards were given.
        got: usize,
    },
    /// The same card twice in a pass. Code `duplicate_card`.
    #[error("{card} appears more than once in the pass")]
    DuplicateCard {
        /// The repeated card.
        card: Card,
    },
    /// The seat has already committed its pass this round. Code `already_committed`.
    #[error("seat {seat} has already passed this round")]
    AlreadyCommitted {
        /// The seat.
        seat: Seat,
    },
}

impl RuleError {
    /// The stable machine-readable code: `game_over`, `wrong_phase`, `not_your_turn`,
    /// `card_not_in_hand`, `must_follow_suit`, `must_play_leekha`, `talbees`,
    /// `pass_restriction`, `wrong_card_count`, `duplicate_card` or `already_committed`.
    pub const fn code(&self) -> &'static str {
        match self {
            RuleError::GameOver => "game_over",
            RuleError::WrongPhase { .. } => "wrong_phase",
            RuleError::NotYourTurn { .. } => "not_your_turn",
            RuleError::CardNotInHand { .. } => "card_not_in_hand",
            RuleError::MustFollowSuit { .. } => "must_follow_suit",
            RuleError::MustPlayLeekha { .. } => "must_play_leekha",
            RuleError::Talbees { .. } => "talbees",
            RuleError::PassRestriction { .. } => "pass_restriction",
            RuleError::WrongCardCount { .. } => "wrong_card_count",
            RuleError::DuplicateCard { .. } => "duplicate_card",
            RuleError::AlreadyCommitted { .. } => "already_committed",
        }
    }
}

/// An action of a replay was refused: which one, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("action #{index} ({action:?}) was refused: {error}")]
pub struct ReplayError {
    /// The 0-based index of the action in the list.
    pub index: usize,
    /// The action.
    pub action: Action,
    /// Why it was refused.
    pub error: RuleError,
}

/// A position or a stored game state that breaks an invariant of the engine, refused by
/// [`Game::from_position`](super::Game::from_position) and by deserialization.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Round numbers start at 1.
    #[error("round numbers start at 1")]
    RoundZero,
    /// A card is in two places (two hands, a hand and a trick, …).
    #[error("{card} is in two places")]
    CardInTwoPlaces {
        /// The card.
        card: Card,
    },
    /// A committed pass does not hold exactly 3 cards.
    #[error("the pass of seat {seat} does not hold exactly 3 cards")]
    BadPass {
        /// The seat.
        seat: Seat,
    },
    /// The parts of the state do not fit together; the text says how.
    #[error("inconsistent position: {0}")]
    Inconsistent(&'static str),
}
