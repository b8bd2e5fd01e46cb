//! Answers for requests that match no handler: 405 with `Allow` when the path exists with
//! other methods, 404 otherwise. actix itself would answer 404 for both.

use actix_web::{HttpRequest, web};
use utoipa::openapi::OpenApi;

use crate::error::Error;
use crate::http::problem::ApiError;
use crate::http::reply::Reply;

/// The documented paths and their methods, taken from the OpenAPI document.
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<(Vec<Segment>, Vec<String>)>,
}

#[derive(Debug)]
enum Segment {
    Literal(String),
    Param,
}

impl RouteTable {
    /// Builds the table from the generated document.
    pub fn from_openapi(api: &OpenApi) -> Self {
        let routes = api
            .paths
            .paths
            .iter()
            .map(|(path, item)| {
                let segments = path
                    .split('/')
                    .map(|s| {
                        if s.starts_with('{') && s.ends_with('}') {
                            Segment::Param
                        } else {
                            Segment::Literal(s.to_owned())
                        }
                    })
                    .collect();
                let mut methods = Vec::new();
                for (name, op) in [
                    ("GET", &item.get),
                    ("PUT", &item.put),
                    ("POST", &item.post),
                    ("DELETE", &item.delete),
                    ("PATCH", &item.patch),
                    ("HEAD", &item.head),
                ] {
                    if op.is_some() {
                        methods.push(name.to_owned());
                    }
                }
                (segments, methods)
            })
            .collect();
        Self { routes }
    }

    /// The methods the given path accepts, if it is a known path.
    pub fn methods_for(&self, path: &str) -> Option<&[String]> {
        let parts: Vec<&str> = path.split('/').collect();
        self.routes.iter().find_map(|(segments, methods)| {
            let matches = segments.len() == parts.len()
                && segments.iter().zip(&parts).all(|(seg, part)| match seg {
                    Segment::Literal(lit) => lit == part,
                    Segment::Param => !part.is_empty(),
                });
            matches.then_some(methods.as_slice())
        })
    }
}

/// The default service.
pub async fn unmatched(req: HttpRequest, table: web::Data<RouteTable>) -> Reply {
    Err(match table.methods_for(req.path()) {
        Some(methods) if !methods.is_empty() => ApiError::method_not_allowed(methods.to_vec()),
        _ => Error::not_found(format!("no route for {} {}", req.method(), req.path())).into(),
    })
}
