-- Push to devices (issue #17): the devices of each user, their push settings, and the push
-- outbox written with each notification.

CREATE TABLE push_devices (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- fcm | apns | webpush
    platform TEXT NOT NULL,
    -- The FCM or APNs token, or the Web Push endpoint: one device, one owner.
    token TEXT NOT NULL,
    -- Web Push only: the subscription's keys (base64url).
    p256dh TEXT,
    auth TEXT,
    locale TEXT,
    created_at TIMESTAMP NOT NULL,
    last_success_at TIMESTAMP,
    last_error TEXT
);
CREATE UNIQUE INDEX push_devices_token ON push_devices (platform, token);
CREATE INDEX push_devices_user ON push_devices (user_id, created_at);

CREATE TABLE push_settings (
    user_id TEXT PRIMARY KEY NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- JSON object: kind -> bool; kinds not named take their default.
    kinds TEXT NOT NULL,
    -- "HH:MM", "HH:MM", an IANA zone; all three or none.
    quiet_start TEXT,
    quiet_end TEXT,
    time_zone TEXT,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE push_deliveries (
    id TEXT PRIMARY KEY NOT NULL,
    device_id TEXT NOT NULL REFERENCES push_devices (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    game_id TEXT,
    -- The notification as the feed shows it (JSON).
    body TEXT NOT NULL,
    -- In the user's quiet hours: delivered without sound or alert.
    silent BOOLEAN NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    failed_at TIMESTAMP,
    last_status INTEGER,
    last_error TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX push_deliveries_due ON push_deliveries (next_attempt_at)
    WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX push_deliveries_device ON push_deliveries (device_id);
