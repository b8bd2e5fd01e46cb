//! The rating service (issue #19): Weng-Lin ratings per mode, updated in the transaction that
//! finishes a rated game; the boards, profiles and histories read from them; an
//! administrator's reset; and the replay `leekha verify` runs.
//!
//! Who is rated: every seat of a rated game is held by a human from the start (a seat that
//! starts as a bot makes the game unrated). A seat a bot took over later (resign, timeouts,
//! away, an administrator) is rated with the seat's result for the human who held it, so
//! that walking away from a losing game never protects a rating.
//!
//! May import: `db`, `rules`, `audit`, `error`. Never `games` or `http`.

pub mod math;

use std::collections::HashMap;

use chrono::NaiveDateTime;
use diesel::Connection;

use crate::audit::{self, Entry};
use crate::db::ratings::{self as store, HistoryRow, RatingRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::rules::{GameResult, Mode, Seat};

pub use math::Rating;

/// Below this many rated games a player's rating is `provisional`: σ is still large, and the
/// boards say so.
pub const PROVISIONAL_GAMES: i32 = 10;

/// The stored name of a mode.
#[must_use]
pub fn mode_key(mode: Mode) -> &'static str {
    match mode {
        Mode::Solo => "solo",
        Mode::Partnership => "partnership",
    }
}

/// Both modes, in the order profiles list them.
pub const MODES: [Mode; 2] = [Mode::Solo, Mode::Partnership];

/// A player's rating as shown: the estimate, its ordinal and the games behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// μ and σ.
    pub rating: Rating,
    /// Rated games since the last reset.
    pub games: i32,
}

impl Standing {
    /// A player with no rated game yet.
    #[must_use]
    pub fn new_player() -> Self {
        Self {
            rating: Rating::initial(),
            games: 0,
        }
    }

    /// Whether the rating rests on too few games to mean much yet.
    #[must_use]
    pub fn provisional(&self) -> bool {
        self.games < PROVISIONAL_GAMES
    }

    fn of(row: &RatingRow) -> Self {
        Self {
            rating: Rating {
                mu: row.mu,
                sigma: row.sigma,
            },
            games: row.games,
        }
    }
}

/// The new ratings of a finished game's players, from their ratings before it. Solo: four
/// players placed by the result's ranking (equal totals share a place, and count as a draw
/// between them); partnership: the two teams, placed 1 and 2. Pure: the finishing
/// transaction and `leekha verify` both call it.
#[must_use]
pub fn rate(
    mode: Mode,
    result: &GameResult,
    players: &[(Seat, String)],
    before: &HashMap<String, Rating>,
) -> Vec<(String, Rating)> {
    let rank_of = |seat: Seat| {
        result
            .ranking
            .iter()
            .find(|s| s.seat == seat)
            .map_or(4, |s| s.rank)
    };
    // Solo: one team per seat; partnership: one per side of the table.
    let mut teams: Vec<(u8, Vec<&str>, u32)> = Vec::new();
    for (seat, user) in players {
        let key = match mode {
            Mode::Solo => seat.number(),
            Mode::Partnership => seat.number() % 2,
        };
        match teams.iter_mut().find(|t| t.0 == key) {
            Some(team) => team.1.push(user),
            None => teams.push((key, vec![user], rank_of(*seat))),
        }
    }
    let input: Vec<(Vec<Rating>, u32)> = teams
        .iter()
        .map(|(_, users, rank)| {
            let ratings = users
                .iter()
                .map(|u| before.get(*u).copied().unwrap_or_else(Rating::initial))
                .collect();
            (ratings, *rank)
        })
        .collect();
    let output = math::update(&input);
    teams
        .iter()
        .zip(output)
        .flat_map(|((_, users, _), ratings)| {
            users
                .iter()
                .map(|u| (*u).to_owned())
                .zip(ratings)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Rates a rated game that just finished, in the finishing transaction (under the game's
/// lock): every player's rating row and a history row per player. The players' accounts are
/// locked first, in id order, so that two games finishing at once with a player in common
/// neither lose an update nor deadlock; then the mode's board ([`store::lock_board`]), so that
/// two games finishing at once without a player in common do not deadlock on the board's
/// counts.
///
/// # Errors
/// Database errors.
pub fn game_finished(
    conn: &mut AnyConnection,
    game_id: &str,
    mode: Mode,
    result: &GameResult,
    players: &[(Seat, String)],
    at: NaiveDateTime,
) -> Result<(), Error> {
    lock_players(conn, players)?;
    let key = mode_key(mode);
    store::lock_board(conn, key)?;
    let at = store::history_time(conn, key, at)?;
    let ids: Vec<String> = players.iter().map(|(_, u)| u.clone()).collect();
    let stored: HashMap<String, RatingRow> = store::of_users(conn, key, &ids)?
        .into_iter()
        .map(|r| (r.user_id.clone(), r))
        .collect();
    let unlisted = store::unlisted_among(conn, &ids)?;
    let before: HashMap<String, Rating> = stored
        .iter()
        .map(|(u, r)| (u.clone(), Standing::of(r).rating))
        .collect();
    let mut history = Vec::with_capacity(players.len());
    for (user, rating) in rate(mode, result, players, &before) {
        let games = stored.get(&user).map_or(0, |r| r.games) + 1;
        let row = RatingRow {
            user_id: user.clone(),
            mode: key.to_owned(),
            mu: rating.mu,
            sigma: rating.sigma,
            ordinal: rating.ordinal(),
            games,
            listed: !unlisted.contains(&user),
            updated_at: at,
        };
        store::save(conn, &row)?;
        history.push(HistoryRow {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: user,
            mode: key.to_owned(),
            game_id: Some(game_id.to_owned()),
            at,
            mu: rating.mu,
            sigma: rating.sigma,
            ordinal: rating.ordinal(),
            games,
        });
    }
    store::append_history(conn, &history)?;
    Ok(())
}

/// Takes the players' account locks in id order (the statistics update that follows then
/// writes rows this transaction already holds).
///
/// # Errors
/// Database errors.
pub fn lock_players(conn: &mut AnyConnection, players: &[(Seat, String)]) -> Result<(), Error> {
    let ids = players.iter().map(|(_, u)| u.as_str());
    db::admin::lock_in_id_order(conn, ids, db::admin::Accounts::Any)?;
    Ok(())
}

/// A user's rating in each mode (a new player's where they have none).
///
/// # Errors
/// Database errors.
pub fn standings(conn: &mut AnyConnection, user_id: &str) -> Result<[Standing; 2], Error> {
    let rows = store::of_user(conn, user_id)?;
    Ok(MODES.map(|mode| {
        rows.iter()
            .find(|r| r.mode == mode_key(mode))
            .map_or_else(Standing::new_player, Standing::of)
    }))
}

/// One row of a board.
#[derive(Debug, Clone)]
pub struct BoardEntry {
    /// 1 is best; players with equal ordinals share a rank (1, 2, 2, 4).
    pub rank: i64,
    /// The player.
    pub user_id: String,
    /// Their username.
    pub username: String,
    /// Their rating.
    pub standing: Standing,
}

/// A page of a board and where the next one starts.
#[derive(Debug, Clone)]
pub struct BoardPage {
    /// The rows, in board order.
    pub items: Vec<BoardEntry>,
    /// The board position after the last row, when more follow.
    pub next: Option<(f64, String)>,
}

/// Where a board page starts.
#[derive(Debug, Clone)]
pub enum PageStart {
    /// At the top, or after this board position `(ordinal, user_id)`.
    After(Option<(f64, String)>),
    /// Around this user: up to half the page above them, the rest from them on.
    Around(String),
}

/// A page of the board of `mode`: listed players (not banned, not deleted) by ordinal
/// descending, ties by user id, each with its rank.
///
/// # Errors
/// 404 `not_rated` for `Around` a user without a listed rating in the mode; database errors.
pub fn board(
    conn: &mut AnyConnection,
    mode: Mode,
    start: PageStart,
    limit: i64,
) -> Result<BoardPage, Error> {
    let key = mode_key(mode);
    let rows = match start {
        PageStart::After(after) => {
            let after = after.as_ref().map(|(o, u)| (*o, u.as_str()));
            store::board_after(conn, key, after, limit + 1)?
        }
        PageStart::Around(user_id) => {
            let (me, name) = store::board_row(conn, key, &user_id)?.ok_or_else(|| {
                Error::not_found("you have no rating on this board yet: finish a rated game")
                    .with_code("not_rated")
            })?;
            let above = (limit / 2).max(0);
            let mut rows = store::board_before(conn, key, (me.ordinal, &user_id), above)?;
            rows.reverse();
            let rest = limit + 1 - rows.len() as i64;
            let mut tail = store::board_after(conn, key, Some((me.ordinal, &user_id)), rest - 1)?;
            rows.push((me, name));
            rows.append(&mut tail);
            rows
        }
    };
    let more = rows.len() as i64 > limit;
    let mut rows = rows;
    rows.truncate(limit as usize);
    let items = ranked(conn, key, rows)?;
    let next = if more {
        items
            .last()
            .map(|e| (e.standing.rating.ordinal(), e.user_id.clone()))
    } else {
        None
    };
    Ok(BoardPage { items, next })
}

/// Ranks consecutive board rows: the first from counts, the others from their neighbours
/// (equal ordinals share the rank; otherwise the rank is the position on the board).
fn ranked(
    conn: &mut AnyConnection,
    key: &str,
    rows: Vec<store::BoardRow>,
) -> Result<Vec<BoardEntry>, Error> {
    let Some((first, _)) = rows.first() else {
        return Ok(Vec::new());
    };
    let (above, tied_before) = store::standing_of(conn, key, first.ordinal, &first.user_id)?;
    let mut items: Vec<BoardEntry> = Vec::with_capacity(rows.len());
    for (i, (row, username)) in rows.into_iter().enumerate() {
        let rank = match items.last() {
            None => above + 1,
            Some(prev) if prev.standing.rating.ordinal() == row.ordinal => prev.rank,
            Some(_) => above + tied_before + i as i64 + 1,
        };
        items.push(BoardEntry {
            rank,
            user_id: row.user_id.clone(),
            username,
            standing: Standing::of(&row),
        });
    }
    Ok(items)
}

/// One point of a user's history.
pub type HistoryPoint = HistoryRow;

/// A user's rating history in `mode`, newest first, after a keyset `(at, id)`.
///
/// # Errors
/// Database errors.
pub fn history(
    conn: &mut AnyConnection,
    user_id: &str,
    mode: Mode,
    after: Option<(NaiveDateTime, String)>,
    limit: i64,
) -> Result<Vec<HistoryPoint>, Error> {
    Ok(store::history(conn, user_id, mode_key(mode), after, limit)?)
}

/// Resets a user's rating in the given modes (both when `None`) to a new player's, audited,
/// with a history row (without a game) that `leekha verify` replays as a reset.
///
/// # Errors
/// 404 for no live account; database errors.
pub fn reset(
    conn: &mut AnyConnection,
    admin_id: &str,
    target: &str,
    mode: Option<Mode>,
    reason: Option<&str>,
) -> Result<[Standing; 2], Error> {
    conn.transaction(|conn| {
        if !db::admin::lock_user(conn, target)? {
            return Err(Error::not_found("no such user"));
        }
        db::users::by_id(conn, target)?
            .filter(|u| u.deleted_at.is_none())
            .ok_or_else(|| Error::not_found("no such user"))?;
        let now = db::now();
        let before = standings(conn, target)?;
        let modes: Vec<Mode> = match mode {
            Some(m) => vec![m],
            None => MODES.to_vec(),
        };
        // In the order of MODES, as every writer of ratings takes them (see lock_board).
        for m in &modes {
            store::lock_board(conn, mode_key(*m))?;
        }
        let fresh = Rating::initial();
        let mut details = serde_json::Map::new();
        for m in &modes {
            let key = mode_key(*m);
            let now = store::history_time(conn, key, now)?;
            let old = before[MODES.iter().position(|x| x == m).unwrap_or(0)];
            details.insert(
                key.to_owned(),
                serde_json::json!({
                    "mu": old.rating.mu,
                    "sigma": old.rating.sigma,
                    "games": old.games,
                }),
            );
            store::save(
                conn,
                &RatingRow {
                    user_id: target.to_owned(),
                    mode: key.to_owned(),
                    mu: fresh.mu,
                    sigma: fresh.sigma,
                    ordinal: fresh.ordinal(),
                    games: 0,
                    // Like a new player's: on no board until the next rated game.
                    listed: false,
                    updated_at: now,
                },
            )?;
            store::append_history(
                conn,
                &[HistoryRow {
                    id: uuid::Uuid::new_v4().to_string(),
                    user_id: target.to_owned(),
                    mode: key.to_owned(),
                    game_id: None,
                    at: now,
                    mu: fresh.mu,
                    sigma: fresh.sigma,
                    ordinal: fresh.ordinal(),
                    games: 0,
                }],
            )?;
        }
        audit::record(
            conn,
            admin_id,
            Entry {
                action: "reset_rating",
                target_type: "user",
                target_id: target,
                reason,
                details: serde_json::Value::Object(details),
            },
        )?;
        standings(conn, target)
    })
}

/// A disagreement between the stored ratings and their replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discrepancy {
    /// The game (or `rating:<user>:<mode>` for a final rating).
    pub subject: String,
    /// What disagrees.
    pub reason: String,
}

/// A finished rated game as the replay needs it.
#[derive(Debug, Clone)]
pub struct RatedGame {
    /// Its mode.
    pub mode: Mode,
    /// Its result.
    pub result: GameResult,
    /// The seated humans.
    pub players: Vec<(Seat, String)>,
}

/// Replays every rating from the history's order: each rated game's changes must be what
/// [`rate`] makes of the players' ratings before it, each reset must give a new player's
/// rating, every finished rated game must appear, the stored ratings must be where the
/// replay ends, and the boards' rank counters must match the listed players. `load` reads a
/// finished rated game.
///
/// # Errors
/// Database errors, and `load`'s.
pub fn verify(
    conn: &mut AnyConnection,
    mut load: impl FnMut(&mut AnyConnection, &str) -> Result<Option<RatedGame>, Error>,
) -> Result<(usize, Vec<Discrepancy>), Error> {
    const EPS: f64 = 1e-9;
    let close = |a: f64, b: f64| (a - b).abs() <= EPS * a.abs().max(1.0);
    let mut problems = Vec::new();
    let history = store::all_history(conn)?;
    let mut state: HashMap<(String, String), Standing> = HashMap::new();
    let mut seen_games: Vec<String> = Vec::new();
    let mut i = 0;
    while i < history.len() {
        let row = &history[i];
        let Some(game_id) = row.game_id.clone() else {
            // A reset.
            let fresh = Standing::new_player();
            if !close(row.mu, fresh.rating.mu) || !close(row.sigma, fresh.rating.sigma) {
                problems.push(Discrepancy {
                    subject: format!("rating:{}:{}", row.user_id, row.mode),
                    reason: "a reset does not give a new player's rating".into(),
                });
            }
            state.insert((row.user_id.clone(), row.mode.clone()), fresh);
            i += 1;
            continue;
        };
        let mut j = i;
        while j < history.len() && history[j].game_id.as_deref() == Some(game_id.as_str()) {
            j += 1;
        }
        let rows = &history[i..j];
        i = j;
        seen_games.push(game_id.clone());
        let Some(game) = load(conn, &game_id)? else {
            problems.push(Discrepancy {
                subject: game_id,
                reason: "rating history names a game that is not a finished rated game".into(),
            });
            continue;
        };
        let key = mode_key(game.mode);
        let before: HashMap<String, Rating> = game
            .players
            .iter()
            .filter_map(|(_, u)| {
                state
                    .get(&(u.clone(), key.to_owned()))
                    .map(|s| (u.clone(), s.rating))
            })
            .collect();
        let after = rate(game.mode, &game.result, &game.players, &before);
        if after.len() != rows.len() {
            problems.push(Discrepancy {
                subject: game_id.clone(),
                reason: format!("{} players rated, {} history rows", after.len(), rows.len()),
            });
        }
        for (user, rating) in after {
            let games = state
                .get(&(user.clone(), key.to_owned()))
                .map_or(0, |s| s.games)
                + 1;
            match rows.iter().find(|r| r.user_id == user) {
                Some(r)
                    if r.mode == key
                        && close(r.mu, rating.mu)
                        && close(r.sigma, rating.sigma)
                        && r.games == games => {}
                _ => problems.push(Discrepancy {
                    subject: game_id.clone(),
                    reason: format!("the rating change of {user} does not replay"),
                }),
            }
            state.insert((user, key.to_owned()), Standing { rating, games });
        }
    }
    let mut rated = store::finished_rated_ids(conn)?;
    rated.retain(|id| !seen_games.contains(id));
    for id in rated {
        problems.push(Discrepancy {
            subject: id,
            reason: "a finished rated game changed no rating".into(),
        });
    }
    let stored = store::all(conn)?;
    for row in &stored {
        let replayed = state.get(&(row.user_id.clone(), row.mode.clone()));
        let ok = replayed.is_some_and(|s| {
            close(s.rating.mu, row.mu) && close(s.rating.sigma, row.sigma) && s.games == row.games
        });
        if !ok {
            problems.push(Discrepancy {
                subject: format!("rating:{}:{}", row.user_id, row.mode),
                reason: "the stored rating is not where its history ends".into(),
            });
        }
    }
    // The rank counters the triggers keep must match a recount of the listed players.
    let mut counted: std::collections::BTreeMap<(String, i32), i32> = Default::default();
    for row in stored.iter().filter(|r| r.listed) {
        *counted
            .entry((row.mode.clone(), store::bucket(row.ordinal)))
            .or_default() += 1;
    }
    let kept: std::collections::BTreeMap<(String, i32), i32> = store::buckets(conn)?
        .into_iter()
        .map(|(mode, bucket, players)| ((mode, bucket), players))
        .collect();
    if counted != kept {
        problems.push(Discrepancy {
            subject: "rating_buckets".into(),
            reason: "the board's rank counters differ from a recount of the listed players".into(),
        });
    }
    if stored.len() != state.len() {
        problems.push(Discrepancy {
            subject: "ratings".into(),
            reason: format!("{} stored ratings, {} replayed", stored.len(), state.len()),
        });
    }
    Ok((seen_games.len(), problems))
}
