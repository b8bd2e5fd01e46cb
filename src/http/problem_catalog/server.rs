//! The problems of limits and of the server itself: rate limits, oversized heads,
//! internal errors and an unreachable database.

use super::{ProblemCode, entry};

/// 429 to 503.
pub(super) static SERVER: &[ProblemCode] = &[
    // 429
    entry(
        "rate_limited",
        429,
        "Too many requests",
        "Too many attempts from this address or for this username on register, login, guest or \
         refresh; too many chat messages; or, for one user, too many open event streams and \
         long-polls on one instance (32).",
        "Wait the seconds that `Retry-After` gives; `RateLimit-Remaining` and `RateLimit-Reset` \
         tell how many attempts are left and when the quota is whole again.",
    ),
    // 431
    entry(
        "headers_too_large",
        431,
        "Request head too large",
        "The request head is over 128 KiB, or has more than 96 header fields; the HTTP parser \
         refuses it before the request is read, and closes the connection.",
        "Send fewer or shorter headers (a shorter URL).",
    ),
    // 500
    entry(
        "internal",
        500,
        "Internal error",
        "A bug or an unexpected failure. The details are in the server's log, under the request \
         id (`X-Request-Id`); they are never sent.",
        "Retry later; report the request id if it persists.",
    ),
    // 503
    entry(
        "database_unavailable",
        503,
        "Database unavailable",
        "The database cannot be reached now.",
        "Retry after the seconds that `Retry-After` gives.",
    ),
    entry(
        "not_migrated",
        503,
        "Database not migrated",
        "The database is reachable but lacks migrations this server needs (readiness probe).",
        "Operators: run `leekha migrate`. Clients: retry later.",
    ),
    entry(
        "too_many_streams",
        503,
        "Too many open streams",
        "This instance holds as many event streams and waiting long-polls as it is configured \
         to (`LEEKHA_MAX_STREAMS`).",
        "Retry after the seconds that `Retry-After` gives (another instance may take it), or \
         close a stream you no longer need.",
    ),
    entry(
        "unavailable",
        503,
        "Service unavailable",
        "The server cannot answer now (a layer below the handlers refused the request).",
        "Retry later.",
    ),
];
