//! Typed columns: enums stored as their names in `TEXT` columns, read and written by diesel
//! directly (a stored value no variant names is a deserialization error, never a silent
//! default).

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Text;

/// `FromSql`/`ToSql` on `Text` through `as_str`/`parse`, for any backend.
macro_rules! text_sql {
    ($name:ty) => {
        impl<DB> FromSql<Text, DB> for $name
        where
            DB: Backend,
            String: FromSql<Text, DB>,
        {
            fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
                let raw = String::from_sql(bytes)?;
                <$name>::parse(&raw)
                    .ok_or_else(|| format!("unknown {} {raw:?}", stringify!($name)).into())
            }
        }

        impl<DB> ToSql<Text, DB> for $name
        where
            DB: Backend,
            str: ToSql<Text, DB>,
        {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
                self.as_str().to_sql(out)
            }
        }
    };
}

/// An enum with a stored name per variant, its `as_str`/`parse`/`ALL`, and its column
/// mapping. Its wire form (serde, OpenAPI) is the same snake_case name.
macro_rules! stored_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, diesel::AsExpression, diesel::FromSqlRow)]
        #[derive(serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[serde(rename_all = "snake_case")]
        #[diesel(sql_type = diesel::sql_types::Text)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            #[doc = "Every variant, in declaration order."]
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            #[doc = "The stored (and wire) name."]
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }

            #[doc = "Parses a stored (or wire) name."]
            pub fn parse(raw: &str) -> Option<Self> {
                match raw {
                    $($text => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        text_sql!($name);
    };
}

stored_enum! {
    /// Where a game is in its life.
    pub enum GameStatus {
        /// Seats are still open.
        Waiting = "waiting",
        /// Dealt and in play.
        Active = "active",
        /// Ended by the rules.
        Finished = "finished",
        /// Ended by an administrator, or because every player left, without a result.
        Aborted = "aborted",
    }
}

stored_enum! {
    /// Who may see a game.
    pub enum Visibility {
        /// Listed in the lobby; anyone may look.
        Public = "public",
        /// Never listed or watched. While a seat is open, whoever has its id may see it and
        /// take that seat; otherwise only its players and invited users see it.
        Private = "private",
    }
}

stored_enum! {
    /// Why a bot acts for a seat.
    pub enum BotReason {
        /// The seat was a bot's from the start.
        Seat = "seat",
        /// Its player resigned.
        Resigned = "resigned",
        /// Its player let two turns in a row time out; they may reclaim it.
        Timeout = "timeout",
        /// An administrator handed it to a bot.
        Admin = "admin",
        /// Its player is away (`PUT /me/away`); it comes back when they return.
        Away = "away",
    }
}

text_sql!(crate::bots::BotLevel);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_round_trip() {
        for s in GameStatus::ALL {
            assert_eq!(GameStatus::parse(s.as_str()), Some(*s));
        }
        for v in Visibility::ALL {
            assert_eq!(Visibility::parse(v.as_str()), Some(*v));
        }
        for r in BotReason::ALL {
            assert_eq!(BotReason::parse(r.as_str()), Some(*r));
        }
        assert_eq!(GameStatus::parse("Active"), None);
    }
}
