//! Statistics and the audit log.

use actix_web::get;
use serde_json::json;

use crate::db::admin::{self as store, AuditRow};
use crate::db::{self, games as games_store};
use crate::games::GameStatus;
use crate::http::pagination::{PageQuery, Paged, keyset_page};
use crate::http::reply::{Reply, ok};
use crate::http::views::game::PlayerRef;

use super::views::{ActionCounts, AuditEntryView, AuditPage, GameCounts, StatsView, UserCounts};
use super::{Admin, AuditQuery};

/// Server counts.
///
/// Counts: accounts, games by status (and how many finished ones were rated), actions
/// applied in the last hour and day. For a
/// dashboard: computed from the database on each call, so they agree across instances.
#[utoipa::path(operation_id = "admin_stats", tag = "admin", security(("bearer" = [])),
    responses((status = 200, description = "The counts", body = StatsView)))]
#[get("/admin/stats")]
pub async fn stats(admin: Admin) -> Reply {
    let now = db::now();
    let (counts, rated) = admin
        .state
        .db
        .run(move |conn| Ok((store::stats(conn, now)?, db::ratings::rated_games(conn)?)))
        .await?;
    let mut games = GameCounts {
        rated,
        ..GameCounts::default()
    };
    for (status, n) in counts.games_by_status {
        games.total += n;
        match status {
            GameStatus::Waiting => games.waiting += n,
            GameStatus::Active => games.active += n,
            GameStatus::Finished => games.finished += n,
            GameStatus::Aborted => games.aborted += n,
        }
    }
    ok(StatsView {
        users: UserCounts {
            total: counts.users,
            banned: counts.banned,
            admins: counts.admins,
            guests: counts.guests,
        },
        games,
        actions: ActionCounts {
            last_hour: counts.actions_last_hour,
            last_day: counts.actions_last_day,
        },
        generated_at: now.and_utc(),
    })
}

/// The audit log.
///
/// The audit log, newest first: every administrator action and every full read of a game.
/// Filter by `action` and by `target_id`; paginated with `limit` and `cursor`.
#[utoipa::path(operation_id = "admin_audit_log", tag = "admin", security(("bearer" = [])),
    params(AuditQuery, PageQuery),
    responses((status = 200, description = "A page of the audit log", body = AuditPage)))]
#[get("/admin/audit")]
pub async fn audit_log(admin: Admin<(), Paged<AuditQuery>>) -> Reply {
    let (query, page) = &admin.input;
    let (limit, before) = page.keyset()?;
    let action = query
        .action
        .and_then(|a| serde_json::to_value(a).ok())
        .and_then(|v| v.as_str().map(str::to_owned));
    let target = query.target_id.map(|id| id.to_string());
    let audit = admin
        .state
        .db
        .run(move |conn| {
            let rows = store::audit_page(
                conn,
                action.as_deref(),
                target.as_deref(),
                before,
                limit + 1,
            )?;
            let (rows, next_cursor) =
                keyset_page(rows, limit, |a: &AuditRow| (a.created_at, &a.id));
            let ids: Vec<String> = rows.iter().map(|r| r.admin_id.clone()).collect();
            let names: std::collections::HashMap<String, String> =
                games_store::usernames(conn, &ids)?.into_iter().collect();
            let items = rows
                .into_iter()
                .map(|r| AuditEntryView {
                    id: r.id.parse().unwrap_or_default(),
                    admin: PlayerRef {
                        id: r.admin_id.parse().unwrap_or_default(),
                        username: names
                            .get(&r.admin_id)
                            .cloned()
                            .unwrap_or_else(|| "deleted".into()),
                    },
                    details: serde_json::from_str(&r.details).unwrap_or(json!({})),
                    action: r.action,
                    target_type: r.target_type,
                    target_id: r.target_id,
                    reason: r.reason,
                    created_at: r.created_at.and_utc(),
                })
                .collect();
            Ok(AuditPage { items, next_cursor })
        })
        .await?;
    ok(audit)
}
