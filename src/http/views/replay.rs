//! The record of a game, as its players see it after the end (administrators see it too).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::Error;
use crate::games::{Record, Table};

use super::game::{CardCode, ResultView, RulesView, action_parts, rules_view};

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

/// An action in a replay.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayAction {
    /// 1, 2, …
    pub seq: i64,
    /// The acting seat.
    pub seat: u8,
    /// `pass` or `play`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The passed cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardCode>>,
    /// The played card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<CardCode>,
    /// `player`, `bot` or `timeout`.
    pub actor: String,
    /// When.
    pub created_at: DateTime<Utc>,
}

/// Everything about a finished game: seed, every deal, every action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayView {
    /// Game id.
    pub id: uuid::Uuid,
    /// Rules.
    pub rules: RulesView,
    /// The deal seed (64 hex digits): with the rules and actions it reproduces the game.
    pub seed: String,
    /// Every deal.
    pub rounds: Vec<ReplayRound>,
    /// Every action, in order.
    pub actions: Vec<ReplayAction>,
    /// How it ended (null if aborted).
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
        let (kind, cards, card) = action_parts(&a.action);
        Self {
            seq: a.seq,
            seat: a.action.seat().number(),
            kind: kind.into(),
            cards,
            card,
            actor: a.actor.clone(),
            created_at: a.created_at.and_utc(),
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
        seed: table.row.seed.clone().unwrap_or_default(),
        rounds,
        actions,
        result,
    })
}
