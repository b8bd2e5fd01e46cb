//! The caller's profile: read, change, delete.

use actix_web::{HttpResponse, delete, get, patch, web};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::accounts::{self, ProfileChange};
use crate::app::AppState;
use crate::auth::{Password, Username};
use crate::http::extract::AuthUser;
use crate::http::problem::{ApiError, Problem};

use super::UserView;

/// Changes to the caller's account. A guest becomes a full account by setting a password.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMe {
    /// A new username.
    pub username: Option<String>,
    /// A new password (8–128 characters).
    #[schema(format = Password)]
    pub password: Option<String>,
    /// Required to change the password of an account that has one.
    #[schema(format = Password)]
    pub current_password: Option<String>,
}

/// The caller's profile.
///
/// The account's id, username, role, creation time and game statistics. Every request
/// re-checks the account, so a ban or a deletion takes effect at once.
#[utoipa::path(
    operation_id = "get_me",
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = UserView),
        (status = 401, description = "Missing, invalid or expired token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/me")]
pub async fn me(user: AuthUser) -> HttpResponse {
    HttpResponse::Ok().json(UserView::from(&user.user))
}

/// Rename, or change the password.
///
/// Changes the caller's username and/or password. A guest that sets a password becomes a
/// full account. Changing the password of a full account needs `current_password`. Renaming
/// frees the old username.
#[utoipa::path(
    operation_id = "update_me",
    tag = "accounts",
    security(("bearer" = [])),
    request_body = UpdateMe,
    responses(
        (status = 200, description = "The updated profile", body = UserView),
        (status = 400, description = "Invalid input", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Wrong current password (`invalid_credentials`) or banned", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Username taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[patch("/me")]
pub async fn update_me(
    state: web::Data<AppState>,
    user: AuthUser,
    body: web::Json<UpdateMe>,
) -> Result<HttpResponse, ApiError> {
    let UpdateMe {
        username,
        password,
        current_password,
    } = body.into_inner();
    let change = ProfileChange::new(
        username.as_deref().map(Username::parse).transpose()?,
        password.as_deref().map(Password::parse).transpose()?,
        current_password,
    )?;
    let updated = state
        .db
        .run(move |conn| accounts::update_me(conn, &user.user, change))
        .await?;
    Ok(HttpResponse::Ok().json(UserView::from(&updated)))
}

/// Delete the caller's account.
///
/// Deletes the caller's account: its sessions end, its username is freed, its past games
/// keep their record.
#[utoipa::path(
    operation_id = "delete_me",
    tag = "accounts",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Banned", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/me")]
pub async fn delete_me(
    state: web::Data<AppState>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    state
        .db
        .run(move |conn| accounts::delete_me(conn, user.id()))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
