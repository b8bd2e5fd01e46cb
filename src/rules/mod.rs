//! The rules of Leekha (`shared/rules/LEEKHA.md`): a pure, deterministic engine.
//!
//! Everything the server, the bots and the tools know about the game lives here, and
//! nothing else does: no I/O, no clock, no global randomness. Randomness comes in as a
//! [`Seed`] (the deals) or as an explicit `rand::Rng` (simulations), so a game is a pure
//! function of its options, its seed and its actions — which is what [`replay`] relies on.
//!
//! Design, after shakmaty:
//! - vocabulary types: [`Card`] (an index `0..52`), [`CardSet`] (a `u64` bit set), [`Seat`]
//!   with [`BySeat`] per-seat data, [`RuleOptions`] for §8;
//! - [`Game`] is the whole state; closed [`Action`]s go through [`Game::apply`], which
//!   either returns the [`Event`]s or a precise [`RuleError`] and leaves the game untouched;
//! - legal-move generation ([`Game::legal_actions`]) and the legality check
//!   ([`Game::check`]) are separate code held to agree by property tests;
//! - [`Game::view`] is the only way a player sees the state.
//!
//! The hot path (legal plays, [`Game::play`] with the [`Discard`] sink) is allocation-free,
//! for bots that run millions of random playouts.
//!
//! ```
//! use leekha::rules::{Action, Discard, Game, RuleOptions, Seat};
//! use rand::SeedableRng;
//!
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
//! let mut game = Game::new(RuleOptions::default(), [1; 32]);
//! while !game.is_finished() {
//!     for seat in game.to_act().iter() {
//!         if let Some(cards) = game.random_pass(seat, &mut rng) {
//!             game.pass(seat, cards, &mut Discard).unwrap();
//!         }
//!     }
//!     if let Some((seat, card)) = game.random_play(&mut rng) {
//!         let events = game.apply(&Action::Play { seat, card }).unwrap();
//!         assert!(!events.is_empty());
//!     }
//! }
//! assert!(game.result().is_some());
//! ```

mod action;
mod card;
mod cardset;
mod deal;
mod error;
mod event;
mod game;
mod legality;
mod options;
mod playout;
mod position;
mod scoring;
mod seat;
mod trick;
mod view;

pub use action::{Action, ActionKind};
pub use card::{CARD_CODES, Card, ParseCardError, ParseCardErrorKind, Rank, Suit};
pub use cardset::{CardSet, CardSetIter};
pub use deal::{Seed, deal};
pub use error::{PositionError, ReplayError, RuleError};
pub use event::{Discard, Event, EventSink};
pub use game::{Game, LegalActions, Phase, replay};
pub use legality::{
    GUARDS, above_leekha, check_pass, check_play, legal_passes, legal_plays, may_empty_suit,
    passable_cards, talbees_leekha,
};
pub use options::{
    DealerRotation, Direction, ForcedLeekha, Mode, OptionsError, PassDirection, PassRestriction,
    Preset, RuleOptions, RuleOverrides, SoloTie, Talbees, TargetScore, TeamLoss,
};
pub use playout::Playout;
pub use position::Position;
pub use scoring::{GameResult, Standing, game_outcome};
pub use seat::{BySeat, Seat, SeatSet, Team};
pub use trick::{PlayedCard, Trick};
pub use view::{LastTrickView, SeatSummary, SeatView, TrickView};
