//! List items: the lobby's and the caller's games.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bots::BotLevel;
use crate::games::{GameStatus, Table};
use crate::http::pagination::page;
use crate::rules::Seat;

use super::game::{GameView, PlayerRef, player_ref};

page! {
    /// A page of the lobby.
    pub struct LobbyPage {
        /// Public games waiting for players, oldest first.
        pub items: Vec<GameView>,
    }
}

/// One of the caller's games.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MyGame {
    /// Game id.
    pub id: uuid::Uuid,
    /// Status.
    pub status: GameStatus,
    /// Version.
    pub version: i64,
    /// The caller's seat, or the seat reserved for them.
    pub my_seat: u8,
    /// The caller is invited and has not joined yet.
    pub invited: bool,
    /// The caller must act now.
    pub my_turn: bool,
    /// When the current turn times out.
    #[schema(required = true)]
    pub deadline: Option<DateTime<Utc>>,
    /// Who sits where.
    pub seats: Vec<SeatBrief>,
    /// `solo` or `partnership`.
    #[schema(value_type = crate::rules::Mode)]
    pub mode: String,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// A seat in a list item.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SeatBrief {
    /// 0..=3.
    pub seat: u8,
    /// The human, if any.
    #[schema(required = true)]
    pub player: Option<PlayerRef>,
    /// The bot acting, if any.
    #[schema(required = true)]
    pub bot: Option<BotLevel>,
    /// Anyone may join it now (empty, reserved for nobody, the game waiting).
    pub open: bool,
}

page! {
    /// A page of the caller's games.
    pub struct MyGamesPage {
        /// Most urgent first: the caller's turn, then the nearest deadline, then the latest change.
        pub items: Vec<MyGame>,
    }
}

/// Who sits where, in brief.
pub fn seat_briefs(table: &Table) -> Vec<SeatBrief> {
    table
        .seats
        .iter()
        .map(|s| SeatBrief {
            seat: s.seat as u8,
            player: player_ref(table, s.user_id.as_deref()),
            bot: s.bot_level,
            open: Seat::new(s.seat as u8).is_some_and(|seat| table.is_joinable(seat)),
        })
        .collect()
}

/// One of the user's games as their list shows it.
pub fn my_game(table: &Table, seat: Seat, user_id: &str) -> Result<MyGame, crate::error::Error> {
    let row = &table.row;
    let seat_row = &table.seats[seat.index()];
    let invited = seat_row.user_id.as_deref() != Some(user_id);
    let my_turn = !invited
        && seat_row.bot_level.is_none()
        && table.status() == GameStatus::Active
        && row.to_act.contains(&format!(",{},", seat.number()));
    Ok(MyGame {
        id: row.id.parse().unwrap_or_default(),
        status: table.status(),
        version: row.version,
        my_seat: seat.number(),
        invited,
        my_turn,
        deadline: row.deadline.map(|d| d.and_utc()),
        seats: seat_briefs(table),
        mode: if table.is_partnership()? {
            "partnership"
        } else {
            "solo"
        }
        .to_owned(),
        updated_at: row.updated_at.and_utc(),
    })
}
