//! Friends and blocks: `/me/friends` and `/me/blocks`.

use actix_web::{delete, get, put, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db::AnyConnection;
use crate::error::Error;
use crate::http::extract::Mine;
use crate::http::pagination::{PageQuery, keyset_page, page};
use crate::http::query::Query;
use crate::http::reply::{Reply, made_or_held, no_content, ok};
use crate::http::views::game::PlayerRef;
use crate::social::{self, Person, Relation};

routes! {
    self::{list_friends, put_friend, delete_friend, list_blocks, put_block, delete_block},
}

/// Another user in the caller's lists.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RelatedUser {
    /// Who.
    pub user: PlayerRef,
    /// Since when: the request, the friendship (when the second request came) or the block.
    pub since: DateTime<Utc>,
}

impl From<&Person> for RelatedUser {
    fn from(p: &Person) -> Self {
        Self {
            user: PlayerRef {
                id: p.id.parse().unwrap_or_default(),
                username: p.username.clone(),
            },
            since: p.since.and_utc(),
        }
    }
}

/// The caller's friends and pending requests, each by username.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FriendsView {
    /// Users who asked the caller and whom the caller asked.
    pub friends: Vec<RelatedUser>,
    /// Requests to the caller not answered yet: `PUT /me/friends/{username}` accepts one,
    /// `DELETE` declines it.
    pub incoming: Vec<RelatedUser>,
    /// The caller's requests not answered yet.
    pub outgoing: Vec<RelatedUser>,
}

/// Where the caller stands with another user after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FriendState {
    /// The caller has asked; the other has not.
    Requested,
    /// Both have asked.
    Friends,
}

/// The caller's relation to one user after `PUT /me/friends/{username}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct FriendView {
    /// Who.
    pub user: PlayerRef,
    /// `requested` or `friends`.
    pub state: FriendState,
}

page! {
    /// A page of the users the caller blocks.
    pub struct BlocksView {
        /// The latest blocked first (`since` descending).
        pub items: Vec<RelatedUser>,
    }
}

/// The caller's friends and requests.
///
/// Friends (both asked), requests to the caller (`incoming`) and the caller's own
/// (`outgoing`), each sorted by username. A user has at most 500 friends and requests
/// together, so the lists are not paginated.
#[utoipa::path(operation_id = "list_friends", tag = "social", security(("bearer" = [])),
    responses((status = 200, description = "Friends and pending requests", body = FriendsView)))]
#[get("/me/friends")]
pub async fn list_friends(me: Mine) -> Reply {
    let friends = me.mine(social::friends).await?;
    let list = |people: &[Person]| people.iter().map(RelatedUser::from).collect();
    ok(FriendsView {
        friends: list(&friends.friends),
        incoming: list(&friends.incoming),
        outgoing: list(&friends.outgoing),
    })
}

/// Ask a user to be friends, or accept their request.
///
/// Two requests make friends: when `username` has asked the caller already, they are
/// friends now (`state: friends`); otherwise the request waits for theirs
/// (`state: requested`). A new request notifies the other user (`friend_request`, with
/// `friends` in its data), except a request that follows, within 24 hours, one of the
/// caller's that notified them (withdrawn or declined since): that one is recorded without
/// a notification. Asking again changes nothing (200). Refused when either user blocks the
/// other.
#[utoipa::path(operation_id = "put_friend", tag = "social", security(("bearer" = [])),
    params(("username" = String, Path, description = "The other user's username")),
    responses(
        (status = 201, description = "Asked, or friends now; `Location` is the caller's list of friends", body = FriendView),
        (status = 200, description = "Already asked, or friends already", body = FriendView),
        (status = 400, description = "The caller's own name, or a name no account can have"),
        (status = 403, description = "One of the two blocks the other (`blocked`)"),
        (status = 404, description = "No such user, or a banned one (out of sight, as their profile is)"),
        (status = 409, description = "At most 500 friends and requests (`too_many_friends`)")))]
#[put("/me/friends/{username}")]
pub async fn put_friend(on: About) -> Reply {
    let changed = on.about(social::request_friend).await?;
    on.state.announce_users(&changed.notified);
    let view = FriendView {
        user: RelatedUser::from(&changed.other).user,
        state: match changed.value {
            Relation::Requested => FriendState::Requested,
            Relation::Friends => FriendState::Friends,
        },
    };
    made_or_held(changed.created, "/api/v1/me/friends", view)
}

/// End a friendship, withdraw a request or decline one.
///
/// Whatever holds between the caller and `username` (a friendship, a request either way)
/// ends; nothing to end is no error.
#[utoipa::path(operation_id = "delete_friend", tag = "social", security(("bearer" = [])),
    params(("username" = String, Path, description = "The other user's username")),
    responses(
        (status = 204, description = "Nothing holds between the two any more"),
        (status = 400, description = "The caller's own name, or a name no account can have"),
        (status = 404, description = "No such user")))]
#[delete("/me/friends/{username}")]
pub async fn delete_friend(on: About) -> Reply {
    on.about(social::remove_friend).await?;
    no_content()
}

/// The users the caller blocks.
///
/// The latest blocked first, a page at a time (at most 1,000 blocks in all).
#[utoipa::path(operation_id = "list_blocks", tag = "social", security(("bearer" = [])),
    params(PageQuery),
    responses(
        (status = 200, description = "A page of the blocked users", body = BlocksView),
        (status = 400, description = "Invalid limit or cursor")))]
#[get("/me/blocks")]
pub async fn list_blocks(me: Mine<(), Query<PageQuery>>) -> Reply {
    let (limit, before) = me.input.keyset()?;
    let blocked = me
        .mine(move |conn, id| social::blocks(conn, id, before, limit + 1))
        .await?;
    let (blocked, next_cursor) = keyset_page(blocked, limit, |p| (p.since, &p.id));
    ok(BlocksView {
        items: blocked.iter().map(RelatedUser::from).collect(),
        next_cursor,
    })
}

/// Block a user.
///
/// The blocked user can no longer join a game where the caller sits, invite the caller or
/// ask the caller to be friends (403 `blocked`); any friendship or request between the two
/// ends, and their invitations to the waiting games where the caller sits are withdrawn (the
/// seat opens: `seat_changed`, reason `invite_withdrawn`). Games already under way go on.
/// Blocking again changes nothing (200).
#[utoipa::path(operation_id = "put_block", tag = "social", security(("bearer" = [])),
    params(("username" = String, Path, description = "The user to block")),
    responses(
        (status = 201, description = "Blocked; `Location` is the caller's list of blocks", body = RelatedUser),
        (status = 200, description = "Blocked already", body = RelatedUser),
        (status = 400, description = "The caller's own name, or a name no account can have"),
        (status = 404, description = "No such user"),
        (status = 409, description = "At most 1,000 blocked users (`too_many_blocks`)")))]
#[put("/me/blocks/{username}")]
pub async fn put_block(on: About) -> Reply {
    let (changed, withdrawn) = on.about(crate::games::block).await?;
    for done in &withdrawn {
        on.state.published(done);
    }
    let view = RelatedUser::from(&changed.other);
    made_or_held(changed.created, "/api/v1/me/blocks", view)
}

/// Unblock a user.
///
/// Lifts the caller's block; nothing to lift is no error. Friendships it ended stay ended.
#[utoipa::path(operation_id = "delete_block", tag = "social", security(("bearer" = [])),
    params(("username" = String, Path, description = "The user to unblock")),
    responses(
        (status = 204, description = "Not blocked (any more)"),
        (status = 400, description = "The caller's own name, or a name no account can have"),
        (status = 404, description = "No such user")))]
#[delete("/me/blocks/{username}")]
pub async fn delete_block(on: About) -> Reply {
    on.about(social::unblock).await?;
    no_content()
}

/// A change of the caller's relation to the user the path names.
type About = Mine<web::Path<String>>;

impl About {
    /// Runs `change(conn, caller_id, username)`: the one database round of every change of
    /// a relation. A name no account can have is refused first (400), as the public
    /// profile does.
    async fn about<T: Send + 'static>(
        &self,
        change: fn(&mut AnyConnection, &str, &str) -> Result<T, Error>,
    ) -> Result<T, Error> {
        crate::auth::Username::parse(&self.path)?;
        let other = self.path.clone();
        self.mine(move |conn, me| change(conn, me, &other)).await
    }
}
