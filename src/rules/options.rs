//! The rule options of §8, their presets and partial overrides.
//!
//! Every option serializes with the exact snake_case names and values of the rule book, so
//! the resolved [`RuleOptions`] a game stores is also what the API shows as `rules`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::card::Card;
use super::cardset::CardSet;
use super::seat::Seat;

/// Solo (everyone for themselves) or partnership (2 vs 2, partners across).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every player for themselves; the lowest total wins (§6).
    #[default]
    Solo,
    /// Seats {0, 2} against {1, 3} (§7).
    Partnership,
}

/// Where passes go, per round (option `pass_direction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassDirection {
    /// Always to the right (`i → i+1`).
    #[default]
    Right,
    /// Always to the left (`i → i+3`).
    Left,
    /// Right in odd rounds, left in even rounds (round 1 passes right).
    Alternate,
    /// No passing: every round starts with the playing phase.
    #[serde(rename = "none")]
    NoPassing,
}

impl PassDirection {
    /// The direction of the passes in round `round` (1-based), or `None` when that round
    /// has no passing phase.
    #[inline]
    pub const fn for_round(self, round: u32) -> Option<Direction> {
        match self {
            PassDirection::Right => Some(Direction::Right),
            PassDirection::Left => Some(Direction::Left),
            PassDirection::Alternate if round % 2 == 1 => Some(Direction::Right),
            PassDirection::Alternate => Some(Direction::Left),
            PassDirection::NoPassing => None,
        }
    }
}

/// The direction of one round's passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Each seat passes to its right, `i → i+1`.
    Right,
    /// Each seat passes to its left, `i → i+3`.
    Left,
}

impl Direction {
    /// The seat that receives `from`'s pass.
    #[inline]
    pub const fn receiver(self, from: Seat) -> Seat {
        match self {
            Direction::Right => from.right(),
            Direction::Left => from.left(),
        }
    }

    /// The seat whose pass `to` receives.
    #[inline]
    pub const fn giver(self, to: Seat) -> Seat {
        match self {
            Direction::Right => to.left(),
            Direction::Left => to.right(),
        }
    }
}

/// Whether the pass restriction of §3 applies (option `pass_restriction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassRestriction {
    /// A non-guard card may not empty its suit.
    #[default]
    On,
    /// Any 3 cards of the hand.
    Off,
}

/// Which Leekhas a player void in the led suit must play (option `forced_leekha`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForcedLeekha {
    /// `QS` and `10D`; holding both, the player chooses.
    #[default]
    Both,
    /// Only `QS` is forced.
    QueenOnly,
    /// No forced Leekha: a void player discards freely.
    Off,
}

impl ForcedLeekha {
    /// The cards a void player must play if held.
    #[inline]
    pub const fn cards(self) -> CardSet {
        match self {
            ForcedLeekha::Both => {
                CardSet::single(Card::QUEEN_OF_SPADES).with(Card::TEN_OF_DIAMONDS)
            }
            ForcedLeekha::QueenOnly => CardSet::single(Card::QUEEN_OF_SPADES),
            ForcedLeekha::Off => CardSet::EMPTY,
        }
    }
}

/// Whether talbees applies (option `talbees`): when following suit and a card higher than
/// that suit's Leekha is already in the trick, a holder of that Leekha must play it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Talbees {
    /// No talbees.
    #[default]
    Off,
    /// Talbees applies to both Leekhas.
    On,
}

/// Who deals the next round (option `dealer_rotation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DealerRotation {
    /// Whoever took `QS` deals next (traditional).
    #[default]
    QueenOfSpadesTaker,
    /// The dealer's right (`dealer + 1`) deals next.
    RotateRight,
}

/// What happens when the lowest solo total is shared at the end (option `solo_tie`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SoloTie {
    /// Every player with the lowest total wins.
    #[default]
    CoWinners,
    /// More rounds are played until the lowest total is unique.
    SuddenDeath,
}

/// Which team loses in partnership mode (option `team_loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TeamLoss {
    /// The team of a player whose own total reached the target loses; players of both
    /// teams bust: the lower team total wins, equal totals play one more round.
    #[default]
    BustedTeamLoses,
    /// A team whose summed total reached the target loses; both: the lower total wins,
    /// equal totals play one more round.
    TeamSumReachesTarget,
}

/// The score that ends the game (§6): any value in `1..=1000`, default 101.
///
/// Serialized as a plain integer; deserializing a value out of range fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "u16", try_from = "i64")]
pub struct TargetScore(u16);

impl TargetScore {
    /// The smallest allowed target.
    pub const MIN: u32 = 1;
    /// The largest allowed target.
    pub const MAX: u32 = 1000;
    /// The default target, 101.
    pub const DEFAULT: TargetScore = TargetScore(101);

    /// The target `value`.
    ///
    /// # Errors
    ///
    /// [`OptionsError::TargetScoreOutOfRange`] unless `1 <= value <= 1000`.
    pub fn new(value: i64) -> Result<TargetScore, OptionsError> {
        if (i64::from(TargetScore::MIN)..=i64::from(TargetScore::MAX)).contains(&value) {
            // The range check above makes the conversion lossless.
            Ok(TargetScore(value as u16))
        } else {
            Err(OptionsError::TargetScoreOutOfRange { value })
        }
    }

    /// The target as a number.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0 as u32
    }
}

impl Default for TargetScore {
    fn default() -> TargetScore {
        TargetScore::DEFAULT
    }
}

impl fmt::Display for TargetScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// As [`TargetScore::new`]; how serde reads a target (any integer, so that an out-of-range
/// value gets the precise error).
impl TryFrom<i64> for TargetScore {
    type Error = OptionsError;

    fn try_from(value: i64) -> Result<TargetScore, OptionsError> {
        TargetScore::new(value)
    }
}

/// The target as a number; how serde writes it.
impl From<TargetScore> for u16 {
    fn from(target: TargetScore) -> u16 {
        target.0
    }
}

/// A complete, resolved rule set (§8). `Default` is the `classic` preset. Every value is
/// valid by construction (the target is a [`TargetScore`]).
///
/// ```
/// use leekha::rules::{Mode, RuleOptions};
///
/// let json = serde_json::to_value(RuleOptions::default()).unwrap();
/// assert_eq!(json["forced_leekha"], "both");
/// assert_eq!(json["target_score"], 101);
/// let partnership = RuleOptions::preset("partnership").unwrap();
/// assert_eq!(partnership.mode, Mode::Partnership);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleOptions {
    /// `mode`: solo or partnership.
    pub mode: Mode,
    /// `target_score`: the total that ends the game.
    pub target_score: TargetScore,
    /// `pass_direction`: right, left, alternate or none.
    pub pass_direction: PassDirection,
    /// `pass_restriction`: on or off.
    pub pass_restriction: PassRestriction,
    /// `forced_leekha`: both, queen_only or off.
    pub forced_leekha: ForcedLeekha,
    /// `talbees`: off or on.
    pub talbees: Talbees,
    /// `dealer_rotation`: queen_of_spades_taker or rotate_right.
    pub dealer_rotation: DealerRotation,
    /// `solo_tie`: co_winners or sudden_death.
    pub solo_tie: SoloTie,
    /// `team_loss`: busted_team_loses or team_sum_reaches_target.
    pub team_loss: TeamLoss,
}

/// A named rule set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// All defaults.
    Classic,
    /// `mode: partnership`, `pass_direction: alternate`, the rest default.
    Partnership,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 2] = [Preset::Classic, Preset::Partnership];

    /// The preset's name, as accepted by [`RuleOptions::preset`].
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Classic => "classic",
            Preset::Partnership => "partnership",
        }
    }

    /// The rule set this preset names.
    pub fn options(self) -> RuleOptions {
        match self {
            Preset::Classic => RuleOptions::default(),
            Preset::Partnership => RuleOptions {
                mode: Mode::Partnership,
                pass_direction: PassDirection::Alternate,
                ..RuleOptions::default()
            },
        }
    }
}

impl FromStr for Preset {
    type Err = OptionsError;

    fn from_str(name: &str) -> Result<Preset, OptionsError> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| OptionsError::UnknownPreset {
                name: name.chars().take(32).collect(),
            })
    }
}

impl RuleOptions {
    /// The rule set of a named preset: `classic` or `partnership`.
    ///
    /// # Errors
    ///
    /// [`OptionsError::UnknownPreset`] for any other name.
    pub fn preset(name: &str) -> Result<RuleOptions, OptionsError> {
        Ok(name.parse::<Preset>()?.options())
    }

    /// Whether the game is played 2 vs 2.
    #[inline]
    pub const fn is_partnership(&self) -> bool {
        matches!(self.mode, Mode::Partnership)
    }
}

/// An invalid rule set: what [`RuleOverrides::validate`] and [`RuleOptions::preset`] reject.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// The preset name is neither `classic` nor `partnership`.
    #[error("unknown preset {name:?} (expected \"classic\" or \"partnership\")")]
    UnknownPreset {
        /// The name given (cut to 32 characters).
        name: String,
    },
    /// `target_score` outside `1..=1000`.
    #[error("target_score must be between 1 and 1000, got {value}")]
    TargetScoreOutOfRange {
        /// The value given.
        value: i64,
    },
}

impl OptionsError {
    /// A stable snake_case code: `unknown_preset` or `target_score_out_of_range`.
    pub const fn code(&self) -> &'static str {
        match self {
            OptionsError::UnknownPreset { .. } => "unknown_preset",
            OptionsError::TargetScoreOutOfRange { .. } => "target_score_out_of_range",
        }
    }
}

/// A partial rule set as a client sends it (`rules: {preset?, …options}`): every field is
/// optional and unknown fields are refused. [`RuleOverrides::apply`] lays it over a base.
///
/// ```
/// use leekha::rules::{RuleOptions, RuleOverrides, Talbees};
///
/// let overrides: RuleOverrides =
///     serde_json::from_str(r#"{"preset": "partnership", "talbees": "on"}"#).unwrap();
/// let rules = overrides.resolve().unwrap();
/// assert_eq!(rules.talbees, Talbees::On);
/// assert!(rules.is_partnership());
/// assert!(serde_json::from_str::<RuleOverrides>(r#"{"talbes": "on"}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuleOverrides {
    /// Start from this preset instead of the base.
    pub preset: Option<Preset>,
    /// See [`RuleOptions::mode`].
    pub mode: Option<Mode>,
    /// See [`RuleOptions::target_score`]; a plain integer here so that an out-of-range
    /// value gets the precise [`OptionsError::TargetScoreOutOfRange`].
    pub target_score: Option<i64>,
    /// See [`RuleOptions::pass_direction`].
    pub pass_direction: Option<PassDirection>,
    /// See [`RuleOptions::pass_restriction`].
    pub pass_restriction: Option<PassRestriction>,
    /// See [`RuleOptions::forced_leekha`].
    pub forced_leekha: Option<ForcedLeekha>,
    /// See [`RuleOptions::talbees`].
    pub talbees: Option<Talbees>,
    /// See [`RuleOptions::dealer_rotation`].
    pub dealer_rotation: Option<DealerRotation>,
    /// See [`RuleOptions::solo_tie`].
    pub solo_tie: Option<SoloTie>,
    /// See [`RuleOptions::team_loss`].
    pub team_loss: Option<TeamLoss>,
}

impl RuleOverrides {
    /// Checks the values that types alone cannot (the target range).
    ///
    /// # Errors
    ///
    /// [`OptionsError::TargetScoreOutOfRange`] for a target outside `1..=1000`.
    pub fn validate(&self) -> Result<(), OptionsError> {
        if let Some(target) = self.target_score {
            TargetScore::new(target)?;
        }
        Ok(())
    }

    /// The rule set: the preset if one is named (else `base`), then every given field.
    ///
    /// # Errors
    ///
    /// As [`RuleOverrides::validate`].
    pub fn apply(self, base: RuleOptions) -> Result<RuleOptions, OptionsError> {
        let mut rules = self.preset.map_or(base, Preset::options);
        if let Some(target) = self.target_score {
            rules.target_score = TargetScore::new(target)?;
        }
        rules.mode = self.mode.unwrap_or(rules.mode);
        rules.pass_direction = self.pass_direction.unwrap_or(rules.pass_direction);
        rules.pass_restriction = self.pass_restriction.unwrap_or(rules.pass_restriction);
        rules.forced_leekha = self.forced_leekha.unwrap_or(rules.forced_leekha);
        rules.talbees = self.talbees.unwrap_or(rules.talbees);
        rules.dealer_rotation = self.dealer_rotation.unwrap_or(rules.dealer_rotation);
        rules.solo_tie = self.solo_tie.unwrap_or(rules.solo_tie);
        rules.team_loss = self.team_loss.unwrap_or(rules.team_loss);
        Ok(rules)
    }

    /// [`RuleOverrides::apply`] over the `classic` defaults.
    ///
    /// # Errors
    ///
    /// As [`RuleOverrides::validate`].
    pub fn resolve(self) -> Result<RuleOptions, OptionsError> {
        self.apply(RuleOptions::default())
    }
}
