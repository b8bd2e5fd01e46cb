//! `POST /games`.

use actix_web::post;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::bots::BotLevel;
use crate::error::Error;
use crate::games::{self, NewGame, SeatPlan};
use crate::http::extract::{Mine, OptionalJson};
use crate::http::reply::Reply;
use crate::http::views::game::GameView;
use crate::rules::{self, RuleOverrides};

use super::answer;

/// Rule options when creating a game: a preset and/or single options (rule book §8). Each
/// option is read by the rules' own type, so an unknown value is refused with the values it
/// may take.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RulesInput {
    /// `classic` (all defaults) or `partnership` (partnership mode, alternate passing).
    pub preset: Option<rules::Preset>,
    /// `solo` or `partnership`.
    pub mode: Option<rules::Mode>,
    /// 1..=1000 (51, 101, 151 are usual; default 101).
    #[schema(minimum = 1, maximum = 1000)]
    pub target_score: Option<i64>,
    /// `right`, `left`, `alternate` or `none`.
    pub pass_direction: Option<rules::PassDirection>,
    /// `on` or `off`.
    pub pass_restriction: Option<rules::PassRestriction>,
    /// `both`, `queen_only` or `off`.
    pub forced_leekha: Option<rules::ForcedLeekha>,
    /// `off` or `on`.
    pub talbees: Option<rules::Talbees>,
    /// `queen_of_spades_taker` or `rotate_right`.
    pub dealer_rotation: Option<rules::DealerRotation>,
    /// `co_winners` or `sudden_death`.
    pub solo_tie: Option<rules::SoloTie>,
    /// `busted_team_loses` or `team_sum_reaches_target`.
    pub team_loss: Option<rules::TeamLoss>,
}

impl RulesInput {
    /// The options of a request's `rules`, each a string as the schema says (`target_score`
    /// a number): serde would also take `{"off": null}` for `off`.
    fn read(value: serde_json::Value) -> Result<Self, String> {
        let serde_json::Value::Object(options) = &value else {
            return Err("rules must be an object of options".to_owned());
        };
        for (name, option) in options {
            let (fits, kind) = match name.as_str() {
                "target_score" => (option.is_number(), "a number"),
                "preset" | "mode" | "pass_direction" | "pass_restriction" | "forced_leekha"
                | "talbees" | "dealer_rotation" | "solo_tie" | "team_loss" => {
                    (option.is_string(), "a string")
                }
                // Not an option: serde names it unknown, with the options there are.
                _ => continue,
            };
            if !(fits || option.is_null()) {
                return Err(format!("rules.{name} must be {kind}, not {option}"));
            }
        }
        serde_json::from_value(value).map_err(|e| format!("rules: {e}"))
    }
}

impl From<RulesInput> for RuleOverrides {
    fn from(r: RulesInput) -> Self {
        RuleOverrides {
            preset: r.preset,
            mode: r.mode,
            target_score: r.target_score,
            pass_direction: r.pass_direction,
            pass_restriction: r.pass_restriction,
            forced_leekha: r.forced_leekha,
            talbees: r.talbees,
            dealer_rotation: r.dealer_rotation,
            solo_tie: r.solo_tie,
            team_loss: r.team_loss,
        }
    }
}

/// One seat at creation.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SeatRequest {
    /// `me` (the creator; exactly one), `open`, `invite` (needs `username`) or `bot`.
    #[schema(value_type = crate::http::views::schema::SeatKind)]
    pub kind: String,
    /// For `invite`: who.
    pub username: Option<String>,
    /// For `bot`: `random`, `easy`, `heuristic` (default) or `expert`.
    pub level: Option<BotLevel>,
}

/// A new game. Every field is optional: the default is the creator at seat 0, three open
/// seats, `classic` rules, public, 24 h turns.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// Rule preset and options; an unknown preset, option or value is 400 `invalid_rules`.
    // Read as JSON here and as options in `command`, where a value the rules do not know
    // gets its own code rather than a malformed body's.
    #[schema(value_type = Option<RulesInput>)]
    pub rules: Option<serde_json::Value>,
    /// Exactly 4 seats, in seat order.
    #[schema(min_items = 4, max_items = 4)]
    pub seats: Option<Vec<SeatRequest>>,
    /// `public` (listed in the lobby) or `private` (never listed, never watched: while a seat
    /// is open, whoever has the game's id may see it and take that seat; otherwise, and once
    /// it starts, only its players and invited users see it).
    #[schema(value_type = Option<crate::db::types::Visibility>)]
    pub visibility: Option<String>,
    /// 5..=2592000 (30 days); default 86400.
    #[schema(minimum = 5, maximum = 2592000)]
    pub turn_timeout_seconds: Option<i64>,
    /// Whether the game counts for the players' ratings. Default: true when no seat is a
    /// bot; a game with a bot seat cannot be rated.
    pub rated: Option<bool>,
    /// Whether signed-in users without a seat may watch a public game (default true). A
    /// private game is never watched: its `allow_spectators` is false whatever is asked.
    /// Without spectators, a running or finished game answers 404 to everyone but its
    /// players; while it waits for players, anyone may still find and join it.
    pub allow_spectators: Option<bool>,
}

impl SeatRequest {
    fn plan(&self) -> Result<SeatPlan, Error> {
        if self.kind != "invite" && self.username.is_some() {
            return Err(Error::validation("only an invite seat takes a username"));
        }
        if self.kind != "bot" && self.level.is_some() {
            return Err(Error::validation("only a bot seat takes a level"));
        }
        match self.kind.as_str() {
            "me" => Ok(SeatPlan::Me),
            "open" => Ok(SeatPlan::Open),
            "bot" => Ok(SeatPlan::Bot(self.level.unwrap_or(BotLevel::Heuristic))),
            "invite" => self
                .username
                .clone()
                .map(SeatPlan::Invite)
                .ok_or_else(|| Error::validation("an invite seat needs a username")),
            other => Err(Error::validation(format!(
                "seat kind must be me, open, invite or bot, not {other:?}"
            ))),
        }
    }
}

impl CreateGame {
    /// The command this request asks for; every check that needs no database.
    fn command(self, max_active_games: i64) -> Result<NewGame, Error> {
        let invalid = |detail: String| Error::validation(detail).with_code("invalid_rules");
        let rules = match self.rules {
            None => RulesInput::default(),
            Some(value) => RulesInput::read(value).map_err(invalid)?,
        };
        let rules = RuleOverrides::from(rules)
            .resolve()
            .map_err(|e| invalid(e.to_string()))?;
        let public = match self.visibility.as_deref() {
            None | Some("public") => true,
            Some("private") => false,
            Some(other) => {
                return Err(Error::validation(format!(
                    "visibility must be public or private, not {other:?}"
                )));
            }
        };
        let timeout = self.turn_timeout_seconds.unwrap_or(86_400);
        if !(5..=2_592_000).contains(&timeout) {
            return Err(Error::validation(format!(
                "turn_timeout_seconds must be 5..=2592000, got {timeout}"
            )));
        }
        let seats = match self.seats {
            None => [SeatPlan::Me, SeatPlan::Open, SeatPlan::Open, SeatPlan::Open],
            Some(seats) => {
                let n = seats.len();
                let plans = seats
                    .iter()
                    .map(SeatRequest::plan)
                    .collect::<Result<Vec<_>, _>>();
                let plans: [SeatPlan; 4] = plans?.try_into().map_err(|_| {
                    Error::validation(format!("seats must list exactly 4 seats, got {n}"))
                })?;
                if plans.iter().filter(|p| **p == SeatPlan::Me).count() != 1 {
                    return Err(Error::validation("exactly one seat must be of kind \"me\""));
                }
                plans
            }
        };
        let rated = match self.rated {
            None => NewGame::rated_default(&seats),
            Some(true) if !NewGame::rated_default(&seats) => {
                return Err(Error::validation(
                    "a game with a bot seat cannot be rated: bots have no rating",
                ));
            }
            Some(rated) => rated,
        };
        Ok(NewGame {
            rules,
            seats,
            public,
            // A private game is never watched: the view says so rather than echo a wish.
            allow_spectators: public && self.allow_spectators.unwrap_or(true),
            turn_timeout_seconds: timeout as i32,
            max_active_games,
            rated,
        })
    }
}

/// Create a game.
///
/// Creates a game. It starts (the cards are dealt) as soon as all four seats are taken — at
/// once if the other three are bots.
#[utoipa::path(operation_id = "create_game", tag = "games", security(("bearer" = [])),
    request_body(content = Option<CreateGame>, description = "Optional; an empty body gives the defaults: the creator at seat 0, three open seats, `classic` rules, public"),
    responses(
        (status = 201, description = "Created", body = GameView),
        (status = 400, description = "Invalid rules, seats, visibility or timeout"),
        (status = 409, description = "Too many waiting games (`too_many_games`), or too many running ones (`too_many_active_games`)")))]
#[post("/games")]
pub async fn create_game(me: Mine<(), OptionalJson<CreateGame>>) -> Reply {
    let (me, OptionalJson(body)) = me.split();
    let command = body.command(me.state.config.max_active_games_per_user)?;
    let done = me
        .mine(move |conn, id| games::create(conn, id, command))
        .await?;
    answer(&me.state, &done, true)
}
