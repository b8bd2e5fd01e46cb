//! What administrators see.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::Role;
use crate::db::users::UserRow;
use crate::error::Error;
use crate::games::{GameStatus, Record, Table};
use crate::http::accounts::{UserStats, UserView};
use crate::http::pagination::page;
use crate::http::views::game::{CardCode, GameView, LegalActionsView, PlayerRef, codes, game_view};
use crate::http::views::lists::{SeatBrief, seat_briefs};
use crate::http::views::replay::{ReplayAction, ReplayRound, rounds_and_actions};
use crate::rules::Seat;

/// An account as administrators see it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminUserView {
    /// User id.
    pub id: uuid::Uuid,
    /// Username.
    pub username: String,
    /// `player` or `admin`.
    pub role: Role,
    /// A guest account.
    pub is_guest: bool,
    /// When the account was banned; null unless banned.
    #[schema(required = true)]
    pub banned_at: Option<DateTime<Utc>>,
    /// Why.
    #[schema(required = true)]
    pub ban_reason: Option<String>,
    /// When the account was deleted; null unless deleted.
    #[schema(required = true)]
    pub deleted_at: Option<DateTime<Utc>>,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Statistics.
    pub stats: UserStats,
    /// Until when the user is away (bots play their seats); null when not away.
    #[schema(required = true)]
    pub away_until: Option<DateTime<Utc>>,
    /// Until when a moderator muted the account (no chat); null when not muted.
    #[schema(required = true)]
    pub muted_until: Option<DateTime<Utc>>,
    /// Why it is muted.
    #[schema(required = true)]
    pub mute_reason: Option<String>,
}

impl From<&UserRow> for AdminUserView {
    fn from(u: &UserRow) -> Self {
        // The fields both views show convert in one place, so they never disagree.
        let UserView {
            id,
            username,
            role,
            is_guest,
            created_at,
            stats,
            away_until,
        } = UserView::from(u);
        Self {
            id,
            username,
            role,
            is_guest,
            banned_at: u.banned_at.map(|t| t.and_utc()),
            ban_reason: u.ban_reason.clone(),
            deleted_at: u.deleted_at.map(|t| t.and_utc()),
            created_at,
            updated_at: u.updated_at.and_utc(),
            stats,
            away_until,
            muted_until: u.muted_until.map(|t| t.and_utc()),
            mute_reason: u.mute_reason.clone(),
        }
    }
}

page! {
    /// A page of accounts.
    pub struct AdminUsersPage {
        /// Newest first.
        pub items: Vec<AdminUserView>,
    }
}

/// A game in the administrators' list.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminGameSummary {
    /// Game id.
    pub id: uuid::Uuid,
    /// Status.
    pub status: GameStatus,
    /// `public` or `private`.
    #[schema(value_type = crate::db::types::Visibility)]
    pub visibility: String,
    /// Version.
    pub version: i64,
    /// The creator.
    pub created_by: uuid::Uuid,
    /// Who sits where.
    pub seats: Vec<SeatBrief>,
    /// Actions applied so far.
    pub action_count: i64,
    /// Whether its result moves the players' ratings.
    pub rated: bool,
    /// Why it was aborted.
    #[schema(required = true)]
    pub abort_reason: Option<String>,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Dealt.
    #[schema(required = true)]
    pub started_at: Option<DateTime<Utc>>,
    /// Ended.
    #[schema(required = true)]
    pub finished_at: Option<DateTime<Utc>>,
}

page! {
    /// A page of games.
    pub struct AdminGamesPage {
        /// Newest first.
        pub items: Vec<AdminGameSummary>,
    }
}

/// One seat's hidden state.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminSeatState {
    /// 0..=3.
    pub seat: u8,
    /// The cards in hand now.
    pub hand: Vec<CardCode>,
    /// The cards taken in tricks this round.
    pub taken: Vec<CardCode>,
    /// The cards passed this round, once committed.
    #[schema(required = true)]
    pub passed: Option<Vec<CardCode>>,
    /// The cards received this round, once exchanged.
    #[schema(required = true)]
    pub received: Option<Vec<CardCode>>,
    /// What the seat may do now (null when nothing, or when a bot acts for it).
    #[schema(required = true)]
    pub legal_actions: Option<LegalActionsView>,
    /// Why a bot acts for the seat: `seat`, `resigned`, `timeout` or `admin`.
    #[schema(required = true, value_type = Option<crate::db::types::BotReason>)]
    pub bot_reason: Option<String>,
    /// Consecutive turns that timed out.
    pub timeouts_in_row: i32,
}

/// Everything about a game: the spectators' view plus every hand, every pass, the seed,
/// every deal and every action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdminGameView {
    /// The game as a spectator sees it.
    #[serde(flatten)]
    pub game: GameView,
    /// The deal seed (64 hex digits); null before the deal.
    #[schema(required = true)]
    pub seed: Option<String>,
    /// Every seat's hidden state (empty before the deal).
    pub seats_private: Vec<AdminSeatState>,
    /// Every deal so far.
    pub rounds: Vec<ReplayRound>,
    /// Every action so far, in order.
    pub actions: Vec<ReplayAction>,
    /// Events appended so far.
    pub event_count: i64,
    /// Dealt.
    #[schema(required = true)]
    pub started_at: Option<DateTime<Utc>>,
    /// Ended.
    #[schema(required = true)]
    pub finished_at: Option<DateTime<Utc>>,
}

/// Accounts.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserCounts {
    /// Live (not deleted) accounts.
    pub total: i64,
    /// Banned.
    pub banned: i64,
    /// Administrators.
    pub admins: i64,
    /// Guests.
    pub guests: i64,
}

/// Games by status.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct GameCounts {
    /// All games.
    pub total: i64,
    /// Waiting for players.
    pub waiting: i64,
    /// Being played.
    pub active: i64,
    /// Ended by the rules.
    pub finished: i64,
    /// Ended by an administrator or because every player left.
    pub aborted: i64,
    /// Of the finished, those that counted for the ratings.
    pub rated: i64,
}

/// Actions applied recently.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActionCounts {
    /// In the last hour.
    pub last_hour: i64,
    /// In the last 24 hours.
    pub last_day: i64,
}

/// Server statistics.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StatsView {
    /// Accounts.
    pub users: UserCounts,
    /// Games by status.
    pub games: GameCounts,
    /// Actions applied recently (bots' and timeouts' included).
    pub actions: ActionCounts,
    /// When these were counted.
    pub generated_at: DateTime<Utc>,
}

/// One audit entry.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditEntryView {
    /// Entry id.
    pub id: uuid::Uuid,
    /// The administrator.
    pub admin: PlayerRef,
    /// `ban_user`, `unban_user`, `change_role`, `reset_rating`, `read_game`, `abort_game`,
    /// `seat_to_bot`, `hide_message`, `dismiss_reports` or `mute_user`.
    #[schema(value_type = crate::http::views::schema::AuditAction)]
    pub action: String,
    /// `user`, `game` or `chat_message`.
    #[schema(value_type = crate::http::views::schema::AuditTarget)]
    pub target_type: String,
    /// The id of the account, game or chat message (as `target_type` says).
    pub target_id: String,
    /// Why, as the administrator gave it.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// Facts of the action, e.g. `{"from": "player", "to": "admin"}` for a role change.
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
    /// When.
    pub created_at: DateTime<Utc>,
}

page! {
    /// A page of the audit log.
    pub struct AuditPage {
        /// Newest first.
        pub items: Vec<AuditEntryView>,
    }
}

/// A game in the administrators' list.
pub fn summary(table: &Table) -> AdminGameSummary {
    let row = &table.row;
    AdminGameSummary {
        id: row.id.parse().unwrap_or_default(),
        status: table.status(),
        visibility: row.visibility.to_string(),
        version: row.version,
        created_by: row.created_by.parse().unwrap_or_default(),
        seats: seat_briefs(table),
        action_count: row.action_count,
        rated: row.rated,
        abort_reason: row.abort_reason.clone(),
        created_at: row.created_at.and_utc(),
        updated_at: row.updated_at.and_utc(),
        started_at: row.started_at.map(|t| t.and_utc()),
        finished_at: row.finished_at.map(|t| t.and_utc()),
    }
}

/// The full state of a game: the spectators' view, each seat's own view's hidden parts, and
/// the record so far.
pub fn full_state(table: &Table, record: &Record) -> Result<AdminGameView, Error> {
    let game = game_view(table, None)?;
    let rules_state = table.game()?;
    let mut seats_private = Vec::new();
    if let Some(state) = &rules_state {
        for seat in Seat::ALL {
            let own = game_view(table, Some(seat))?;
            let round = own.round;
            let row = &table.seats[seat.index()];
            seats_private.push(AdminSeatState {
                seat: seat.number(),
                hand: codes(state.hand(seat)),
                taken: codes(state.taken(seat)),
                passed: round.as_ref().and_then(|r| r.passed.clone()),
                received: round.as_ref().and_then(|r| r.received.clone()),
                legal_actions: own.legal_actions,
                bot_reason: row.bot_reason.map(|r| r.to_string()),
                timeouts_in_row: row.timeouts_in_row,
            });
        }
    }
    let (rounds, actions) = rounds_and_actions(record);
    let row = &table.row;
    Ok(AdminGameView {
        game,
        seed: row.seed.clone(),
        seats_private,
        rounds,
        actions,
        event_count: row.event_count,
        started_at: row.started_at.map(|t| t.and_utc()),
        finished_at: row.finished_at.map(|t| t.and_utc()),
    })
}
