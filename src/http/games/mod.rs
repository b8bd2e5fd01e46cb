//! Games over HTTP, one file per operation group: create, lobby (and the caller's games),
//! show, seats (join, leave, resign, reclaim), act, events, hint, replay. Each handler parses
//! the request into a command, calls one function of the game service ([`crate::games`]),
//! and renders a view after the commit.

mod act;
mod create;
mod events;
mod hint;
mod lobby;
mod rematch;
mod replay;
mod seats;
mod show;

pub use act::ActionRequest;
pub use create::{CreateGame, RulesInput, SeatRequest};
pub use hint::HintView;
pub use lobby::{LobbyQuery, MyGamesQuery};
pub use seats::JoinRequest;

use actix_web::http::header;
use actix_web::{HttpResponse, web};

use crate::app::AppState;
use crate::db::AnyConnection;
use crate::error::Error;
use crate::games::{Committed, Table};
use crate::http::extract::{AuthUser, Call, Caller};
use crate::http::preconditions::etag;
use crate::http::reply::Reply;
use crate::http::views::game::game_view;
use crate::rules::Seat;

routes! {
    create::{create_game},
    lobby::{lobby, my_games},
    show::{get_game},
    seats::{join, leave},
    act::{act},
    events::{events},
    seats::{resign, reclaim, set_seat},
    hint::{hint},
    replay::{replay},
    rematch::{rematch},
}

/// The seat from which `user_id` sees a game (`None`: as a spectator, which includes a
/// player whose seat a bot holds for good, see [`Table::seen_from`]); 404 when the game is
/// hidden from them.
pub(crate) fn viewer_of(table: &Table, user_id: &str) -> Result<Option<Seat>, Error> {
    if !table.visible_to(user_id) {
        return Err(Error::not_found("no such game"));
    }
    Ok(table.seen_from(table.seat_of(user_id)))
}

/// Whether an event may change whose copy a caller gets: the seats are taken (the game
/// starts) or change hands. A reader that waited across one re-asks [`viewer_of`].
pub(crate) fn reseats(kind: &str) -> bool {
    matches!(kind, "game_started" | "seat_changed")
}

/// The caller's view of the game now, read again: `Some` with their seat (`None`: a
/// spectator), or `None` when the game is hidden from them now.
pub(crate) async fn viewer_now(
    state: &AppState,
    game_id: &str,
    user_id: &str,
) -> Result<Option<Option<Seat>>, Error> {
    let gid = game_id.to_owned();
    let table = state.db.run(move |conn| Table::load(conn, &gid)).await?;
    Ok(viewer_of(&table, user_id).ok())
}

/// Counts the caller as a spectator of the game when they see it from no seat, and returns
/// the spectators now, the caller included. Counting is a courtesy to the players: a failure
/// is logged (`None`), and the caller still gets their answer.
pub(crate) async fn spectate(
    state: &AppState,
    game_id: &str,
    viewer: Option<Seat>,
    user_id: &str,
) -> Option<u32> {
    if viewer.is_some() {
        return None;
    }
    let (game, user) = (game_id.to_owned(), user_id.to_owned());
    state
        .db
        .run(move |conn| crate::games::spectate(conn, &game, &user))
        .await
        .inspect_err(
            |e| tracing::warn!(game.id = %game_id, error = %e, "could not count a spectator"),
        )
        .ok()
}

/// A request about the game the path names, as the game and chat handlers take it: the
/// state, the caller, the game id, and the body or query the route reads.
pub type OnGame<I = ()> = Call<AuthUser, web::Path<uuid::Uuid>, I>;

/// A request about the game the path names whose caller is checked inside the use case's
/// own database round ([`Caller`]): the busiest reads and the actions.
pub type OnGameByToken<I = ()> = Call<Caller, web::Path<uuid::Uuid>, I>;

impl<I> OnGame<I> {
    /// Runs `use_case(conn, game_id, user_id)` for the caller on the game the path names, on
    /// the blocking pool.
    ///
    /// # Errors
    /// What the use case returns, and pool errors.
    pub async fn run<T, F>(&self, use_case: F) -> Result<T, Error>
    where
        F: FnOnce(&mut AnyConnection, &str, &str) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        let id = self.path.to_string();
        self.user
            .run(&self.state, move |conn, me| use_case(conn, &id, me))
            .await
    }
}

/// The answer to a change of a game, once its long-polls are woken: the caller's view, its
/// version as `ETag`; 201 naming the game in `Location` when the change made the game.
fn answer(state: &AppState, done: &Committed, made: bool) -> Reply {
    state.published(done);
    let view = game_view(&done.table, done.table.seen_from(done.seat))?;
    let mut answer = if made {
        let mut created = HttpResponse::Created();
        created.insert_header((header::LOCATION, format!("/api/v1/games/{}", view.id)));
        created
    } else {
        HttpResponse::Ok()
    };
    Ok(answer
        .insert_header((header::ETAG, etag(view.version)))
        .json(view))
}
