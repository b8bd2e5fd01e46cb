//! Request extractors shared by handlers: the caller ([`Caller`], [`AuthUser`],
//! [`AdminUser`]), the client's address ([`client_key`]), request bodies ([`Json`],
//! [`OptionalJson`]), and the one shape of a handler group's arguments ([`Call`]).

use std::future::Future;
use std::pin::Pin;

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};

use crate::app::AppState;
use crate::error::Error;

mod body;
mod caller;
mod client;

pub use body::{
    Json, OptionalJson, body_limit, is_json, json_problem, unreadable_body, unsupported_media_type,
};
pub use caller::{AdminUser, AuthUser, Caller};
pub use client::client_key;

/// What every handler of a group takes, extracted as one: the state, the caller (an
/// [`AuthUser`] or an [`AdminUser`]), what the path names and what else the route reads
/// (a body or a query; `()` where it reads nothing).
///
/// Extracted from the tuple `(State, U, P, I)`, the arguments the handlers took one by one
/// before, so the same request meets the same error first.
#[derive(Debug)]
pub struct Call<U, P = (), I = ()> {
    /// The application state.
    pub state: web::Data<AppState>,
    /// The caller.
    pub user: U,
    /// What the path names.
    pub path: P,
    /// The body or the query.
    pub input: I,
}

impl<U, P, I> Call<U, P, I> {
    /// Splits off the body or query, for a handler that consumes it and goes on with the
    /// rest.
    pub fn split(self) -> (Call<U, P>, I) {
        let Call {
            state,
            user,
            path,
            input,
        } = self;
        let rest = Call {
            state,
            user,
            path,
            input: (),
        };
        (rest, input)
    }
}

impl<U, P, I> FromRequest for Call<U, P, I>
where
    U: FromRequest + 'static,
    P: FromRequest + 'static,
    I: FromRequest + 'static,
{
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let parts = <(web::Data<AppState>, U, P, I)>::from_request(req, payload);
        Box::pin(async move {
            let (state, user, path, input) = parts.await?;
            Ok(Self {
                state,
                user,
                path,
                input,
            })
        })
    }
}

/// A signed-in user's request, as the handlers of the caller's own things take it: the
/// state, the caller, what the path names and the body or query the route reads.
pub type Mine<P = (), I = ()> = Call<AuthUser, P, I>;

impl<P, I> Mine<P, I> {
    /// Runs `use_case(conn, caller_id)` on the blocking pool: the one shape of a handler's
    /// database round for the caller.
    ///
    /// # Errors
    /// What the use case returns, and pool errors.
    pub async fn mine<T, F>(&self, use_case: F) -> Result<T, Error>
    where
        F: FnOnce(&mut crate::db::AnyConnection, &str) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        self.user.run(&self.state, use_case).await
    }
}

/// The seat a path names (`/seats/{seat}`), read from its text so that 4, 256, -1 and `x`
/// are all refused alike, by what a seat is.
///
/// # Errors
/// `validation_failed` for anything but 0..=3.
pub fn path_seat(raw: &str) -> Result<crate::rules::Seat, Error> {
    raw.parse()
        .ok()
        .and_then(crate::rules::Seat::new)
        .ok_or_else(|| Error::validation(format!("seat must be 0..=3, got {raw:?}")))
}
