//! A game as loaded from the database, with the questions every use case asks of it.

use std::collections::HashMap;

use crate::bots::BotLevel;
use crate::db::AnyConnection;
use crate::db::games::{self as store, GameRow, SeatRow};
use crate::error::Error;
use crate::rules::{Card, Game, RuleOptions, Seat, SeatSet};

use super::{BotReason, GameStatus, Visibility};

/// A game as loaded from the database: its row, its seats and the names of its users.
#[derive(Debug, Clone)]
pub struct Table {
    /// The game row.
    pub row: GameRow,
    /// The four seats, in order.
    pub seats: Vec<SeatRow>,
    /// Usernames by user id (seated and invited users).
    pub names: HashMap<String, String>,
    /// Seated users who had a webhook (or, on PostgreSQL, a push device) when the game was
    /// loaded: their notifications never take the one-statement commit.
    pub webhook_users: Vec<String>,
    /// Users whose notification feed the last commit wrote to (for waking long-polls).
    pub notified_users: Vec<String>,
    /// `row.state` already parsed, when this table was just written or is kept in
    /// [`HotTables`](super::HotTables).
    pub(super) parsed: Option<Game>,
    /// Signed-in users watching without a seat, when the game was loaded.
    pub spectators: u32,
    /// When the names and seats were read from the database: a copy kept by
    /// [`HotTables`](super::HotTables) is given out for a few seconds from then, however often it is
    /// written back, which bounds how stale the names in it (no version covers them) can be.
    pub(super) loaded_at: std::time::Instant,
}

impl Table {
    /// Loads a game (one query).
    ///
    /// # Errors
    /// 404 when there is no such game.
    pub fn load(conn: &mut AnyConnection, id: &str) -> Result<Self, Error> {
        Self::read(conn, id, false)
    }

    /// Takes the game's lock for the rest of the transaction and loads it: one query on
    /// PostgreSQL (`SELECT … FOR UPDATE`), the lock then the load on SQLite. Must be the
    /// transaction's first statement.
    ///
    /// # Errors
    /// 404 when there is no such game.
    pub fn load_locked(conn: &mut AnyConnection, id: &str) -> Result<Self, Error> {
        Self::read(conn, id, true)
    }

    fn read(conn: &mut AnyConnection, id: &str, for_update: bool) -> Result<Self, Error> {
        Self::read_with_caller(conn, id, for_update, None)?
            .map(|(table, _)| table)
            .ok_or_else(|| Error::not_found("no such game"))
    }

    /// Loads a game (locked with `for_update`, as [`Table::load_locked`]) and, in the same
    /// query, the account of `caller`; `None` when there is no such game.
    ///
    /// # Errors
    /// Database errors.
    pub fn read_with_caller(
        conn: &mut AnyConnection,
        id: &str,
        for_update: bool,
        caller: Option<&str>,
    ) -> Result<Option<(Self, Option<store::CallerState>)>, Error> {
        let Some(mut found) = store::find_with_seats(conn, id, for_update, caller)? else {
            return Ok(None);
        };
        let caller = found.caller.take();
        Ok(Some((Self::from_found(found), caller)))
    }

    /// A game as a query read it with its seats.
    pub fn from_found(found: store::Found) -> Self {
        let mut names = HashMap::new();
        let mut webhook_users = Vec::new();
        let mut seats = Vec::with_capacity(found.seats.len());
        for seat in found.seats {
            if let (Some(user), Some(name)) = (&seat.row.user_id, seat.username) {
                names.insert(user.clone(), name);
                if seat.has_webhook {
                    webhook_users.push(user.clone());
                }
            }
            if let (Some(user), Some(name)) = (&seat.row.invited_user_id, seat.invited_username) {
                names.insert(user.clone(), name);
            }
            seats.push(seat.row);
        }
        Self {
            row: found.row,
            seats,
            names,
            webhook_users,
            notified_users: Vec::new(),
            parsed: None,
            spectators: u32::try_from(found.spectators).unwrap_or(u32::MAX),
            loaded_at: std::time::Instant::now(),
        }
    }

    /// Loads a game for `caller` and checks the caller's account in the same query (one
    /// round trip): the account's errors ([`crate::auth::judge`]) first, then 404.
    /// `for_update` as [`Table::load_locked`].
    ///
    /// # Errors
    /// As described, and database errors.
    pub fn load_for(
        conn: &mut AnyConnection,
        id: &str,
        for_update: bool,
        caller: &str,
    ) -> Result<Self, Error> {
        match Self::read_with_caller(conn, id, for_update, Some(caller))? {
            Some((table, state)) => {
                crate::auth::judge(state)?;
                Ok(table)
            }
            None => {
                crate::auth::check_account(conn, caller)?;
                Err(Error::not_found("no such game"))
            }
        }
    }

    /// The status.
    pub fn status(&self) -> GameStatus {
        self.row.status
    }

    /// 409 `game_not_<status>` with `detail` unless the game is `status` (`game_not_finished`
    /// also for `Aborted`, which no use case requires).
    ///
    /// # Errors
    /// That conflict.
    pub fn require(&self, status: GameStatus, detail: &str) -> Result<(), Error> {
        if self.status() == status {
            return Ok(());
        }
        Err(match status {
            GameStatus::Waiting => Error::conflict("game_not_waiting", detail),
            GameStatus::Active => Error::conflict("game_not_active", detail),
            GameStatus::Finished | GameStatus::Aborted => {
                Error::conflict("game_not_finished", detail)
            }
        })
    }

    /// The resolved rule set.
    pub fn rules(&self) -> Result<RuleOptions, Error> {
        // A dealt game holds the options it was dealt with, which are the row's: read them
        // there rather than parse the JSON again on every view of a kept table.
        if let Some(game) = &self.parsed {
            return Ok(*game.options());
        }
        serde_json::from_str(&self.row.rules)
            .map_err(|e| Error::internal(format!("stored rules: {e}")))
    }

    /// The rules state, once dealt.
    pub fn game(&self) -> Result<Option<Game>, Error> {
        if let Some(game) = &self.parsed {
            return Ok(Some(game.clone()));
        }
        self.row
            .state
            .as_deref()
            .map(|s| {
                serde_json::from_str(s).map_err(|e| Error::internal(format!("stored state: {e}")))
            })
            .transpose()
    }

    /// The seat held by this user (as a human, even if a bot acts for it now).
    pub fn seat_of(&self, user_id: &str) -> Option<Seat> {
        self.seats
            .iter()
            .find(|s| s.user_id.as_deref() == Some(user_id))
            .and_then(|s| Seat::new(s.seat as u8))
    }

    /// The seat whose copy the holder of `seat` gets: that seat's, unless a bot holds it
    /// for good (they resigned, or an administrator handed it over) while the game runs.
    /// They can never act there again, and the hand the bot plays out must not reach a
    /// friend at the table through them: they see the game as a spectator. A seat held for
    /// a time (timeouts, away) stays theirs to see and reclaim, and the finished game is
    /// theirs again.
    pub fn seen_from(&self, seat: Option<Seat>) -> Option<Seat> {
        seat.filter(|&seat| {
            let for_good = matches!(
                self.bot_reason(seat),
                Some(BotReason::Resigned | BotReason::Admin)
            );
            !(for_good && self.status() == GameStatus::Active)
        })
    }

    /// The seat reserved for this invited user.
    pub fn invitation_of(&self, user_id: &str) -> Option<Seat> {
        self.seats
            .iter()
            .find(|s| s.user_id.is_none() && s.invited_user_id.as_deref() == Some(user_id))
            .and_then(|s| Seat::new(s.seat as u8))
    }

    /// Whether the user may see this game: seated, invited, public and either watchable
    /// (`allow_spectators`) or still waiting for players (so that anyone can find and join
    /// it), or private and still offering an open seat. A private game is never listed, so
    /// only those given its id find it: an open seat is open to anyone (API.md), and the
    /// game's id is the invitation to it. Once it starts, only its players see it.
    pub fn visible_to(&self, user_id: &str) -> bool {
        let waiting = self.row.status == GameStatus::Waiting;
        let visible_to_all = match self.row.visibility {
            Visibility::Public => self.row.allow_spectators || waiting,
            Visibility::Private => waiting && Seat::ALL.into_iter().any(|s| self.is_open(s)),
        };
        visible_to_all || self.seat_of(user_id).is_some() || self.invitation_of(user_id).is_some()
    }

    /// The bot that acts for a seat, if any.
    pub fn bot_of(&self, seat: Seat) -> Option<BotLevel> {
        self.seats[seat.index()].bot_level
    }

    pub(super) fn seat_row(&mut self, seat: Seat) -> &mut SeatRow {
        &mut self.seats[seat.index()]
    }

    /// Whether a seat is open to anyone: no human, no bot, no invitation.
    pub fn is_open(&self, seat: Seat) -> bool {
        let s = &self.seats[seat.index()];
        s.user_id.is_none() && s.bot_level.is_none() && s.invited_user_id.is_none()
    }

    /// Whether anyone may join the seat now: it is open and the game still waits for players
    /// (the seats an aborted game's players left are empty, but nobody can take them).
    pub fn is_joinable(&self, seat: Seat) -> bool {
        self.row.status == GameStatus::Waiting && self.is_open(seat)
    }

    /// Why a bot acts for a seat, if one does.
    pub fn bot_reason(&self, seat: Seat) -> Option<BotReason> {
        self.seats[seat.index()].bot_reason
    }

    /// Whether the game's rules are the partnership mode.
    pub fn is_partnership(&self) -> Result<bool, Error> {
        Ok(self.rules()?.is_partnership())
    }

    /// Username of a user id.
    pub fn name(&self, user_id: &str) -> Option<&str> {
        self.names.get(user_id).map(String::as_str)
    }
}

/// The current round's plays as stored in `games.round_plays`: "0QS,1AH".
pub fn encode_plays(plays: &[(Seat, Card)]) -> String {
    let mut out = String::with_capacity(plays.len() * 4);
    for (i, (seat, card)) in plays.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&seat.number().to_string());
        out.push_str(card.code());
    }
    out
}

/// Parses [`encode_plays`]' form; unreadable entries are skipped.
pub fn decode_plays(raw: &str) -> Vec<(Seat, Card)> {
    raw.split(',')
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let seat = Seat::new(s.get(..1)?.parse().ok()?)?;
            let card = s.get(1..)?.parse().ok()?;
            Some((seat, card))
        })
        .collect()
}

/// Encodes a seat set as stored in `games.to_act`: ",0,2,".
pub fn encode_to_act(seats: SeatSet) -> String {
    if seats.is_empty() {
        return String::new();
    }
    let mut out = String::from(",");
    for seat in seats.iter() {
        out.push_str(&seat.number().to_string());
        out.push(',');
    }
    out
}
