//! Accounts and authentication: register, login, guests, rotating refresh tokens
//! (`session.rs`), the caller's profile (`me.rs`). The use cases are [`crate::accounts`].

mod me;
mod session;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::app::AppState;
use crate::auth::Role;
use crate::db::users::UserRow;
use crate::error::{Error, RateLimit};
use crate::http::extract::client_key;

pub use me::{UpdateMe, UpdatedMe};
pub use session::{Credentials, RefreshRequest, TokenResponse};

routes! {
    session::{register, login, guest, refresh, logout},
    me::{me, update_me, delete_me},
}

/// Counts an attempt at `action` from the client's address and, when given, for the
/// account it targets (a username as typed, or a user id); refuses with 429 past the quota.
/// The limit's state is for the answer's `RateLimit-*` headers.
fn check_rate(
    state: &AppState,
    req: &actix_web::HttpRequest,
    action: &str,
    account: Option<&str>,
) -> Result<RateLimit, Error> {
    let ip = client_key(req, &state.config);
    let mut keys = vec![format!("{action}:ip:{ip}")];
    if let Some(name) = account {
        keys.push(format!("{action}:user:{}", name.to_ascii_lowercase()));
    }
    state.limits.check(&keys)
}

/// Per-player statistics.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserStats {
    /// Finished games the user had a seat in.
    pub games_played: i32,
    /// Of those, games the user won (or co-won).
    pub games_won: i32,
}

/// A user as the user sees themself.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct UserView {
    /// User id.
    pub id: uuid::Uuid,
    /// Username.
    #[schema(example = "layla_99")]
    pub username: String,
    /// `player` or `admin`.
    pub role: Role,
    /// A guest account (random username, no password yet).
    pub is_guest: bool,
    /// When the account was made.
    pub created_at: DateTime<Utc>,
    /// Statistics.
    pub stats: UserStats,
    /// Until when the user is away (`PUT /me/away`): bots play their seats. `null` when not
    /// away.
    #[schema(required = true)]
    pub away_until: Option<DateTime<Utc>>,
}

impl From<&UserRow> for UserView {
    fn from(u: &UserRow) -> Self {
        Self {
            id: u.id.parse().unwrap_or_default(),
            username: u.username.clone(),
            role: Role::parse(&u.role).unwrap_or(Role::Player),
            is_guest: u.is_guest,
            created_at: u.created_at.and_utc(),
            stats: UserStats {
                games_played: u.games_played,
                games_won: u.games_won,
            },
            away_until: u
                .away_until
                .filter(|t| *t > crate::db::now())
                .map(|t| t.and_utc()),
        }
    }
}
