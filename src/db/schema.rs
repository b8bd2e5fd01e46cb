//! Table definitions shared by both engines (written to match `migrations/postgres`).

// @generated-style: keep in step with the migrations; one definition serves both engines.

diesel::table! {
    /// Server-wide settings.
    server_settings (key) {
        /// Setting name.
        key -> Text,
        /// Setting value.
        value -> Text,
        /// Last change (UTC).
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// Accounts.
    users (id) {
        /// UUID.
        id -> Text,
        /// As chosen, case preserved.
        username -> Text,
        /// Lower-cased username, unique.
        username_key -> Text,
        /// Argon2id PHC string; NULL for a guest without a password.
        password_hash -> Nullable<Text>,
        /// `player` or `admin`.
        role -> Text,
        /// Made by `POST /auth/guest` and not upgraded yet.
        is_guest -> Bool,
        /// When an admin banned the account.
        banned_at -> Nullable<Timestamp>,
        /// Why.
        ban_reason -> Nullable<Text>,
        /// When the account was deleted.
        deleted_at -> Nullable<Timestamp>,
        /// Finished games with a seat.
        games_played -> Integer,
        /// Finished games won.
        games_won -> Integer,
        /// Creation time (UTC).
        created_at -> Timestamp,
        /// Last change (UTC).
        updated_at -> Timestamp,
        /// Notifications in the user's feed so far.
        notification_count -> BigInt,
        /// Where to POST notifications.
        webhook_url -> Nullable<Text>,
        /// HMAC key for webhook signatures.
        webhook_secret -> Nullable<Text>,
        /// Points taken over finished games.
        points_taken -> BigInt,
        /// Rounds played over finished games.
        rounds_played -> BigInt,
        /// Away until then: bots play the user's seats.
        away_until -> Nullable<Timestamp>,
        /// Muted until then: no chat.
        muted_until -> Nullable<Timestamp>,
        /// Why, as the moderator gave it.
        mute_reason -> Nullable<Text>,
    }
}

diesel::table! {
    /// Refresh tokens, stored hashed.
    refresh_tokens (id) {
        /// UUID.
        id -> Text,
        /// Owner.
        user_id -> Text,
        /// The login this token descends from.
        family_id -> Text,
        /// SHA-256 hex of the token.
        token_hash -> Text,
        /// Issued.
        created_at -> Timestamp,
        /// Expires.
        expires_at -> Timestamp,
        /// Exchanged for a new pair.
        spent_at -> Nullable<Timestamp>,
        /// Revoked by logout, reuse or ban.
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    /// Games.
    games (id) {
        /// UUID.
        id -> Text,
        /// waiting | active | finished | aborted.
        status -> Text,
        /// public | private.
        visibility -> Text,
        /// Resolved rule set (JSON).
        rules -> Text,
        /// Change counter.
        version -> BigInt,
        /// Creator.
        created_by -> Text,
        /// Seconds a seat has to act.
        turn_timeout_seconds -> Integer,
        /// Deal seed (hex).
        seed -> Nullable<Text>,
        /// Rules state (JSON).
        state -> Nullable<Text>,
        /// Seats that must act, as ",0,2,".
        to_act -> Text,
        /// When the current turn times out.
        deadline -> Nullable<Timestamp>,
        /// Seats still open.
        open_seats -> Integer,
        /// Actions applied.
        action_count -> BigInt,
        /// Events appended.
        event_count -> BigInt,
        /// Result (JSON).
        result -> Nullable<Text>,
        /// Why an admin aborted it.
        abort_reason -> Nullable<Text>,
        /// Created.
        created_at -> Timestamp,
        /// Last change.
        updated_at -> Timestamp,
        /// Dealt.
        started_at -> Nullable<Timestamp>,
        /// Ended.
        finished_at -> Nullable<Timestamp>,
        /// When to remind the late seats.
        reminder_at -> Nullable<Timestamp>,
        /// The current round's card plays, `"<seat><card>,…"`.
        round_plays -> Text,
        /// When the scheduler must look at the game next: at or before the deadline and the
        /// reminder.
        wake_at -> Nullable<Timestamp>,
        /// Counts for the ratings.
        rated -> Bool,
        /// The game a rematch of this one created.
        rematch_id -> Nullable<Text>,
        /// Signed-in users without a seat may watch it (when public).
        allow_spectators -> Bool,
    }
}

diesel::table! {
    /// Each user's notification feed.
    notifications (user_id, seq) {
        /// Owner.
        user_id -> Text,
        /// 1, 2, … per user.
        seq -> BigInt,
        /// Kind.
        kind -> Text,
        /// The game concerned.
        game_id -> Nullable<Text>,
        /// Payload (JSON).
        data -> Text,
        /// When.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Webhook outbox.
    webhook_deliveries (id) {
        /// UUID.
        id -> Text,
        /// Owner.
        user_id -> Text,
        /// Notification seq.
        seq -> BigInt,
        /// Target.
        url -> Text,
        /// JSON body.
        body -> Text,
        /// Attempts made.
        attempts -> Integer,
        /// When to try next (also a lease while in flight).
        next_attempt_at -> Timestamp,
        /// Delivered.
        delivered_at -> Nullable<Timestamp>,
        /// Given up.
        failed_at -> Nullable<Timestamp>,
        /// Last HTTP status.
        last_status -> Nullable<Integer>,
        /// Last error.
        last_error -> Nullable<Text>,
        /// Created.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Every webhook attempt.
    webhook_attempts (delivery_id, attempt) {
        /// Delivery.
        delivery_id -> Text,
        /// 1, 2, …
        attempt -> Integer,
        /// HTTP status, if any.
        status -> Nullable<Integer>,
        /// Error, if any.
        error -> Nullable<Text>,
        /// When.
        at -> Timestamp,
    }
}

diesel::table! {
    /// The four seats of each game.
    game_seats (game_id, seat) {
        /// Game.
        game_id -> Text,
        /// 0..=3.
        seat -> Integer,
        /// The human of the seat.
        user_id -> Nullable<Text>,
        /// Reserved for this invited user.
        invited_user_id -> Nullable<Text>,
        /// A bot acts for the seat.
        bot_level -> Nullable<Text>,
        /// Why a bot acts.
        bot_reason -> Nullable<Text>,
        /// Consecutive turn timeouts.
        timeouts_in_row -> Integer,
    }
}

diesel::table! {
    /// Accepted actions.
    game_actions (game_id, seq) {
        /// Game.
        game_id -> Text,
        /// 1, 2, …
        seq -> BigInt,
        /// Acting seat.
        seat -> Integer,
        /// rules::Action (JSON).
        action -> Text,
        /// player | bot | timeout.
        actor -> Text,
        /// The human who sent it.
        user_id -> Nullable<Text>,
        /// When.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// The event log.
    game_events (game_id, seq) {
        /// Game.
        game_id -> Text,
        /// 1, 2, … contiguous.
        seq -> BigInt,
        /// Event type.
        kind -> Text,
        /// Full payload (JSON).
        data -> Text,
        /// When.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Stored responses for Idempotency-Key retries.
    idempotency_keys (user_id, key) {
        /// Caller.
        user_id -> Text,
        /// The header value.
        key -> Text,
        /// Fingerprint of the request.
        request_hash -> Text,
        /// Response status.
        status -> Integer,
        /// Response body.
        body -> Text,
        /// When.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Each user's current rating per mode.
    ratings (user_id, mode) {
        /// The player.
        user_id -> Text,
        /// solo | partnership.
        mode -> Text,
        /// Weng-Lin mean.
        mu -> Double,
        /// Weng-Lin uncertainty.
        sigma -> Double,
        /// mu - 3 sigma, the board order.
        ordinal -> Double,
        /// Rated games since the last reset.
        games -> Integer,
        /// Shown on the boards (false while banned or deleted).
        listed -> Bool,
        /// Last change.
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// Every rating change: one per rated player of a game, one per reset.
    rating_history (id) {
        /// UUID.
        id -> Text,
        /// The player.
        user_id -> Text,
        /// solo | partnership.
        mode -> Text,
        /// The game; NULL for an administrator's reset.
        game_id -> Nullable<Text>,
        /// When.
        at -> Timestamp,
        /// Mean after the change.
        mu -> Double,
        /// Uncertainty after the change.
        sigma -> Double,
        /// Ordinal after the change.
        ordinal -> Double,
        /// Rated games after the change.
        games -> Integer,
    }
}

diesel::table! {
    /// Listed players per quarter-point of ordinal (kept by triggers on `ratings`).
    rating_buckets (mode, bucket) {
        /// solo | partnership.
        mode -> Text,
        /// floor(4 * ordinal).
        bucket -> Integer,
        /// Listed players in the bucket.
        players -> Integer,
    }
}

diesel::joinable!(ratings -> users (user_id));

diesel::table! {
    /// Single-use stream tickets, stored hashed.
    stream_tickets (ticket_hash) {
        /// SHA-256 hex of the ticket.
        ticket_hash -> Text,
        /// Whose streams it opens.
        user_id -> Text,
        /// Issued.
        created_at -> Timestamp,
        /// Redeemable until.
        expires_at -> Timestamp,
        /// The session (refresh-token family) it was issued in.
        session_id -> Nullable<Text>,
    }
}

diesel::joinable!(stream_tickets -> users (user_id));
diesel::joinable!(refresh_tokens -> users (user_id));
diesel::joinable!(game_seats -> games (game_id));
diesel::joinable!(game_actions -> games (game_id));
diesel::joinable!(game_events -> games (game_id));

diesel::table! {
    /// What administrators did (append-only).
    audit_log (id) {
        /// UUID.
        id -> Text,
        /// The administrator.
        admin_id -> Text,
        /// ban_user | unban_user | change_role | read_game | abort_game | seat_to_bot.
        action -> Text,
        /// user | game.
        target_type -> Text,
        /// The user or game id.
        target_id -> Text,
        /// Why, as the administrator gave it.
        reason -> Nullable<Text>,
        /// Action-specific facts (JSON object).
        details -> Text,
        /// When (UTC).
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Friend requests: `user_id` asked `other_id`; both directions stored make friends.
    friend_requests (user_id, other_id) {
        /// Who asked.
        user_id -> Text,
        /// Whom.
        other_id -> Text,
        /// When.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Blocks: `user_id` blocks `blocked_id`.
    blocks (user_id, blocked_id) {
        /// Who blocks.
        user_id -> Text,
        /// Whom.
        blocked_id -> Text,
        /// When.
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Table talk; each message is also its game's event `seq`.
    chat_messages (id) {
        /// UUID.
        id -> Text,
        /// The game.
        game_id -> Text,
        /// Its `chat_message` event.
        seq -> BigInt,
        /// The author's seat.
        seat -> Integer,
        /// The author.
        user_id -> Text,
        /// Free text (or NULL for a phrase).
        body -> Nullable<Text>,
        /// A quick phrase's key (or NULL for free text).
        phrase -> Nullable<Text>,
        /// When.
        created_at -> Timestamp,
        /// When a moderator hid it.
        hidden_at -> Nullable<Timestamp>,
        /// Who.
        hidden_by -> Nullable<Text>,
        /// Why.
        hidden_reason -> Nullable<Text>,
    }
}

diesel::table! {
    /// Reports of chat messages to the moderators.
    chat_reports (id) {
        /// UUID.
        id -> Text,
        /// The message.
        message_id -> Text,
        /// Who reported it.
        reporter_id -> Text,
        /// Why.
        reason -> Text,
        /// When.
        created_at -> Timestamp,
        /// When a moderator dealt with it.
        resolved_at -> Nullable<Timestamp>,
    }
}

diesel::joinable!(chat_reports -> chat_messages (message_id));

diesel::table! {
    /// The devices that receive a user's pushes.
    push_devices (id) {
        /// UUID.
        id -> Text,
        /// Owner.
        user_id -> Text,
        /// fcm | apns | webpush.
        platform -> Text,
        /// The FCM or APNs token, or the Web Push endpoint (secret: never logged).
        token -> Text,
        /// Web Push: the subscription's P-256 key (base64url).
        p256dh -> Nullable<Text>,
        /// Web Push: the subscription's auth secret (base64url).
        auth -> Nullable<Text>,
        /// The language of the device's pushes (BCP 47).
        locale -> Nullable<Text>,
        /// Registered.
        created_at -> Timestamp,
        /// Last push the service accepted.
        last_success_at -> Nullable<Timestamp>,
        /// Last failure, as a sentence.
        last_error -> Nullable<Text>,
    }
}

diesel::table! {
    /// Each user's push settings (defaults when absent).
    push_settings (user_id) {
        /// Owner.
        user_id -> Text,
        /// JSON object kind → bool.
        kinds -> Text,
        /// Quiet hours start, "HH:MM".
        quiet_start -> Nullable<Text>,
        /// Quiet hours end, "HH:MM".
        quiet_end -> Nullable<Text>,
        /// IANA time zone of the quiet hours.
        time_zone -> Nullable<Text>,
        /// Changed.
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// The push outbox: one row per notification and device, written with the notification.
    push_deliveries (id) {
        /// UUID.
        id -> Text,
        /// Target device.
        device_id -> Text,
        /// Recipient.
        user_id -> Text,
        /// Notification seq.
        seq -> BigInt,
        /// Notification kind.
        kind -> Text,
        /// Game.
        game_id -> Nullable<Text>,
        /// The notification (JSON).
        body -> Text,
        /// In quiet hours: no sound or alert.
        silent -> Bool,
        /// Attempts made.
        attempts -> Integer,
        /// When to try next (also a lease while in flight).
        next_attempt_at -> Timestamp,
        /// Delivered.
        delivered_at -> Nullable<Timestamp>,
        /// Given up.
        failed_at -> Nullable<Timestamp>,
        /// Last HTTP status.
        last_status -> Nullable<Integer>,
        /// Last error.
        last_error -> Nullable<Text>,
        /// Created.
        created_at -> Timestamp,
    }
}

diesel::joinable!(push_deliveries -> push_devices (device_id));

diesel::table! {
    /// Who watches a game without a seat, until when.
    game_watchers (game_id, user_id) {
        /// Game.
        game_id -> Text,
        /// The spectator.
        user_id -> Text,
        /// When the watch lapses unless renewed.
        until -> Timestamp,
    }
}

diesel::joinable!(game_watchers -> games (game_id));

// One list for every table: the macro implements each pair of those it is given,
// so a second call naming two tables already listed together would clash.
diesel::allow_tables_to_appear_in_same_query!(
    server_settings,
    users,
    refresh_tokens,
    games,
    notifications,
    webhook_deliveries,
    webhook_attempts,
    game_seats,
    game_actions,
    game_events,
    idempotency_keys,
    ratings,
    rating_history,
    rating_buckets,
    stream_tickets,
    audit_log,
    friend_requests,
    blocks,
    chat_messages,
    chat_reports,
    push_devices,
    push_settings,
    push_deliveries,
    game_watchers,
);
