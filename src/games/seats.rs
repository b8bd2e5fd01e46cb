//! Use cases on seats: join, leave, resign, reclaim, and an administrator handing a seat to a
//! bot. Each runs in one transaction under the game's lock.

use serde_json::json;

use crate::audit::{self, Entry};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::rules::Seat;

use super::{BotReason, Change, Committed, GameStatus, locked, locked_seat};

/// Takes a seat: `wanted`, else the one reserved for the caller, else the first open one.
/// The game starts when the fourth seat is taken.
///
/// # Errors
/// 404 for a hidden game; 409 `game_not_waiting`, `already_seated`, `seat_taken`,
/// `game_full`; 400 for a seat outside 0..=3; 403 `blocked` when a seated player blocks the
/// user.
pub fn join(
    conn: &mut AnyConnection,
    game_id: &str,
    user_id: &str,
    wanted: Option<u8>,
    max_active_games: i64,
) -> Result<Committed, Error> {
    locked(conn, game_id, |conn, table| {
        if !table.visible_to(user_id) {
            return Err(Error::not_found("no such game"));
        }
        table.require(
            GameStatus::Waiting,
            "the game is no longer waiting for players",
        )?;
        if table.seat_of(user_id).is_some() {
            return Err(Error::conflict(
                "already_seated",
                "you already have a seat in this game",
            ));
        }
        super::create::check_active_cap(conn, user_id, max_active_games)?;
        let seated: Vec<String> = table
            .seats
            .iter()
            .filter_map(|s| s.user_id.clone())
            .collect();
        crate::social::check_not_blocked_by(conn, user_id, &seated)?;
        let reserved = table.invitation_of(user_id);
        let seat = match wanted {
            Some(n) => {
                let seat = Seat::new(n)
                    .ok_or_else(|| Error::validation(format!("seat must be 0..=3, got {n}")))?;
                if !(table.is_open(seat) || reserved == Some(seat)) {
                    return Err(Error::conflict(
                        "seat_taken",
                        format!("seat {n} is not open"),
                    ));
                }
                seat
            }
            None => match reserved {
                Some(seat) => seat,
                None => Seat::ALL
                    .into_iter()
                    .find(|s| table.is_open(*s))
                    .ok_or_else(|| Error::conflict("game_full", "no seat is open"))?,
            },
        };
        let mut change = Change::new(table)?;
        // Taking another seat than the reserved one gives the reservation up.
        if let Some(r) = reserved
            && r != seat
        {
            change.seat_mut(r).invited_user_id = None;
        }
        let row = change.seat_mut(seat);
        row.user_id = Some(user_id.to_owned());
        row.invited_user_id = None;
        if change.table.name(user_id).is_none()
            && let Some(user) = db::users::by_id(conn, user_id)?
        {
            change.table.names.insert(user_id.to_owned(), user.username);
        }
        change.announce_seat(seat, "joined");
        if change.is_full() {
            change.start()?;
            super::away::hand_over_away_seats(conn, &mut change)?;
        }
        change.commit_for(conn, Some(seat))
    })
}

/// Leaves a waiting game, or declines an invitation. A waiting game that no human holds or
/// is invited to any more is aborted.
///
/// # Errors
/// 404 for a hidden game; 403 `not_seated`; 409 `game_not_waiting`.
pub fn leave(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> Result<Committed, Error> {
    locked(conn, game_id, |conn, table| {
        if !table.visible_to(user_id) {
            return Err(Error::not_found("no such game"));
        }
        let (seat, reason) = match (table.seat_of(user_id), table.invitation_of(user_id)) {
            (Some(seat), _) => (seat, "left"),
            (None, Some(seat)) => (seat, "invite_declined"),
            (None, None) => {
                return Err(
                    Error::forbidden("you have no seat in this game").with_code("not_seated")
                );
            }
        };
        table.require(GameStatus::Waiting, "the game has started: resign instead")?;
        let mut change = Change::new(table)?;
        let row = change.seat_mut(seat);
        row.user_id = None;
        row.invited_user_id = None;
        change.announce_seat(seat, reason);
        let humans = change
            .table
            .seats
            .iter()
            .any(|s| s.user_id.is_some() || s.invited_user_id.is_some());
        if !humans {
            change.abort("every player left");
        }
        let mut done = change.commit_for(conn, None)?;
        done.seat = done.table.seat_of(user_id);
        Ok(done)
    })
}

/// Hands the caller's seat to a bot for the rest of the game.
///
/// # Errors
/// 404 for a hidden game; 403 `not_seated`; 409 `game_not_active`, `already_resigned`.
pub fn resign(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> Result<Committed, Error> {
    locked_seat(conn, game_id, user_id, |conn, table, seat| {
        table.require(
            GameStatus::Active,
            "only a running game can be resigned; leave a waiting one",
        )?;
        if table.bot_reason(seat) == Some(BotReason::Resigned) {
            return Err(Error::conflict(
                "already_resigned",
                "you already resigned this game",
            ));
        }
        let mut change = Change::new(table)?;
        change.hand_to_bot(seat, BotReason::Resigned);
        change.run_bots()?;
        change.commit_for(conn, Some(seat))
    })
}

/// Takes the caller's seat back from the bot that took it after two timeouts in a row.
///
/// # Errors
/// 404 for a hidden game; 403 `not_seated`; 409 `game_not_active`, `nothing_to_reclaim`.
pub fn reclaim(conn: &mut AnyConnection, game_id: &str, user_id: &str) -> Result<Committed, Error> {
    locked_seat(conn, game_id, user_id, |conn, table, seat| {
        table.require(GameStatus::Active, "the game is not running")?;
        if table.bot_reason(seat) != Some(BotReason::Timeout) {
            return Err(Error::conflict(
                "nothing_to_reclaim",
                "no bot holds your seat for timeouts",
            ));
        }
        let mut change = Change::new(table)?;
        change.give_back(seat, "reclaimed");
        change.commit_for(conn, Some(seat))
    })
}

/// An administrator hands a seat of a running game to a bot for the rest of the game; the
/// bot acts at once if the seat must act. Audited in the same transaction.
///
/// # Errors
/// 404 for an unknown game; 409 `game_not_active`, `seat_controlled_by_bot`.
pub fn seat_to_bot(
    conn: &mut AnyConnection,
    game_id: &str,
    seat: Seat,
    admin_id: &str,
    reason: Option<&str>,
) -> Result<Committed, Error> {
    locked(conn, game_id, |conn, table| {
        table.require(
            GameStatus::Active,
            "only a running game's seats can be handed to a bot",
        )?;
        if table.bot_of(seat).is_some() {
            return Err(Error::conflict(
                "seat_controlled_by_bot",
                "a bot already plays this seat",
            ));
        }
        let held_by = table.seats[seat.index()].user_id.clone();
        let mut change = Change::new(table)?;
        change.hand_to_bot(seat, BotReason::Admin);
        // The player learns of it as of a takeover for timeouts, with no way back.
        if let Some(user) = &held_by {
            change.notify(
                user,
                crate::notifications::Kind::SeatTakenByBot,
                json!({ "seat": seat.number(), "reason": "admin" }),
            );
        }
        change.run_bots()?;
        let done = change.commit_for(conn, None)?;
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "seat_to_bot",
                target_type: "game",
                target_id: game_id,
                reason,
                details: json!({
                    "seat": seat.number(),
                    "user_id": held_by,
                    "bot": crate::bots::BotLevel::takeover().as_str(),
                    "actions_applied": done.applied,
                }),
            },
        )?;
        Ok(done)
    })
}
