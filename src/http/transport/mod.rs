//! The listening socket and the connections under actix's HTTP/1 parser.
//!
//! actix answers some requests itself, before any service or middleware of the app runs: a
//! request line or header it cannot parse (400), a head past its 128 KiB buffer or with more
//! than 96 header fields (431), a head that does not arrive within
//! `LEEKHA_CLIENT_REQUEST_TIMEOUT_MS` (408). Those answers have an empty body, and API.md
//! promises `application/problem+json` for every error. No actix setting reaches them, so
//! each connection is wrapped ([`ProblemIo`]): a write that is exactly one of those empty
//! answers (their status line, `content-length: 0`, nothing after the head) is replaced by
//! the same answer with a problem document. Everything else passes through untouched; the
//! check costs one prefix comparison per write.
//!
//! The wrapper also times the heads of the requests after a connection's first: actix arms
//! its head timer for the first request only, and its keep-alive timer stops at the first
//! byte of the next, so a second head left unfinished held the connection forever. From
//! the first byte of a head that follows an answer, the head's end must come within
//! `LEEKHA_CLIENT_REQUEST_TIMEOUT_MS`; past it the client gets 408 `request_timeout` and the
//! connection is closed, as for a first head.
//!
//! This replaces `actix_web::HttpServer` by what it does for a plain TCP listener (an
//! `actix_server` builder running `HttpService` over the app), with the wrapper between the
//! socket and the HTTP service.
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use actix_http::{HttpService, Protocol};
use actix_server::ServerBuilder;
use actix_service::{IntoServiceFactory, ServiceFactoryExt, fn_service, map_config};
use actix_web::dev::AppConfig;
use actix_web::http::KeepAlive;
use tokio::net::TcpStream;

use crate::app::AppState;

mod problem_io;

pub use problem_io::ProblemIo;

/// How stale actix-http's clock may be: it reads the time once every 500 ms, and sets the
/// deadlines of a connection's first request and of an idle one from that reading, so they
/// came up to half a second early (a 10 s wait closed after 9.7 s). Added to both, they come
/// at or after the time configured, and at most this much later.
const CLOCK_TICK: Duration = Duration::from_millis(500);

/// What the HTTP service needs beyond the app: the limits on a connection's time.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How long an idle connection is kept for a next request.
    pub keep_alive: KeepAlive,
    /// The time a request's head has to arrive.
    pub client_request_timeout: Duration,
}

/// Adds the app, served over HTTP/1 on `addr`, to `builder`; each connection is wrapped in
/// a [`ProblemIo`].
///
/// # Errors
/// When `addr` cannot be bound.
pub fn bind(
    builder: ServerBuilder,
    addr: SocketAddr,
    state: AppState,
    settings: Settings,
) -> io::Result<ServerBuilder> {
    let shutdown = builder.graceful_shutdown_signal();
    builder.bind("leekha-http", addr, move || {
        let shutdown = shutdown.clone();
        let app = super::build_app(state.clone())
            .into_factory()
            .map_err(|e| e.error_response());
        // As `HttpServer` configures its services by default, with our two settings.
        let http = HttpService::build()
            .graceful_shutdown_signal(move || {
                let shutdown = shutdown.clone();
                async move { shutdown.notified().await }
            })
            .keep_alive(match settings.keep_alive {
                KeepAlive::Timeout(idle) => KeepAlive::Timeout(idle + CLOCK_TICK),
                other => other,
            })
            .client_request_timeout(settings.client_request_timeout + CLOCK_TICK)
            .client_disconnect_timeout(Duration::from_secs(1))
            .h1_allow_half_closed(true)
            .local_addr(addr)
            // The app reads neither the host nor the address from its configuration (the
            // peer's address comes with each connection), and actix offers no other
            // public constructor.
            .finish(map_config(app, |()| AppConfig::default()));
        let head_timeout = settings.client_request_timeout;
        fn_service(move |io: TcpStream| async move {
            let peer = io.peer_addr().ok();
            let io = ProblemIo::new(io, head_timeout);
            Ok::<_, actix_http::error::DispatchError>((io, Protocol::Http1, peer))
        })
        .and_then(http)
    })
}

/// An HTTP/1.0 client reads no chunked body, and RFC 9112 (6.1) forbids sending it one: a
/// body whose length is not known up front (an event stream, a compressed answer) goes to
/// it as the bytes up to the connection's close. Sized bodies keep their `Content-Length`.
pub fn http10_without_chunks<B: actix_web::body::MessageBody>(
    res: &mut actix_web::dev::ServiceResponse<B>,
) {
    if res.request().version() != actix_web::http::Version::HTTP_10
        || !matches!(
            res.response().body().size(),
            actix_web::body::BodySize::Stream
        )
    {
        return;
    }
    let head = res.response_mut().head_mut();
    head.no_chunking(true);
    head.set_connection_type(actix_http::ConnectionType::Close);
}
