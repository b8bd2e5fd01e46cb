//! `GET /games/{id}/events`.

use actix_web::get;

use crate::db::games as store;
use crate::games::{GameStatus, Table};
use crate::http::extract::Call;
use crate::http::long_poll;
use crate::http::reply::{Reply, ok};
use crate::http::views::events::{EventView, EventsPage};

use super::{OnGame, reseats, spectate, viewer_now, viewer_of};
use crate::error::Error;

/// The game's events after a sequence number.
///
/// The events after `after` that the caller may see. With `wait`, the call waits (up to 30
/// s) until at least one exists; it also wakes for actions that arrive through other server
/// instances. On a finished or aborted game it answers at once: nothing follows.
/// `GET /games/{id}/events/stream` delivers the same events as a stream.
#[utoipa::path(operation_id = "list_events", tag = "games", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id"), long_poll::Query),
    responses((status = 200, description = "Events (possibly none when the wait ran out)", body = EventsPage),
        long_poll::TooManyOfMine))]
#[get("/games/{id}/events")]
pub async fn events(on: OnGame<crate::http::query::Query<long_poll::Query>>) -> Reply {
    let Call {
        state,
        user,
        path,
        input: query,
    } = on;
    let id = path.into_inner().to_string();
    let (after, wait, limit) = query.checked()?;
    let gid = id.clone();
    let table = state.db.run(move |conn| Table::load(conn, &gid)).await?;
    let mut viewer = viewer_of(&table, user.id())?;
    spectate(&state, &id, viewer, user.id()).await;
    // An ended game has every event it will ever have: nothing is worth waiting for (its
    // stream likewise answers 204 once the rest is sent).
    let over = matches!(table.status(), GameStatus::Finished | GameStatus::Aborted);
    let wait = if over { 0 } else { wait };
    let (rows, known_last) = long_poll::poll(
        &state,
        &user,
        &id,
        wait,
        |(rows, _): &(Vec<_>, _)| rows.is_empty(),
        // A read that will not wait confirms the tail with the database: the wake-up for
        // another instance's latest action may still be on its way.
        |generation| {
            let current = wait == 0;
            state
                .tails
                .after(&state.db, &id, (after, limit), generation, current)
        },
    )
    .await?;
    let last_seq = match (known_last, rows.last()) {
        // A full page: more may follow, so the next page starts after its last row.
        (_, Some(row)) if rows.len() as i64 >= limit => row.seq,
        (Some(last), _) => last,
        (None, Some(row)) => row.seq,
        // Nothing after `after` when read. An event committed since must not be skipped,
        // so the answer never passes `after`; it goes back when the game has fewer events.
        (None, None) => {
            let gid = id.clone();
            let count = state
                .db
                .run(move |conn| Ok(store::event_count(conn, &gid)?.unwrap_or(0)))
                .await?;
            count.min(after)
        }
    };
    // The caller may have left (or taken) a seat while the call waited: the page is the
    // copy of whoever the caller is now.
    if rows.iter().any(|r| reseats(&r.kind)) {
        viewer = viewer_now(&state, &id, user.id())
            .await?
            .ok_or_else(|| Error::not_found("no such game"))?;
    }
    // The words of users the caller blocks stay out of the caller's copy.
    let muted_seqs = if rows.iter().any(|r| r.kind == "chat_message") {
        let (gid, me) = (id.clone(), user.id().to_owned());
        state
            .db
            .run(move |conn| crate::chat::blocked_seqs(conn, &gid, &me))
            .await?
    } else {
        Vec::new()
    };
    let events = rows
        .into_iter()
        .map(|r| {
            let blocked = muted_seqs.contains(&r.seq);
            let event = EventView::of(r, viewer);
            if blocked {
                event.without_chat_text()
            } else {
                event
            }
        })
        .collect();
    ok(EventsPage { events, last_seq })
}
