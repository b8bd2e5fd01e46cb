//! The record of a game, as its players see it after the end (administrators see it too).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::Error;
use crate::games::{Record, Table};

use super::game::{CardCode, ResultView, RulesView, codes_of, rules_view};
use crate::rules::Action;

/// A deal, revealed after the game.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayRound {
    /// Round number.
    pub round: u32,
    /// Dealer.
    pub dealer: u8,
    /// The four hands as dealt, by seat.
    pub hands: Vec<Vec<CardCode>>,
}

/// Who made an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    /// The seat's player.
    Player,
    /// A bot acting for the seat.
    Bot,
    /// The server, when the seat's turn timed out.
    Timeout,
}

/// An action in a replay, by `type`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReplayAction {
    /// A pass.
    Pass {
        /// 1, 2, … over the whole game.
        seq: i64,
        /// The acting seat.
        seat: u8,
        /// The passed cards.
        cards: Vec<CardCode>,
        /// Who acted.
        #[schema(value_type = ActorKind)]
        actor: String,
        /// When.
        created_at: DateTime<Utc>,
    },
    /// A play.
    Play {
        /// 1, 2, … over the whole game.
        seq: i64,
        /// The acting seat.
        seat: u8,
        /// The played card.
        card: CardCode,
        /// Who acted.
        #[schema(value_type = ActorKind)]
        actor: String,
        /// When.
        created_at: DateTime<Utc>,
    },
}

/// Everything about a finished game: seed, every deal, every action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayView {
    /// Game id.
    pub id: uuid::Uuid,
    /// Rules.
    pub rules: RulesView,
    /// The deal seed (64 hex digits): with the rules and actions it reproduces the game.
    /// Null for a game aborted before the deal.
    #[schema(
        required = true,
        pattern = "^[0-9a-f]{64}$",
        example = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    )]
    pub seed: Option<String>,
    /// Every deal.
    pub rounds: Vec<ReplayRound>,
    /// Every action, in order.
    pub actions: Vec<ReplayAction>,
    /// How it ended (null if aborted).
    #[schema(required = true)]
    pub result: Option<ResultView>,
}

impl ReplayRound {
    fn of(round: &crate::games::record::DealtRound) -> Self {
        Self {
            round: round.round,
            dealer: round.dealer,
            hands: round
                .hands
                .iter()
                .map(|h| h.iter().cloned().map(CardCode).collect())
                .collect(),
        }
    }
}

impl ReplayAction {
    fn of(a: &crate::games::record::RecordedAction) -> Self {
        let (seq, seat, actor, created_at) = (
            a.seq,
            a.action.seat().number(),
            a.actor.clone(),
            a.created_at.and_utc(),
        );
        match &a.action {
            Action::Pass { cards, .. } => Self::Pass {
                seq,
                seat,
                cards: codes_of(cards),
                actor,
                created_at,
            },
            Action::Play { card, .. } => Self::Play {
                seq,
                seat,
                card: CardCode(card.to_string()),
                actor,
                created_at,
            },
        }
    }
}

/// The deals and actions of a record.
pub fn rounds_and_actions(record: &Record) -> (Vec<ReplayRound>, Vec<ReplayAction>) {
    (
        record.rounds.iter().map(ReplayRound::of).collect(),
        record.actions.iter().map(ReplayAction::of).collect(),
    )
}

/// The replay of a finished game.
///
/// # Errors
/// 500 when stored data does not parse.
pub fn replay_view(table: &Table, record: &Record) -> Result<ReplayView, Error> {
    let (rounds, actions) = rounds_and_actions(record);
    let result = match &table.row.result {
        Some(raw) => Some(ResultView::from(&serde_json::from_str(raw)?)),
        None => None,
    };
    Ok(ReplayView {
        id: table.row.id.parse().unwrap_or_default(),
        rules: rules_view(table)?,
        seed: table.row.seed.clone().filter(|s| !s.is_empty()),
        rounds,
        actions,
        result,
    })
}
