//! Answers for requests that match no handler: 405 with `Allow` when the path exists with
//! other methods, 404 otherwise. actix itself would answer 404 for both. And `HEAD` for
//! every documented `GET` ([`head_as_get`]), which actix routes only where a handler asks.

use std::future::Future;

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::Method;
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

    /// The table with `paths` added as answering `GET` (and so `HEAD`): the pages the
    /// document does not describe (itself, the web client, the docs' entry).
    pub fn with_pages(mut self, paths: &[&str]) -> Self {
        for path in paths {
            let segments = path
                .split('/')
                .map(|s| Segment::Literal(s.to_owned()))
                .collect();
            self.routes.push((segments, vec!["GET".to_owned()]));
        }
        self
    }

    /// The methods the given path accepts, if it is a known path: the documented ones, and
    /// `HEAD` wherever it is answered as a `GET` ([`Self::head_as_get`]).
    pub fn methods_for(&self, path: &str) -> Option<Vec<String>> {
        let mut methods = self.documented(path)?.to_vec();
        if self.head_as_get(path) {
            methods.push("HEAD".to_owned());
        }
        Some(methods)
    }

    /// Whether a `HEAD` of `path` is answered by its `GET` handler: the path has a `GET` and
    /// no `HEAD` of its own, and is not an event stream (whose `GET` never ends); or it is
    /// a file of the Swagger UI, whose service answers `GET` alone.
    pub fn head_as_get(&self, path: &str) -> bool {
        let documented = self.documented(path).is_some_and(|methods| {
            methods.iter().any(|m| m == "GET") && !methods.iter().any(|m| m == "HEAD")
        }) && !path.ends_with("/stream");
        documented || path.starts_with("/docs/")
    }

    fn documented(&self, path: &str) -> Option<&[String]> {
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
        Some(methods) if !methods.is_empty() => ApiError::method_not_allowed(methods),
        _ => Error::not_found(format!("no route for {} {}", req.method(), req.path())).into(),
    })
}

/// Middleware (for `App::wrap_fn`, innermost, before routing): a `HEAD` of a documented
/// `GET` resource is routed to its `GET` handler (RFC 9110 §9.3.2: the same status and
/// headers, no content). The HTTP/1.1 encoder, which saw the request's own method, sends the
/// head of the answer with its true `Content-Length` and drops the body.
pub fn head_as_get<S, B>(
    mut req: ServiceRequest,
    srv: &S,
) -> impl Future<Output = Result<ServiceResponse<B>, actix_web::Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    if req.method() == Method::HEAD
        && req
            .app_data::<web::Data<RouteTable>>()
            .is_some_and(|table| table.head_as_get(req.path()))
    {
        req.head_mut().method = Method::GET;
    }
    srv.call(req)
}
