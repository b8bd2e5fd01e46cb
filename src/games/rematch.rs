//! A rematch: from a finished game, one new game with the same rules, seats and bots.

use crate::db::{self, AnyConnection};
use crate::error::Error;

use super::create::{self, NewGame, SeatPlan};
use super::{Committed, GameStatus, Table, Visibility, locked_seat};
use crate::rules::Seat;

/// What a rematch request did.
#[derive(Debug)]
pub struct Rematch {
    /// The new game, with the caller's seat.
    pub committed: Committed,
    /// Whether this request created it (a later request joins it instead).
    pub created: bool,
}

/// Asks for a rematch of finished game `game_id` as one of its seated humans. The first
/// request creates the new game: the same rules, visibility, spectators, turn time and `rated`, the
/// caller in their old seat, every seat that started as a bot the same bot again, every
/// other (live, unbanned) human invited to their old seat and notified, unless a block stands
/// between them and the caller or an earlier invitee (their seat is then open); the finished game
/// then points at it (`rematch_id`). Every later request gets that game, and seats its
/// caller if it still waits for players; once that game is aborted, the next request makes
/// a new rematch.
///
/// Race-safe: the whole use case runs under the finished game's lock, so of simultaneous
/// requests one creates and the others wait and then join.
///
/// # Errors
/// 404 for a hidden game; 403 `not_seated`; 409 `game_not_finished`, and
/// `rematch_unavailable` when the rematch started without the caller or has no seat left
/// for them; those of [`create::create`] and [`super::join`].
pub fn rematch(
    conn: &mut AnyConnection,
    game_id: &str,
    user_id: &str,
    max_active_games: i64,
) -> Result<Rematch, Error> {
    locked_seat(conn, game_id, user_id, |conn, table, my_seat| {
        table.require(
            GameStatus::Finished,
            "only a finished game can be played again",
        )?;
        if let Some(existing) = table.row.rematch_id.clone() {
            let current = Table::load(conn, &existing)?;
            // An aborted rematch (an administrator's doing, or every human left it) leaves
            // the way open for another.
            if current.status() != GameStatus::Aborted {
                return join_rematch(conn, current, user_id, my_seat, max_active_games);
            }
        }
        // The old table's players' accounts, in id order after the game's lock: a block, a
        // ban or a deletion among them comes wholly before this plan, which then leaves that
        // seat open, or after the new game, which it then changes as any other.
        super::lock_accounts(
            conn,
            table.seats.iter().filter_map(|s| s.user_id.as_deref()),
        )?;
        let mut seats = Vec::with_capacity(4);
        // The humans the new table is planned for: an invitation that a block would refuse
        // at the join is not sent, and the seat stays open instead.
        let mut humans = vec![user_id.to_owned()];
        for s in &table.seats {
            let plan = match (&s.user_id, s.bot_level) {
                (Some(u), _) if u == user_id => SeatPlan::Me,
                (Some(u), _) => match db::users::by_id(conn, u)? {
                    Some(user)
                        if user.deleted_at.is_none()
                            && user.banned_at.is_none()
                            && !blocked_from(conn, &user.id, &humans)? =>
                    {
                        humans.push(user.id);
                        SeatPlan::Invite(user.username)
                    }
                    _ => SeatPlan::Open,
                },
                (None, Some(level)) => SeatPlan::Bot(level),
                (None, None) => SeatPlan::Open,
            };
            seats.push(plan);
        }
        let seats: [SeatPlan; 4] = seats
            .try_into()
            .map_err(|_| Error::internal("a game without four seats"))?;
        let new = NewGame {
            rules: table.rules()?,
            rated: table.row.rated && NewGame::rated_default(&seats),
            seats,
            public: table.row.visibility == Visibility::Public,
            allow_spectators: table.row.allow_spectators,
            turn_timeout_seconds: table.row.turn_timeout_seconds,
            max_active_games,
        };
        let committed = create::create(conn, user_id, new)?;
        db::ratings::set_rematch(conn, &table.row.id, &committed.table.row.id, db::now())?;
        debug_assert_eq!(committed.seat, Some(my_seat));
        Ok(Rematch {
            committed,
            created: true,
        })
    })
}

/// Whether a block stands between `user` and any of `humans`.
fn blocked_from(conn: &mut AnyConnection, user: &str, humans: &[String]) -> Result<bool, Error> {
    for other in humans {
        if crate::social::blocks_either_way(conn, user, other)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The existing rematch (not aborted) for a later request: the caller's seat in it, taken
/// now if it is still reserved for them, or if it waits with a seat open (the caller
/// declined at first, or was left out by a block, which the join then judges): their old
/// seat when it is open.
fn join_rematch(
    conn: &mut AnyConnection,
    table: Table,
    user_id: &str,
    old_seat: Seat,
    max_active_games: i64,
) -> Result<Rematch, Error> {
    let id = table.row.id.clone();
    let waiting = table.status() == GameStatus::Waiting;
    let committed = if let Some(seat) = table.seat_of(user_id) {
        Committed::new(table, Some(seat), i64::MAX)
    } else if waiting && table.invitation_of(user_id).is_some() {
        super::join(conn, &id, user_id, None, max_active_games)?
    } else if waiting && Seat::ALL.iter().any(|s| table.is_open(*s)) {
        let wanted = table.is_open(old_seat).then_some(old_seat.index() as u8);
        super::join(conn, &id, user_id, wanted, max_active_games)?
    } else if waiting {
        return Err(Error::conflict(
            "rematch_unavailable",
            "the rematch has no seat left for you: each is taken or kept for an invited player",
        ));
    } else {
        return Err(Error::conflict(
            "rematch_unavailable",
            "the rematch started without you",
        ));
    };
    Ok(Rematch {
        committed,
        created: false,
    })
}
