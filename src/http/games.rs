//! Games over HTTP: create, lobby, join, leave, view, act, events, resign, replay.
//!
//! Every change runs in one transaction that first takes the game's lock, so concurrent
//! requests on one game are applied one after the other, each against the latest state.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use base64::Engine;
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::Connection;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};

use crate::app::AppState;
use crate::bots::BotLevel;
use crate::db::games::{self as store, GameRow, IdempotentRow, SeatRow};
use crate::db::{self, AnyConnection};
use crate::error::Error;
use crate::games::events::{ServerEvent, project};
use crate::games::{Actor, Change, GameStatus, HotTables, Table};
use crate::http::extract::{AuthUser, Caller};
use crate::http::game_views::{CardCode, GameView, PlayerRef, ResultView, RulesView, game_view};
use crate::http::problem::{ApiError, Problem};
use crate::notifications::Kind;
use crate::rules::{Action, Card, RuleOverrides, Seat};

/// Registers the routes of this module.
pub fn routes(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
    cfg.service(create_game)
        .service(lobby)
        .service(my_games)
        .service(get_game)
        .service(join)
        .service(leave)
        .service(act)
        .service(events)
        .service(resign)
        .service(reclaim)
        .service(hint)
        .service(replay);
}

const MAX_WAITING_GAMES_PER_USER: i64 = 20;

// ----- requests ----------------------------------------------------------------------------

/// Rule options when creating a game: a preset and/or single options (rule book §8).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RulesInput {
    /// `classic` (all defaults) or `partnership` (partnership mode, alternate passing).
    #[schema(example = "classic")]
    pub preset: Option<String>,
    /// `solo` or `partnership`.
    pub mode: Option<String>,
    /// 1..=1000 (51, 101, 151 are usual; default 101).
    pub target_score: Option<i64>,
    /// `right`, `left`, `alternate` or `none`.
    pub pass_direction: Option<String>,
    /// `on` or `off`.
    pub pass_restriction: Option<String>,
    /// `both`, `queen_only` or `off`.
    pub forced_leekha: Option<String>,
    /// `off` or `on`.
    pub talbees: Option<String>,
    /// `queen_of_spades_taker` or `rotate_right`.
    pub dealer_rotation: Option<String>,
    /// `co_winners` or `sudden_death`.
    pub solo_tie: Option<String>,
    /// `busted_team_loses` or `team_sum_reaches_target`.
    pub team_loss: Option<String>,
}

/// One seat at creation.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatRequest {
    /// `me` (the creator; exactly one), `open`, `invite` (needs `username`) or `bot`.
    #[schema(example = "open")]
    pub kind: String,
    /// For `invite`: who.
    pub username: Option<String>,
    /// For `bot`: `random`, `heuristic` (default) or `expert`.
    pub level: Option<BotLevel>,
}

/// A new game. Every field is optional: the default is the creator at seat 0, three open
/// seats, `classic` rules, public, 24 h turns.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// Rule preset and options.
    pub rules: Option<RulesInput>,
    /// Exactly 4 seats, in seat order.
    pub seats: Option<Vec<SeatRequest>>,
    /// `public` (listed in the lobby) or `private` (only invited users see it).
    pub visibility: Option<String>,
    /// 5..=2592000 (30 days); default 86400.
    pub turn_timeout_seconds: Option<i64>,
}

/// Which seat to take.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinRequest {
    /// A specific open seat; default: the seat reserved for the caller, else the first open.
    pub seat: Option<u8>,
}

/// An action: `{type: "pass", cards: [3 codes]}` or `{type: "play", card}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    /// `pass` or `play`.
    #[serde(rename = "type")]
    #[schema(example = "play")]
    pub kind: String,
    /// For a pass: exactly 3 cards of the hand.
    pub cards: Option<Vec<CardCode>>,
    /// For a play: the card.
    pub card: Option<CardCode>,
    /// Refuse with 409 `version_conflict` unless the game is at this version (same as the
    /// `If-Match` header).
    pub expected_version: Option<i64>,
}

/// Pagination.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only `waiting` for the lobby; for `me/games`: `active`, `waiting`, `finished` or
    /// `aborted`, several separated by commas (default `active,waiting`).
    pub status: Option<String>,
    /// 1..=200, default 50.
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Which events.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Events with `seq` greater than this (default 0: from the start).
    pub after: Option<i64>,
    /// Long-poll: wait up to this many seconds (0..=30) for an event when there is none yet.
    pub wait: Option<u64>,
    /// 1..=500, default 200.
    pub limit: Option<i64>,
}

// ----- responses ---------------------------------------------------------------------------

/// A page of the lobby.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LobbyPage {
    /// Public games waiting for players, oldest first.
    pub items: Vec<GameView>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// One of the caller's games.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MyGame {
    /// Game id.
    pub id: uuid::Uuid,
    /// Status.
    pub status: GameStatus,
    /// Version.
    pub version: i64,
    /// The caller's seat, or the seat reserved for them.
    pub my_seat: u8,
    /// The caller is invited and has not joined yet.
    pub invited: bool,
    /// The caller must act now.
    pub my_turn: bool,
    /// When the current turn times out.
    pub deadline: Option<DateTime<Utc>>,
    /// Who sits where.
    pub seats: Vec<SeatBrief>,
    /// `solo` or `partnership`.
    pub mode: String,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// A seat in a list item.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SeatBrief {
    /// 0..=3.
    pub seat: u8,
    /// The human, if any.
    pub player: Option<PlayerRef>,
    /// The bot acting, if any.
    pub bot: Option<BotLevel>,
    /// Open to anyone.
    pub open: bool,
}

/// A page of the caller's games.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct MyGamesPage {
    /// Most urgent first: the caller's turn, then the nearest deadline, then the latest change.
    pub items: Vec<MyGame>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// One event as the caller may see it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// Contiguous per game, from 1.
    pub seq: i64,
    /// `game_started`, `round_dealt`, `pass_committed`, `passes_exchanged`, `card_played`,
    /// `trick_won`, `round_scored`, `game_finished`, `seat_changed`, `turn_timed_out`,
    /// `game_aborted`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// The event's fields. Private parts (`hand` of `round_dealt`, `cards` of
    /// `pass_committed`, `received` of `passes_exchanged`) appear only in their owner's copy.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

/// A page of events.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventsPage {
    /// Events in order.
    pub events: Vec<EventView>,
    /// The last `seq` of the game so far: pass it as `after` next time.
    pub last_seq: i64,
}

/// A deal, revealed after the game.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayRound {
    /// Round number.
    pub round: u32,
    /// Dealer.
    pub dealer: u8,
    /// The four hands as dealt, by seat.
    pub hands: Vec<Vec<CardCode>>,
}

/// An action in a replay.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayAction {
    /// 1, 2, …
    pub seq: i64,
    /// The acting seat.
    pub seat: u8,
    /// `pass` or `play`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The passed cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardCode>>,
    /// The played card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<CardCode>,
    /// `player`, `bot` or `timeout`.
    pub actor: String,
    /// When.
    pub created_at: DateTime<Utc>,
}

/// Everything about a finished game: seed, every deal, every action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReplayView {
    /// Game id.
    pub id: uuid::Uuid,
    /// Rules.
    pub rules: RulesView,
    /// The deal seed (64 hex digits): with the rules and actions it reproduces the game.
    pub seed: String,
    /// Every deal.
    pub rounds: Vec<ReplayRound>,
    /// Every action, in order.
    pub actions: Vec<ReplayAction>,
    /// How it ended (null if aborted).
    pub result: Option<ResultView>,
}

// ----- helpers -----------------------------------------------------------------------------

fn parse_card(code: &CardCode) -> Result<Card, Error> {
    code.0.parse::<Card>().map_err(|e| {
        Error::new(
            crate::error::Kind::BadRequest,
            "invalid_card",
            e.to_string(),
        )
    })
}

pub(crate) fn limit(raw: Option<i64>, default: i64, max: i64) -> Result<i64, Error> {
    match raw {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(Error::validation(format!(
            "limit must be 1..={max}, got {n}"
        ))),
    }
}

pub(crate) fn encode_cursor(raw: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

pub(crate) fn decode_cursor(cursor: &str) -> Result<String, Error> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| Error::validation("cursor is not valid"))
}

fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// Parses `If-Match` (`"12"`, `W/"12"` or `12`).
fn if_match(req: &HttpRequest) -> Result<Option<i64>, Error> {
    let Some(value) = req.headers().get(header::IF_MATCH) else {
        return Ok(None);
    };
    let raw = value.to_str().unwrap_or("").trim();
    let raw = raw.strip_prefix("W/").unwrap_or(raw).trim_matches('"');
    raw.parse()
        .map(Some)
        .map_err(|_| Error::bad_request("If-Match must be a game version, e.g. \"12\""))
}

fn viewer_of(table: &Table, user_id: &str) -> Result<Option<Seat>, Error> {
    if !table.visible_to(user_id) {
        return Err(Error::not_found("no such game"));
    }
    Ok(table.seat_of(user_id))
}

fn json_with_etag(view: &GameView) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::ETAG, etag(view.version)))
        .json(view)
}

/// Runs `f` in one transaction that starts by taking the game's lock and loading it
/// ([`Table::load_locked`]: one query on PostgreSQL).
pub(crate) fn locked_table<T>(
    conn: &mut AnyConnection,
    id: &str,
    f: impl FnOnce(&mut AnyConnection, Table) -> Result<T, Error>,
) -> Result<T, Error> {
    conn.transaction(|conn| {
        let table = Table::load_locked(conn, id)?;
        f(conn, table)
    })
}

pub(crate) fn parse_body<T: for<'de> Deserialize<'de> + Default>(
    body: &web::Bytes,
) -> Result<T, Error> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        if e.is_data() {
            Error::validation(e.to_string())
        } else {
            Error::bad_request(format!("malformed JSON: {e}"))
        }
    })
}

// ----- handlers ----------------------------------------------------------------------------

/// Creates a game. It starts (the cards are dealt) as soon as all four seats are taken —
/// at once if the other three are bots.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    request_body(content = CreateGame, description = "Optional; an empty body gives the defaults"),
    responses(
        (status = 201, description = "Created", body = GameView),
        (status = 400, description = "Invalid rules, seats, visibility or timeout", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Too many waiting games (`too_many_games`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games")]
pub async fn create_game(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let req: CreateGame = parse_body(&body)?;
    let rules_json =
        serde_json::to_value(req.rules.unwrap_or_default()).map_err(Error::internal)?;
    let overrides: RuleOverrides = serde_json::from_value(strip_nulls(rules_json))
        .map_err(|e| Error::validation(format!("rules: {e}")))?;
    let rules = overrides
        .resolve()
        .map_err(|e| Error::validation(e.to_string()).with_code("invalid_rules"))?;
    let visibility = match req.visibility.as_deref() {
        None | Some("public") => "public",
        Some("private") => "private",
        Some(other) => {
            return Err(Error::validation(format!(
                "visibility must be public or private, not {other:?}"
            ))
            .into());
        }
    };
    let timeout = req.turn_timeout_seconds.unwrap_or(86_400);
    if !(5..=2_592_000).contains(&timeout) {
        return Err(Error::validation(format!(
            "turn_timeout_seconds must be 5..=2592000, got {timeout}"
        ))
        .into());
    }
    let seats = req.seats.unwrap_or_else(|| {
        let open = SeatRequest {
            kind: "open".into(),
            username: None,
            level: None,
        };
        vec![
            SeatRequest {
                kind: "me".into(),
                username: None,
                level: None,
            },
            open.clone(),
            open.clone(),
            open,
        ]
    });
    if seats.len() != 4 {
        return Err(Error::validation(format!(
            "seats must list exactly 4 seats, got {}",
            seats.len()
        ))
        .into());
    }
    if seats.iter().filter(|s| s.kind == "me").count() != 1 {
        return Err(Error::validation("exactly one seat must be of kind \"me\"").into());
    }
    for s in &seats {
        match s.kind.as_str() {
            "me" | "open" | "bot" | "invite" => {}
            other => {
                return Err(Error::validation(format!(
                    "seat kind must be me, open, invite or bot, not {other:?}"
                ))
                .into());
            }
        }
        if s.kind == "invite" && s.username.is_none() {
            return Err(Error::validation("an invite seat needs a username").into());
        }
        if s.kind != "invite" && s.username.is_some() {
            return Err(Error::validation("only an invite seat takes a username").into());
        }
        if s.kind != "bot" && s.level.is_some() {
            return Err(Error::validation("only a bot seat takes a level").into());
        }
    }
    let rules_text = serde_json::to_string(&rules).map_err(Error::internal)?;
    let creator = user.id().to_owned();
    let st = state.clone();
    let view = state
        .db
        .run(move |conn| {
            conn.transaction(|conn| {
                use crate::db::schema::games as g;
                use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
                // The creator's row lock first: it serializes this user's creations, so the
                // count below stays true until the insert (and on SQLite it takes the write
                // lock before any read).
                crate::db::admin::lock_user(conn, &creator)?;
                let waiting: i64 = g::table
                    .filter(g::created_by.eq(&creator))
                    .filter(g::status.eq("waiting"))
                    .count()
                    .get_result(conn)?;
                if waiting >= MAX_WAITING_GAMES_PER_USER {
                    return Err(Error::conflict(
                        "too_many_games",
                        format!("you already have {waiting} games waiting for players"),
                    ));
                }
                let id = uuid::Uuid::new_v4().to_string();
                let now = db::now();
                let mut seat_rows = Vec::with_capacity(4);
                let mut invited = Vec::new();
                for (i, s) in seats.iter().enumerate() {
                    let mut row = SeatRow {
                        game_id: id.clone(),
                        seat: i as i32,
                        user_id: None,
                        invited_user_id: None,
                        bot_level: None,
                        bot_reason: None,
                        timeouts_in_row: 0,
                    };
                    match s.kind.as_str() {
                        "me" => row.user_id = Some(creator.clone()),
                        "bot" => {
                            row.bot_level =
                                Some(s.level.unwrap_or(BotLevel::Heuristic).as_str().to_owned());
                            row.bot_reason = Some("seat".into());
                        }
                        "invite" => {
                            let name = s.username.as_deref().unwrap_or_default();
                            let target =
                                crate::db::users::by_username(conn, &name.to_ascii_lowercase())?
                                    .ok_or_else(|| {
                                        Error::validation(format!(
                                            "no user named {name:?} to invite"
                                        ))
                                    })?;
                            if target.id == creator {
                                return Err(Error::validation("you cannot invite yourself"));
                            }
                            if invited.contains(&target.id) {
                                return Err(Error::validation(format!(
                                    "{name:?} is invited twice"
                                )));
                            }
                            invited.push(target.id.clone());
                            row.invited_user_id = Some(target.id);
                        }
                        _ => {}
                    }
                    seat_rows.push(row);
                }
                let row = GameRow {
                    id: id.clone(),
                    status: GameStatus::Waiting.as_str().into(),
                    visibility: visibility.into(),
                    rules: rules_text,
                    version: 0,
                    created_by: creator.clone(),
                    turn_timeout_seconds: timeout as i32,
                    seed: None,
                    state: None,
                    to_act: String::new(),
                    deadline: None,
                    open_seats: 0,
                    action_count: 0,
                    event_count: 0,
                    result: None,
                    abort_reason: None,
                    created_at: now,
                    updated_at: now,
                    started_at: None,
                    finished_at: None,
                    reminder_at: None,
                    round_plays: String::new(),
                    wake_at: None,
                };
                store::insert(conn, &row, &seat_rows)?;
                let table = Table::load(conn, &id)?;
                let full = table
                    .seats
                    .iter()
                    .all(|s| s.user_id.is_some() || s.bot_level.is_some());
                let mut change = Change::new(table)?;
                for (seat, user) in invited_seats(&change.table) {
                    let by = change.table.name(&creator).unwrap_or_default().to_owned();
                    change.notify(
                        &user,
                        Kind::Invited,
                        serde_json::json!({ "seat": seat, "by": by }),
                    );
                }
                if full {
                    change.start()?;
                }
                let table = change.commit(conn)?;
                let seat = table.seat_of(&creator);
                Ok((game_view(&table, seat)?, table.notified_users))
            })
        })
        .await?;
    let (view, notified) = view;
    st.announce(&view.id.to_string(), &notified);
    Ok(HttpResponse::Created()
        .insert_header((header::ETAG, etag(view.version)))
        .json(view))
}

fn invited_seats(table: &Table) -> Vec<(u8, String)> {
    table
        .seats
        .iter()
        .filter_map(|s| Some((s.seat as u8, s.invited_user_id.clone()?)))
        .collect()
}

fn strip_nulls(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            serde_json::Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
        }
        other => other,
    }
}

/// The lobby: public games with open seats, oldest first.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "A page of waiting games", body = LobbyPage),
        (status = 400, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/games")]
pub async fn lobby(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    if let Some(status) = query.status.as_deref()
        && status != "waiting"
    {
        return Err(Error::validation("the lobby lists waiting games only: status=waiting").into());
    }
    let limit = limit(query.limit, 50, 200)?;
    let after = match query.cursor.as_deref() {
        None => None,
        Some(c) => {
            let raw = decode_cursor(c)?;
            let (at, id) = raw
                .split_once('|')
                .ok_or_else(|| Error::validation("cursor is not valid"))?;
            let at = NaiveDateTime::parse_from_str(at, "%Y-%m-%dT%H:%M:%S%.f")
                .map_err(|_| Error::validation("cursor is not valid"))?;
            Some((at, id.to_owned()))
        }
    };
    let _ = user;
    let page = state
        .db
        .run(move |conn| {
            let rows = store::lobby(conn, after, limit + 1)?;
            let more = rows.len() as i64 > limit;
            let mut items = Vec::new();
            let mut last = None;
            for row in rows.into_iter().take(limit as usize) {
                last = Some(format!(
                    "{}|{}",
                    row.created_at.format("%Y-%m-%dT%H:%M:%S%.f"),
                    row.id
                ));
                let table = Table::load(conn, &row.id)?;
                items.push(game_view(&table, None)?);
            }
            Ok(LobbyPage {
                items,
                next_cursor: if more {
                    last.map(|l| encode_cursor(&l))
                } else {
                    None
                },
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// The caller's games, most urgent first.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "A page of the caller's games", body = MyGamesPage),
        (status = 400, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/me/games")]
pub async fn my_games(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let statuses: Vec<&'static str> = match query.status.as_deref() {
        None | Some("") => vec!["active", "waiting"],
        Some(raw) => raw
            .split(',')
            .map(|s| {
                GameStatus::parse(s.trim())
                    .map(GameStatus::as_str)
                    .ok_or_else(|| {
                        Error::validation(format!(
                            "status must be active, waiting, finished or aborted, not {s:?}"
                        ))
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    let limit = limit(query.limit, 50, 200)?;
    let offset = match query.cursor.as_deref() {
        None => 0,
        Some(c) => decode_cursor(c)?
            .strip_prefix("o:")
            .and_then(|n| n.parse::<i64>().ok())
            .filter(|n| *n >= 0)
            .ok_or_else(|| Error::validation("cursor is not valid"))?,
    };
    let user_id = user.id().to_owned();
    let page = state
        .db
        .run(move |conn| {
            let rows = store::for_user(conn, &user_id, &statuses, offset, limit + 1)?;
            let more = rows.len() as i64 > limit;
            let mut items = Vec::new();
            for (row, seat) in rows.into_iter().take(limit as usize) {
                let table = Table::load(conn, &row.id)?;
                let seat_row = &table.seats[seat as usize];
                let invited = seat_row.user_id.as_deref() != Some(user_id.as_str());
                let my_turn = !invited
                    && seat_row.bot_level.is_none()
                    && row.status == "active"
                    && row.to_act.contains(&format!(",{seat},"));
                items.push(MyGame {
                    id: row.id.parse().unwrap_or_default(),
                    status: table.status(),
                    version: row.version,
                    my_seat: seat as u8,
                    invited,
                    my_turn,
                    deadline: row.deadline.map(|d| d.and_utc()),
                    seats: table
                        .seats
                        .iter()
                        .map(|s| SeatBrief {
                            seat: s.seat as u8,
                            player: s.user_id.as_deref().map(|id| PlayerRef {
                                id: id.parse().unwrap_or_default(),
                                username: table.name(id).unwrap_or("deleted").to_owned(),
                            }),
                            bot: s.bot_level.as_deref().and_then(BotLevel::parse),
                            open: s.user_id.is_none()
                                && s.bot_level.is_none()
                                && s.invited_user_id.is_none(),
                        })
                        .collect(),
                    mode: if table.rules()?.is_partnership() {
                        "partnership"
                    } else {
                        "solo"
                    }
                    .to_owned(),
                    updated_at: row.updated_at.and_utc(),
                });
            }
            let next_cursor = more.then(|| encode_cursor(&format!("o:{}", offset + limit)));
            Ok(MyGamesPage { items, next_cursor })
        })
        .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// The game as the caller may see it: their own hand only. `ETag` is the version;
/// `If-None-Match` with it answers 304.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "The game", body = GameView, headers(("ETag" = String, description = "The version, quoted"))),
        (status = 304, description = "Not modified since the given ETag"),
        (status = 400, description = "Malformed id", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game, or a private game the caller is not part of", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/games/{id}")]
pub async fn get_game(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<uuid::Uuid>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let (user, table) = state
        .db
        .run(move |conn| {
            let table = caller.load_game(conn, &id, false)?;
            Ok((caller, table))
        })
        .await?;
    let viewer = viewer_of(&table, &user.user_id)?;
    let tag = etag(table.row.version);
    if let Some(none_match) = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        && none_match.split(',').any(|t| {
            let t = t.trim();
            t == "*" || t.strip_prefix("W/").unwrap_or(t) == tag
        })
    {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, tag))
            .finish());
    }
    Ok(json_with_etag(&game_view(&table, viewer)?))
}

/// Takes a seat: the one reserved for the caller, the one asked for, or the first open one.
/// The game starts when the fourth seat is taken.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    request_body(content = JoinRequest, description = "Optional"),
    responses(
        (status = 200, description = "Seated", body = GameView),
        (status = 400, description = "Invalid seat", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`already_seated`, `seat_taken`, `game_full`, `game_not_waiting`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/join")]
pub async fn join(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let request: JoinRequest = parse_body(&body)?;
    let id = path.into_inner().to_string();
    let user_id = user.id().to_owned();
    let gid = id.clone();
    let view = state
        .db
        .run(move |conn| {
            locked_table(conn, &gid, |conn, table| {
                if !table.visible_to(&user_id) {
                    return Err(Error::not_found("no such game"));
                }
                if table.status() != GameStatus::Waiting {
                    return Err(Error::conflict(
                        "game_not_waiting",
                        "the game is no longer waiting for players",
                    ));
                }
                if table.seat_of(&user_id).is_some() {
                    return Err(Error::conflict(
                        "already_seated",
                        "you already have a seat in this game",
                    ));
                }
                let reserved = table.invitation_of(&user_id);
                let is_open = |s: &SeatRow| {
                    s.user_id.is_none() && s.bot_level.is_none() && s.invited_user_id.is_none()
                };
                let seat = match request.seat {
                    Some(n) => {
                        let seat = Seat::new(n).ok_or_else(|| {
                            Error::validation(format!("seat must be 0..=3, got {n}"))
                        })?;
                        let row = &table.seats[seat.index()];
                        if !(is_open(row) || reserved == Some(seat)) {
                            return Err(Error::conflict(
                                "seat_taken",
                                format!("seat {n} is not open"),
                            ));
                        }
                        seat
                    }
                    None => match reserved {
                        Some(seat) => seat,
                        None => table
                            .seats
                            .iter()
                            .find(|s| is_open(s))
                            .and_then(|s| Seat::new(s.seat as u8))
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
                row.user_id = Some(user_id.clone());
                row.invited_user_id = None;
                let username = change.table.name(&user_id).map(str::to_owned);
                let username = match username {
                    Some(n) => Some(n),
                    None => crate::db::users::by_id(conn, &user_id)?.map(|u| u.username),
                };
                if let Some(name) = &username {
                    change.table.names.insert(user_id.clone(), name.clone());
                }
                change.push_server_event(&ServerEvent::SeatChanged {
                    seat: seat.number(),
                    user_id: Some(user_id.clone()),
                    username,
                    bot: None,
                    reason: "joined".into(),
                });
                if change
                    .table
                    .seats
                    .iter()
                    .all(|s| s.user_id.is_some() || s.bot_level.is_some())
                {
                    change.start()?;
                }
                let table = change.commit(conn)?;
                game_view(&table, Some(seat))
            })
        })
        .await?;
    state.notifier.notify(&id);
    Ok(json_with_etag(&view))
}

/// Leaves a game before it starts (or declines an invitation). A waiting game that no human
/// holds or is invited to any more is aborted.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "Left; the game as it is now", body = GameView),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not seated or invited (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The game has started (`game_not_waiting`): resign instead", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/leave")]
pub async fn leave(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let user_id = user.id().to_owned();
    let gid = id.clone();
    let view = state
        .db
        .run(move |conn| {
            locked_table(conn, &gid, |conn, table| {
                if !table.visible_to(&user_id) {
                    return Err(Error::not_found("no such game"));
                }
                let (seat, reason) = match (table.seat_of(&user_id), table.invitation_of(&user_id))
                {
                    (Some(seat), _) => (seat, "left"),
                    (None, Some(seat)) => (seat, "invite_declined"),
                    (None, None) => {
                        return Err(Error::forbidden("you have no seat in this game")
                            .with_code("not_seated"));
                    }
                };
                if table.status() != GameStatus::Waiting {
                    return Err(Error::conflict(
                        "game_not_waiting",
                        "the game has started: resign instead",
                    ));
                }
                let mut change = Change::new(table)?;
                let row = change.seat_mut(seat);
                row.user_id = None;
                row.invited_user_id = None;
                change.push_server_event(&ServerEvent::SeatChanged {
                    seat: seat.number(),
                    user_id: None,
                    username: None,
                    bot: None,
                    reason: reason.into(),
                });
                let humans = change
                    .table
                    .seats
                    .iter()
                    .any(|s| s.user_id.is_some() || s.invited_user_id.is_some());
                if !humans {
                    change.table.row.status = GameStatus::Aborted.as_str().into();
                    change.table.row.abort_reason = Some("every player left".into());
                    change.table.row.finished_at = Some(change.now());
                    change.push_server_event(&ServerEvent::GameAborted {
                        reason: "every player left".into(),
                    });
                }
                let table = change.commit(conn)?;
                Ok((
                    game_view(&table, table.seat_of(&user_id))?,
                    table.notified_users,
                ))
            })
        })
        .await?;
    let (view, notified) = view;
    state.announce(&id, &notified);
    Ok(json_with_etag(&view))
}

enum ActOutcome {
    /// The new view's body, its version, the users notified, and how many actions were
    /// applied (bots' included).
    Fresh(String, i64, Vec<String>, u64),
    Replayed(i32, String),
}

/// Passes or plays for the caller's seat. The action is judged against the latest state:
/// the four passes of a round may arrive at the same instant and all succeed, while two
/// copies of one play apply once. Bots whose turn follows act in the same transaction.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("If-Match" = Option<String>, Header, description = "Expected version, e.g. \"12\" (or use expected_version)"),
        ("Idempotency-Key" = Option<String>, Header, description = "A retry with the same key returns the first response and changes nothing (kept 48 h); 1–255 visible ASCII characters"),
    ),
    request_body = ActionRequest,
    responses(
        (status = 200, description = "Applied; the new game view", body = GameView),
        (status = 400, description = "Malformed action or card code (`invalid_card`)", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The caller has no seat (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`version_conflict`, `game_not_active`, `seat_controlled_by_bot`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Illegal: `not_your_turn`, `wrong_phase`, `card_not_in_hand`, `must_follow_suit`, `must_play_leekha`, `talbees`, `pass_restriction`, `wrong_card_count`, `duplicate_card`, `already_committed`, `game_over`, `idempotency_key_reused`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/actions")]
pub async fn act(
    state: web::Data<AppState>,
    caller: Caller,
    path: web::Path<uuid::Uuid>,
    req: HttpRequest,
    body: web::Json<ActionRequest>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    // Judged after the account check, so a banned caller hears 403 whatever it sent.
    let request = ActRequest::parse(&id, body.into_inner(), &req);
    let gid = id.clone();
    let hot = state.hot.clone();
    let outcome = state
        .db
        .run(move |conn| {
            let user_id = caller.user_id.as_str();
            // The common case commits in one statement without the lock; when that does
            // not fit or the game changed meanwhile, the action runs again under the lock,
            // and that run decides.
            if matches!(conn, AnyConnection::Postgresql(_)) {
                // A game this instance just wrote needs no read: the write checks that the
                // game and the caller's account are still as cached. Anything but a clean
                // commit (an error included: it may come from a stale table) is judged
                // again from the database.
                if let Ok(request) = &request
                    && let Some(table) = hot.take(&gid)
                    && let Ok(Some(outcome)) =
                        request.decide(table, user_id, conn, Mode::Cached, &hot)
                {
                    return Ok(outcome);
                }
                let table = caller.load_game(conn, &gid, false)?;
                let request = request?;
                if let Some(outcome) = request.decide(table, user_id, conn, Mode::Unlocked, &hot)? {
                    return Ok(outcome);
                }
                return conn.transaction(|conn| {
                    let table = caller.load_game(conn, &gid, true)?;
                    request
                        .decide(table, user_id, conn, Mode::Locked, &hot)?
                        .ok_or_else(|| Error::internal("an action under the lock did not commit"))
                });
            }
            conn.transaction(|conn| {
                let table = caller.load_game(conn, &gid, true)?;
                request?
                    .decide(table, user_id, conn, Mode::Locked, &hot)?
                    .ok_or_else(|| Error::internal("an action under the lock did not commit"))
            })
        })
        .await?;
    match outcome {
        ActOutcome::Fresh(body, version, notified, applied) => {
            state.announce(&id, &notified);
            state.metrics.actions_applied(applied);
            Ok(HttpResponse::Ok()
                .insert_header((header::ETAG, etag(version)))
                .content_type("application/json")
                .body(body))
        }
        ActOutcome::Replayed(status, body) => Ok(HttpResponse::build(
            actix_web::http::StatusCode::from_u16(status as u16)
                .unwrap_or(actix_web::http::StatusCode::OK),
        )
        .insert_header(("idempotent-replayed", "true"))
        .content_type("application/json")
        .body(body)),
    }
}

/// How [`ActRequest::decide`] may commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Inside a transaction holding the game's lock.
    Locked,
    /// Without the lock, against a table just read.
    Unlocked,
    /// Without the lock, against a table from [`HotTables`].
    Cached,
}

/// A validated action request.
struct ActRequest {
    key: Option<String>,
    fingerprint: String,
    expected: Option<i64>,
    wanted: Wanted,
}

enum Wanted {
    Pass(Vec<Card>),
    Play(Card),
}

impl ActRequest {
    fn parse(id: &str, body: ActionRequest, req: &HttpRequest) -> Result<Self, Error> {
        let key = match req.headers().get("idempotency-key") {
            None => None,
            Some(v) => {
                let k = v.to_str().unwrap_or("");
                if k.is_empty() || k.len() > 255 || !k.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err(Error::bad_request(
                        "Idempotency-Key must be 1–255 visible ASCII characters",
                    ));
                }
                Some(k.to_owned())
            }
        };
        let header_version = if_match(req)?;
        let expected = match (body.expected_version, header_version) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::bad_request("expected_version and If-Match disagree"));
            }
            (a, b) => a.or(b),
        };
        let wanted = match body.kind.as_str() {
            "pass" => {
                if body.card.is_some() {
                    return Err(Error::validation("a pass takes `cards`, not `card`"));
                }
                let cards = body
                    .cards
                    .as_ref()
                    .ok_or_else(|| Error::validation("a pass needs `cards`"))?;
                if cards.len() > 52 {
                    return Err(Error::validation("too many cards"));
                }
                Wanted::Pass(cards.iter().map(parse_card).collect::<Result<_, _>>()?)
            }
            "play" => {
                if body.cards.is_some() {
                    return Err(Error::validation("a play takes `card`, not `cards`"));
                }
                Wanted::Play(parse_card(
                    body.card
                        .as_ref()
                        .ok_or_else(|| Error::validation("a play needs `card`"))?,
                )?)
            }
            other => {
                return Err(Error::validation(format!(
                    "type must be pass or play, not {other:?}"
                )));
            }
        };
        let fingerprint = {
            let mut h = Sha256::new();
            h.update(id.as_bytes());
            h.update(serde_json::to_vec(&body).unwrap_or_default());
            hex::encode(h.finalize())
        };
        Ok(Self {
            key,
            fingerprint,
            expected,
            wanted,
        })
    }

    /// Judges the action against `table` and commits it; a committed table goes to `hot`.
    /// Under [`Mode::Locked`] it always answers (`Some`); otherwise, outside any
    /// transaction, it answers `None` when the lock is needed (see
    /// [`Change::commit_unlocked`]), having written nothing.
    fn decide(
        &self,
        table: Table,
        user_id: &str,
        conn: &mut AnyConnection,
        mode: Mode,
        hot: &HotTables,
    ) -> Result<Option<ActOutcome>, Error> {
        // A cached attempt leaves stored keys to the write: storing the key again fails it.
        if let (Some(key), false) = (&self.key, mode == Mode::Cached)
            && let Some(stored) = store::idempotent(conn, user_id, key)?
        {
            if stored.request_hash != self.fingerprint {
                return Err(Error::new(
                    crate::error::Kind::Unprocessable,
                    "idempotency_key_reused",
                    "this Idempotency-Key was used for another request",
                ));
            }
            return Ok(Some(ActOutcome::Replayed(stored.status, stored.body)));
        }
        if !table.visible_to(user_id) {
            return Err(Error::not_found("no such game"));
        }
        let seat = table.seat_of(user_id).ok_or_else(|| {
            Error::forbidden("you have no seat in this game").with_code("not_seated")
        })?;
        match table.status() {
            GameStatus::Active => {}
            GameStatus::Finished => return Err(crate::rules::RuleError::GameOver.into()),
            GameStatus::Waiting => {
                return Err(Error::conflict(
                    "game_not_active",
                    "the game has not started yet",
                ));
            }
            GameStatus::Aborted => {
                return Err(Error::conflict("game_not_active", "the game was aborted"));
            }
        }
        if let Some(v) = self.expected
            && v != table.row.version
        {
            return Err(Error::conflict(
                "version_conflict",
                format!(
                    "the game is at version {}, not {v}; reload it",
                    table.row.version
                ),
            ));
        }
        if table.bot_of(seat).is_some() {
            return Err(Error::conflict(
                "seat_controlled_by_bot",
                "a bot plays this seat now",
            ));
        }
        let action = match &self.wanted {
            Wanted::Pass(cards) => Action::Pass {
                seat,
                cards: cards.clone(),
            },
            Wanted::Play(card) => Action::Play { seat, card: *card },
        };
        let actions_before = table.row.action_count;
        let mut change = Change::new(table)?;
        change.apply(&action, Actor::Player(user_id))?;
        if change.table.seats[seat.index()].timeouts_in_row != 0 {
            change.seat_mut(seat).timeouts_in_row = 0;
        }
        change.run_bots()?;
        let respond = |table: &Table| -> Result<String, Error> {
            serde_json::to_string(&game_view(table, Some(seat))?).map_err(Error::internal)
        };
        let (mut table, body) = if mode == Mode::Locked {
            let table = change.commit(conn)?;
            let body = respond(&table)?;
            if let Some(key) = &self.key {
                store::store_idempotent(
                    conn,
                    &IdempotentRow {
                        user_id: user_id.to_owned(),
                        key: key.clone(),
                        request_hash: self.fingerprint.clone(),
                        status: 200,
                        body: body.clone(),
                        created_at: table.row.updated_at,
                    },
                )?;
            }
            (table, body)
        } else {
            let idempotency = self
                .key
                .as_deref()
                .map(|key| (user_id, key, self.fingerprint.as_str()));
            match change.commit_unlocked(conn, respond, idempotency, user_id)? {
                Some(done) => done,
                None => return Ok(None),
            }
        };
        // Keep the table small: forget keys older than 48 h now and then.
        if self.key.is_some() && rand::random_range(0..100) == 0 {
            store::purge_idempotent(conn, db::now() - chrono::Duration::hours(48))?;
        }
        let applied = (table.row.action_count - actions_before).max(0) as u64;
        let (version, notified) = (table.row.version, std::mem::take(&mut table.notified_users));
        if table.status() == GameStatus::Active {
            hot.put(table);
        }
        Ok(Some(ActOutcome::Fresh(body, version, notified, applied)))
    }
}

/// How often a long-poll re-reads the database, for changes made by other instances.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The events after `after` that the caller may see. With `wait`, the call waits (up to 30 s)
/// until at least one exists; it also sees actions that arrive through other server instances.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id"), EventsQuery),
    responses(
        (status = 200, description = "Events (possibly none when the wait ran out)", body = EventsPage),
        (status = 400, description = "Invalid query", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/games/{id}/events")]
pub async fn events(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let after = query.after.unwrap_or(0);
    if after < 0 {
        return Err(Error::validation("after must be ≥ 0").into());
    }
    let wait = query.wait.unwrap_or(0);
    if wait > 30 {
        return Err(Error::validation("wait must be 0..=30 seconds").into());
    }
    let limit = limit(query.limit, 200, 500)?;
    let gid = id.clone();
    let table = state.db.run(move |conn| Table::load(conn, &gid)).await?;
    let viewer = viewer_of(&table, user.id())?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    let notify = state.notifier.subscribe(&id);
    loop {
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let gid = id.clone();
        let (rows, last_seq) = state
            .db
            .run(move |conn| {
                let last = store::event_count(conn, &gid)?.unwrap_or(0);
                let rows = if last > after {
                    store::events_after(conn, &gid, after, limit)?
                } else {
                    Vec::new()
                };
                Ok((rows, last))
            })
            .await?;
        let now = tokio::time::Instant::now();
        if !rows.is_empty() || now >= deadline {
            let events = rows
                .into_iter()
                .map(|r| EventView {
                    seq: r.seq,
                    data: project(&r.kind, &r.data, viewer),
                    kind: r.kind,
                    created_at: r.created_at.and_utc(),
                })
                .collect();
            return Ok(HttpResponse::Ok().json(EventsPage { events, last_seq }));
        }
        let _ = tokio::time::timeout(POLL_INTERVAL.min(deadline - now), notified).await;
    }
}

/// Hands the caller's seat to a bot for the rest of the game.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "A bot plays the seat now", body = GameView),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not seated (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_not_active`, or the seat is already a bot's", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/resign")]
pub async fn resign(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let user_id = user.id().to_owned();
    let gid = id.clone();
    let view = state
        .db
        .run(move |conn| {
            locked_table(conn, &gid, |conn, table| {
                if !table.visible_to(&user_id) {
                    return Err(Error::not_found("no such game"));
                }
                let seat = table.seat_of(&user_id).ok_or_else(|| {
                    Error::forbidden("you have no seat in this game").with_code("not_seated")
                })?;
                if table.status() != GameStatus::Active {
                    return Err(Error::conflict(
                        "game_not_active",
                        "only a running game can be resigned; leave a waiting one",
                    ));
                }
                if table.seats[seat.index()].bot_reason.as_deref() == Some("resigned") {
                    return Err(Error::conflict(
                        "already_resigned",
                        "you already resigned this game",
                    ));
                }
                let mut change = Change::new(table)?;
                let level = BotLevel::takeover();
                let row = change.seat_mut(seat);
                row.bot_level = Some(level.as_str().into());
                row.bot_reason = Some("resigned".into());
                change.push_server_event(&ServerEvent::SeatChanged {
                    seat: seat.number(),
                    user_id: Some(user_id.clone()),
                    username: change.table.name(&user_id).map(str::to_owned),
                    bot: Some(level.as_str().into()),
                    reason: "resigned".into(),
                });
                change.run_bots()?;
                let table = change.commit(conn)?;
                Ok((game_view(&table, Some(seat))?, table.notified_users))
            })
        })
        .await?;
    let (view, notified) = view;
    state.announce(&id, &notified);
    Ok(json_with_etag(&view))
}

/// Takes the caller's seat back from the bot that took it after two timeouts in a row.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "The caller plays the seat again", body = GameView),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not seated (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_not_active`, or no bot took the seat for timeouts (`nothing_to_reclaim`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/games/{id}/reclaim")]
pub async fn reclaim(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let user_id = user.id().to_owned();
    let gid = id.clone();
    let (view, notified) = state
        .db
        .run(move |conn| {
            locked_table(conn, &gid, |conn, table| {
                if !table.visible_to(&user_id) {
                    return Err(Error::not_found("no such game"));
                }
                let seat = table.seat_of(&user_id).ok_or_else(|| {
                    Error::forbidden("you have no seat in this game").with_code("not_seated")
                })?;
                if table.status() != GameStatus::Active {
                    return Err(Error::conflict(
                        "game_not_active",
                        "the game is not running",
                    ));
                }
                if table.seats[seat.index()].bot_reason.as_deref() != Some("timeout") {
                    return Err(Error::conflict(
                        "nothing_to_reclaim",
                        "no bot holds your seat for timeouts",
                    ));
                }
                let mut change = Change::new(table)?;
                let row = change.seat_mut(seat);
                row.bot_level = None;
                row.bot_reason = None;
                row.timeouts_in_row = 0;
                change.push_server_event(&ServerEvent::SeatChanged {
                    seat: seat.number(),
                    user_id: Some(user_id.clone()),
                    username: change.table.name(&user_id).map(str::to_owned),
                    bot: None,
                    reason: "reclaimed".into(),
                });
                let table = change.commit(conn)?;
                Ok((game_view(&table, Some(seat))?, table.notified_users))
            })
        })
        .await?;
    state.announce(&id, &notified);
    Ok(json_with_etag(&view))
}

/// The strongest bot's suggestion for the caller's pending action.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct HintView {
    /// `pass` or `play`.
    #[serde(rename = "type")]
    pub kind: String,
    /// For a pass: the 3 cards to pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cards: Option<Vec<CardCode>>,
    /// For a play: the card to play.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<CardCode>,
    /// The bot level that made the suggestion.
    pub level: BotLevel,
    /// The game version the hint is for.
    pub version: i64,
}

/// The expert bot's suggestion for the caller's pending pass or play, computed from the
/// caller's own view and the round's public plays only. Its search is seeded by game and
/// version and bounded by an iteration cap and a time budget (a busy server explores less).
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "A legal action for the caller", body = HintView),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not seated (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The game is not running (`game_not_active`) or the caller has nothing to do now (`nothing_to_do`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/games/{id}/hint")]
pub async fn hint(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let user_id = user.id().to_owned();
    let table = state.db.run(move |conn| Table::load(conn, &id)).await?;
    if !table.visible_to(&user_id) {
        return Err(Error::not_found("no such game").into());
    }
    let seat = table
        .seat_of(&user_id)
        .ok_or_else(|| Error::forbidden("you have no seat in this game").with_code("not_seated"))?;
    if table.status() != GameStatus::Active {
        return Err(Error::conflict("game_not_active", "the game is not running").into());
    }
    let game = table
        .game()?
        .ok_or_else(|| Error::conflict("game_not_active", "the game is not running"))?;
    let view = game.view(seat);
    let plays = crate::games::decode_plays(&table.row.round_plays);
    let version = table.row.version;
    // Seeded by game and version, so the search only varies with how far the time budget
    // lets it go.
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(
        &uuid::Uuid::parse_str(&table.row.id)
            .unwrap_or_default()
            .into_bytes(),
    );
    seed[16..24].copy_from_slice(&version.to_le_bytes());
    let level = BotLevel::Expert;
    let action = web::block(move || {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::from_seed(seed);
        crate::bots::choose(level, &view, &plays, &mut rng)
    })
    .await?
    .ok_or_else(|| Error::conflict("nothing_to_do", "you have nothing to do in this game now"))?;
    let hint = match action {
        Action::Pass { cards, .. } => HintView {
            kind: "pass".into(),
            cards: Some(cards.iter().map(|c| CardCode(c.to_string())).collect()),
            card: None,
            level,
            version,
        },
        Action::Play { card, .. } => HintView {
            kind: "play".into(),
            cards: None,
            card: Some(CardCode(card.to_string())),
            level,
            version,
        },
    };
    Ok(HttpResponse::Ok().json(hint))
}

/// After the end: the seed, every deal and every action, for the game's players.
#[utoipa::path(
    tag = "games",
    security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    responses(
        (status = 200, description = "The whole game", body = ReplayView),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not one of the game's players (`not_seated`), or banned", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The game is not over yet (`game_not_finished`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/games/{id}/replay")]
pub async fn replay(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner().to_string();
    let user_id = user.id().to_owned();
    let view = state
        .db
        .run(move |conn| {
            let table = Table::load(conn, &id)?;
            if !table.visible_to(&user_id) {
                return Err(Error::not_found("no such game"));
            }
            if table.seat_of(&user_id).is_none() {
                return Err(
                    Error::forbidden("only the game's players can see its replay")
                        .with_code("not_seated"),
                );
            }
            if !matches!(table.status(), GameStatus::Finished | GameStatus::Aborted) {
                return Err(Error::conflict(
                    "game_not_finished",
                    "the replay opens when the game is over",
                ));
            }
            build_replay(conn, &table)
        })
        .await?;
    Ok(HttpResponse::Ok().json(view))
}

/// The full record of a game (also used by administrators).
pub fn build_replay(conn: &mut AnyConnection, table: &Table) -> Result<ReplayView, Error> {
    let rules = table.rules()?;
    let rules: RulesView =
        serde_json::from_value(serde_json::to_value(rules).map_err(Error::internal)?)
            .map_err(Error::internal)?;
    let mut rounds = Vec::new();
    for e in store::all_events(conn, &table.row.id)? {
        if e.kind == "round_dealt" {
            #[derive(Deserialize)]
            struct Dealt {
                round: u32,
                dealer: u8,
                hands: Vec<Vec<String>>,
            }
            let d: Dealt = serde_json::from_str(&e.data).map_err(Error::internal)?;
            rounds.push(ReplayRound {
                round: d.round,
                dealer: d.dealer,
                hands: d
                    .hands
                    .into_iter()
                    .map(|h| h.into_iter().map(CardCode).collect())
                    .collect(),
            });
        }
    }
    let actions = store::actions(conn, &table.row.id)?
        .into_iter()
        .map(|a| {
            let action: Action = serde_json::from_str(&a.action).map_err(Error::internal)?;
            Ok(match action {
                Action::Pass { seat, cards } => ReplayAction {
                    seq: a.seq,
                    seat: seat.number(),
                    kind: "pass".into(),
                    cards: Some(cards.iter().map(|c| CardCode(c.to_string())).collect()),
                    card: None,
                    actor: a.actor,
                    created_at: a.created_at.and_utc(),
                },
                Action::Play { seat, card } => ReplayAction {
                    seq: a.seq,
                    seat: seat.number(),
                    kind: "play".into(),
                    cards: None,
                    card: Some(CardCode(card.to_string())),
                    actor: a.actor,
                    created_at: a.created_at.and_utc(),
                },
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let result = match &table.row.result {
        Some(raw) => Some(ResultView::from(
            &serde_json::from_str(raw).map_err(Error::internal)?,
        )),
        None => None,
    };
    Ok(ReplayView {
        id: table.row.id.parse().unwrap_or_default(),
        rules,
        seed: table.row.seed.clone().unwrap_or_default(),
        rounds,
        actions,
        result,
    })
}
