//! Live streams (Server-Sent Events): `GET /games/{id}/events/stream`,
//! `GET /me/notifications/stream`, and the stream tickets of `POST /auth/stream-ticket`.
//!
//! Each event is written as `id: <seq>`, `event: <type>`, `data: <JSON>`, the JSON being the
//! caller's copy exactly as the list endpoints render it (`EventView`, `NotificationView`).
//! A stream resumes after `Last-Event-ID` when the request carries it, else after `?after=`
//! (default 0): a browser's `EventSource` sends `Last-Event-ID` on its own when it
//! reconnects, with the URL it first opened, so the header is the newer position and wins.
//!
//! A game's stream ends after `game_finished` (or `game_aborted`); both end when the
//! instance shuts down, and when the caller is banned, logs out or deletes the account. A
//! comment line goes out after every `LEEKHA_STREAM_HEARTBEAT_SECONDS` of silence.
//! Streams count with long-polls against `LEEKHA_MAX_STREAMS` (503 `too_many_streams`).

pub mod sse;

use std::sync::Arc;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::app::AppState;
use crate::app::notifier::Topic;
use crate::app::presence::Follower;
use crate::error::Error;
use crate::games::{GameStatus, Table};
use crate::http::extract::{AuthUser, Caller};
use crate::http::games::viewer_of;
use crate::http::long_poll;
use crate::http::problem::ApiError;
use crate::http::query::Query;
use crate::http::reply::{Reply, State, no_content, uncached};

use sse::{AccountWatch, EventStream, Source, Subscription};

routes! { self::{game_stream, feed_stream, stream_ticket} }

/// Where a stream starts, and how a browser authenticates.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Events with `seq` greater than this (default 0). `Last-Event-ID` wins when both are
    /// sent.
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// A stream ticket (`POST /api/v1/auth/stream-ticket`), for clients that cannot send
    /// `Authorization`; single use.
    #[param(max_length = 128)]
    pub ticket: Option<String>,
}

/// A stream ticket.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StreamTicket {
    /// Pass it as `?ticket=` to one stream endpoint; it works once.
    #[schema(
        pattern = "^st_[0-9a-f]{64}$",
        example = "st_4f9c0e6b1d2a8f7e3c5b9a0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f"
    )]
    pub ticket: String,
    /// Seconds it stays valid (at most 60).
    #[schema(example = 60, minimum = 1, maximum = 60)]
    pub expires_in: i64,
}

/// The header a browser's `EventSource` sends when it reconnects: the stream resumes after it.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Header)]
pub struct LastEventId {
    /// Resume after this seq (wins over `after`)
    #[param(rename = "Last-Event-ID")]
    pub last_event_id: Option<i64>,
}

/// A stream refused because the instance is full, as both streams document it.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 503,
    description = "The instance holds `LEEKHA_MAX_STREAMS` open streams (`too_many_streams`)"
)]
pub struct TooManyStreams;

impl StreamQuery {
    /// Where the stream resumes, and who opens it.
    async fn start(self, req: &HttpRequest) -> Result<(i64, Credential), ApiError> {
        let after = resume_point(req, self.after)?;
        Ok((after, Credential::of(req, self.ticket.as_deref()).await?))
    }
}

/// The position a stream resumes after: `Last-Event-ID`, else `after`, else 0.
fn resume_point(req: &HttpRequest, after: Option<i64>) -> Result<i64, Error> {
    let header = req
        .headers()
        .get("last-event-id")
        // Empty is no id, as for an empty query parameter (and the HTML standard never
        // sends it empty).
        .filter(|v| !v.as_bytes().trim_ascii().is_empty())
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    Error::validation("Last-Event-ID must be an event seq (an integer ≥ 0)")
                })
        })
        .transpose()?;
    let after = header.or(after).unwrap_or(0);
    if after < 0 {
        return Err(Error::validation("after must be ≥ 0"));
    }
    Ok(after)
}

/// Who opens the stream: the bearer token when the request has one, else the ticket.
enum Credential {
    Token(Caller),
    Ticket(String),
}

impl Credential {
    async fn of(req: &HttpRequest, ticket: Option<&str>) -> Result<Self, ApiError> {
        match (req.headers().contains_key(header::AUTHORIZATION), ticket) {
            (false, Some(ticket)) => Ok(Self::Ticket(ticket.to_owned())),
            (false, None) => Err(Error::unauthorized(
                "missing_token",
                "send Authorization: Bearer <access token>, or ?ticket= from POST /api/v1/auth/stream-ticket",
            )
            .into()),
            (true, _) => {
                let mut payload = actix_web::dev::Payload::None;
                let caller =
                    <Caller as actix_web::FromRequest>::from_request(req, &mut payload).await?;
                Ok(Self::Token(caller))
            }
        }
    }

    /// The account and its session, checked as for every request ([`Caller::check`]); a
    /// ticket is spent here.
    fn authenticate(
        self,
        conn: &mut crate::db::AnyConnection,
    ) -> Result<(AuthUser, Option<String>), Error> {
        let (user_id, session) = match self {
            Self::Token(caller) => (caller.user_id, caller.session),
            Self::Ticket(ticket) => crate::auth::tickets::redeem(conn, &ticket)?,
        };
        let user = Caller {
            user_id,
            session: session.clone(),
        }
        .check(conn)?;
        Ok((user, session))
    }
}

/// Streams `source` after `after` to the caller that [`Credential::authenticate`] admitted,
/// waking on `topic` (named `topic_name`). The stream counts against `LEEKHA_MAX_STREAMS`
/// while it is open.
fn open(
    state: &AppState,
    (user, session): (AuthUser, Option<String>),
    source: Source,
    after: i64,
    topic_name: &str,
    topic: Arc<Topic>,
) -> Reply {
    // A ban from here on ends the stream (its first read re-checks the account).
    let account = AccountWatch::subscribe(state, user.id(), session.as_deref());
    let watch = long_poll::admit(state, user.id(), topic_name, Follower::Stream)?;
    let stream = EventStream::new(Subscription {
        state: state.clone(),
        user_id: user.id().to_owned(),
        source,
        after,
        topic,
        account,
        watch,
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        // nginx and similar proxies otherwise buffer the stream.
        .insert_header(("x-accel-buffering", "no"))
        .streaming(stream.into_body()))
}

/// One event of a stream, as an SSE parser reads it: `id` (the seq), `event` (the type),
/// `data` (the event's JSON, as the list endpoints render it). The stream's first frame only
/// sets `retry`; comment lines (heartbeats) carry no event.
#[derive(Debug, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SseEvent {
    /// The event's `seq`, for `Last-Event-ID`.
    #[schema(pattern = "^[0-9]+$")]
    pub id: Option<String>,
    /// The event or notification type.
    #[schema(pattern = "^[a-z_]+$")]
    pub event: Option<String>,
    /// The event's JSON object.
    #[schema(pattern = "^\\{")]
    pub data: Option<String>,
    /// Milliseconds to wait before reconnecting.
    pub retry: Option<u64>,
}

/// A game's events, live.
///
/// A Server-Sent Events stream of the events the caller may see, after `Last-Event-ID` (when
/// sent) or `after`: each as `id: <seq>`, `event: <type>`, `data: <the event as the event
/// list renders it>`. A comment line keeps the connection open at least every 15 s. The
/// stream ends after `game_finished` (or `game_aborted`), at the server's shutdown, and when
/// the caller is banned, logs out or deletes the account; reconnect with `Last-Event-ID` to
/// resume without loss or repetition. Browsers without headers pass `?ticket=`. Resuming
/// after the last event of a game that is over answers 204: nothing will follow, and a
/// browser's `EventSource` stops reconnecting.
#[utoipa::path(operation_id = "stream_events", tag = "games", security(("bearer" = []), ("stream_ticket" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id"), StreamQuery, LastEventId),
    responses(
        (status = 200, description = "An event stream; each frame read as an `SseEvent`. On the wire:\n\n```\nretry: 2000\n\nid: 7\nevent: card_played\ndata: {\"seq\":7,\"type\":\"card_played\",\"created_at\":\"2026-12-01T11:43:03.034437Z\",\"data\":{\"seat\":1,\"card\":\"QS\"}}\n\n: keep-alive\n```", content_type = "text/event-stream", body = SseEvent,
         example = json!({"id": "7", "event": "card_played", "data": "{\"seq\":7,\"type\":\"card_played\",\"created_at\":\"2026-12-01T11:43:03.034437Z\",\"data\":{\"seat\":1,\"card\":\"QS\"}}"})),
        (status = 204, description = "The game is over and the caller has every event of it: nothing will follow"),
        TooManyStreams, crate::http::long_poll::TooManyOfMine))]
#[get("/games/{id}/events/stream")]
pub async fn game_stream(
    state: State,
    req: HttpRequest,
    path: web::Path<uuid::Uuid>,
    query: Query<StreamQuery>,
) -> Reply {
    let id = path.into_inner().to_string();
    let (after, credential) = query.into_inner().start(&req).await?;
    let topic = state.notifier.subscribe(&id);
    let gid = id.clone();
    let (caller, table) = state
        .db
        .run(move |conn| {
            let caller = credential.authenticate(conn)?;
            let table = Table::load(conn, &gid)?;
            Ok((caller, table))
        })
        .await?;
    let viewer = viewer_of(&table, caller.0.id())?;
    let over = matches!(table.status(), GameStatus::Finished | GameStatus::Aborted);
    if over && after >= table.row.event_count {
        return no_content();
    }
    let source = Source::Game {
        id: id.clone(),
        viewer,
        over,
    };
    open(&state, caller, source, after, &id, topic)
}

/// The caller's notification feed, live.
///
/// A Server-Sent Events stream of the caller's notifications after `Last-Event-ID` (when
/// sent) or `after`: each as `id: <seq>`, `event: <type>`, `data: <the notification as the
/// feed renders it>`, with a comment line at least every 15 s. It ends at the server's
/// shutdown and when the caller is banned, logs out or deletes the account. Browsers pass
/// `?ticket=`.
#[utoipa::path(operation_id = "stream_notifications", tag = "notifications", security(("bearer" = []), ("stream_ticket" = [])),
    params(StreamQuery, LastEventId),
    responses(
        (status = 200, description = "A notification stream; each frame read as an `SseEvent`. On the wire:\n\n```\nretry: 2000\n\nid: 3\nevent: your_turn\ndata: {\"seq\":3,\"type\":\"your_turn\",\"game_id\":\"7d753fd3-6341-4081-ba57-dd371cf06ad2\",\"data\":{\"seat\":0},\"created_at\":\"2026-12-01T11:43:03.034437Z\"}\n```", content_type = "text/event-stream", body = SseEvent,
         example = json!({"id": "3", "event": "your_turn", "data": "{\"seq\":3,\"type\":\"your_turn\",\"game_id\":\"7d753fd3-6341-4081-ba57-dd371cf06ad2\",\"data\":{\"seat\":0},\"created_at\":\"2026-12-01T11:43:03.034437Z\"}"})),
        TooManyStreams, crate::http::long_poll::TooManyOfMine))]
#[get("/me/notifications/stream")]
pub async fn feed_stream(state: State, req: HttpRequest, query: Query<StreamQuery>) -> Reply {
    let (after, credential) = query.into_inner().start(&req).await?;
    let caller = state
        .db
        .run(move |conn| credential.authenticate(conn))
        .await?;
    let topic_name = crate::db::wake::feed_topic(caller.0.id());
    // Taken, as the account's topic, before the stream's first read re-checks the account.
    let topic = state.notifier.subscribe(&topic_name);
    open(&state, caller, Source::Feed, after, &topic_name, topic)
}

/// A single-use ticket for one event stream.
///
/// For clients that cannot send `Authorization` on a stream (a browser's `EventSource`): a
/// ticket bound to the caller, valid once for at most 60 s, to pass as `?ticket=` to
/// `GET /games/{id}/events/stream` or `GET /me/notifications/stream`. The access token
/// itself never belongs in a URL; no other endpoint accepts a ticket.
#[utoipa::path(operation_id = "create_stream_ticket", tag = "accounts", security(("bearer" = [])),
    responses(
        (status = 201, description = "A ticket", body = StreamTicket),
        (status = 401, description = "No valid token, or its session has ended (`invalid_token`)")))]
#[post("/auth/stream-ticket")]
pub async fn stream_ticket(state: State, caller: Caller) -> Reply {
    let ttl = state.config.stream_ticket_ttl_secs;
    let ticket = state
        .db
        .run(move |conn| {
            // A ticket of an ended session could never be redeemed: the check says so now.
            let user = caller.check(conn)?;
            crate::auth::tickets::issue(conn, user.id(), caller.session.as_deref(), ttl)
        })
        .await?;
    Ok(uncached(HttpResponse::Created().json(StreamTicket {
        ticket: ticket.ticket,
        expires_in: ticket.expires_in,
    })))
}
