//! A deadline on receiving a request's body.
//!
//! actix-web's `client_request_timeout` bounds the request *head* only: once the headers are
//! in, a handler waits on the body for as long as the client cares to keep it unfinished
//! (one byte of a `Content-Length: 100` body held a connection, and its file descriptor,
//! forever). This middleware gives the body the same time again: past it the body fails to
//! read and the answer is 408 `request_timeout`.
//!
//! actix closes a connection whose announced body was not read to its end, unless the body
//! is chunked and nobody holds it any more: then it reads the rest to keep the connection,
//! for as long as the client keeps sending. So the body is held until the response has been
//! written, and the connection is closed after it.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::{StatusCode, header};
use actix_web::web::Bytes;
use actix_web::{HttpMessage, ResponseError};
use futures_util::{FutureExt, Stream};

use super::problem::ApiError;

/// Middleware (for `App::wrap_fn`): the body must arrive within `timeout` of the head.
pub fn deadline<S, B>(
    mut req: ServiceRequest,
    srv: &S,
    timeout: Duration,
) -> impl Future<Output = Result<ServiceResponse<BoxBody>, actix_web::Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    S::Future: 'static,
    B: MessageBody + 'static,
{
    if !has_body(&req) {
        // Nothing to wait for, so no timer: most requests are GETs.
        return srv
            .call(req)
            .map(|res| res.map(ServiceResponse::map_into_boxed_body))
            .left_future();
    }
    let expired = Rc::new(Cell::new(false));
    let body = Rc::new(RefCell::new(req.take_payload()));
    req.set_payload(Payload::Stream {
        payload: Box::pin(Deadline {
            inner: body.clone(),
            timer: Box::pin(tokio::time::sleep(timeout)),
            expired: expired.clone(),
        }),
    });
    srv.call(req)
        .map(move |res| {
            let mut res = res?.map_into_boxed_body();
            if expired.get() {
                // Whatever the extractor made of the failed read (a 400), the cause was the
                // clock.
                let (req, _) = res.into_parts();
                let answer = ApiError::from_status(StatusCode::REQUEST_TIMEOUT).error_response();
                res = ServiceResponse::new(req, answer);
            }
            Ok(res.map_body(|_, answer| {
                BoxBody::new(Holding {
                    answer,
                    _body: body,
                })
            }))
        })
        .right_future()
}

/// Whether the head announces a body: a non-zero `Content-Length`, or any
/// `Transfer-Encoding` (chunked).
pub(super) fn has_body(req: &ServiceRequest) -> bool {
    let headers = req.headers();
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    headers
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.to_str().map_or(true, |v| v.trim() != "0"))
}

/// The request's body, failing once its timer runs out.
struct Deadline {
    inner: Rc<RefCell<Payload>>,
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
        let next = Pin::new(&mut *self.inner.borrow_mut()).poll_next(cx);
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

/// A response body that keeps the request's body alive until it is written: actix then
/// sees a body nobody finished reading and closes the connection, rather than reading on.
struct Holding {
    answer: BoxBody,
    _body: Rc<RefCell<Payload>>,
}

impl MessageBody for Holding {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.answer.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.answer).poll_next(cx)
    }
}
