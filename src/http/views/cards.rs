//! Cards on the wire: codes, and the parts of an action.

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
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
            .into()
    }
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
