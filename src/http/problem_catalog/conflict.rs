//! The problems of a request that conflicts with the state it meets: a game moved on, a
//! name taken, a change made already.

use super::{ProblemCode, RELOAD, entry};

/// 409.
pub(super) static CONFLICT: &[ProblemCode] = &[
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
];
