//! Table talk: `/games/{id}/chat`, its reports, and the quick phrases.

use std::sync::OnceLock;

use actix_web::{HttpResponse, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::ratelimit::AuthLimits;
use crate::chat::{self, Content, PHRASES};
use crate::db::chat::{Listed, MessageRow};
use crate::error::Error;
use crate::http::extract::{Json, Mine};
use crate::http::games::OnGame;
use crate::http::problem::ApiError;
use crate::http::query::Query;
use crate::http::reply::{Reply, created, ok};
use crate::http::views::game::PlayerRef;
use crate::http::{pagination, rate_limit};

routes! { self::{phrases, post_message, list_messages, report_message} }

/// Messages one user may post per minute, across all their tables.
pub const MESSAGES_PER_MINUTE: u32 = 20;

fn limits() -> &'static AuthLimits {
    static LIMITS: OnceLock<AuthLimits> = OnceLock::new();
    LIMITS.get_or_init(|| AuthLimits::new(MESSAGES_PER_MINUTE))
}

/// The OpenAPI schema of a phrase key: an `enum` of the keys of [`PHRASES`].
pub struct PhraseKey;

impl utoipa::PartialSchema for PhraseKey {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let keys: Vec<&str> = PHRASES.iter().map(|p| p.key).collect();
        crate::http::views::schema::string_enum(
            "A quick phrase (`GET /api/v1/chat/phrases` has its texts).",
            &keys,
        )
    }
}

impl ToSchema for PhraseKey {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("PhraseKey")
    }
}

/// A quick phrase.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PhraseView {
    /// What a message names in `phrase`.
    #[schema(value_type = PhraseKey, example = "well_played")]
    pub key: String,
    /// In English.
    #[schema(example = "Well played!")]
    pub en: String,
    /// In Arabic.
    #[schema(example = "لعب حلو!")]
    pub ar: String,
}

/// The quick phrases.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PhrasesView {
    /// In the order to show them.
    pub items: Vec<PhraseView>,
}

/// A message to post: exactly one of `text` and `phrase`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    /// Free text: 1–200 characters after trimming and Unicode NFC, no control characters,
    /// line breaks, direction overrides, annotation marks or tag characters (a region's
    /// flag aside), at least one visible character. The limit holds
    /// for the text as kept, so what is sent may be longer (white space around it, accents
    /// sent as combining marks): no `maxLength` here, lest a client refuse what the server
    /// takes.
    #[schema(example = "nice one!", min_length = 1)]
    pub text: Option<String>,
    /// A key of `GET /api/v1/chat/phrases`.
    #[schema(value_type = Option<PhraseKey>, example = "good_luck")]
    pub phrase: Option<String>,
}

/// A chat message.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ChatMessageView {
    /// Message id.
    pub id: uuid::Uuid,
    /// The game event that carries it (`chat_message`).
    #[schema(minimum = 1)]
    pub seq: i64,
    /// The author's seat.
    pub seat: u8,
    /// The author.
    pub user: PlayerRef,
    /// Free text; null for a phrase.
    #[schema(required = true)]
    pub text: Option<String>,
    /// A quick phrase's key; null for free text.
    #[schema(required = true, value_type = Option<PhraseKey>)]
    pub phrase: Option<String>,
    /// When.
    pub created_at: DateTime<Utc>,
}

impl ChatMessageView {
    /// The view of a stored message by `username`.
    pub fn of(row: &MessageRow, username: &str) -> Self {
        Self {
            id: row.id.parse().unwrap_or_default(),
            seq: row.seq,
            seat: u8::try_from(row.seat).unwrap_or_default(),
            user: PlayerRef {
                id: row.user_id.parse().unwrap_or_default(),
                username: username.to_owned(),
            },
            text: row.body.clone(),
            phrase: row.phrase.clone(),
            created_at: row.created_at.and_utc(),
        }
    }
}

impl From<&Listed> for ChatMessageView {
    fn from((row, username): &Listed) -> Self {
        Self::of(row, username)
    }
}

/// A page of chat.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ChatPage {
    /// Oldest first.
    pub items: Vec<ChatMessageView>,
    /// The `seq` of the last message listed (when none, `after`, or the game's last event
    /// `seq` if `after` is past it): pass it as `after` next time.
    #[schema(minimum = 0, example = 1)]
    pub last_seq: i64,
}

/// Which messages.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChatQuery {
    /// Messages whose event `seq` is greater than this (default 0).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// 1..=200, default 50.
    #[param(minimum = 1, maximum = 200, default = 50)]
    pub limit: Option<i64>,
}

/// A report to the moderators.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportRequest {
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but no
    /// other control characters, direction overrides, annotation marks or stray tags.
    #[schema(example = "insults", min_length = 1)]
    pub reason: String,
}

/// The report was received.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReportReceived {
    /// `false` when the caller had reported this message already (nothing changed).
    pub new: bool,
}

/// The quick phrases.
///
/// Keys for `phrase` in `POST /api/v1/games/{id}/chat`, each with its English and Arabic
/// text; a client shows the one of its language.
#[utoipa::path(operation_id = "list_chat_phrases", tag = "chat",
    responses((status = 200, description = "The phrases", body = PhrasesView)))]
#[get("/chat/phrases")]
pub async fn phrases() -> HttpResponse {
    HttpResponse::Ok().json(PhrasesView {
        items: PHRASES
            .iter()
            .map(|p| PhraseView {
                key: p.key.to_owned(),
                en: p.en.to_owned(),
                ar: p.ar.to_owned(),
            })
            .collect(),
    })
}

/// Say something at the table.
///
/// For the seated players of a waiting or running game: free `text` (1–200 characters after
/// trimming, normalized to Unicode NFC, no control characters, line breaks or direction
/// overrides, at least one visible character) or a quick `phrase`. The message is also the game's next event
/// (`chat_message`) and a `chat_message` notification for the other seated players. Rate
/// limited per user to 20 messages a minute: 20 at once, then one more every 3 s (429 with
/// `Retry-After` beyond). A finished game's chat is read-only (409 `chat_closed`); a muted
/// user gets 403 `muted`.
#[utoipa::path(operation_id = "post_chat_message", tag = "chat", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id")),
    request_body = NewMessage,
    responses(
        (status = 201, description = "Posted; `Location` is the game's chat", body = ChatMessageView),
        (status = 400, description = "Neither or both of text and phrase, bad text, unknown phrase"),
        (status = 403, description = "Not seated (`not_seated`; also a player whose seat a bot holds for good) or muted (`muted`)"),
        (status = 404, description = "No such game"),
        (status = 409, description = "The game is over (`chat_closed`)"),
        (status = 429, description = "Over 20 messages a minute: the 20 at once are spent and the next of one every 3 s is not due")))]
#[post("/games/{id}/chat")]
pub async fn post_message(on: OnGame<Json<NewMessage>>) -> Reply {
    let NewMessage { text, phrase } = &*on.input;
    let content = match (text, phrase) {
        (Some(text), None) => Content::Text(chat::check_text(text)?),
        (None, Some(key)) => Content::Phrase(chat::phrase(key)?.key),
        _ => {
            return Err(Error::validation("give exactly one of text and phrase").into());
        }
    };
    let limit = limits().check(&[format!("chat:{}", on.user.id())])?;
    let posted = on
        .run(move |conn, game, me| chat::post(conn, game, me, content))
        .await
        .map_err(|e| ApiError::from(e).with_rate_limit(limit))?;
    on.state.published(&posted.done);
    let view = ChatMessageView::from(&posted.message);
    let mut reply = created(format!("/api/v1/games/{}/chat", *on.path), view);
    rate_limit::insert(reply.headers_mut(), limit);
    Ok(reply)
}

/// The table's chat.
///
/// The messages of the game after `after`, oldest first, for its seated players and for
/// whoever may watch it (as its `chat_message` events): those a moderator hid and those of
/// users the caller blocks are left out. Finished games keep their chat.
#[utoipa::path(operation_id = "list_chat_messages", tag = "chat", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "Game id"), ChatQuery),
    responses(
        (status = 200, description = "A page of messages", body = ChatPage),
        (status = 404, description = "No such game, or one the caller may not watch")))]
#[get("/games/{id}/chat")]
pub async fn list_messages(on: OnGame<Query<ChatQuery>>) -> Reply {
    let query = &on.input;
    let after = query.after.unwrap_or(0);
    if after < 0 {
        return Err(Error::validation("after must be ≥ 0").into());
    }
    let limit = pagination::limit(query.limit, 50, 200)?;
    let page = on
        .run(move |conn, game, me| chat::list(conn, game, me, after, limit))
        .await?;
    // Never past the game's last event, as the events list: a client that sent an `after`
    // from the future would otherwise skip the messages that come up to it.
    let last_seq = page
        .messages
        .last()
        .map_or(after.min(page.last_event), |(m, _)| m.seq);
    ok(ChatPage {
        items: page.messages.iter().map(ChatMessageView::from).collect(),
        last_seq,
    })
}

/// A report of the message the path names (game id, message id).
type Report = Mine<web::Path<(uuid::Uuid, uuid::Uuid)>, Json<ReportRequest>>;

/// Report a message to the moderators.
///
/// Puts the message in the moderators' queue (`GET /api/v1/admin/reports`). For the seated
/// players other than its author; reporting again changes nothing.
#[utoipa::path(operation_id = "report_chat_message", tag = "chat", security(("bearer" = [])),
    params(
        ("id" = uuid::Uuid, Path, description = "Game id"),
        ("message_id" = uuid::Uuid, Path, description = "Message id"),
    ),
    request_body = ReportRequest,
    responses(
        (status = 202, description = "Queued for the moderators", body = ReportReceived),
        (status = 400, description = "A reason outside 1–500 characters, or with control characters (line breaks and tabs aside), direction overrides, annotation marks or stray tags; or the caller's own message"),
        (status = 403, description = "A spectator, who reads the chat but has no seat, or a player whose seat a bot holds for good (`not_seated`)"),
        (status = 404, description = "No such message the caller can read")))]
#[post("/games/{id}/chat/{message_id}/report")]
pub async fn report_message(on: Report) -> Reply {
    let (game, message) = (on.path.0.to_string(), on.path.1.to_string());
    let reason = on.input.reason.clone();
    let new = on
        .mine(move |conn, me| chat::report(conn, &game, &message, me, &reason))
        .await?;
    Ok(HttpResponse::Accepted().json(ReportReceived { new }))
}
