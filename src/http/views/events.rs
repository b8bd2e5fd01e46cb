//! Events as a caller may see them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::bots::BotLevel;
use crate::http::views::cards::CardCode;
use crate::http::views::rules::ResultView;

use crate::db::games::EventRow;
use crate::games::events::project;
use crate::rules::Seat;

/// One event as the caller may see it: `seq`, `type`, `created_at`, and the `data` of its
/// type ([`EventData`] documents each).
#[derive(Debug, Serialize, Deserialize)]
pub struct EventView {
    /// Contiguous per game, from 1.
    pub seq: i64,
    /// The event type; it decides the shape of `data`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// The event's fields. Private parts (`hand` of `round_dealt`, `cards` of
    /// `pass_committed`, `received` of `passes_exchanged`) appear only in their owner's copy.
    pub data: serde_json::Value,
}

/// The `data` of each event type, as the wire carries it. It documents [`EventView`] (the
/// view passes the stored event through [`project`] as JSON); the API tests parse every event
/// of played games into it, with unknown fields refused, so the two cannot drift apart.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum EventData {
    /// The fourth seat was taken and the cards dealt.
    GameStarted(GameStartedData),
    /// A round was dealt.
    RoundDealt(RoundDealtData),
    /// A seat committed its pass.
    PassCommitted(PassCommittedData),
    /// All four passes were exchanged.
    PassesExchanged(PassesExchangedData),
    /// A card was played.
    CardPlayed(CardPlayedData),
    /// A trick was completed.
    TrickWon(TrickWonData),
    /// A round was scored.
    RoundScored(RoundScoredData),
    /// The game ended by the rules.
    GameFinished(GameFinishedData),
    /// A seat changed hands.
    SeatChanged(SeatChangedData),
    /// A seat's turn timed out and the server acted for it.
    TurnTimedOut(TurnTimedOutData),
    /// An administrator ended the game.
    GameAborted(GameAbortedData),
    /// A seated player said something.
    ChatMessage(ChatMessageData),
}

/// A seat as announced when the game starts.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartingSeat {
    /// 0..=3.
    pub seat: u8,
    /// The human, if any.
    #[schema(required = true)]
    pub user_id: Option<uuid::Uuid>,
    /// Their username.
    #[schema(required = true)]
    pub username: Option<String>,
    /// The bot level, if a bot holds the seat.
    #[schema(required = true)]
    pub bot: Option<BotLevel>,
}

/// `game_started`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameStartedData {
    /// Who sits where, in seat order.
    pub seats: Vec<StartingSeat>,
}

/// `round_dealt`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundDealtData {
    /// The round number, from 1.
    pub round: u32,
    /// The dealer.
    pub dealer: u8,
    /// This round's pass direction; null when the round has no passing.
    #[schema(required = true, value_type = Option<crate::rules::Direction>)]
    pub pass_direction: Option<String>,
    /// The caller's 13 cards; only in a player's own copy.
    pub hand: Option<Vec<CardCode>>,
}

/// `pass_committed`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PassCommittedData {
    /// The seat that committed.
    pub seat: u8,
    /// The 3 cards it passed; only in that seat's own copy.
    pub cards: Option<Vec<CardCode>>,
}

/// `passes_exchanged`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PassesExchangedData {
    /// Where the passes went.
    #[schema(value_type = crate::rules::Direction)]
    pub direction: String,
    /// The 3 cards the caller received; only in a player's own copy.
    pub received: Option<Vec<CardCode>>,
}

/// `card_played`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CardPlayedData {
    /// Who played.
    pub seat: u8,
    /// The card.
    pub card: CardCode,
}

/// `trick_won`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrickWonData {
    /// Who took the trick (and leads the next).
    pub seat: u8,
    /// Who led it.
    pub leader: u8,
    /// The four cards in play order, from the leader on.
    #[schema(min_items = 4, max_items = 4)]
    pub cards: Vec<CardCode>,
    /// The points in the trick.
    pub points: u32,
}

/// `round_scored`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundScoredData {
    /// The round number.
    pub round: u32,
    /// The points each seat took this round, by seat (36 in all).
    #[schema(min_items = 4, max_items = 4)]
    pub round_points: Vec<u32>,
    /// The totals after this round, by seat.
    #[schema(min_items = 4, max_items = 4)]
    pub totals: Vec<u32>,
}

/// `game_finished`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameFinishedData {
    /// Winners and ranking.
    pub result: ResultView,
}

/// Why a seat changed hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatChangeReason {
    /// A player took the seat.
    Joined,
    /// Its player left before the start.
    Left,
    /// The invited user declined.
    InviteDeclined,
    /// The invitation was withdrawn: a player at the table blocked the invited user, who
    /// could not have joined (which player is not said).
    InviteWithdrawn,
    /// Its player resigned; a bot plays it.
    Resigned,
    /// Two turns in a row timed out; a bot plays it until its player reclaims it.
    Timeout,
    /// An administrator handed it to a bot.
    Admin,
    /// Its player took it back from the bot.
    Reclaimed,
    /// Its player is away; a bot plays it until they return.
    Away,
    /// Its player returned from away and plays it again.
    Returned,
    /// The game's creator opened it, reserved it for someone or gave it to a bot while the
    /// game waited.
    Host,
}

/// `seat_changed`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatChangedData {
    /// The seat.
    pub seat: u8,
    /// The human now holding it (or who held it, when a bot took over).
    #[schema(required = true)]
    pub user_id: Option<uuid::Uuid>,
    /// Their username.
    #[schema(required = true)]
    pub username: Option<String>,
    /// The bot now acting for it.
    #[schema(required = true)]
    pub bot: Option<BotLevel>,
    /// Why.
    pub reason: SeatChangeReason,
}

/// `turn_timed_out`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnTimedOutData {
    /// The late seat.
    pub seat: u8,
    /// The deadline that passed.
    pub deadline: DateTime<Utc>,
}

/// `game_aborted`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GameAbortedData {
    /// Why, as the administrator gave it.
    pub reason: String,
}

/// `chat_message`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatMessageData {
    /// The message (`GET /api/v1/games/{id}/chat`).
    pub message_id: uuid::Uuid,
    /// The author's seat.
    pub seat: u8,
    /// The author.
    pub user_id: uuid::Uuid,
    /// Their username.
    pub username: String,
    /// Free text; null for a phrase, and when `hidden`.
    #[schema(required = true)]
    pub text: Option<String>,
    /// A quick phrase's key (`GET /api/v1/chat/phrases`); null for free text, and when
    /// `hidden`.
    #[schema(required = true, value_type = Option<crate::http::chat::PhraseKey>)]
    pub phrase: Option<String>,
    /// A moderator hid the message, or the caller blocks its author: no text is shown.
    pub hidden: bool,
}

impl utoipa::PartialSchema for EventView {
    /// A `oneOf` with one member per event type (`EventGameStarted`, …), each with its own
    /// `data`, and a discriminator on `type`.
    fn schema() -> RefOr<Schema> {
        let mut members = Vec::new();
        let mut mapping = serde_json::Map::new();
        for (tag, data) in EVENT_TYPES {
            let name = format!("#/components/schemas/Event{data}");
            members.push(json!({"$ref": name}));
            mapping.insert((*tag).to_owned(), json!(name));
        }
        serde_json::from_value(json!({
            "description": "One event as the caller may see it; `type` decides the shape of `data`.",
            "oneOf": members,
            "discriminator": {"propertyName": "type", "mapping": mapping},
        }))
        .expect("a valid schema")
    }
}

impl ToSchema for EventView {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        for (tag, data) in EVENT_TYPES {
            let member = json!({
                "type": "object",
                "description": format!("A `{tag}` event."),
                "required": ["seq", "type", "created_at", "data"],
                "properties": {
                    "seq": {"type": "integer", "format": "int64", "minimum": 1, "description": "Contiguous per game, from 1."},
                    "type": {"type": "string", "enum": [tag]},
                    "created_at": {"type": "string", "format": "date-time", "description": "When."},
                    "data": {"$ref": format!("#/components/schemas/{data}Data")},
                },
            });
            schemas.push((
                format!("Event{data}"),
                serde_json::from_value(member).expect("a valid schema"),
            ));
        }
        register::<GameStartedData>(schemas);
        register::<RoundDealtData>(schemas);
        register::<PassCommittedData>(schemas);
        register::<PassesExchangedData>(schemas);
        register::<CardPlayedData>(schemas);
        register::<TrickWonData>(schemas);
        register::<RoundScoredData>(schemas);
        register::<GameFinishedData>(schemas);
        register::<SeatChangedData>(schemas);
        register::<TurnTimedOutData>(schemas);
        register::<GameAbortedData>(schemas);
        register::<ChatMessageData>(schemas);
    }
}

/// Adds `T`'s schema and those it refers to.
fn register<T: ToSchema>(schemas: &mut Vec<(String, RefOr<Schema>)>) {
    schemas.push((T::name().into_owned(), T::schema()));
    T::schemas(schemas);
}

/// Each event type and the name stem of its `data` schema.
const EVENT_TYPES: &[(&str, &str)] = &[
    ("game_started", "GameStarted"),
    ("round_dealt", "RoundDealt"),
    ("pass_committed", "PassCommitted"),
    ("passes_exchanged", "PassesExchanged"),
    ("card_played", "CardPlayed"),
    ("trick_won", "TrickWon"),
    ("round_scored", "RoundScored"),
    ("game_finished", "GameFinished"),
    ("seat_changed", "SeatChanged"),
    ("turn_timed_out", "TurnTimedOut"),
    ("game_aborted", "GameAborted"),
    ("chat_message", "ChatMessage"),
];

/// A page of events.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventsPage {
    /// Events in order.
    pub events: Vec<EventView>,
    /// Pass it as `after` next time. When the page is full (`limit` events), the `seq` of
    /// its last event, and more may follow; otherwise the last `seq` of the game so far.
    #[schema(minimum = 0, example = 1)]
    pub last_seq: i64,
}

impl EventView {
    /// A `chat_message` as a reader who blocks its author sees it: who spoke, not what.
    pub fn without_chat_text(mut self) -> Self {
        if self.kind == "chat_message"
            && let serde_json::Value::Object(data) = &mut self.data
        {
            data.insert("text".into(), serde_json::Value::Null);
            data.insert("phrase".into(), serde_json::Value::Null);
            data.insert("hidden".into(), serde_json::Value::Bool(true));
        }
        self
    }

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
