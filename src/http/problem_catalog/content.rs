//! The problems of a request whose content is refused: too large, not JSON, or
//! well-formed but against the rules (of the API or of the game).

use super::{LEGAL, ProblemCode, entry};

/// 413 to 422, the rules' refusals last.
pub(super) static CONTENT: &[ProblemCode] = &[
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
];
