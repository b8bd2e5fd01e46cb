//! Creating a game.

use crate::bots::BotLevel;
use crate::db::games::{self as store, GameRow, SeatRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::notifications::Kind;
use crate::rules::RuleOptions;

use super::{BotReason, Change, Committed, Table, Visibility};

/// How many games one user may have waiting for players at once.
pub const MAX_WAITING_GAMES_PER_USER: i64 = 20;

/// Who gets a seat at creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatPlan {
    /// The creator (exactly one seat).
    Me,
    /// Open to anyone.
    Open,
    /// Reserved for the user with this username.
    Invite(String),
    /// A bot of this level.
    Bot(BotLevel),
}

/// A validated request for a new game.
#[derive(Debug, Clone)]
pub struct NewGame {
    /// The resolved rules.
    pub rules: RuleOptions,
    /// The four seats in order; exactly one is [`SeatPlan::Me`].
    pub seats: [SeatPlan; 4],
    /// Listed in the lobby.
    pub public: bool,
    /// Watchable, when public, by signed-in users without a seat.
    pub allow_spectators: bool,
    /// 5..=2592000 seconds.
    pub turn_timeout_seconds: i32,
    /// The most running games the creator may hold seats in (the game may start at once).
    pub max_active_games: i64,
    /// Counts for the ratings; only possible without bot seats (see [`NewGame::rated_default`]).
    pub rated: bool,
}

impl NewGame {
    /// Whether a game with these seats is rated when the request does not say: when no seat
    /// starts as a bot.
    #[must_use]
    pub fn rated_default(seats: &[SeatPlan; 4]) -> bool {
        !seats.iter().any(|s| matches!(s, SeatPlan::Bot(_)))
    }
}

/// 409 `too_many_active_games` when `user_id` already holds seats in `max` running games:
/// one user must not be able to keep the server busy with games nobody plays.
///
/// # Errors
/// As described, and database errors.
pub fn check_active_cap(conn: &mut AnyConnection, user_id: &str, max: i64) -> Result<(), Error> {
    let active = store::active_games_of(conn, user_id)?;
    if active >= max {
        return Err(Error::conflict(
            "too_many_active_games",
            match active {
                1 => "you already play in 1 running game; finish or resign it first".to_owned(),
                n => format!("you already play in {n} running games; finish or resign some first"),
            },
        ));
    }
    Ok(())
}

/// The live account `name` names, for `inviter` to invite: a banned account could neither
/// take nor decline the seat, so it is no one to invite, as its profile is no one to show.
///
/// # Errors
/// 400 for an unknown or banned username, or the inviter's own; database errors.
pub(super) fn invitee(
    conn: &mut AnyConnection,
    name: &str,
    inviter: &str,
) -> Result<db::users::UserRow, Error> {
    let target = db::users::by_username(conn, &name.to_ascii_lowercase())?
        .filter(|u| u.banned_at.is_none())
        .ok_or_else(|| Error::validation(format!("no user named {name:?} to invite")))?;
    if target.id == inviter {
        return Err(Error::validation("you cannot invite yourself"));
    }
    Ok(target)
}

/// Refuses to invite `target` to a table planned for `creator` and the already `invited`
/// when a block stands between them, either way: a blocked user may not invite the blocker,
/// and would be refused at the table of one who blocks them (the join checks the players
/// seated by then), so such an invitation could only wait, unanswerable, for a decline.
///
/// # Errors
/// 403 `blocked`; database errors.
pub(super) fn check_can_sit_with(
    conn: &mut AnyConnection,
    creator: &str,
    target: &db::users::UserRow,
    invited: &[String],
) -> Result<(), Error> {
    let name = &target.username;
    if db::social::blocks(conn, &target.id, creator)? {
        return Err(crate::social::blocked(format!("{name} blocks you")));
    }
    if db::social::blocks(conn, creator, &target.id)? {
        return Err(crate::social::blocked(format!(
            "you block {name}: unblock them to invite them"
        )));
    }
    for other in invited {
        if crate::social::blocks_either_way(conn, other, &target.id)? {
            return Err(crate::social::blocked(format!(
                "{name} and another invited player cannot sit at one table: one blocks the other"
            )));
        }
    }
    Ok(())
}

/// Creates a game; it starts (the cards are dealt) at once when the other three seats are
/// bots. Invited users are notified.
///
/// # Errors
/// 409 `too_many_games`, `too_many_active_games`; 400 for an unknown or doubly invited username or a self-invitation;
/// 403 `blocked` when a block stands between two of the humans the table is planned for
/// (the check is `check_can_sit_with`).
pub fn create(conn: &mut AnyConnection, creator: &str, new: NewGame) -> Result<Committed, Error> {
    let rules_text = serde_json::to_string(&new.rules)?;
    db::write_transaction(conn, |conn| {
        // Who is invited, by name; then the accounts of the creator and of the invitees,
        // locked in id order (`lock_accounts`). The creator's lock serializes their
        // creations, so the count below stays true until the insert. Each is taken only on
        // a live account: a ban or deletion committed since the names were read refuses the
        // game here, and one that comes later waits for this commit and then takes the
        // account out of the table. An invitee's lock also orders the invitation with a
        // block of theirs.
        let mut invitees = Vec::with_capacity(3);
        for plan in &new.seats {
            if let SeatPlan::Invite(name) = plan {
                invitees.push((name.as_str(), invitee(conn, name, creator)?));
            }
        }
        let ids = invitees.iter().map(|(_, u)| u.id.as_str());
        let gone = super::lock_accounts(conn, ids.chain([creator]))?;
        if gone.contains(&creator) {
            return Err(crate::auth::banned());
        }
        if let Some((name, _)) = invitees.iter().find(|(_, u)| gone.contains(&u.id.as_str())) {
            return Err(Error::validation(format!(
                "no user named {name:?} to invite"
            )));
        }
        let mut invitees = invitees.into_iter().map(|(_, u)| u);
        let waiting = store::waiting_created_by(conn, creator)?;
        if waiting >= MAX_WAITING_GAMES_PER_USER {
            return Err(Error::conflict(
                "too_many_games",
                format!("you already have {waiting} games waiting for players"),
            ));
        }
        check_active_cap(conn, creator, new.max_active_games)?;
        let id = uuid::Uuid::new_v4().to_string();
        let now = db::now();
        let mut seat_rows = Vec::with_capacity(4);
        let mut invited: Vec<String> = Vec::new();
        for (i, plan) in new.seats.iter().enumerate() {
            let mut row = SeatRow {
                game_id: id.clone(),
                seat: i as i32,
                user_id: None,
                invited_user_id: None,
                bot_level: None,
                bot_reason: None,
                timeouts_in_row: 0,
            };
            match plan {
                SeatPlan::Me => row.user_id = Some(creator.to_owned()),
                SeatPlan::Bot(level) => {
                    row.bot_level = Some(*level);
                    row.bot_reason = Some(BotReason::Seat);
                }
                SeatPlan::Invite(name) => {
                    let target = invitees
                        .next()
                        .ok_or_else(|| Error::internal("an invitee was not looked up"))?;
                    if invited.contains(&target.id) {
                        return Err(Error::validation(format!("{name:?} is invited twice")));
                    }
                    check_can_sit_with(conn, creator, &target, &invited)?;
                    invited.push(target.id.clone());
                    row.invited_user_id = Some(target.id);
                }
                SeatPlan::Open => {}
            }
            seat_rows.push(row);
        }
        let visibility = if new.public {
            Visibility::Public
        } else {
            Visibility::Private
        };
        let row = GameRow {
            rated: new.rated,
            allow_spectators: new.allow_spectators,
            ..GameRow::new(
                &id,
                creator,
                rules_text,
                visibility,
                new.turn_timeout_seconds,
                now,
            )
        };
        store::insert(conn, &row, &seat_rows)?;
        let table = Table::load(conn, &id)?;
        let mut change = Change::new(table)?;
        let by = change.table.name(creator).unwrap_or_default().to_owned();
        for s in &seat_rows {
            if let Some(user) = &s.invited_user_id {
                change.notify(
                    user,
                    Kind::Invited,
                    serde_json::json!({ "seat": s.seat, "by": by }),
                );
            }
        }
        if change.is_full() {
            super::away::start_game(conn, &mut change)?;
        }
        let table = change.commit(conn)?;
        let seat = table.seat_of(creator);
        Ok(Committed::new(table, seat, 0))
    })
}
