//! The rules a game is played by, and how it ended.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::Error;
use crate::games::Table;
use crate::rules::{
    DealerRotation, ForcedLeekha, GameResult, Mode, PassDirection, PassRestriction, SoloTie,
    Talbees, TeamLoss,
};

/// The resolved rule set of a game (rule book §8).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RulesView {
    /// `solo` or `partnership`.
    pub mode: Mode,
    /// The score that ends the game, 1..=1000.
    #[schema(example = 101, minimum = 1, maximum = 1000)]
    pub target_score: u32,
    /// `right`, `left`, `alternate` or `none`.
    pub pass_direction: PassDirection,
    /// `on` or `off`.
    pub pass_restriction: PassRestriction,
    /// `both`, `queen_only` or `off`.
    pub forced_leekha: ForcedLeekha,
    /// `off` or `on`.
    pub talbees: Talbees,
    /// `queen_of_spades_taker` or `rotate_right`.
    pub dealer_rotation: DealerRotation,
    /// `co_winners` or `sudden_death`.
    pub solo_tie: SoloTie,
    /// `busted_team_loses` or `team_sum_reaches_target`.
    pub team_loss: TeamLoss,
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
