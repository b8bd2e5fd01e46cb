//! The end-of-game check of §6 and §7, and the result it produces.

use serde::{Deserialize, Serialize};

use super::options::{Mode, RuleOptions, SoloTie, TeamLoss};
use super::seat::{BySeat, Seat, Team};

/// How a finished game ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameResult {
    /// The winning seats: the lowest totals in solo (several on a co-win), the two seats of
    /// the winning team in partnership. In seat order.
    pub winners: Vec<Seat>,
    /// Every seat with its final total and rank, best rank first (then seat order).
    pub ranking: Vec<Standing>,
    /// In partnership, the team that lost.
    pub losing_team: Option<Team>,
}

/// One seat's place in a [`GameResult`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Standing {
    /// The seat.
    pub seat: Seat,
    /// Its final total.
    pub total_score: u32,
    /// 1 is best. Solo: by total, equal totals share a rank (1, 2, 2, 4). Partnership: 1 for
    /// the winning team, 2 for the losing team.
    pub rank: u32,
}

/// The end-of-round check (run only after the 13th trick): `Some(result)` when `totals`
/// (already including the round's points) end the game under `options`, `None` when another
/// round must be played.
///
/// - Solo: over once a total is ≥ the target; the lowest total wins. A shared lowest total
///   co-wins, or with `solo_tie: sudden_death` another round is played.
/// - Partnership, `busted_team_loses`: the team of a player ≥ target loses; players of both
///   teams ≥ target: the lower team total wins, equal team totals play another round.
/// - Partnership, `team_sum_reaches_target`: a team whose summed total is ≥ target loses;
///   both: the lower total wins, equal totals play another round.
///
/// ```
/// use leekha::rules::{game_outcome, BySeat, RuleOptions, Seat};
///
/// let result = game_outcome(&RuleOptions::default(), &BySeat::new([103, 55, 47, 47])).unwrap();
/// assert_eq!(result.winners, vec![Seat::ALL[2], Seat::ALL[3]]);
/// assert_eq!(game_outcome(&RuleOptions::default(), &BySeat::new([100, 55, 47, 47])), None);
/// ```
pub fn game_outcome(options: &RuleOptions, totals: &BySeat<u32>) -> Option<GameResult> {
    let target = options.target_score.get();
    match options.mode {
        Mode::Solo => solo_outcome(options.solo_tie, target, totals),
        Mode::Partnership => partnership_outcome(options.team_loss, target, totals),
    }
}

fn solo_outcome(tie: SoloTie, target: u32, totals: &BySeat<u32>) -> Option<GameResult> {
    if totals.iter().all(|&t| t < target) {
        return None;
    }
    let lowest = totals.iter().copied().min()?;
    let winners: Vec<Seat> = Seat::ALL
        .into_iter()
        .filter(|&s| totals[s] == lowest)
        .collect();
    if winners.len() > 1 && tie == SoloTie::SuddenDeath {
        return None;
    }
    let mut ranking: Vec<Standing> = Seat::ALL
        .into_iter()
        .map(|seat| Standing {
            seat,
            total_score: totals[seat],
            // Competition ranking: one plus the number of strictly better totals.
            rank: 1 + totals.iter().filter(|&&t| t < totals[seat]).count() as u32,
        })
        .collect();
    ranking.sort_by_key(|s| (s.rank, s.seat));
    Some(GameResult {
        winners,
        ranking,
        losing_team: None,
    })
}

fn partnership_outcome(rule: TeamLoss, target: u32, totals: &BySeat<u32>) -> Option<GameResult> {
    // Saturating: a stored state may carry any totals, and the check must not panic.
    let team_total = |team: Team| -> u32 {
        let [x, y] = team.members();
        totals[x].saturating_add(totals[y])
    };
    let busted = |team: Team| match rule {
        TeamLoss::BustedTeamLoses => team.members().iter().any(|&s| totals[s] >= target),
        TeamLoss::TeamSumReachesTarget => team_total(team) >= target,
    };
    let [a, b] = Team::ALL;
    let loser = match (busted(a), busted(b)) {
        (false, false) => return None,
        (true, false) => a,
        (false, true) => b,
        (true, true) => match team_total(a).cmp(&team_total(b)) {
            std::cmp::Ordering::Less => b,
            std::cmp::Ordering::Greater => a,
            std::cmp::Ordering::Equal => return None,
        },
    };
    let winners = loser.other().members().to_vec();
    let mut ranking: Vec<Standing> = Seat::ALL
        .into_iter()
        .map(|seat| Standing {
            seat,
            total_score: totals[seat],
            rank: if seat.team() == loser { 2 } else { 1 },
        })
        .collect();
    ranking.sort_by_key(|s| (s.rank, s.seat));
    Some(GameResult {
        winners,
        ranking,
        losing_team: Some(loser),
    })
}
