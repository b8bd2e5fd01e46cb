//! Use cases on seats: join, leave, resign, reclaim, an administrator handing a seat to a
//! bot, and a deleted account withdrawing from its games. Each runs in one transaction per
//! game under the game's lock.

use serde_json::json;

use crate::audit::{self, Entry};
use crate::db::{self, AnyConnection, games as store};
use crate::error::{Error, Kind};
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
        // The accounts of the joiner and of the players seated, after the game's lock and
        // in id order (`lock_accounts`): the joiner's serializes their joins into other
        // games, so the count stays true until this seat is written (taken only on a live
        // account, as for a creation); the others' order the start of the game, which
        // this join may be, with their going away.
        let seated = table.seats.iter().filter_map(|s| s.user_id.as_deref());
        if super::lock_accounts(conn, seated.chain([user_id]))?.contains(&user_id) {
            return Err(crate::auth::banned());
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
        // A player is no spectator: the look they had before joining stops counting.
        if db::watchers::forget(conn, &change.table.row.id, user_id)? {
            change.table.spectators = change.table.spectators.saturating_sub(1);
        }
        change.announce_seat(seat, "joined");
        if change.is_full() {
            super::away::start_game(conn, &mut change)?;
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
        let detail = match table.status() {
            GameStatus::Active => "the game has started: resign instead",
            _ => "the game is over",
        };
        table.require(GameStatus::Waiting, detail)?;
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

/// The user leaves every waiting game they sit or are invited in (declining the
/// invitations; a game left without humans is aborted), each in a transaction of its own:
/// for a deleted or banned account, whose seat nobody would ever play.
///
/// # Errors
/// Database errors.
pub fn leave_waiting(conn: &mut AnyConnection, user_id: &str) -> Result<Vec<Committed>, Error> {
    let mut done = Vec::new();
    for id in store::waiting_game_ids_of(conn, user_id)? {
        match leave(conn, &id, user_id) {
            Ok(left) => done.push(left),
            // It started (or the seat went) since the list was read: nothing is left to do
            // here (a running game's seat is the caller's business).
            Err(e) if matches!(e.kind(), Kind::Conflict | Kind::Forbidden) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// `me` blocks `username` ([`crate::social::block`]); then the blocked user's invitations to
/// the waiting games where `me` sits are withdrawn (the seat opens, `seat_changed` with
/// reason `invite_withdrawn`, which does not say who blocked whom): the join would refuse
/// them (403 `blocked`), so the seat would wait for a player who can never take it. Each
/// game in a transaction of its own, after the block's.
///
/// # Errors
/// As [`crate::social::block`]; database errors.
pub fn block(
    conn: &mut AnyConnection,
    me: &str,
    username: &str,
) -> Result<(crate::social::Changed<()>, Vec<Committed>), Error> {
    let changed = crate::social::block(conn, me, username)?;
    let blocked = changed.other.id.clone();
    let mut withdrawn = Vec::new();
    for id in store::waiting_game_ids_of(conn, &blocked)? {
        let done = locked(conn, &id, |conn, table| {
            let Some(seat) = table.invitation_of(&blocked) else {
                return Ok(None);
            };
            if table.status() != GameStatus::Waiting || table.seat_of(me).is_none() {
                return Ok(None);
            }
            let mut change = Change::new(table)?;
            change.seat_mut(seat).invited_user_id = None;
            change.announce_seat(seat, "invite_withdrawn");
            change.commit_for(conn, None).map(Some)
        })?;
        withdrawn.extend(done);
    }
    Ok((changed, withdrawn))
}

/// A deleted account gives up its place in every game not over yet: it leaves the waiting
/// ones (declining their invitations; a game left without humans is aborted), and a bot plays
/// out its seats in the running ones (`seat_changed`, reason `resigned`), the result staying
/// the account's. A seat a bot holds for a time (away, timeouts) becomes the bot's for good,
/// since nobody can take it back. Each game in a transaction of its own.
///
/// # Errors
/// Database errors.
pub fn withdraw(conn: &mut AnyConnection, user_id: &str) -> Result<Vec<Committed>, Error> {
    let mut done = leave_waiting(conn, user_id)?;
    for id in store::active_game_ids_of(conn, user_id)? {
        let resigned = locked(conn, &id, |conn, table| {
            let Some(seat) = table.seat_of(user_id) else {
                return Ok(None);
            };
            let for_good = matches!(
                table.bot_reason(seat),
                Some(BotReason::Resigned | BotReason::Admin)
            );
            if table.status() != GameStatus::Active || for_good {
                return Ok(None);
            }
            let mut change = Change::new(table)?;
            change.hand_to_bot(seat, BotReason::Resigned);
            change.run_bots()?;
            change.commit_for(conn, None).map(Some)
        })?;
        done.extend(resigned);
    }
    Ok(done)
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
        match table.bot_reason(seat) {
            Some(BotReason::Resigned) => {
                return Err(Error::conflict(
                    "already_resigned",
                    "you already resigned this game",
                ));
            }
            Some(BotReason::Admin) => {
                return Err(Error::conflict(
                    "already_resigned",
                    "an administrator handed your seat to a bot for the rest of the game",
                ));
            }
            _ => {}
        }
        let mut change = Change::new(table)?;
        change.hand_to_bot(seat, BotReason::Resigned);
        change.run_bots()?;
        change.commit_for(conn, Some(seat))
    })
}

/// Takes the caller's seat back from the bot that took it after two timeouts in a row. A
/// caller who is away ([`super::away`]) does not play while away: the seat then stays with
/// the bot for the time away (`seat_changed`, `away`) and comes back with them.
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
        let away = !db::users::away_among(conn, &[user_id.to_owned()], db::now())?.is_empty();
        let mut change = Change::new(table)?;
        if away {
            change.seat_mut(seat).timeouts_in_row = 0;
            change.hand_to_bot(seat, BotReason::Away);
            change.run_bots()?;
        } else {
            change.give_back(seat, "reclaimed");
        }
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
