//! The JSON views of games: separate types from the rows and from the rules' types, built
//! from the rules' per-seat view so that nothing hidden can leak by accident.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bots::BotLevel;
use crate::error::Error;
use crate::games::{GameStatus, Table};
use crate::rules::{GameResult, LegalActions, Phase, Seat, SeatView};

pub use super::cards::{CardCode, codes, codes_of};
pub use super::rules::{ResultView, RulesView, StandingView, rules_view};

/// A user as others see them.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlayerRef {
    /// User id.
    pub id: uuid::Uuid,
    /// Username.
    pub username: String,
}

/// One seat of a game.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SeatEntry {
    /// 0..=3, in play order.
    pub seat: u8,
    /// The human holding the seat (also while a bot acts for them).
    #[schema(required = true)]
    pub player: Option<PlayerRef>,
    /// The bot acting for the seat, if any.
    #[schema(required = true)]
    pub bot: Option<BotLevel>,
    /// Anyone may join this seat now: it is empty, reserved for nobody, and the game waits
    /// for players.
    pub open: bool,
    /// The user this seat is reserved for.
    #[schema(required = true)]
    pub invited: Option<PlayerRef>,
    /// Total over scored rounds.
    pub total_score: u32,
    /// Points taken this round.
    pub round_points: u32,
    /// Cards in hand.
    pub cards_in_hand: u8,
    /// 0 for seats {0, 2}, 1 for {1, 3} in partnership; null in solo.
    #[schema(required = true)]
    pub team: Option<u8>,
}

/// A card played by a seat.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PlayedCardView {
    /// Who played it.
    pub seat: u8,
    /// The card.
    pub card: CardCode,
}

/// The trick in progress.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TrickView {
    /// Who leads (or led) it.
    pub leader: u8,
    /// Cards played so far.
    pub cards: Vec<PlayedCardView>,
}

/// The last completed trick.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LastTrickView {
    /// Who led.
    pub leader: u8,
    /// The four cards.
    pub cards: Vec<PlayedCardView>,
    /// Who took it.
    pub winner: u8,
    /// Its points.
    pub points: u32,
}

/// The current round as the caller may see it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RoundView {
    /// Round number, from 1.
    pub number: u32,
    /// The dealer.
    pub dealer: u8,
    /// `passing`, `playing` or `finished`.
    #[schema(value_type = crate::rules::Phase)]
    pub phase: String,
    /// This round's pass direction (`right`, `left`), null without passing.
    #[schema(required = true, value_type = Option<crate::rules::Direction>)]
    pub pass_direction: Option<String>,
    /// The caller's own cards (empty for spectators).
    pub hand: Vec<CardCode>,
    /// The cards the caller passed, once committed.
    #[schema(required = true)]
    pub passed: Option<Vec<CardCode>>,
    /// The cards the caller received, once all four passed.
    #[schema(required = true)]
    pub received: Option<Vec<CardCode>>,
    /// Which seats committed their pass.
    pub passes_committed: [bool; 4],
    /// The trick in progress.
    pub trick: TrickView,
    /// The last completed trick.
    #[schema(required = true)]
    pub last_trick: Option<LastTrickView>,
    /// Tricks completed this round.
    pub tricks_played: u8,
}

/// Whose turn it is.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TurnView {
    /// The seat to play; null while passing (every seat in `seats` must pass).
    #[schema(required = true)]
    pub seat: Option<u8>,
    /// Every seat that must act now.
    pub seats: Vec<u8>,
    /// When the turn times out and the server acts for the late seat(s).
    #[schema(required = true)]
    pub deadline: Option<DateTime<Utc>>,
}

/// What the caller may do now, by `type`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LegalActionsView {
    /// Commit a pass. A set of `count` distinct `cards` is legal iff each of its cards that is
    /// not in `may_empty_suit` leaves at least one card of its suit in the hand; the server
    /// judges the same way.
    Pass {
        /// How many cards a pass holds (3).
        #[schema(minimum = 3, maximum = 3)]
        count: u8,
        /// The cards that belong to at least one legal pass.
        cards: Vec<CardCode>,
        /// The held cards that may be passed even when they leave their suit empty (the
        /// guards of rule book §3; the whole hand when `pass_restriction` is `off`).
        may_empty_suit: Vec<CardCode>,
    },
    /// Play one card.
    Play {
        /// The legal cards.
        cards: Vec<CardCode>,
    },
}

/// A game as the caller may see it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GameView {
    /// Game id.
    pub id: uuid::Uuid,
    /// Bumped by every change; also the `ETag`.
    pub version: i64,
    /// waiting | active | finished | aborted.
    pub status: GameStatus,
    /// `public` (in the lobby while waiting) or `private` (never listed; while a seat is open,
    /// the game's id is the invitation to it, then only its players and invited users see it).
    #[schema(value_type = crate::db::types::Visibility)]
    pub visibility: String,
    /// The resolved rule set.
    pub rules: RulesView,
    /// Seconds a seat has to act before the server acts for it.
    pub turn_timeout_seconds: i32,
    /// The creator.
    pub created_by: uuid::Uuid,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// The caller's seat; null when the caller has no seat.
    #[schema(required = true)]
    pub my_seat: Option<u8>,
    /// The four seats.
    pub seats: Vec<SeatEntry>,
    /// The current round; null before the deal.
    #[schema(required = true)]
    pub round: Option<RoundView>,
    /// Whose turn; null unless active.
    #[schema(required = true)]
    pub turn: Option<TurnView>,
    /// What the caller may do now; null when nothing.
    #[schema(required = true)]
    pub legal_actions: Option<LegalActionsView>,
    /// How it ended; null unless finished.
    #[schema(required = true)]
    pub result: Option<ResultView>,
    /// Why an administrator aborted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    /// Whether the game counts for the players' ratings.
    pub rated: bool,
    /// Whether signed-in users without a seat may watch it (when public).
    pub allow_spectators: bool,
    /// Signed-in users without a seat watching it now: each spectator's view, event list
    /// or stream counts them for the next minute. A user a seat is kept for (invited) is
    /// not a spectator.
    pub spectators: u32,
    /// The game a rematch of this finished game created (`POST …/rematch`); null until then.
    #[schema(required = true)]
    pub rematch_id: Option<uuid::Uuid>,
}

/// The user a seat names, with their username ("deleted" once the account is gone).
pub fn player_ref(table: &Table, user_id: Option<&str>) -> Option<PlayerRef> {
    let id = user_id?;
    Some(PlayerRef {
        id: id.parse().unwrap_or_default(),
        username: table.name(id).unwrap_or("deleted").to_owned(),
    })
}

/// The cards of a trick, in the order played.
fn played(cards: &[crate::rules::PlayedCard]) -> Vec<PlayedCardView> {
    cards
        .iter()
        .map(|p| PlayedCardView {
            seat: p.seat.number(),
            card: CardCode(p.card.to_string()),
        })
        .collect()
}

/// The JSON body of the view of `table` for `seat`: what an action answers (and stores for
/// retries with the same `Idempotency-Key`).
///
/// # Errors
/// As [`game_view`].
pub fn render(table: &Table, seat: Seat) -> Result<String, Error> {
    Ok(serde_json::to_string(&game_view(table, Some(seat))?)?)
}

/// Builds the view of `table` for `viewer` (`None`: no seat).
///
/// # Errors
/// 500 when stored data does not parse.
pub fn game_view(table: &Table, viewer: Option<Seat>) -> Result<GameView, Error> {
    let row = &table.row;
    let rules = table.rules()?;
    let rules_view = rules_view(table)?;
    let game = table.game()?;
    let seat_view: Option<SeatView> = game.as_ref().map(|g| match viewer {
        Some(seat) => g.view(seat),
        None => g.spectator_view(),
    });
    let partnership = rules.is_partnership();
    let seats = table
        .seats
        .iter()
        .map(|s| {
            let summary = seat_view
                .as_ref()
                .and_then(|v| v.seats.iter().nth(s.seat as usize).copied());
            SeatEntry {
                seat: s.seat as u8,
                player: player_ref(table, s.user_id.as_deref()),
                bot: s.bot_level,
                open: Seat::new(s.seat as u8).is_some_and(|seat| table.is_joinable(seat)),
                invited: if s.user_id.is_none() {
                    player_ref(table, s.invited_user_id.as_deref())
                } else {
                    None
                },
                total_score: summary.map_or(0, |x| x.total_score),
                round_points: summary.map_or(0, |x| x.round_points),
                cards_in_hand: summary.map_or(0, |x| x.cards_in_hand),
                team: partnership.then_some((s.seat % 2) as u8),
            }
        })
        .collect();
    let active = table.status() == GameStatus::Active;
    let round = seat_view.as_ref().map(|v| RoundView {
        number: v.round,
        dealer: v.dealer.number(),
        phase: match v.phase {
            Phase::Passing => "passing",
            Phase::Playing => "playing",
            Phase::Finished => "finished",
        }
        .to_owned(),
        pass_direction: v.pass_direction.map(|d| {
            serde_json::to_value(d)
                .ok()
                .and_then(|x| x.as_str().map(str::to_owned))
                .unwrap_or_default()
        }),
        hand: codes(v.hand),
        passed: v.passed.map(codes),
        received: v.received.map(codes),
        passes_committed: v.passes_committed.into_inner(),
        trick: TrickView {
            leader: v.trick.leader.number(),
            cards: played(&v.trick.cards),
        },
        last_trick: v.last_trick.as_ref().map(|t| LastTrickView {
            leader: t.leader.number(),
            cards: played(&t.cards),
            winner: t.winner.number(),
            points: t.points,
        }),
        tricks_played: v.tricks_played,
    });
    let turn = match (&seat_view, active) {
        (Some(v), true) => Some(TurnView {
            seat: v.turn.map(|s| s.number()),
            seats: v.to_act.iter().map(|s| s.number()).collect(),
            deadline: row.deadline.map(|d| d.and_utc()),
        }),
        _ => None,
    };
    let legal_actions = match (&seat_view, active) {
        (Some(v), true) => match v.legal_actions {
            LegalActions::Pass {
                count,
                cards,
                may_empty_suit,
            } => Some(LegalActionsView::Pass {
                count: count as u8,
                cards: codes(cards),
                may_empty_suit: codes(may_empty_suit),
            }),
            LegalActions::Play { cards } => Some(LegalActionsView::Play {
                cards: codes(cards),
            }),
            LegalActions::None => None,
        },
        _ => None,
    };
    // A seat a bot acts for has nothing to do itself.
    let legal_actions = match viewer {
        Some(seat) if table.bot_of(seat).is_some() => None,
        _ => legal_actions,
    };
    let result = match &row.result {
        Some(raw) => Some(ResultView::from(
            &serde_json::from_str::<GameResult>(raw)
                .map_err(|e| Error::internal(format!("stored result: {e}")))?,
        )),
        None => None,
    };
    Ok(GameView {
        id: row.id.parse().unwrap_or_default(),
        version: row.version,
        status: table.status(),
        visibility: row.visibility.to_string(),
        rules: rules_view,
        turn_timeout_seconds: row.turn_timeout_seconds,
        created_by: row.created_by.parse().unwrap_or_default(),
        created_at: row.created_at.and_utc(),
        updated_at: row.updated_at.and_utc(),
        my_seat: viewer.map(|s| s.number()),
        seats,
        round,
        turn,
        legal_actions,
        result,
        abort_reason: row.abort_reason.clone(),
        rated: row.rated,
        allow_spectators: row.allow_spectators,
        spectators: table.spectators,
        rematch_id: row.rematch_id.as_deref().and_then(|id| id.parse().ok()),
    })
}
