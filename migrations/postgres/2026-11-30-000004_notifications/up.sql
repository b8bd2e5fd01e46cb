-- When to remind the late seats (80 % of the turn); cleared once sent.
ALTER TABLE games ADD COLUMN reminder_at TIMESTAMP;
CREATE INDEX games_reminder ON games (reminder_at) WHERE reminder_at IS NOT NULL;

-- Per-user feed counter: bumped under the user's row lock, so each feed's seq is contiguous
-- and commits in order.
ALTER TABLE users ADD COLUMN notification_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN webhook_url TEXT;
ALTER TABLE users ADD COLUMN webhook_secret TEXT;

CREATE TABLE notifications (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    -- your_turn | invited | game_started | game_finished | turn_reminder | seat_taken_by_bot
    kind TEXT NOT NULL,
    game_id TEXT,
    data TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, seq)
);

-- The webhook outbox: one row per notification to deliver, written with the notification.
CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    failed_at TIMESTAMP,
    last_status INTEGER,
    last_error TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE delivered_at IS NULL AND failed_at IS NULL;

CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    status INTEGER,
    error TEXT,
    at TIMESTAMP NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
);
