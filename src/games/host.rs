//! What the creator of a waiting game may change: the seats no human holds. Seated at the
//! table, they open such a seat, reserve it for a user (withdrawing an invitation nobody
//! answered, or inviting someone in place of a user who declined), or give it to a bot; the
//! game starts when that fills the table.

use serde_json::json;

use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::notifications::Kind;
use crate::rules::Seat;

use super::{BotReason, Change, Committed, GameStatus, SeatPlan, locked};

/// Sets `seat` of a waiting game to `plan` for its creator `user_id`. Asking for what the
/// seat already is changes nothing.
///
/// # Errors
/// 404 for a hidden game; 403 `forbidden` for anyone but the seated creator; 409
/// `game_not_waiting`, `seat_taken` (a human holds it); 400 for `me`, an unknown, banned,
/// seated or already invited user, oneself, or a bot in a rated game; 403 `blocked` when a
/// block stands between the invited user and someone at the table.
pub fn set_seat(
    conn: &mut AnyConnection,
    game_id: &str,
    user_id: &str,
    seat: Seat,
    plan: SeatPlan,
) -> Result<Committed, Error> {
    locked(conn, game_id, |conn, table| {
        if !table.visible_to(user_id) {
            return Err(Error::not_found("no such game"));
        }
        let host = table.seat_of(user_id);
        if table.row.created_by != user_id || host.is_none() {
            return Err(Error::forbidden(
                "only the game's creator, seated at it, changes its seats",
            ));
        }
        table.require(
            GameStatus::Waiting,
            "the game is no longer waiting for players",
        )?;
        let n = seat.number();
        if table.seats[seat.index()].user_id.is_some() {
            return Err(Error::conflict(
                "seat_taken",
                format!("a player holds seat {n}: only they can leave it"),
            ));
        }
        // What the seat becomes: who it is kept for, and which bot holds it.
        let (invited, bot) = match &plan {
            SeatPlan::Me => {
                return Err(Error::validation(
                    "a seat can be open, an invitation or a bot; you hold your own seat already",
                ));
            }
            SeatPlan::Open => (None, None),
            SeatPlan::Bot(_) if table.row.rated => {
                return Err(Error::validation(
                    "a rated game has no bot seats: create an unrated game to play with bots",
                ));
            }
            SeatPlan::Bot(level) => (None, Some(*level)),
            SeatPlan::Invite(name) => {
                let target = super::create::invitee(conn, name, user_id)?;
                // The invitee's account lock, after the game's: a ban, a deletion or a block
                // of theirs (each takes it) commits wholly before this invitation, which then
                // sees it, or after it, and then withdraws it.
                if !super::lock_accounts(conn, [target.id.as_str()])?.is_empty() {
                    return Err(Error::validation(format!(
                        "no user named {name:?} to invite"
                    )));
                }
                let current = table.seats[seat.index()].invited_user_id.as_deref();
                if current != Some(target.id.as_str()) {
                    if table.seat_of(&target.id).is_some()
                        || table.invitation_of(&target.id).is_some()
                    {
                        return Err(Error::validation(format!(
                            "{name:?} already has a seat or an invitation at this table"
                        )));
                    }
                    // Everyone the table is planned for must be able to sit with them.
                    let others: Vec<String> = table
                        .seats
                        .iter()
                        .filter(|s| s.seat != i32::from(n))
                        .filter_map(|s| s.user_id.clone().or_else(|| s.invited_user_id.clone()))
                        .filter(|u| u != user_id)
                        .collect();
                    super::create::check_can_sit_with(conn, user_id, &target, &others)?;
                }
                (Some(target.id), None)
            }
        };
        let row = &table.seats[seat.index()];
        if row.invited_user_id == invited && row.bot_level == bot {
            return Ok(Committed::new(table, host, 0));
        }
        let mut change = Change::new(table)?;
        let row = change.seat_mut(seat);
        row.invited_user_id = invited.clone();
        row.bot_level = bot;
        row.bot_reason = bot.map(|_| BotReason::Seat);
        change.announce_seat(seat, "host");
        // Inviting again someone whose invitation was withdrawn is the same invitation: it
        // reaches their feed, so that the games they follow live show it again, but it rings
        // their phone once per game, so that a host cannot ring it at will.
        if let Some(invited) = &invited {
            let told = db::outbox::notified_about(
                conn,
                invited,
                Kind::Invited.as_str(),
                &change.table.row.id,
            )?;
            let by = change.table.name(user_id).unwrap_or_default().to_owned();
            change.notify_with(invited, Kind::Invited, json!({ "seat": n, "by": by }), told);
        }
        if change.is_full() {
            super::away::start_game(conn, &mut change)?;
        }
        change.commit_for(conn, host)
    })
}
