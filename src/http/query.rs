//! Query strings: actix's `web::Query` with one convention on top. A parameter given with
//! no value (`?status=`, or a bare `?status`) is a parameter not given, on every operation
//! alike: forms and URL templates send such empties (`?after=&limit=`), and a filter left
//! blank means no filter, not a malformed one. A parameter holding a NUL character (`%00`)
//! is refused, as in a JSON body (see `json_body`): no parameter means one, and PostgreSQL
//! cannot compare text with it. A refusal names the parameter it is about (`limit: invalid
//! digit found in string`), in the words of the value's parser, not of the extractor's.

use std::ops::Deref;

use actix_web::{FromRequest, HttpRequest, dev::Payload};
use serde::de::DeserializeOwned;

use crate::error::Error;

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
        std::future::ready(
            parse(&query)
                .map(Query)
                .map_err(|e| super::ApiError::from(e).into()),
        )
    }
}

/// `query` read as `T`; a refusal names the parameter at fault when there is one.
fn parse<T: DeserializeOwned>(query: &str) -> Result<T, Error> {
    let de = serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|err| {
        let at = err.path().to_string();
        let why = err.into_inner();
        Error::validation(if at == "." {
            format!("invalid query string: {why}")
        } else {
            format!("invalid query parameter {at}: {why}")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Page {
        limit: Option<i64>,
        status: Option<String>,
    }

    #[test]
    fn a_refusal_names_the_parameter_in_the_parser_s_words() {
        let detail = |q: &str| parse::<Page>(q).unwrap_err().detail().to_owned();
        assert_eq!(
            detail("limit=abc"),
            "invalid query parameter limit: invalid digit found in string"
        );
        assert_eq!(
            detail("status=a&status=b"),
            "invalid query string: duplicate field `status`"
        );
        let page = parse::<Page>("limit=5&status=x&other=1").unwrap();
        assert_eq!((page.limit, page.status.as_deref()), (Some(5), Some("x")));
    }

    #[test]
    fn empty_parameters_are_parameters_not_given() {
        assert_eq!(without_empties("after=&limit=5&status"), "limit=5");
        assert_eq!(without_empties("a=1&&b=%20&=x"), "a=1&b=%20");
        assert_eq!(without_empties(""), "");
    }
}
