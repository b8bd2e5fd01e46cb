//! The rating arithmetic, pure: Weng-Lin (OpenSkill, Bradley-Terry full pairing) through the
//! `skillratings` crate, with its default constants (μ 25, σ 25/3, β 25/6). Nothing here
//! reads a clock or a database, so `leekha verify` replays games with exactly the code that
//! rated them.

use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// A player's skill estimate in one mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// The mean skill μ.
    pub mu: f64,
    /// The uncertainty σ of μ.
    pub sigma: f64,
}

impl Rating {
    /// A new player's rating: μ = 25, σ = 25/3 (ordinal 0).
    #[must_use]
    pub fn initial() -> Self {
        let r = WengLinRating::new();
        Self {
            mu: r.rating,
            sigma: r.uncertainty,
        }
    }

    /// μ − 3σ: a conservative estimate (the player is very likely at least this good), which
    /// orders the boards so that a lucky first game does not top them.
    #[must_use]
    pub fn ordinal(self) -> f64 {
        self.mu - 3.0 * self.sigma
    }

    fn to_crate(self) -> WengLinRating {
        WengLinRating {
            rating: self.mu,
            uncertainty: self.sigma,
        }
    }

    fn from_crate(r: WengLinRating) -> Self {
        Self {
            mu: r.rating,
            sigma: r.uncertainty,
        }
    }
}

/// The new ratings of the players of one game, given as teams with their places (1 is best;
/// equal places are a draw between those teams). Solo is four teams of one ranked by total
/// score; partnership two teams of two ranked 1 and 2. The result has the input's shape.
#[must_use]
pub fn update(teams: &[(Vec<Rating>, u32)]) -> Vec<Vec<Rating>> {
    let crate_teams: Vec<(Vec<WengLinRating>, MultiTeamOutcome)> = teams
        .iter()
        .map(|(players, rank)| {
            (
                players.iter().map(|p| p.to_crate()).collect(),
                MultiTeamOutcome::new(*rank as usize),
            )
        })
        .collect();
    let borrowed: Vec<(&[WengLinRating], MultiTeamOutcome)> = crate_teams
        .iter()
        .map(|(players, rank)| (players.as_slice(), *rank))
        .collect();
    weng_lin_multi_team(&borrowed, &WengLinConfig::new())
        .into_iter()
        .map(|team| team.into_iter().map(Rating::from_crate).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(mu: f64, sigma: f64) -> Rating {
        Rating { mu, sigma }
    }

    fn cents(x: f64) -> f64 {
        (x * 100.0).round()
    }

    /// The new means of every team's players after `update`, in cents.
    fn new_mus(teams: &[(Vec<Rating>, u32)]) -> Vec<Vec<f64>> {
        update(teams)
            .iter()
            .map(|t| t.iter().map(|p| cents(p.mu)).collect())
            .collect()
    }

    #[test]
    fn three_teams_match_the_crates_documented_example() {
        // skillratings' `weng_lin_multi_team` example: teams placed 2, 1, 3.
        let one = vec![Rating::initial(), r(30.0, 1.2), r(21.0, 6.5)];
        let two = vec![Rating::initial(), r(41.0, 1.4), r(19.2, 4.3)];
        let three = vec![Rating::initial(), r(29.4, 1.6), r(17.2, 2.1)];
        assert_eq!(
            new_mus(&[(one, 2), (two, 1), (three, 3)]),
            vec![
                vec![2538.0, 3001.0, 2123.0],
                vec![2796.0, 4108.0, 1999.0],
                vec![2166.0, 2928.0, 1699.0],
            ]
        );
    }

    #[test]
    fn two_teams_match_the_crates_documented_two_team_example() {
        // skillratings' `weng_lin_two_teams` example: team one wins.
        let one = vec![Rating::initial(), r(30.0, 1.2), r(21.0, 6.5)];
        let two = vec![Rating::initial(), r(41.0, 1.4), r(19.2, 4.3)];
        assert_eq!(
            new_mus(&[(one, 1), (two, 2)]),
            vec![vec![2790.0, 3006.0, 2277.0], vec![2210.0, 4092.0, 1843.0]]
        );
    }

    #[test]
    fn one_on_one_matches_the_crates_documented_example() {
        // skillratings' `weng_lin` example: (42, 1.3) beats a new player.
        let new = update(&[(vec![r(42.0, 1.3)], 1), (vec![Rating::initial()], 2)]);
        assert_eq!(cents(new[0][0].mu), 4203.0);
        assert_eq!(cents(new[0][0].sigma), 130.0);
        assert_eq!(cents(new[1][0].mu), 2391.0);
        assert_eq!(cents(new[1][0].sigma), 803.0);
    }

    #[test]
    fn in_a_solo_game_the_winner_rises_the_last_falls_and_tied_equals_move_alike() {
        let p = Rating::initial();
        let new = update(&[(vec![p], 1), (vec![p], 2), (vec![p], 2), (vec![p], 4)]);
        assert!(new[0][0].mu > p.mu);
        assert!(new[3][0].mu < p.mu);
        assert_eq!(new[1][0], new[2][0]);
        // Every player is better known after a game.
        assert!(new.iter().all(|t| t[0].sigma < p.sigma));
        assert_eq!(Rating::initial().ordinal(), 25.0 - 3.0 * (25.0 / 3.0));
    }
}
