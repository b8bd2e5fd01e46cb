//! The shape of the small middlewares that only adjust each answer's headers on its way out
//! (compression's marks, CORS's stray headers): [`each_response`] runs one such adjustment
//! around the inner service, so each stays a plain function of the response.

use std::future::Future;

use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use futures_util::FutureExt;

/// Middleware body (for `App::wrap_fn`): calls the inner service, then `adjust` on its
/// response. Errors pass through untouched; the error handlers make them responses later.
pub fn each_response<S, B>(
    req: ServiceRequest,
    srv: &S,
    adjust: fn(&mut ServiceResponse<B>),
) -> impl Future<Output = Result<ServiceResponse<B>, actix_web::Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    srv.call(req).map(move |res| {
        res.map(|mut res| {
            adjust(&mut res);
            res
        })
    })
}
