//! Away mode: `PUT /me/away` and `DELETE /me/away`.

use actix_web::{delete, put};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::app::AppState;
use crate::games::away::{self, AwayChange};
use crate::http::extract::{Json, Mine};
use crate::http::reply::{Reply, no_content, ok};

routes! { self::{put_away, delete_away} }

/// How long the caller will be away.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AwayRequest {
    /// The end of the time away: in the future, at most 30 days ahead.
    #[serde(deserialize_with = "crate::http::instant::rfc3339")]
    pub until: DateTime<Utc>,
}

/// The caller's time away.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AwayView {
    /// Until when bots play the caller's seats.
    pub until: DateTime<Utc>,
    /// The running games whose seat a bot took over now.
    pub games_handed_over: usize,
}

/// Go away for a while.
///
/// Until `until`, the heuristic bot plays the caller's seats in every running game at once
/// (each game says so in a `seat_changed` event, reason `away`), and games that start in
/// the meantime start with the bot in the caller's seat; no `your_turn` or reminder is sent
/// for those seats. The caller keeps the seats and their results. Asking again sets a new
/// end; `DELETE /me/away` or the end gives the seats back (reason `returned`). Seats a bot
/// holds for another reason (resigned, timeouts, an administrator) stay with it.
#[utoipa::path(operation_id = "put_away", tag = "social", security(("bearer" = [])),
    request_body = AwayRequest,
    responses(
        (status = 200, description = "Away until then", body = AwayView),
        (status = 400, description = "`until` not in the future or more than 30 days ahead")))]
#[put("/me/away")]
pub async fn put_away(me: Mine<(), Json<AwayRequest>>) -> Reply {
    let until = me.input.until.naive_utc();
    let changed = me
        .mine(move |conn, id| away::go_away(conn, id, until))
        .await?;
    publish(&me.state, &changed);
    ok(AwayView {
        until: until.and_utc(),
        games_handed_over: changed.games.len(),
    })
}

/// Return from away.
///
/// Ends the caller's time away: the seats the bot played for the caller are the caller's
/// again (`seat_changed`, reason `returned`). Not being away is no error.
#[utoipa::path(operation_id = "delete_away", tag = "social", security(("bearer" = [])),
    responses((status = 204, description = "Not away (any more)")))]
#[delete("/me/away")]
pub async fn delete_away(me: Mine) -> Reply {
    let changed = me.mine(away::come_back).await?;
    publish(&me.state, &changed);
    no_content()
}

fn publish(state: &AppState, changed: &AwayChange) {
    for done in &changed.games {
        state.published(done);
    }
}
