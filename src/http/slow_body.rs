//! A deadline on receiving a request's body.
//!
//! actix-web's `client_request_timeout` bounds the request *head* only: once the headers are
//! in, a handler waits on the body for as long as the client cares to keep it unfinished
//! (one byte of a `Content-Length: 100` body held a connection, and its file descriptor,
//! forever). This middleware gives the body the same time again: past it the body fails to
//! read, the answer is 408 `request_timeout`, and actix closes the connection, because the
//! body it announced was never read to its end.

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::EitherBody;
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{HttpMessage, ResponseError};
use futures_util::{FutureExt, Stream};

use super::problem::ApiError;

/// Middleware (for `App::wrap_fn`): the body must arrive within `timeout` of the head.
pub fn deadline<S, B>(
    mut req: ServiceRequest,
    srv: &S,
    timeout: Duration,
) -> impl Future<Output = Result<ServiceResponse<EitherBody<B>>, actix_web::Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    S::Future: 'static,
    B: 'static,
{
    let expired = Rc::new(Cell::new(false));
    let body = Deadline {
        inner: req.take_payload(),
        timer: Box::pin(tokio::time::sleep(timeout)),
        expired: expired.clone(),
    };
    req.set_payload(Payload::Stream {
        payload: Box::pin(body),
    });
    srv.call(req).map(move |res| {
        let res = res?;
        if !expired.get() {
            return Ok(res.map_into_left_body());
        }
        // Whatever the extractor made of the failed read (a 400), the cause was the clock.
        let (req, _) = res.into_parts();
        let answer = ApiError::from_status(StatusCode::REQUEST_TIMEOUT).error_response();
        Ok(ServiceResponse::new(req, answer).map_into_right_body())
    })
}

/// The request's body, failing once its timer runs out.
struct Deadline {
    inner: Payload,
    timer: Pin<Box<tokio::time::Sleep>>,
    expired: Rc<Cell<bool>>,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired.get() {
            return Poll::Ready(None);
        }
        // What has arrived is handed on whenever it is read; the timer counts only while
        // the reader waits, which also bounds a body that trickles in byte by byte.
        let next = Pin::new(&mut self.inner).poll_next(cx);
        if next.is_pending() && self.timer.as_mut().poll(cx).is_ready() {
            self.expired.set(true);
            return Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the request body did not arrive in time",
            )))));
        }
        next
    }
}
