//! Every problem `code` this server can answer, with its status and an explanation: the
//! one list behind the problem `type` URIs (`/problems/{code}`), the pages served there and
//! the enumeration of codes in the OpenAPI document.
//!
//! A test reads the sources for the codes passed to the error constructors, the rules'
//! codes and the codes of bare statuses, and fails when one is missing here (or when an entry
//! here is emitted nowhere).

/// One problem code: what a client reads at `/problems/{code}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemCode {
    /// The stable machine-readable code, as in the problem's `code` field.
    pub code: &'static str,
    /// The HTTP status it comes with. A code answered with another status in one place says
    /// so in its explanation.
    pub status: u16,
    /// A short summary of the problem type, as in the problem's `title` field.
    pub title: &'static str,
    /// What it means.
    pub explanation: &'static str,
    /// What the client should do about it.
    pub advice: &'static str,
}

/// The path prefix of problem type URIs.
pub const PROBLEM_TYPE_PREFIX: &str = "/problems/";

/// The problem `type` of a code: a URI reference relative to this server (RFC 9457 §3.1.1).
pub fn type_uri(code: &str) -> String {
    format!("{PROBLEM_TYPE_PREFIX}{code}")
}

/// The catalog entry of a code.
pub fn find(code: &str) -> Option<&'static ProblemCode> {
    PROBLEM_CODES.iter().find(|p| p.code == code)
}

const fn entry(
    code: &'static str,
    status: u16,
    title: &'static str,
    explanation: &'static str,
    advice: &'static str,
) -> ProblemCode {
    ProblemCode {
        code,
        status,
        title,
        explanation,
        advice,
    }
}

const RELOAD: &str = "Reload the game (`GET /api/v1/games/{id}`) and act on what it says now.";
const LEGAL: &str = "Choose among the game view's `legal_actions`; `GET /api/v1/games/{id}/hint` \
                     suggests one. Do not retry the same action.";

/// Every problem code the server can answer, grouped by status.
pub static PROBLEM_CODES: &[ProblemCode] = &[
    // 400
    entry(
        "bad_request",
        400,
        "Malformed request",
        "The request could not be read: malformed JSON, a path id that is not a UUID, a header \
         such as `If-Match` that is not of the expected form. Also the code of any other 4xx \
         status that has no code of its own.",
        "Fix the request as `detail` says; sending it again unchanged gets the same answer.",
    ),
    entry(
        "validation_failed",
        400,
        "Invalid input",
        "The request is well-formed, but a field or a query parameter breaks a stated rule: a \
         wrong type, a value out of range, an unknown value or an unknown field.",
        "Correct the field that `detail` names; the OpenAPI document gives the limits.",
    ),
    entry(
        "invalid_rules",
        400,
        "Invalid rule options",
        "The rule options of a new game name an unknown preset, option or value, give an \
         option in another form than the schema's (a string; `target_score` a number), or do \
         not go together (a `target_score` outside 1..=1000).",
        "Use the presets and option values of the `rules` schema.",
    ),
    entry(
        "invalid_card",
        400,
        "Unknown card code",
        "A card in the action is not one of the 52 codes (`QS`, `10D`, `AH`; `T` is accepted \
         for ten).",
        "Send card codes as the game view shows them.",
    ),
    entry(
        "webhook_url_not_allowed",
        400,
        "Webhook URL not allowed",
        "The webhook URL is not an `http` or `https` URL, carries credentials, does not \
         resolve, or resolves to a private or loopback address, which this server does not call.",
        "Register a public `https` URL.",
    ),
    entry(
        "push_endpoint_not_allowed",
        400,
        "Push endpoint not allowed",
        "The Web Push endpoint is not an `https` URL, carries credentials, does not resolve, or \
         resolves to a private or loopback address, which this server does not call.",
        "Register the subscription the browser's push service gave, unchanged.",
    ),
    // 401
    entry(
        "missing_token",
        401,
        "Missing access token",
        "The operation needs an access token and the request carries none.",
        "Send `Authorization: Bearer <access token>`, from `POST /api/v1/auth/login`, \
         `/register`, `/guest` or `/refresh`.",
    ),
    entry(
        "invalid_token",
        401,
        "Invalid or expired token",
        "The access token is malformed, signed with another key, expired, or names an account \
         that no longer exists; or the refresh token presented is unknown, expired, already \
         spent or revoked.",
        "Refresh the session with `POST /api/v1/auth/refresh`; when the refresh token is refused \
         too, log in again.",
    ),
    entry(
        "invalid_credentials",
        401,
        "Wrong username or password",
        "Login with an unknown username or a wrong password (the two get the same answer). \
         Changing the password with `PATCH /api/v1/me` answers it with 403 when the current \
         password given is wrong.",
        "Ask the person for the credentials again; repeated attempts are rate limited.",
    ),
    // 403
    entry(
        "forbidden",
        403,
        "Not allowed",
        "The caller is authenticated but may not do this, e.g. an administration operation \
         without the `admin` role.",
        "Do not retry; the operation needs other rights.",
    ),
    entry(
        "banned",
        403,
        "Account banned",
        "The account is banned: it can neither log in nor use its tokens.",
        "Tell the person; only an administrator can lift a ban.",
    ),
    entry(
        "muted",
        403,
        "Muted",
        "A moderator muted the account until the time the detail names: it plays on but \
         cannot chat.",
        "Wait until then; quick phrases are muted too.",
    ),
    entry(
        "blocked",
        403,
        "Blocked",
        "One of the two users blocks the other: a blocked user cannot join a game where the \
         blocker sits, invite the blocker or ask them to be friends, and a user who blocks \
         another cannot ask them to be friends before unblocking them.",
        "Do not retry; choose another table or player.",
    ),
    entry(
        "not_seated",
        403,
        "Not seated in this game",
        "The caller holds no seat (nor an invitation) in this game, so it cannot act, leave, \
         resign, reclaim, ask for a hint, chat or read the replay. A player whose seat a bot \
         holds for good (they resigned, or an administrator handed it over) is seen as a \
         spectator until the game ends: no hint, and the chat is theirs to read only.",
        "Join the game first, if it is still waiting for players.",
    ),
    // 404
    entry(
        "not_found",
        404,
        "Not found",
        "No such resource or route, or one the caller may not know of (a private game, a game \
         without spectators).",
        "Check the id or path; do not retry.",
    ),
    entry(
        "not_rated",
        404,
        "Not rated yet",
        "The caller has no rating on this board: no rated game of this mode finished with them \
         seated yet (or they are not listed).",
        "Read the board from the top (without `around`), or finish a rated game first.",
    ),
    // 405
    entry(
        "method_not_allowed",
        405,
        "Method not allowed",
        "The path exists but does not accept this method.",
        "Use one of the methods that the `Allow` header lists.",
    ),
    // 406
    entry(
        "not_acceptable",
        406,
        "No acceptable encoding",
        "`Accept-Encoding` refuses every content coding the server can send, `identity` \
         included.",
        "Accept `identity`, `gzip` or `br`.",
    ),
    // 408
    entry(
        "request_timeout",
        408,
        "Request timeout",
        "The request was not received completely in time.",
        "Send it again.",
    ),
    // 409
    entry(
        "conflict",
        409,
        "Conflict",
        "The resource changed or already exists: a concurrent request created the same thing.",
        "Reload the resource, then decide whether to retry.",
    ),
    entry(
        "version_conflict",
        409,
        "Version conflict",
        "The game is not at the version the request expected (`If-Match` or \
         `expected_version`; the problem's `current_version` is the one it is at), or a \
         concurrent change won.",
        RELOAD,
    ),
    entry(
        "username_taken",
        409,
        "Username taken",
        "Another account has this username (ignoring case).",
        "Choose another username.",
    ),
    entry(
        "too_many_games",
        409,
        "Too many waiting games",
        "The caller already created the largest number of games that may wait for players at \
         once (20).",
        "Start or leave some of the waiting games first.",
    ),
    entry(
        "too_many_active_games",
        409,
        "Too many running games",
        "The caller already holds seats in the largest number of running games this server \
         allows per user (`LEEKHA_MAX_ACTIVE_GAMES_PER_USER`, 100 by default).",
        "Finish some of your running games first.",
    ),
    entry(
        "game_not_waiting",
        409,
        "Game no longer waiting",
        "The game has started or ended, so its seats can no longer be joined or left.",
        "Resign instead of leaving a started game; look for another game to join.",
    ),
    entry(
        "already_seated",
        409,
        "Already seated",
        "The caller already holds a seat in this game.",
        "Nothing to do: the caller is in the game.",
    ),
    entry(
        "seat_taken",
        409,
        "Seat taken",
        "The seat asked for is taken, or reserved for an invited user.",
        "Join without a seat number to take the first open seat, or choose another.",
    ),
    entry(
        "game_full",
        409,
        "Game full",
        "Every seat of the game is taken or reserved.",
        "Join another game.",
    ),
    entry(
        "game_not_active",
        409,
        "Game not in play",
        "The game has not started yet, is over, or was aborted, so this cannot be done now \
         (a card or a pass on a finished game is 422 `game_over`).",
        RELOAD,
    ),
    entry(
        "already_resigned",
        409,
        "Already resigned",
        "A bot plays the caller's seat for the rest of the game already: the caller resigned \
         it, or an administrator handed it to a bot.",
        "Nothing to do.",
    ),
    entry(
        "nothing_to_reclaim",
        409,
        "Nothing to reclaim",
        "No bot took the caller's seat for timeouts, so there is nothing to take back.",
        "Play the seat as usual.",
    ),
    entry(
        "seat_controlled_by_bot",
        409,
        "Seat played by a bot",
        "A bot plays this seat now: the player resigned, timed out twice in a row, or an \
         administrator handed the seat over.",
        "Reclaim the seat (`POST /api/v1/games/{id}/reclaim`) when a timeout gave it to the \
         bot; otherwise the bot keeps it.",
    ),
    entry(
        "game_not_finished",
        409,
        "Game not finished",
        "The replay of a game opens, and a rematch can be asked for, when the game is over.",
        "Wait for the game to end.",
    ),
    entry(
        "rematch_unavailable",
        409,
        "Rematch unavailable",
        "The rematch of this game has no seat for the caller: it started without them, or \
         while it waits every seat is taken or kept for an invited player. (While a seat is \
         open, a request seats them, also after declining its invitation; once the rematch is \
         aborted, a request makes a new one.)",
        "Look for another game, or create one.",
    ),
    entry(
        "nothing_to_do",
        409,
        "Nothing to do",
        "A hint was asked for while the caller has nothing to do in the game.",
        "Wait for the caller's turn (long-poll the game or its events).",
    ),
    entry(
        "already_banned",
        409,
        "Already banned",
        "The account is banned already.",
        "Nothing to do.",
    ),
    entry(
        "not_banned",
        409,
        "Not banned",
        "The account is not banned, so there is no ban to lift.",
        "Nothing to do.",
    ),
    entry(
        "own_account",
        409,
        "Own account",
        "Administrators cannot ban, demote, mute or unmute their own account.",
        "Ask another administrator.",
    ),
    entry(
        "chat_closed",
        409,
        "Chat closed",
        "The game is over: its chat can be read but not written.",
        "Start a rematch or another game to talk on.",
    ),
    entry(
        "already_hidden",
        409,
        "Already hidden",
        "The chat message is hidden already.",
        "Nothing to do.",
    ),
    entry(
        "no_open_reports",
        409,
        "No open reports",
        "The chat message has no report waiting for a moderator: none was filed, or each was \
         dealt with already (the message hidden, or its reports dismissed).",
        "Nothing to do; `GET /api/v1/admin/reports` lists the open ones.",
    ),
    entry(
        "too_many_friends",
        409,
        "Too many friends",
        "A user has at most 500 friends and friend requests (made or received) together.",
        "End a friendship or withdraw a request (`DELETE /api/v1/me/friends/{username}`) first.",
    ),
    entry(
        "too_many_blocks",
        409,
        "Too many blocks",
        "A user blocks at most 1,000 others.",
        "Unblock someone (`DELETE /api/v1/me/blocks/{username}`) first.",
    ),
    // 413
    entry(
        "payload_too_large",
        413,
        "Body too large",
        "The request body is larger than the server accepts (`LEEKHA_MAX_BODY_BYTES`, 64 KiB \
         by default).",
        "Send a smaller body.",
    ),
    // 415
    entry(
        "unsupported_media_type",
        415,
        "Body is not JSON",
        "The operation reads a JSON body, and the request declares another media type, or sends \
         a body without a `Content-Type`. `application/json` (parameters such as \
         `charset=utf-8` allowed) and `+json` types are read as JSON. A body whose \
         `Content-Encoding` is not `gzip`, `deflate`, `br`, `zstd` or `identity` (one coding, not a \
         list) gets this too, with an `Accept-Encoding` header naming the codings read.",
        "Send the body with `Content-Type: application/json`, unencoded or in one of the codings \
         of `Accept-Encoding`.",
    ),
    // 422
    entry(
        "push_platform_unavailable",
        422,
        "Push platform not available",
        "This server is not configured to deliver to the device's platform (FCM needs \
         `LEEKHA_FCM_CREDENTIALS_FILE`; APNs needs `LEEKHA_APNS_KEY_FILE`, `LEEKHA_APNS_KEY_ID`, \
         `LEEKHA_APNS_TEAM_ID` and `LEEKHA_APNS_TOPIC`).",
        "Read `GET /api/v1/push/config` and register only for the platforms it names.",
    ),
    // 422: the rules of the game
    entry(
        "game_over",
        422,
        "Game over",
        "The game has finished; no action is accepted.",
        "Read the final scores in the game view.",
    ),
    entry(
        "wrong_phase",
        422,
        "Wrong phase",
        "A pass during the playing phase, or a play during the passing phase.",
        LEGAL,
    ),
    entry(
        "not_your_turn",
        422,
        "Not your turn",
        "Another seat is to play.",
        "Wait for the caller's turn: long-poll the game or its events.",
    ),
    entry(
        "card_not_in_hand",
        422,
        "Card not in hand",
        "The card played or passed is not in the caller's hand.",
        LEGAL,
    ),
    entry(
        "must_follow_suit",
        422,
        "Must follow suit",
        "The caller holds the suit that was led and played another.",
        LEGAL,
    ),
    entry(
        "must_play_leekha",
        422,
        "Must play the Leekha",
        "The caller has none of the suit led and holds a Leekha (the queen of spades or the ten \
         of diamonds, as the game's rules force them), and played something else.",
        LEGAL,
    ),
    entry(
        "talbees",
        422,
        "Talbees: must play the Leekha",
        "A card above the led suit's Leekha is in the trick and the caller holds that Leekha, \
         but played another card of the suit.",
        LEGAL,
    ),
    entry(
        "pass_restriction",
        422,
        "Pass would empty a suit",
        "The pass would leave the caller without a suit through a card that is not a guard: \
         only `QS`, `10D` and the cards above them may empty their suit.",
        "Pass other cards; the view's `legal_actions` tells which cards may empty their suit.",
    ),
    entry(
        "wrong_card_count",
        422,
        "Wrong number of cards",
        "A pass is exactly 3 cards.",
        "Pass 3 cards.",
    ),
    entry(
        "duplicate_card",
        422,
        "Card passed twice",
        "The same card appears more than once in the pass.",
        "Pass 3 different cards.",
    ),
    entry(
        "already_committed",
        422,
        "Already passed",
        "The caller has already passed this round.",
        "Wait for the other seats to pass.",
    ),
    entry(
        "idempotency_key_reused",
        422,
        "Idempotency key reused",
        "This `Idempotency-Key` was used for another request by the same user within 48 hours.",
        "Use a fresh key for every new request; reuse a key only to retry the same request.",
    ),
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

/// The OpenAPI schema of a problem's `code`: an `enum` of every code in [`PROBLEM_CODES`], so a
/// generated client can switch on codes and a typo does not type-check.
pub struct CodeSchema;

impl utoipa::PartialSchema for CodeSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let codes: Vec<&str> = PROBLEM_CODES.iter().map(|c| c.code).collect();
        crate::http::views::schema::string_enum(
            "A stable machine-readable problem code; `/problems/{code}` explains it.",
            &codes,
        )
    }
}

impl utoipa::ToSchema for CodeSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ProblemCode")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use actix_web::http::StatusCode;

    use super::*;
    use crate::error::Kind;
    use crate::http::problem::ApiError;

    /// Constructors whose first argument (after an optional `Kind::…`) is the code, with the
    /// status they give when it is known from the call alone.
    const CONSTRUCTORS: &[(&str, Option<u16>)] = &[
        ("Error::new(", None),
        ("Self::new(", None),
        ("Error::unauthorized(", Some(401)),
        ("Self::unauthorized(", Some(401)),
        ("Error::conflict(", Some(409)),
        ("Self::conflict(", Some(409)),
        ("Error::unprocessable(", Some(422)),
        ("Self::unprocessable(", Some(422)),
        (".with_code(", None),
    ];

    /// Where a constructor passes a code it was given rather than a literal: the definitions
    /// of the constructors themselves, and the rules' codes (read from the rules below).
    const FORWARDED: &[(&str, &str)] = &[
        ("error.rs", "code"),
        ("error.rs", "e.code()"),
        ("http/problem.rs", "kind"),
    ];

    /// Codes that a given status also comes with, as their explanations say.
    const OTHER_STATUSES: &[(&str, u16)] = &[("invalid_credentials", 403)];

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    fn status_of_kind(name: &str) -> Option<u16> {
        let kind = match name {
            "BadRequest" => Kind::BadRequest,
            "Unauthorized" => Kind::Unauthorized,
            "Forbidden" => Kind::Forbidden,
            "NotFound" => Kind::NotFound,
            "Conflict" => Kind::Conflict,
            "PayloadTooLarge" => Kind::PayloadTooLarge,
            "UnsupportedMediaType" => Kind::UnsupportedMediaType,
            "Unprocessable" => Kind::Unprocessable,
            "RateLimited" => Kind::RateLimited,
            "Unavailable" => Kind::Unavailable,
            "Internal" => Kind::Internal,
            _ => return None,
        };
        Some(
            ApiError::from(crate::error::Error::new(kind, "x", ""))
                .status()
                .as_u16(),
        )
    }

    /// The codes the library's sources pass to error constructors, each with the statuses
    /// known from its calls. Panics on a constructor call whose code is neither a literal nor
    /// a known forwarding.
    fn emitted_in_sources() -> BTreeMap<String, BTreeSet<Option<u16>>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        sources(&root, &mut paths);
        let mut found = BTreeMap::<String, BTreeSet<Option<u16>>>::new();
        for path in paths {
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            // Other crates (the load generator), and this test's own examples.
            if rel.starts_with("bin/") || rel == "http/problem_catalog.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (needle, status) in CONSTRUCTORS {
                // `Self` is `Error` only in its own module.
                if needle.starts_with("Self::") && rel != "error.rs" {
                    continue;
                }
                for (at, _) in text.match_indices(needle) {
                    // `ConfigError::new(`, `io::Error::new(` and the like are other types.
                    if text[..at].ends_with("io::")
                        || text[..at]
                            .chars()
                            .next_back()
                            .is_some_and(|c| c.is_alphanumeric() || c == '_')
                    {
                        continue;
                    }
                    let mut rest = text[at + needle.len()..].trim_start();
                    let mut status = *status;
                    // `Kind::X,` or `crate::error::Kind::X,` first: the status is the kind's.
                    if let Some(comma) = rest.find(',')
                        && let Some((_, kind)) = rest[..comma].rsplit_once("Kind::")
                        && kind.chars().all(|c| c.is_ascii_alphanumeric())
                    {
                        status = status_of_kind(kind);
                        assert!(status.is_some(), "{rel}: unknown kind {kind}");
                        rest = rest[comma + 1..].trim_start();
                    }
                    // ApiError sets the status of the errors it builds itself.
                    if rel == "http/problem.rs" {
                        status = None;
                    }
                    if let Some(literal) = rest.strip_prefix('"') {
                        let code = &literal[..literal.find('"').unwrap()];
                        found.entry(code.to_owned()).or_default().insert(status);
                        continue;
                    }
                    let arg = rest.split_once(',').map_or(rest, |(arg, _)| arg).trim();
                    assert!(
                        FORWARDED.contains(&(rel.as_str(), arg)),
                        "{rel}: `{needle}{arg}`: a code that is not a literal cannot be checked \
                         against the catalog; pass a literal, or list the forwarding here"
                    );
                }
            }
        }
        found
    }

    /// The rules' codes, from `RuleError::code`, all answered with 422.
    fn rule_codes() -> BTreeSet<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules/error.rs");
        let text = std::fs::read_to_string(path).unwrap();
        let codes: BTreeSet<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("RuleError::"))
            .filter_map(|l| l.split_once("=> \"")?.1.split_once('"'))
            .map(|(code, _)| code.to_owned())
            .collect();
        assert!(codes.len() >= 10, "RuleError::code not found: {codes:?}");
        codes
    }

    /// The codes of responses that carry only a status (middleware, actix internals).
    fn status_codes() -> BTreeSet<String> {
        (400..600)
            .filter_map(|s| StatusCode::from_u16(s).ok())
            .map(|s| ApiError::from_status(s).code().to_owned())
            .collect()
    }

    #[test]
    fn every_code_the_server_emits_is_in_the_catalog_with_its_status() {
        let mut missing = Vec::new();
        for (code, statuses) in emitted_in_sources() {
            let Some(entry) = find(&code) else {
                missing.push(code);
                continue;
            };
            for status in statuses.into_iter().flatten() {
                assert!(
                    status == entry.status || OTHER_STATUSES.contains(&(entry.code, status)),
                    "{code} is emitted with {status}, the catalog says {}",
                    entry.status
                );
            }
        }
        for code in rule_codes() {
            match find(&code) {
                Some(entry) => assert_eq!(entry.status, 422, "{code}"),
                None => missing.push(code),
            }
        }
        missing.extend(status_codes().into_iter().filter(|c| find(c).is_none()));
        assert!(missing.is_empty(), "not in PROBLEM_CODES: {missing:?}");
    }

    #[test]
    fn every_catalog_entry_is_emitted_somewhere_and_listed_once() {
        let mut emitted: BTreeSet<String> = emitted_in_sources().into_keys().collect();
        emitted.extend(rule_codes());
        emitted.extend(status_codes());
        let mut seen = BTreeSet::new();
        for entry in PROBLEM_CODES {
            assert!(seen.insert(entry.code), "{} is listed twice", entry.code);
            assert!(
                emitted.contains(entry.code),
                "{} is in the catalog but nothing emits it",
                entry.code
            );
            assert!(
                StatusCode::from_u16(entry.status)
                    .is_ok_and(|s| s.is_client_error() || s.is_server_error()),
                "{}",
                entry.code
            );
            assert!(
                entry
                    .code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_'),
                "{} is not snake_case",
                entry.code
            );
        }
    }
}
