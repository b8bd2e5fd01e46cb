//! Moderation of table talk: the queue of reported messages, hiding a message, muting a
//! user. Every change is audited.

use actix_web::{get, post};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::chat;
use crate::db::chat as store;
use crate::http::chat::ChatMessageView;
use crate::http::pagination::{PageQuery, keyset_page, page};
use crate::http::query::Query;
use crate::http::reply::{Reply, ok};

use super::views::AdminUserView;
use super::{Admin, BanRequest, Change, OptionalReason, optional_reason, reason};

/// A report waiting for a moderator.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ReportView {
    /// Report id.
    pub id: uuid::Uuid,
    /// Why, as the reporter put it.
    pub reason: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// Who reported it.
    pub reporter: crate::http::views::game::PlayerRef,
    /// The game of the message.
    pub game_id: uuid::Uuid,
    /// The message.
    pub message: ChatMessageView,
}

page! {
    /// A page of the queue.
    pub struct ReportsPage {
        /// Oldest first.
        pub items: Vec<ReportView>,
        /// The next page, if any.
        pub next_cursor,
    }
}

/// A hidden message, as moderators see it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct HiddenMessageView {
    /// The message as it was written.
    pub message: ChatMessageView,
    /// When it was hidden.
    pub hidden_at: DateTime<Utc>,
}

/// How long to mute a user.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MuteRequest {
    /// The end of the mute, at most a year ahead; null lifts a mute.
    #[schema(required = true)]
    // Required though nullable: a body that forgets it must not lift a mute.
    #[serde(deserialize_with = "crate::http::instant::rfc3339_or_null")]
    pub until: Option<DateTime<Utc>>,
    /// 1–500 characters once trimmed and in Unicode NFC, line breaks and tabs allowed but
    /// no other control characters, direction overrides, annotation marks or stray tags; kept in the audit log and on the
    /// account.
    #[schema(example = "insults in chat", min_length = 1)]
    pub reason: String,
}

/// The moderators' queue.
///
/// Reported chat messages not dealt with yet, oldest first, each with the message as it was
/// written.
#[utoipa::path(operation_id = "admin_list_reports", tag = "admin", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, description = "A page of open reports", body = ReportsPage)))]
#[get("/admin/reports")]
pub async fn list_reports(admin: Admin, page: Query<PageQuery>) -> Reply {
    let (limit, after) = page.keyset()?;
    let rows = admin
        .state
        .db
        .run(move |conn| Ok(store::open_reports(conn, after, limit + 1)?))
        .await?;
    let (rows, next_cursor) = keyset_page(rows, limit, |r| (r.2, &r.0));
    let items = rows
        .iter()
        .map(
            |(id, why, at, reporter_id, reporter, message, author)| ReportView {
                id: id.parse().unwrap_or_default(),
                reason: why.clone(),
                created_at: at.and_utc(),
                reporter: crate::http::views::game::PlayerRef {
                    id: reporter_id.parse().unwrap_or_default(),
                    username: reporter.clone(),
                },
                game_id: message.game_id.parse().unwrap_or_default(),
                message: ChatMessageView::of(message, author),
            },
        )
        .collect();
    ok(ReportsPage { items, next_cursor })
}

/// Hide a chat message.
///
/// The message disappears for everyone: from the game's chat, and from its `chat_message`
/// event, whose text is removed (`hidden: true`). Its open reports are resolved. Audited.
#[utoipa::path(operation_id = "admin_hide_message", tag = "admin", security(("bearer" = [])),
    params(("message_id" = uuid::Uuid, Path, description = "Message id")),
    request_body = BanRequest,
    responses(
        (status = 200, description = "Hidden", body = HiddenMessageView),
        (status = 400, description = "Invalid reason"),
        (status = 404, description = "No such message"),
        (status = 409, description = "Hidden already (`already_hidden`)")))]
#[post("/admin/chat/{message_id}/hide")]
pub async fn hide_message(admin: Change<BanRequest>) -> Reply {
    let why = reason(&admin.input.0.reason)?;
    let message = admin.path.to_string();
    let (row, author) = admin
        .run(move |conn, admin_id| {
            let row = chat::hide(conn, admin_id, &message, &why)?;
            let author = crate::db::users::by_id(conn, &row.user_id)?
                .map(|u| u.username)
                .unwrap_or_default();
            Ok((row, author))
        })
        .await?;
    // The event changed: long-polls and streams of the game re-read it.
    admin.state.announce(&row.game_id, &[]);
    ok(HiddenMessageView {
        hidden_at: row.hidden_at.unwrap_or(row.created_at).and_utc(),
        message: ChatMessageView::of(&row, &author),
    })
}

/// The reports a dismissal took out of the queue.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DismissedReports {
    /// The message, left as it is.
    pub message_id: uuid::Uuid,
    /// How many open reports were dismissed.
    #[schema(minimum = 1)]
    pub dismissed: u32,
}

/// Dismiss the reports of a chat message.
///
/// Takes the message's open reports out of the moderators' queue and leaves the message as
/// it is: for a report that asks nothing of a moderator (a harmless message, a game long
/// over). Reports filed later by players who had not reported it yet queue again (each
/// player reports a message once). Audited (`dismiss_reports`).
#[utoipa::path(operation_id = "admin_dismiss_reports", tag = "admin", security(("bearer" = [])),
    params(("message_id" = uuid::Uuid, Path, description = "Message id")),
    request_body(content = Option<OptionalReason>, description = "Optional"),
    responses(
        (status = 200, description = "Dismissed", body = DismissedReports),
        (status = 400, description = "Invalid reason"),
        (status = 404, description = "No such message"),
        (status = 409, description = "No open report on the message (`no_open_reports`)")))]
#[post("/admin/chat/{message_id}/dismiss")]
pub async fn dismiss_reports(admin: Change<OptionalReason>) -> Reply {
    let why = optional_reason(admin.input.0.reason.as_deref())?;
    let message_id = *admin.path;
    let message = message_id.to_string();
    let dismissed = admin
        .run(move |conn, admin_id| chat::dismiss_reports(conn, admin_id, &message, why.as_deref()))
        .await?;
    ok(DismissedReports {
        message_id,
        dismissed: u32::try_from(dismissed).unwrap_or(u32::MAX),
    })
}

/// Mute an account.
///
/// Until `until`, the account cannot chat (403 `muted`) but plays on. `until: null` lifts
/// a mute. An administrator can neither mute nor unmute their own account (409
/// `own_account`): a mute another gave them stays until that one, or a third, lifts it.
/// Audited.
#[utoipa::path(operation_id = "admin_mute_user", tag = "admin", security(("bearer" = [])),
    params(("id" = uuid::Uuid, Path, description = "User id")),
    request_body = MuteRequest,
    responses(
        (status = 200, description = "The account with its mute", body = AdminUserView),
        (status = 400, description = "A time in the past or more than a year ahead, or an invalid reason"),
        (status = 404, description = "No such (live) account"),
        (status = 409, description = "The caller's own account (`own_account`)")))]
#[post("/admin/users/{id}/mute")]
pub async fn mute_user(admin: Change<MuteRequest>) -> Reply {
    let MuteRequest { until, reason: raw } = &admin.input.0;
    let why = reason(raw)?;
    let until = until.map(|t| t.naive_utc());
    admin
        .change_user(Some("mute or unmute"), move |conn, admin_id, target| {
            chat::mute(conn, admin_id, target, until, &why)
        })
        .await
}
