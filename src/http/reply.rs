//! What every handler has in common: the application state it is given, the reply it returns,
//! and the few shapes of a successful answer.

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::app::AppState;
use crate::http::problem::ApiError;

/// The application state, as handlers receive it.
pub type State = web::Data<AppState>;

/// A handler's answer: a response, or an error that becomes problem+json.
pub type Reply = Result<HttpResponse, ApiError>;

/// 200 with `view` as JSON.
///
/// # Errors
/// Never; a [`Reply`] so that handlers can end with it.
pub fn ok(view: impl Serialize) -> Reply {
    Ok(HttpResponse::Ok().json(view))
}

/// 201 with `Location: location` and `view` as JSON.
pub fn created(location: impl Into<String>, view: impl Serialize) -> HttpResponse {
    HttpResponse::Created()
        .insert_header((header::LOCATION, location.into()))
        .json(view)
}

/// 201 with `Location: location` when the request made something, else 200: the answer of
/// an idempotent `PUT` or `POST`.
pub fn made_or_held(created: bool, location: impl Into<String>, view: impl Serialize) -> Reply {
    Ok(if created {
        self::created(location, view)
    } else {
        HttpResponse::Ok().json(view)
    })
}

/// 204.
///
/// # Errors
/// Never; a [`Reply`] so that handlers can end with it.
pub fn no_content() -> Reply {
    Ok(HttpResponse::NoContent().finish())
}

/// What a keyset-paginated list takes besides its filters: the page size and where the page
/// starts. Declared once so that every such list documents and checks them alike; an
/// operation names it in `params(...)` beside its own query.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// 1..=200, default 50.
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The page size: 50 when absent.
    ///
    /// # Errors
    /// `validation_failed` outside 1..=200.
    pub fn size(&self) -> Result<i64, crate::error::Error> {
        crate::http::pagination::limit(self.limit, 50, 200)
    }

    /// The page size and the row of a `(time, id)` keyset the page starts after, if any.
    ///
    /// # Errors
    /// `validation_failed` for a size outside 1..=200 or a cursor that is not a keyset one.
    pub fn keyset(
        &self,
    ) -> Result<(i64, Option<(chrono::NaiveDateTime, String)>), crate::error::Error> {
        let size = self.size()?;
        let after = crate::http::pagination::Cursor::keyset(self.cursor.as_deref())?;
        Ok((size, after))
    }
}

/// Declares the answer of a keyset list, written as the struct it makes without the
/// derives and without the type of `next_cursor`, which every list answers alike: an
/// `Option<String>`, always present, documented by a standard sentence unless the
/// declaration documents a `pub next_cursor,` of its own.
macro_rules! keyset_page {
    (
        $(#[doc = $doc:literal])*
        pub struct $page:ident {
            $(#[doc = $items_doc:literal])*
            pub items: Vec<$item:ty>,
        }
    ) => {
        $crate::http::reply::keyset_page! {
            $(#[doc = $doc])*
            pub struct $page {
                $(#[doc = $items_doc])*
                pub items: Vec<$item>,
                /// Pass as `cursor` for the next page; null on the last page.
                pub next_cursor,
            }
        }
    };
    (
        $(#[doc = $doc:literal])*
        pub struct $page:ident {
            $(#[doc = $items_doc:literal])*
            pub items: Vec<$item:ty>,
            $(#[doc = $next_doc:literal])*
            pub next_cursor,
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        pub struct $page {
            $(#[doc = $items_doc])*
            pub items: Vec<$item>,
            $(#[doc = $next_doc])*
            #[schema(required = true)]
            pub next_cursor: Option<String>,
        }
    };
}
pub(crate) use keyset_page;
