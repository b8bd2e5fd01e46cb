-- Table talk: each message is also the game's event number seq (chat_message).
CREATE TABLE chat_messages (
    id TEXT PRIMARY KEY NOT NULL,
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    seat INTEGER NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Exactly one of the two: free text, or the key of a quick phrase.
    body TEXT,
    phrase TEXT,
    created_at TIMESTAMP NOT NULL,
    -- A moderator hid it: it is gone for everyone, here and in the event.
    hidden_at TIMESTAMP,
    hidden_by TEXT,
    hidden_reason TEXT
);
CREATE UNIQUE INDEX chat_messages_game_seq ON chat_messages (game_id, seq);

-- Reports to the moderators, one per reporter and message.
CREATE TABLE chat_reports (
    id TEXT PRIMARY KEY NOT NULL,
    message_id TEXT NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
    reporter_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    reason TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    -- Set when a moderator hid the message (or dismissed the report).
    resolved_at TIMESTAMP
);
CREATE UNIQUE INDEX chat_reports_once ON chat_reports (message_id, reporter_id);
CREATE INDEX chat_reports_open ON chat_reports (created_at) WHERE resolved_at IS NULL;

-- A muted user still plays but cannot chat until then.
ALTER TABLE users ADD COLUMN muted_until TIMESTAMP;
ALTER TABLE users ADD COLUMN mute_reason TEXT;
