//! `GET /games` (the lobby) and `GET /me/games`.

use actix_web::get;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::error::Error;
use crate::games::{GameStatus, lists};
use crate::http::extract::Mine;
use crate::http::pagination::{Cursor, keyset_page, limit, urgency_page};
use crate::http::query::Query;
use crate::http::reply::{Reply, ok};
use crate::http::views::game::game_view;
use crate::http::views::lists::{LobbyPage, MyGamesPage, my_game};

/// A page of the lobby.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LobbyQuery {
    /// Only `waiting` (described in `waiting_only`, as utoipa keeps no doc comment here).
    #[param(schema_with = waiting_only)]
    pub status: Option<String>,
    /// 1..=200, default 50.
    #[param(minimum = 1, maximum = 200, default = 50)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// `true` lists only games where a friend of the caller sits.
    pub friends: Option<bool>,
}

/// The one status the lobby lists, as a closed set for generated clients.
fn waiting_only() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some([GameStatus::Waiting.as_str()]))
        .description(Some("Only `waiting`: the lobby lists nothing else."))
        .build()
}

/// A page of the caller's games.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyGamesQuery {
    /// `active`, `waiting`, `finished` or `aborted`, several separated by commas (default
    /// `active,waiting`).
    #[param(value_type = Option<Vec<GameStatus>>, style = Form, explode = false)]
    pub status: Option<String>,
    /// 1..=200, default 50.
    #[param(minimum = 1, maximum = 200, default = 50)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Read only to be refused: `friends` filters the lobby, and a client that sends it here
    /// would otherwise take the full list for a filtered one.
    #[param(ignore)]
    pub friends: Option<String>,
}

/// The lobby: public games with open seats.
///
/// Oldest first, so that the tables waiting longest fill first. Paginated with `limit` and
/// `cursor`; the caller's own waiting games are listed too, and none where someone who
/// blocks the caller sits (the join would refuse them). `friends=true` keeps the games
/// where a friend of the caller sits.
#[utoipa::path(operation_id = "list_lobby", tag = "games", security(("bearer" = [])),
    params(LobbyQuery),
    responses((status = 200, description = "A page of waiting games", body = LobbyPage)))]
#[get("/games")]
pub async fn lobby(me: Mine<(), Query<LobbyQuery>>) -> Reply {
    let query = &me.input;
    if let Some(status) = query.status.as_deref()
        && status != "waiting"
    {
        return Err(Error::validation("the lobby lists waiting games only: status=waiting").into());
    }
    let limit = limit(query.limit, 50, 200)?;
    let after = Cursor::keyset(query.cursor.as_deref())?;
    let friends_only = query.friends.unwrap_or(false);
    let caller = me.user.id().to_owned();
    let tables = me
        .state
        .db
        .run(move |conn| lists::lobby(conn, &caller, after, friends_only, limit + 1))
        .await?;
    let (tables, next_cursor) = keyset_page(tables, limit, |t| (t.row.created_at, &t.row.id));
    let items = tables
        .iter()
        .map(|t| game_view(t, None))
        .collect::<Result<_, _>>()?;
    ok(LobbyPage { items, next_cursor })
}

/// The caller's games, most urgent first.
///
/// Games where it is the caller's turn come first, then those with the nearest deadline,
/// then the most recently changed. Each item carries `my_turn` and `deadline`, so a phone
/// can show a badge without reading every game. A page goes on strictly after the last game
/// of the previous one in that order: a game that does not change while the client pages is
/// listed exactly once; one that changes may move past the cursor and be listed again, or
/// before it and be left out (read the first page again to see it).
#[utoipa::path(operation_id = "list_my_games", tag = "games", security(("bearer" = [])),
    params(MyGamesQuery),
    responses((status = 200, description = "A page of the caller's games", body = MyGamesPage)))]
#[get("/me/games")]
pub async fn my_games(me: Mine<(), Query<MyGamesQuery>>) -> Reply {
    let query = &me.input;
    if query.friends.is_some() {
        return Err(Error::validation("friends filters the lobby only").into());
    }
    let statuses = lists::parse_statuses(
        query.status.as_deref(),
        &[GameStatus::Active, GameStatus::Waiting],
    )?;
    let limit = limit(query.limit, 50, 200)?;
    let from = Cursor::my_games(query.cursor.as_deref())?;
    let rows = me
        .mine(move |conn, id| lists::of_user(conn, id, &statuses, from, limit + 1))
        .await?;
    let (rows, next_cursor) = urgency_page(rows, limit, |(_, _, place)| place);
    let items = rows
        .iter()
        .map(|(table, seat, _)| my_game(table, *seat, me.user.id()))
        .collect::<Result<_, _>>()?;
    ok(MyGamesPage { items, next_cursor })
}
