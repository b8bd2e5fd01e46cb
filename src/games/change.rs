//! [`Change`]: everything one use case does to a loaded game, committed as one unit.

use chrono::NaiveDateTime;

use crate::bots::{self, BotLevel};
use crate::db::games::{self as store, ActionRow, EventRow, SeatRow};
use crate::db::group_commit::GroupCommit;
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::notifications::{self, Kind, Pending};
use crate::ratings;
use crate::rules::{Action, Card, Game, Phase, Seat};

use super::events::{self, ServerEvent};
use super::table::{Table, decode_plays, encode_plays, encode_to_act};
use super::{Actor, BotReason, Committed, GameStatus};

/// A change ready to commit in one guarded statement ([`Change::unlocked`]).
#[derive(Debug)]
pub struct Unlocked {
    /// The statement's writes.
    pub commit: store::PgCommit,
    /// The change once they are written.
    pub written: Written,
}

/// A change as it is once its statement is written.
#[derive(Debug)]
pub struct Written {
    table: Table,
    body: String,
}

impl Written {
    /// The game as written (its notified users set) and the response body.
    #[must_use]
    pub fn done(self) -> (Table, String) {
        (self.table, self.body)
    }
}

/// A change to a loaded game, committed as one unit by [`Change::commit`].
pub struct Change {
    /// The game.
    pub table: Table,
    /// The rules state (None while waiting).
    pub game: Option<Game>,
    now: NaiveDateTime,
    events: Vec<EventRow>,
    actions: Vec<ActionRow>,
    turn_key_before: Option<String>,
    seats_changed: Vec<Seat>,
    notifications: Vec<Pending>,
    /// The current round's public card plays, in order: what a bot may remember.
    plays: Vec<(Seat, Card)>,
    /// The row's version and reminder as loaded: the guard of [`Change::commit_unlocked`].
    loaded: (i64, Option<NaiveDateTime>),
    /// The row's action count as loaded, from which [`Change::commit_for`] counts the
    /// actions this change applied.
    actions_loaded: i64,
    /// Set by [`Change::seal`] when this change ended the game.
    finished: Option<crate::rules::GameResult>,
    /// Bots still had to act when [`Change::run_bots`] stopped at its bound: the scheduler
    /// goes on with them at once, in a transaction of its own.
    bots_pending: bool,
}

/// The most bot actions one transaction applies. A human who must act stops the bots within
/// a trick and a pass round (at most 7 actions: finishing a trick, leading up to the human,
/// or three passes), so the bound only bites when no human is left to act; such a game is then
/// played out a few actions per transaction by the scheduler, and the game's lock (and
/// SQLite's write lock) is never held for longer than a few bot moves.
pub const BOT_ACTIONS_PER_COMMIT: usize = 8;

impl Change {
    /// Starts a change of a loaded game.
    ///
    /// # Errors
    /// 500 if the stored state does not parse.
    pub fn new(mut table: Table) -> Result<Self, Error> {
        // A just-written table hands over its parsed state rather than a copy.
        let game = match table.parsed.take() {
            Some(game) => Some(game),
            None => table.game()?,
        };
        let table_plays = table.row.round_plays.clone();
        let turn_key_before = game.as_ref().and_then(turn_key);
        Ok(Self {
            loaded: (table.row.version, table.row.reminder_at),
            actions_loaded: table.row.action_count,
            finished: None,
            bots_pending: false,
            table,
            game,
            now: db::now(),
            events: Vec::new(),
            actions: Vec::new(),
            turn_key_before,
            seats_changed: Vec::new(),
            notifications: Vec::new(),
            plays: decode_plays(&table_plays),
        })
    }

    /// The time of this change.
    pub fn now(&self) -> NaiveDateTime {
        self.now
    }

    fn push_event(&mut self, kind: &str, data: serde_json::Value) {
        let seq = self.table.row.event_count + 1;
        self.table.row.event_count = seq;
        self.events.push(EventRow {
            game_id: self.table.row.id.clone(),
            seq,
            kind: kind.to_owned(),
            data: data.to_string(),
            created_at: self.now,
        });
    }

    fn push_rules_events(&mut self, events: Vec<crate::rules::Event>) {
        for event in events {
            match &event {
                crate::rules::Event::RoundDealt { .. } => self.plays.clear(),
                crate::rules::Event::CardPlayed { seat, card } => self.plays.push((*seat, *card)),
                _ => {}
            }
            let data = serde_json::to_value(&event).unwrap_or_default();
            let kind = data["type"].as_str().unwrap_or("unknown").to_owned();
            self.push_event(&kind, data);
        }
    }

    /// Appends a server event.
    pub fn push_server_event(&mut self, event: &ServerEvent) {
        let data = serde_json::to_value(event).unwrap_or_default();
        let kind = data["type"].as_str().unwrap_or("unknown").to_owned();
        self.push_event(&kind, data);
    }

    /// The current round's public card plays, in order.
    pub fn plays(&self) -> &[(Seat, Card)] {
        &self.plays
    }

    /// Queues a notification for a user, written at commit.
    pub fn notify(&mut self, user_id: &str, kind: Kind, data: serde_json::Value) {
        self.notify_with(user_id, kind, data, false);
    }

    /// Queues a notification for a user, written at commit and pushed silently when
    /// `silent`: what the user heard of already still reaches their feed, and so every
    /// screen that follows it, without ringing their phone again.
    pub fn notify_with(
        &mut self,
        user_id: &str,
        kind: Kind,
        data: serde_json::Value,
        silent: bool,
    ) {
        self.notifications.push(Pending {
            user_id: user_id.to_owned(),
            kind,
            game_id: Some(self.table.row.id.clone()),
            data,
            silent,
        });
    }

    /// The humans holding a seat (bot-controlled or not).
    pub(super) fn humans(&self) -> Vec<(Seat, String)> {
        self.table
            .seats
            .iter()
            .filter_map(|s| Some((Seat::new(s.seat as u8)?, s.user_id.clone()?)))
            .collect()
    }

    /// Marks a seat row as changed (written at commit).
    pub fn seat_mut(&mut self, seat: Seat) -> &mut SeatRow {
        if !self.seats_changed.contains(&seat) {
            self.seats_changed.push(seat);
        }
        self.table.seat_row(seat)
    }

    /// Hands a seat to the takeover bot for `reason` and says so in a `seat_changed` event.
    /// The human keeps the seat's record; bots that must act then do so at commit's
    /// [`Change::run_bots`]. The one place resign, an administrator and the scheduler's
    /// second timeout take a seat from its player.
    pub fn hand_to_bot(&mut self, seat: Seat, reason: BotReason) {
        let level = BotLevel::takeover();
        let row = self.seat_mut(seat);
        row.bot_level = Some(level);
        row.bot_reason = Some(reason);
        self.announce_seat(seat, reason.as_str());
    }

    /// Gives a seat a bot took (for timeouts, or while its player was away) back to its
    /// player, announced with `reason` (`reclaimed`, `returned`).
    pub fn give_back(&mut self, seat: Seat, reason: &str) {
        let row = self.seat_mut(seat);
        row.bot_level = None;
        row.bot_reason = None;
        row.timeouts_in_row = 0;
        self.announce_seat(seat, reason);
    }

    /// A `seat_changed` event telling who holds `seat` now (and who held it, when a bot took
    /// over), for `reason`: joined | left | resigned | timeout | admin | reclaimed |
    /// invite_declined | invite_withdrawn | away | returned | host.
    pub fn announce_seat(&mut self, seat: Seat, reason: &str) {
        let row = &self.table.seats[seat.index()];
        let user_id = row.user_id.clone();
        let bot = row.bot_level.map(|l| l.as_str().to_owned());
        let username = user_id
            .as_deref()
            .and_then(|u| self.table.name(u))
            .map(str::to_owned);
        self.push_server_event(&ServerEvent::SeatChanged {
            seat: seat.number(),
            user_id,
            username,
            bot,
            reason: reason.to_owned(),
        });
    }

    /// Ends the game without a result, for `reason`.
    pub fn abort(&mut self, reason: &str) {
        let row = &mut self.table.row;
        row.status = GameStatus::Aborted;
        row.abort_reason = Some(reason.to_owned());
        row.finished_at = Some(self.now);
        self.push_server_event(&ServerEvent::GameAborted {
            reason: reason.to_owned(),
        });
    }

    /// Whether every seat is held by a human or a bot: the moment to deal.
    pub fn is_full(&self) -> bool {
        self.table
            .seats
            .iter()
            .all(|s| s.user_id.is_some() || s.bot_level.is_some())
    }

    /// Deals the first round: called when the fourth seat is taken. The seats of the `away`
    /// players go to the bot between `game_started` and the deal (`seat_changed`, `away`),
    /// so that events replayed in order show the bot holding them before any card is seen.
    pub fn start(&mut self, away: &[String]) -> Result<(), Error> {
        let rules = self.table.rules()?;
        let seed: [u8; 32] = rand::random();
        let (game, events) = Game::with_events(rules, seed);
        self.table.row.seed = Some(game.seed().to_hex());
        self.table.row.status = GameStatus::Active;
        self.table.row.started_at = Some(self.now);
        let seats = self
            .table
            .seats
            .iter()
            .map(|s| events::SeatInfo {
                seat: s.seat as u8,
                user_id: s.user_id.clone(),
                username: s
                    .user_id
                    .as_deref()
                    .and_then(|u| self.table.name(u))
                    .map(str::to_owned),
                bot: s.bot_level.map(|l| l.as_str().to_owned()),
            })
            .collect();
        self.push_server_event(&ServerEvent::GameStarted { seats });
        for (seat, user) in self.humans() {
            self.notify(
                &user,
                Kind::GameStarted,
                serde_json::json!({ "seat": seat.number() }),
            );
            if away.contains(&user) && self.table.bot_of(seat).is_none() {
                self.hand_to_bot(seat, BotReason::Away);
            }
        }
        self.push_rules_events(events);
        self.game = Some(game);
        self.run_bots()
    }

    /// Applies one action for a seat and records it.
    ///
    /// # Errors
    /// 422 with the rule's code when the action is illegal; nothing is changed then.
    pub fn apply(&mut self, action: &Action, actor: Actor<'_>) -> Result<(), Error> {
        let game = self
            .game
            .as_mut()
            .ok_or_else(|| Error::conflict("game_not_active", "the game has not started"))?;
        let events = game.apply(action)?;
        let seq = self.table.row.action_count + 1;
        self.table.row.action_count = seq;
        let (actor_name, user_id) = match actor {
            Actor::Player(id) => ("player", Some(id.to_owned())),
            Actor::Bot => ("bot", None),
            Actor::Timeout => ("timeout", None),
        };
        self.actions.push(ActionRow {
            game_id: self.table.row.id.clone(),
            seq,
            seat: i32::from(action.seat().number()),
            action: serde_json::to_string(action).map_err(Error::internal)?,
            actor: actor_name.to_owned(),
            user_id,
            created_at: self.now,
        });
        self.push_rules_events(events);
        Ok(())
    }

    /// Lets every bot-controlled seat that must act do so, until a human must act, the game
    /// ends, or `BOT_ACTIONS_PER_COMMIT` actions were applied (then the scheduler goes on).
    /// Bots see only their seat's view.
    pub fn run_bots(&mut self) -> Result<(), Error> {
        let mut rng = rand::rng();
        for _ in 0..BOT_ACTIONS_PER_COMMIT {
            let Some(game) = self.game.as_ref() else {
                return Ok(());
            };
            if game.is_finished() {
                return Ok(());
            }
            let next = game
                .to_act()
                .iter()
                .find_map(|seat| self.table.bot_of(seat).map(|level| (seat, level)));
            let Some((seat, level)) = next else {
                return Ok(());
            };
            let view = game.view(seat);
            let action = bots::choose(level, &view, &self.plays, &mut rng)
                .ok_or_else(|| Error::internal(format!("bot found no action for seat {seat}")))?;
            self.apply(&action, Actor::Bot)?;
        }
        self.bots_pending = self.bots_must_act();
        Ok(())
    }

    /// Gives the game back unchanged, with its parsed state.
    pub fn into_table(self) -> Table {
        let mut table = self.table;
        table.parsed = self.game;
        table
    }

    /// Whether the game runs and every seat that must act now is a bot's.
    pub fn bots_must_act(&self) -> bool {
        self.game.as_ref().is_some_and(|game| {
            !game.is_finished()
                && !game.to_act().is_empty()
                && game
                    .to_act()
                    .iter()
                    .all(|seat| self.table.bot_of(seat).is_some())
        })
    }

    /// Writes everything: the state, the game row (version + 1), changed seats, actions,
    /// events; finishes the game and updates statistics when the rules say it ended. Runs
    /// in the caller's transaction, under the game's lock.
    ///
    /// # Errors
    /// Database errors; a duplicate `(game_id, seq)` is a conflict.
    pub fn commit(mut self, conn: &mut AnyConnection) -> Result<Table, Error> {
        self.seal()?;
        self.write(conn)
    }

    /// Commits ([`Change::commit`]) as a use case's result: the game as written, `seat` for
    /// the caller's view, and how many actions this change applied.
    ///
    /// # Errors
    /// Those of [`Change::commit`].
    pub fn commit_for(
        self,
        conn: &mut AnyConnection,
        seat: Option<Seat>,
    ) -> Result<Committed, Error> {
        let before = self.actions_loaded;
        Ok(Committed::new(self.commit(conn)?, seat, before))
    }

    /// Commits without the game's lock and outside any transaction, when the whole change
    /// fits the one statement of [`store::commit_pg`] (PostgreSQL; no seat changed, the
    /// game not ended, at most one user notified, no webhook or push device): the statement writes only
    /// if the game is still at the version (and reminder) it was loaded with. `respond`
    /// builds the response body from the committed game; with `idempotency`
    /// (user, key, request fingerprint) the same statement stores it for retries.
    ///
    /// The statement also checks that `caller` is still neither banned nor deleted and that
    /// the notified user still has no webhook, which the load may not have seen. With
    /// `group` (the instance's writer) the write goes out in one statement with the other
    /// actions' writes of the moment, each guarded alike ([`GroupCommit::commit`]).
    ///
    /// `Ok(None)` when it did not commit, with nothing written: the change does not fit,
    /// or the game or an account changed meanwhile, or the key was stored meanwhile. The caller then
    /// runs the action again under the lock ([`Change::commit`]), which decides.
    ///
    /// # Errors
    /// Database errors, and `respond`'s.
    pub fn commit_unlocked(
        self,
        conn: &mut AnyConnection,
        respond: impl FnOnce(&Table) -> Result<String, Error>,
        idempotency: Option<(&str, &str, &str)>,
        caller: &str,
        group: Option<&GroupCommit>,
    ) -> Result<Option<(Table, String)>, Error> {
        let AnyConnection::Postgresql(pg) = conn else {
            return Ok(None);
        };
        let Some(Unlocked { commit, written }) = self.unlocked(respond, idempotency, caller)?
        else {
            return Ok(None);
        };
        let outcome = match group {
            Some(group) => group.commit(pg, commit),
            None => store::commit_pg(pg, &commit),
        };
        match outcome {
            Ok(true) => Ok(Some(written.done())),
            Ok(false)
            | Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _,
            )) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The one guarded statement of [`Self::commit_unlocked`], not yet written, and what the
    /// change is once it is; `None` when the change does not fit one such statement.
    ///
    /// # Errors
    /// `respond`'s, and a state that cannot be serialized.
    pub fn unlocked(
        mut self,
        respond: impl FnOnce(&Table) -> Result<String, Error>,
        idempotency: Option<(&str, &str, &str)>,
        caller: &str,
    ) -> Result<Option<Unlocked>, Error> {
        self.seal()?;
        if !self.seats_changed.is_empty() || self.finished.is_some() {
            return Ok(None);
        }
        let Some(recipient) = self.single_recipient_without_webhook() else {
            return Ok(None);
        };
        let body = respond(&self.table)?;
        let commit = self.pg_commit(
            recipient.clone(),
            idempotency.map(|(u, k, h)| (u.to_owned(), k.to_owned(), h.to_owned(), body.clone())),
            store::AccountGuard {
                caller: Some(caller.to_owned()),
                no_webhook: recipient.clone(),
            },
        );
        let mut table = self.table;
        table.notified_users = recipient.into_iter().collect();
        Ok(Some(Unlocked {
            commit,
            written: Written { table, body },
        }))
    }

    /// The writes of [`store::commit_pg`].
    fn pg_commit(
        &self,
        recipient: Option<String>,
        idempotency: Option<(String, String, String, String)>,
        guard: store::AccountGuard,
    ) -> store::PgCommit {
        store::PgCommit {
            row: self.table.row.clone(),
            loaded: self.loaded,
            actions: self.actions.clone(),
            events: self.events.clone(),
            notifications: recipient.map(|user| {
                let notes = self
                    .notifications
                    .iter()
                    .map(|p| (p.kind.as_str(), p.data.to_string()))
                    .collect();
                (user, notes)
            }),
            idempotency,
            now: self.now,
            guard,
        }
    }

    /// Computes the new row (version + 1, state, turn, deadline, result) and the
    /// notifications it causes; nothing is written yet.
    fn seal(&mut self) -> Result<(), Error> {
        let now = self.now;
        self.table.row.round_plays = encode_plays(&self.plays);
        let open_seats = Seat::ALL.iter().filter(|s| self.table.is_open(**s)).count() as i32;
        let row = &mut self.table.row;
        row.version += 1;
        row.updated_at = now;
        row.open_seats = open_seats;
        let mut newly_finished = None;
        if let Some(game) = &self.game {
            row.state = Some(serde_json::to_string(game).map_err(Error::internal)?);
            self.table.parsed = Some(game.clone());
            if row.status == GameStatus::Active {
                if let Some(result) = game.result() {
                    row.status = GameStatus::Finished;
                    row.finished_at = Some(now);
                    row.result = Some(serde_json::to_string(result).map_err(Error::internal)?);
                    row.to_act = String::new();
                    row.deadline = None;
                    newly_finished = Some(result.clone());
                } else {
                    row.to_act = encode_to_act(game.to_act());
                    let key = turn_key(game);
                    if key != self.turn_key_before || row.deadline.is_none() {
                        let timeout = i64::from(row.turn_timeout_seconds);
                        let deadline = now + chrono::Duration::seconds(timeout);
                        row.deadline = Some(deadline);
                        // The reminder goes out when 80 % of the turn has passed.
                        row.reminder_at = Some(now + chrono::Duration::milliseconds(timeout * 800));
                        // Every human who must act in this new situation hears of it once.
                        for seat in game.to_act().iter() {
                            let s = &self.table.seats[seat.index()];
                            if let (Some(user), None) = (&s.user_id, &s.bot_level) {
                                self.notifications.push(Pending {
                                    user_id: user.clone(),
                                    kind: Kind::YourTurn,
                                    game_id: Some(row.id.clone()),
                                    data: serde_json::json!({
                                        "seat": seat.number(),
                                        "deadline": deadline.and_utc(),
                                        "phase": game.phase().to_string(),
                                    }),
                                    silent: false,
                                });
                            }
                        }
                    }
                }
            }
        }
        if row.status != GameStatus::Active {
            row.to_act = String::new();
            row.deadline = None;
            row.reminder_at = None;
        }
        row.wake_at = row.next_wake(now);
        if self.bots_pending && row.status == GameStatus::Active {
            row.wake_at = Some(now);
        }
        if let Some(result) = &newly_finished {
            let winners: Vec<u8> = result.winners.iter().map(|s| s.number()).collect();
            for (seat, user) in self.humans() {
                self.notify(
                    &user,
                    Kind::GameFinished,
                    serde_json::json!({ "seat": seat.number(), "won": winners.contains(&seat.number()), "winners": winners }),
                );
            }
        }
        self.finished = newly_finished;
        Ok(())
    }

    /// Writes what [`Change::seal`] computed, under the game's lock.
    fn write(mut self, conn: &mut AnyConnection) -> Result<Table, Error> {
        let now = self.now;
        let newly_finished = self.finished.take();
        let mut fast = None;
        if let (AnyConnection::Postgresql(pg), Some(recipient)) =
            (&mut *conn, self.single_recipient_without_webhook())
        {
            let written = store::commit_pg(
                pg,
                &self.pg_commit(recipient.clone(), None, store::AccountGuard::default()),
            )
            .map_err(conflict_on_duplicate)?;
            if !written {
                // Impossible under the lock: the row is as loaded.
                return Err(Error::internal("the locked game changed"));
            }
            fast = Some(recipient);
        } else {
            store::save(conn, &self.table.row)?;
            store::append_actions(conn, &self.actions).map_err(conflict_on_duplicate)?;
            store::append_events(conn, &self.events).map_err(conflict_on_duplicate)?;
        }
        for seat in &self.seats_changed {
            store::save_seat(conn, &self.table.seats[seat.index()])?;
        }
        if let Some(result) = newly_finished {
            let rounds = self.game.as_ref().map_or(0, Game::round_number);
            record_statistics(conn, &self.table, &result, rounds)?;
        }
        self.table.notified_users = match fast {
            Some(recipient) => recipient.into_iter().collect(),
            None => {
                // The game's waiters on other instances are woken after the commit, by
                // whoever commits the change (`AppState::published`), as on the fast path.
                notifications::write(conn, std::mem::take(&mut self.notifications), now)?
            }
        };
        Ok(self.table)
    }

    /// When every pending notification is for this game and one seated user without a
    /// webhook (the common case: "your turn"), the writes fit in one statement on
    /// PostgreSQL: `Some(recipient)`, `Some(None)` when nobody is notified. Otherwise
    /// (several users, a webhook to enqueue) `None`: the general path writes them.
    fn single_recipient_without_webhook(&self) -> Option<Option<String>> {
        let Some(first) = self.notifications.first() else {
            return Some(None);
        };
        let user = &first.user_id;
        let simple = self.notifications.iter().all(|p| {
            &p.user_id == user && p.game_id.as_deref() == Some(self.table.row.id.as_str())
        }) && self.table.seats.iter().any(|s| {
            // A seat changed in this change may have a new user, whose webhook the load
            // did not read.
            s.user_id.as_ref() == Some(user)
                && !self
                    .seats_changed
                    .iter()
                    .any(|c| i32::from(c.number()) == s.seat)
        }) && !self.table.webhook_users.contains(user);
        simple.then(|| Some(user.clone()))
    }
}

fn conflict_on_duplicate(e: diesel::result::Error) -> Error {
    match e {
        diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        ) => Error::conflict(
            "version_conflict",
            "a concurrent action won; reload and retry",
        ),
        other => other.into(),
    }
}

/// Identifies "whose turn, in which situation": a new key means a new deadline. While
/// passing, the key stays the same until the exchange, so all seats share one deadline.
fn turn_key(game: &Game) -> Option<String> {
    match game.phase() {
        Phase::Passing => Some(format!("pass:{}", game.round_number())),
        Phase::Playing => Some(format!(
            "play:{}:{}:{}",
            game.round_number(),
            game.tricks_played(),
            game.turn().map_or(9, |s| s.number())
        )),
        Phase::Finished => None,
    }
}

/// Counts a finished game in its players' statistics and, when it is rated, in their
/// ratings (which lock the players' accounts in a fixed order first; see
/// [`ratings::game_finished`]). A game stays unrated unless every seat is a human's: a seat
/// that started as a bot has no one to rate.
fn record_statistics(
    conn: &mut AnyConnection,
    table: &Table,
    result: &crate::rules::GameResult,
    rounds: u32,
) -> Result<(), Error> {
    let players: Vec<(Seat, String)> = table
        .seats
        .iter()
        .filter_map(|s| Some((Seat::new(s.seat as u8)?, s.user_id.clone()?)))
        .collect();
    let at = table.row.finished_at.unwrap_or_else(db::now);
    if table.row.rated && players.len() == 4 {
        let mode = table.rules()?.mode;
        ratings::game_finished(conn, &table.row.id, mode, result, &players, at)?;
    } else {
        ratings::lock_players(conn, &players)?;
    }
    for standing in &result.ranking {
        if let Some(user) = &table.seats[standing.seat.index()].user_id {
            db::ratings::add_points(
                conn,
                user,
                i64::from(standing.total_score),
                i64::from(rounds),
            )?;
        }
    }
    for seat in &table.seats {
        let Some(user_id) = &seat.user_id else {
            continue;
        };
        let won = result
            .winners
            .iter()
            .any(|w| i32::from(w.number()) == seat.seat);
        db::users::record_result(conn, user_id, won)?;
    }
    Ok(())
}
