//! The rules a game is played by, and how it ended.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::Error;
use crate::games::Table;
use crate::rules::GameResult;

/// The resolved rule set of a game (rule book §8).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RulesView {
    /// `solo` or `partnership`.
    #[schema(example = "solo")]
    pub mode: String,
    /// The score that ends the game, 1..=1000.
    #[schema(example = 101)]
    pub target_score: u32,
    /// `right`, `left`, `alternate` or `none`.
    #[schema(example = "right")]
    pub pass_direction: String,
    /// `on` or `off`.
    #[schema(example = "on")]
    pub pass_restriction: String,
    /// `both`, `queen_only` or `off`.
    #[schema(example = "both")]
    pub forced_leekha: String,
    /// `off` or `on`.
    #[schema(example = "off")]
    pub talbees: String,
    /// `queen_of_spades_taker` or `rotate_right`.
    #[schema(example = "queen_of_spades_taker")]
    pub dealer_rotation: String,
    /// `co_winners` or `sudden_death`.
    #[schema(example = "co_winners")]
    pub solo_tie: String,
    /// `busted_team_loses` or `team_sum_reaches_target`.
    #[schema(example = "busted_team_loses")]
    pub team_loss: String,
}

/// A seat's final place.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StandingView {
    /// The seat.
    pub seat: u8,
    /// Final total.
    pub total_score: u32,
    /// 1 is best; equal totals share a rank in solo.
    pub rank: u32,
}

/// How the game ended.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ResultView {
    /// Winning seats.
    pub winners: Vec<u8>,
    /// Every seat, best first.
    pub ranking: Vec<StandingView>,
    /// Partnership: the losing team (0 or 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub losing_team: Option<u8>,
}

impl From<&GameResult> for ResultView {
    fn from(r: &GameResult) -> Self {
        Self {
            winners: r.winners.iter().map(|s| s.number()).collect(),
            ranking: r
                .ranking
                .iter()
                .map(|s| StandingView {
                    seat: s.seat.number(),
                    total_score: s.total_score,
                    rank: s.rank,
                })
                .collect(),
            losing_team: r.losing_team.map(|t| t.number()),
        }
    }
}

/// The game's rules as the API shows them.
///
/// # Errors
/// 500 when the stored rules do not parse.
pub fn rules_view(table: &Table) -> Result<RulesView, Error> {
    Ok(serde_json::from_value(serde_json::to_value(
        table.rules()?,
    )?)?)
}
