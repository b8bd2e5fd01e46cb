//! Query strings: actix's `web::Query` with one convention on top. A parameter given with
//! no value (`?status=`, or a bare `?status`) is a parameter not given, on every operation
//! alike: forms and URL templates send such empties (`?after=&limit=`), and a filter left
//! blank means no filter, not a malformed one. A parameter holding a NUL character (`%00`)
//! is refused, as in a JSON body (see `json_body`): no parameter means one, and PostgreSQL
//! cannot compare text with it.

use std::ops::Deref;

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use serde::de::DeserializeOwned;

/// The query string read as `T`, empty parameters left out.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T> Query<T> {
    /// The parsed parameters.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Query<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// `raw` without its empty parameters.
fn without_empties(raw: &str) -> String {
    raw.split('&')
        .filter(|pair| match pair.split_once('=') {
            Some((key, value)) => !key.is_empty() && !value.is_empty(),
            None => false,
        })
        .collect::<Vec<_>>()
        .join("&")
}

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = actix_web::Error;
    type Future = std::future::Ready<Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        if req.query_string().contains("%00") {
            return std::future::ready(Err(super::ApiError::from(
                crate::error::Error::validation("a query parameter holds a NUL character (%00)"),
            )
            .into()));
        }
        let query = without_empties(req.query_string());
        std::future::ready(match web::Query::<T>::from_query(&query) {
            Ok(parsed) => Ok(Query(parsed.into_inner())),
            // The app's `QueryConfig` handler words the refusal, as for `web::Query`.
            Err(err) => Err(match req.app_data::<web::QueryConfig>() {
                Some(_) => super::query_error(err, req),
                None => actix_web::error::ErrorBadRequest(err),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_parameters_are_parameters_not_given() {
        assert_eq!(without_empties("after=&limit=5&status"), "limit=5");
        assert_eq!(without_empties("a=1&&b=%20&=x"), "a=1&b=%20");
        assert_eq!(without_empties(""), "");
    }
}
