//! Ratings over HTTP: the boards per mode, public profiles, the caller's rating history.

use actix_web::{get, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::Error;
use crate::http::extract::Mine;
use crate::http::pagination::{self, PageQuery, Paged, keyset_page, page};
use crate::http::reply::{Reply, ok};
use crate::http::views::game::PlayerRef;
use crate::ratings::{self, BoardEntry, PageStart, Standing};
use crate::rules::Mode;

routes! { self::{leaderboard, profile, my_history} }

/// A Weng-Lin rating in one mode.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RatingView {
    /// The mean skill μ (a new player has 25).
    #[schema(example = 27.41)]
    pub mu: f64,
    /// The uncertainty σ of μ (a new player has 25/3 ≈ 8.33); it shrinks with every game.
    #[schema(example = 6.9)]
    pub sigma: f64,
    /// μ − 3σ: what the boards order by.
    #[schema(example = 6.71)]
    pub ordinal: f64,
    /// Rated games since the last reset.
    #[schema(example = 3)]
    pub games: i32,
    /// Fewer than 10 rated games: the rating means little yet.
    pub provisional: bool,
}

impl From<Standing> for RatingView {
    fn from(s: Standing) -> Self {
        Self {
            mu: s.rating.mu,
            sigma: s.rating.sigma,
            ordinal: s.rating.ordinal(),
            games: s.games,
            provisional: s.provisional(),
        }
    }
}

/// One row of a board.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LeaderboardItem {
    /// 1 is best; equal ordinals share a rank (1, 2, 2, 4).
    #[schema(example = 1, minimum = 1)]
    pub rank: i64,
    /// The player.
    pub user: PlayerRef,
    /// Their rating in the board's mode.
    pub rating: RatingView,
    /// Rated games in the mode since the last reset.
    #[schema(example = 3)]
    pub games: i32,
    /// Fewer than 10 rated games.
    pub provisional: bool,
}

impl From<BoardEntry> for LeaderboardItem {
    fn from(e: BoardEntry) -> Self {
        Self {
            rank: e.rank,
            user: PlayerRef {
                id: e.user_id.parse().unwrap_or_default(),
                username: e.username,
            },
            rating: RatingView::from(e.standing),
            games: e.standing.games,
            provisional: e.standing.provisional(),
        }
    }
}

page! {
    /// A page of a board.
    pub struct LeaderboardPage {
        /// Players by ordinal, best first.
        pub items: Vec<LeaderboardItem>,
    }
}

/// Which page of a board, besides [`PageQuery`].
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LeaderboardQuery {
    /// `me`: the page around the caller (up to half of it above them); not with `cursor`.
    #[param(value_type = Option<AroundMe>)]
    pub around: Option<String>,
}

/// The one value `around` takes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AroundMe {
    /// The caller.
    Me,
}

/// The board cursor: a board position `(ordinal, user id)`, the ordinal by its exact bits so
/// that ties resume where they stopped, and the board's mode, so that a cursor of one board
/// is refused on the other.
fn encode_board_cursor(mode: Mode, ordinal: f64, user_id: &str) -> String {
    pagination::opaque(&format!(
        "b{}:{:016x}|{user_id}",
        board_tag(mode),
        ordinal.to_bits()
    ))
}

fn board_tag(mode: Mode) -> char {
    match mode {
        Mode::Solo => 's',
        Mode::Partnership => 'p',
    }
}

fn decode_board_cursor(mode: Mode, raw: &str) -> Result<(f64, String), Error> {
    let invalid = || Error::validation("cursor is not valid");
    let text = pagination::from_opaque(raw).ok_or_else(invalid)?;
    let (bits, user) = text
        .strip_prefix('b')
        .and_then(|t| t.strip_prefix(board_tag(mode)))
        .and_then(|t| t.strip_prefix(':'))
        .and_then(|t| t.split_once('|'))
        .ok_or_else(|| Error::validation("cursor is not valid for this board"))?;
    let bits = u64::from_str_radix(bits, 16).map_err(|_| invalid())?;
    let ordinal = f64::from_bits(bits);
    if !ordinal.is_finite() || uuid::Uuid::parse_str(user).is_err() {
        return Err(invalid());
    }
    Ok((ordinal, user.to_owned()))
}

/// The mode a board's path names: there is a board per mode and no other, so any other
/// name is a resource that does not exist.
fn board_mode(name: &str) -> Result<Mode, Error> {
    match name {
        "solo" => Ok(Mode::Solo),
        "partnership" => Ok(Mode::Partnership),
        _ => Err(Error::not_found(format!(
            "no board {name:?}: the boards are solo and partnership"
        ))),
    }
}

/// A board.
///
/// The players of one mode (`solo` or `partnership`) by ordinal (μ − 3σ), best first, ties by
/// user id; equal ordinals share a rank. Banned and deleted players are not listed. Pages
/// follow `next_cursor`; `around=me` gives the page around the caller instead (404
/// `not_rated` before their first rated game in the mode).
#[utoipa::path(operation_id = "get_leaderboard", tag = "ratings", security(("bearer" = [])),
    params(
        ("mode" = crate::rules::Mode, Path, description = "`solo` or `partnership`"),
        PageQuery,
        LeaderboardQuery,
    ),
    responses(
        (status = 200, description = "A page of the board", body = LeaderboardPage),
        (status = 400, description = "Invalid limit, cursor or `around`"),
        (status = 404, description = "No such board (a mode other than `solo` and `partnership`: `not_found`), or `around=me` and the caller has no rating in the mode (`not_rated`)")))]
#[get("/leaderboards/{mode}")]
pub async fn leaderboard(on: Mine<web::Path<String>, Paged<LeaderboardQuery>>) -> Reply {
    let (query, page) = &on.input;
    let mode = board_mode(&on.path)?;
    let limit = page.size()?;
    let start = match (query.around.as_deref(), page.cursor.as_deref()) {
        (Some("me"), None) => PageStart::Around(on.user.id().to_owned()),
        (Some("me"), Some(_)) => {
            return Err(Error::validation("around=me takes no cursor").into());
        }
        (Some(other), _) => {
            return Err(Error::validation(format!("around must be me, not {other:?}")).into());
        }
        (None, cursor) => {
            PageStart::After(cursor.map(|c| decode_board_cursor(mode, c)).transpose()?)
        }
    };
    let board = on
        .state
        .db
        .run(move |conn| ratings::board(conn, mode, start, limit))
        .await?;
    ok(LeaderboardPage {
        next_cursor: board.next.map(|(o, u)| encode_board_cursor(mode, o, &u)),
        items: board.items.into_iter().map(LeaderboardItem::from).collect(),
    })
}

/// A player's ratings in both modes.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RatingsView {
    /// Solo.
    pub solo: RatingView,
    /// Partnership.
    pub partnership: RatingView,
}

impl From<[Standing; 2]> for RatingsView {
    fn from([solo, partnership]: [Standing; 2]) -> Self {
        Self {
            solo: solo.into(),
            partnership: partnership.into(),
        }
    }
}

/// A player's record over every finished game with a seat (rated or not).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProfileStats {
    /// Finished games.
    #[schema(example = 12)]
    pub games: i32,
    /// Games won.
    #[schema(example = 4)]
    pub wins: i32,
    /// Points taken per round played (lower is better); null before the first finished game.
    #[schema(required = true, example = 8.5)]
    pub average_points_per_round: Option<f64>,
}

/// A player as anyone signed in may see them.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProfileView {
    /// User id.
    pub id: uuid::Uuid,
    /// Username.
    pub username: String,
    /// Account creation.
    pub created_at: DateTime<Utc>,
    /// Ratings per mode (a new player's where they have no rated game).
    pub ratings: RatingsView,
    /// Games, wins, points.
    pub stats: ProfileStats,
}

/// A player's profile.
///
/// A player's public profile: username, creation time, ratings in both modes and statistics
/// (games, wins, average points per round). Banned and deleted players have none (404).
#[utoipa::path(operation_id = "get_profile", tag = "ratings", security(("bearer" = [])),
    params(("username" = String, Path, description = "The username (any case)", pattern = "^[A-Za-z0-9_]{3,32}$")),
    responses(
        (status = 200, description = "The profile", body = ProfileView),
        (status = 400, description = "Not a username (`validation_failed`)"),
        (status = 404, description = "No such player")))]
#[get("/users/{username}")]
pub async fn profile(on: Mine<web::Path<String>>) -> Reply {
    // What no account can be named is a malformed request, not an unknown player.
    crate::auth::Username::parse(&on.path)?;
    let key = on.path.to_ascii_lowercase();
    let view = on
        .state
        .db
        .run(move |conn| {
            let user = crate::db::users::by_username(conn, &key)?
                .filter(|u| u.deleted_at.is_none() && u.banned_at.is_none())
                .ok_or_else(|| Error::not_found("no such player"))?;
            let standings = ratings::standings(conn, &user.id)?;
            let (points, rounds) = crate::db::ratings::points(conn, &user.id)?;
            Ok(ProfileView {
                id: user.id.parse().unwrap_or_default(),
                username: user.username,
                created_at: user.created_at.and_utc(),
                ratings: standings.into(),
                stats: ProfileStats {
                    games: user.games_played,
                    wins: user.games_won,
                    average_points_per_round: (rounds > 0).then(|| points as f64 / rounds as f64),
                },
            })
        })
        .await?;
    ok(view)
}

/// One change of the caller's rating.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RatingHistoryItem {
    /// The rated game; null for an administrator's reset.
    #[schema(required = true)]
    pub game_id: Option<uuid::Uuid>,
    /// When.
    pub at: DateTime<Utc>,
    /// The rating after the change.
    pub rating: RatingView,
}

page! {
    /// A page of the caller's rating history.
    pub struct RatingHistoryPage {
        /// Newest first.
        pub items: Vec<RatingHistoryItem>,
        /// Pass as `cursor` for the next (older) page; null on the last page.
        pub next_cursor,
    }
}

/// Which history, besides [`PageQuery`].
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// `solo` (default) or `partnership`.
    #[param(value_type = Option<crate::rules::Mode>)]
    pub mode: Option<Mode>,
}

/// The caller's rating history.
///
/// Every change of the caller's rating in one mode, newest first: one per rated game, one per
/// administrator's reset (`game_id` null).
#[utoipa::path(operation_id = "get_my_rating_history", tag = "ratings", security(("bearer" = [])),
    params(HistoryQuery, PageQuery),
    responses(
        (status = 200, description = "A page of the history", body = RatingHistoryPage),
        (status = 400, description = "Invalid mode, limit or cursor")))]
#[get("/me/ratings/history")]
pub async fn my_history(me: Mine<(), Paged<HistoryQuery>>) -> Reply {
    let (query, page) = &me.input;
    let mode = query.mode.unwrap_or(Mode::Solo);
    let (limit, after) = page.keyset()?;
    let rows = me
        .mine(move |conn, id| ratings::history(conn, id, mode, after, limit + 1))
        .await?;
    let (rows, next_cursor) = keyset_page(rows, limit, |r| (r.at, &r.id));
    ok(RatingHistoryPage {
        items: rows
            .into_iter()
            .map(|r| RatingHistoryItem {
                game_id: r.game_id.as_deref().and_then(|g| g.parse().ok()),
                at: r.at.and_utc(),
                rating: RatingView::from(Standing {
                    rating: ratings::Rating {
                        mu: r.mu,
                        sigma: r.sigma,
                    },
                    games: r.games,
                }),
            })
            .collect(),
        next_cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::pagination::Cursor;

    #[test]
    fn board_cursors_round_trip_exactly_and_junk_is_refused() {
        let id = "7d753fd3-6341-4081-ba57-dd371cf06ad2";
        for ordinal in [0.0, -3.25, 1.0 / 3.0, 41.123_456_789] {
            for mode in [Mode::Solo, Mode::Partnership] {
                let cursor = encode_board_cursor(mode, ordinal, id);
                let (o, u) = decode_board_cursor(mode, &cursor).unwrap();
                assert_eq!(o.to_bits(), ordinal.to_bits());
                assert_eq!(u, id);
            }
            // One board's cursor on the other board.
            let solo = encode_board_cursor(Mode::Solo, ordinal, id);
            assert!(decode_board_cursor(Mode::Partnership, &solo).is_err());
        }
        assert!(decode_board_cursor(Mode::Solo, "!!").is_err());
        assert!(decode_board_cursor(Mode::Solo, &Cursor::Offset(3).encode()).is_err());
        let nan = pagination::opaque(&format!("bs:{:016x}|{id}", f64::NAN.to_bits()));
        assert!(decode_board_cursor(Mode::Solo, &nan).is_err());
    }
}
