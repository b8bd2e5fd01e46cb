//! Events as a caller may see them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db::games::EventRow;
use crate::games::events::project;
use crate::rules::Seat;

/// One event as the caller may see it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// Contiguous per game, from 1.
    pub seq: i64,
    /// `game_started`, `round_dealt`, `pass_committed`, `passes_exchanged`, `card_played`,
    /// `trick_won`, `round_scored`, `game_finished`, `seat_changed`, `turn_timed_out`,
    /// `game_aborted`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// The event's fields. Private parts (`hand` of `round_dealt`, `cards` of
    /// `pass_committed`, `received` of `passes_exchanged`) appear only in their owner's copy.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

/// A page of events.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventsPage {
    /// Events in order.
    pub events: Vec<EventView>,
    /// The last `seq` of the game so far: pass it as `after` next time.
    pub last_seq: i64,
}

impl EventView {
    /// The stored event as `viewer` may see it (`None`: a spectator).
    pub fn of(row: EventRow, viewer: Option<Seat>) -> Self {
        Self {
            seq: row.seq,
            data: project(&row.kind, &row.data, viewer),
            kind: row.kind,
            created_at: row.created_at.and_utc(),
        }
    }
}
