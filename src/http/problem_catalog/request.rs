//! The problems of a request the server cannot read or will not serve: malformed, without
//! valid credentials, forbidden, naming nothing, the wrong method or encoding, too slow.

use super::{ProblemCode, entry};

/// 400 to 408.
pub(super) static REQUEST: &[ProblemCode] = &[
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
];
