//! OpenAPI schemas for the closed sets of values that the wire carries as strings: the rules'
//! options and phases (whose types stay free of documentation concerns), and the names of
//! events, seat kinds, audit actions and probe answers. Each is an `enum` in the document, so
//! generated clients cannot send or expect a value the server does not know.

use std::borrow::Cow;
use std::cell::Cell;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};

/// The wire names of a unit-only enum's variants, as its `Deserialize` impl knows them (the
/// names after `rename_all`): the document can never list a value the server would refuse,
/// nor miss one it accepts.
///
/// # Panics
/// If `T` does not deserialize as an enum (a programming error caught by the tests below).
pub fn variant_names<T: DeserializeOwned>() -> &'static [&'static str] {
    let seen = Cell::new(None);
    let _ = T::deserialize(Probe(&seen));
    seen.get()
        .expect("an enum's Deserialize names its variants")
}

/// A deserializer that records the variants an enum asks for and then fails.
struct Probe<'a>(&'a Cell<Option<&'static [&'static str]>>);

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not an enum"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(Some(variants));
        Err(de::Error::custom("probed"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

/// A string schema that admits `values` only.
pub fn string_enum(description: &str, values: &[&str]) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .description(Some(description))
        .enum_values(Some(values.iter().copied()))
        .into()
}

/// Documents enums defined elsewhere (in the rules, which know nothing of OpenAPI) under a
/// component name, with the values their `Deserialize` accepts.
macro_rules! closed_set {
    ($($ty:ty => $name:literal, $doc:literal;)+) => {$(
        impl utoipa::PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                string_enum($doc, variant_names::<$ty>())
            }
        }

        impl ToSchema for $ty {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    )+};
}

use crate::rules::{
    DealerRotation, Direction, ForcedLeekha, Mode, PassDirection, PassRestriction, Phase, Preset,
    SoloTie, Talbees, TeamLoss,
};

closed_set! {
    Mode => "Mode", "Solo (each for themselves) or partnership (seats 0+2 against 1+3).";
    PassDirection => "PassDirection", "Where passes go each round: always right, always left, alternating right and left, or no passing.";
    Direction => "Direction", "This round's pass direction.";
    PassRestriction => "PassRestriction", "Whether a pass may leave a suit empty with a non-guard card (rule book §3).";
    ForcedLeekha => "ForcedLeekha", "Which Leekha a void player must discard: either, the queen of spades only, or none.";
    Talbees => "Talbees", "Whether a holder of a suit's Leekha must play it when a higher card of that suit is in the trick.";
    DealerRotation => "DealerRotation", "Who deals next: whoever took the queen of spades, or the seat to the right.";
    SoloTie => "SoloTie", "Solo: equal lowest totals at the end share the win, or play on until one is lowest.";
    TeamLoss => "TeamLoss", "Partnership: the team of a busted player loses, or a team loses when its sum reaches the target.";
    Preset => "Preset", "A named rule set: `classic` (all defaults) or `partnership` (partnership mode, alternate passing).";
    Phase => "Phase", "Where a round is: passing, playing, or the game is finished.";
}

/// The kind of a seat in a create request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatKind {
    /// The creator (exactly one seat).
    Me,
    /// Anyone may join.
    Open,
    /// Reserved for the user named by `username`.
    Invite,
    /// A bot of `level`.
    Bot,
}

/// The type of a game event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    /// The fourth seat was taken; who sits where.
    GameStarted,
    /// A round's cards were dealt (the caller's hand in their copy).
    RoundDealt,
    /// A seat committed its pass (its cards in its own copy only).
    PassCommitted,
    /// All four passes were exchanged (the received cards in each owner's copy).
    PassesExchanged,
    /// A card was played.
    CardPlayed,
    /// A trick was completed and taken.
    TrickWon,
    /// A round was scored.
    RoundScored,
    /// The game ended by the rules.
    GameFinished,
    /// A seat changed hands.
    SeatChanged,
    /// A seat's turn timed out and the server acted for it.
    TurnTimedOut,
    /// An administrator ended the game without a result.
    GameAborted,
    /// A seated player said something (no text once hidden, or when the caller blocks them).
    ChatMessage,
}

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// An account was banned.
    BanUser,
    /// A ban was lifted.
    UnbanUser,
    /// An account's role changed.
    ChangeRole,
    /// An account's rating was reset.
    ResetRating,
    /// An administrator read a game's full state.
    ReadGame,
    /// A game was aborted.
    AbortGame,
    /// A seat was handed to a bot.
    SeatToBot,
    /// A chat message was hidden.
    HideMessage,
    /// The open reports of a chat message were dismissed, the message left as it is.
    DismissReports,
    /// An account was muted, or its mute lifted.
    MuteUser,
}

/// What an audit entry is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditTarget {
    /// An account.
    User,
    /// A game.
    Game,
    /// A chat message.
    ChatMessage,
}

/// A probe's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Liveness: the process answers.
    Ok,
    /// Readiness: the database answers and is migrated.
    Ready,
}

/// The database engine behind a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatabaseEngine {
    /// PostgreSQL, for production.
    Postgresql,
    /// The embedded SQLite file, the zero-setup default.
    Sqlite,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names_are_the_wire_names() {
        assert_eq!(variant_names::<Mode>(), ["solo", "partnership"]);
        assert_eq!(variant_names::<Phase>(), ["passing", "playing", "finished"]);
        // Every listed name is accepted, and serializes back to itself.
        for name in variant_names::<DealerRotation>() {
            let value: DealerRotation = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(
                serde_json::to_value(value).unwrap(),
                serde_json::json!(name)
            );
        }
    }

    #[test]
    fn the_audit_actions_are_those_the_services_write() {
        let mut written = Vec::new();
        for file in [
            "src/admin.rs",
            "src/ratings/mod.rs",
            "src/games/lifecycle.rs",
            "src/games/seats.rs",
            "src/chat.rs",
        ] {
            let text =
                std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            for marker in ["action: \"", "user_entry(\""] {
                for part in text.split(marker).skip(1) {
                    written.push(part.split('"').next().unwrap().to_owned());
                }
            }
        }
        written.sort();
        written.dedup();
        let mut documented: Vec<String> = variant_names::<AuditAction>()
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        documented.sort();
        assert_eq!(written, documented);
    }
}
