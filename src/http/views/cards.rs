//! Cards on the wire: codes, and the parts of an action.

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::rules::{CARD_CODES, Card, CardSet};

/// A card code: rank `2`…`10`, `J`, `Q`, `K`, `A` then suit `C`, `D`, `H`, `S`. Input also
/// accepts `T` for ten and lower case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CardCode(pub String);

impl PartialSchema for CardCode {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A card: rank (2–10, J, Q, K, A) then suit (C, D, H, S); `T` is accepted for ten on input"))
            .enum_values(Some(CARD_CODES.iter().copied()))
            .examples([serde_json::json!("QS")])
            .extensions(Some(
                ExtensionsBuilder::new()
                    .add("x-enum-varnames", readable_names())
                    .build(),
            ))
            .into()
    }
}

/// `TwoOfClubs` … `AceOfSpades`, in the order of the codes: the names generators that read
/// `x-enum-varnames` give the enum's members (a bare `10D` is no identifier).
fn readable_names() -> Vec<String> {
    CARD_CODES
        .iter()
        .map(|code| {
            let (rank, suit) = code.split_at(code.len() - 1);
            let rank = match rank {
                "2" => "Two",
                "3" => "Three",
                "4" => "Four",
                "5" => "Five",
                "6" => "Six",
                "7" => "Seven",
                "8" => "Eight",
                "9" => "Nine",
                "10" => "Ten",
                "J" => "Jack",
                "Q" => "Queen",
                "K" => "King",
                _ => "Ace",
            };
            let suit = match suit {
                "C" => "Clubs",
                "D" => "Diamonds",
                "H" => "Hearts",
                _ => "Spades",
            };
            format!("{rank}Of{suit}")
        })
        .collect()
}

impl ToSchema for CardCode {}

/// The codes of a card set.
pub fn codes(cards: CardSet) -> Vec<CardCode> {
    cards.iter().map(|c| CardCode(c.to_string())).collect()
}

/// The cards of a list, as codes.
pub fn codes_of(cards: &[Card]) -> Vec<CardCode> {
    cards.iter().map(|c| CardCode(c.to_string())).collect()
}
