CREATE TABLE games (
    id TEXT PRIMARY KEY NOT NULL,
    -- waiting | active | finished | aborted
    status TEXT NOT NULL,
    -- public | private
    visibility TEXT NOT NULL,
    -- The resolved rule set (JSON).
    rules TEXT NOT NULL,
    -- Bumped by every change; the ETag and the optimistic-concurrency token.
    version BIGINT NOT NULL,
    created_by TEXT NOT NULL REFERENCES users (id),
    turn_timeout_seconds INTEGER NOT NULL,
    -- Hex of the 32-byte deal seed; set at the start, never shown to players while running.
    seed TEXT,
    -- The rules engine's state (JSON), every hand included.
    state TEXT,
    -- Seats that must act now, as ",0,2," (empty when nobody must).
    to_act TEXT NOT NULL DEFAULT '',
    deadline TIMESTAMP,
    open_seats INTEGER NOT NULL,
    action_count BIGINT NOT NULL DEFAULT 0,
    event_count BIGINT NOT NULL DEFAULT 0,
    -- The result (JSON) once finished.
    result TEXT,
    abort_reason TEXT,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    started_at TIMESTAMP,
    finished_at TIMESTAMP
);
CREATE INDEX games_lobby ON games (status, visibility, created_at, id);
CREATE INDEX games_deadline ON games (deadline) WHERE deadline IS NOT NULL;

CREATE TABLE game_seats (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    -- The human who holds (or held) the seat.
    user_id TEXT REFERENCES users (id),
    -- A seat reserved for an invited user.
    invited_user_id TEXT REFERENCES users (id),
    -- Not NULL while a bot acts for the seat: random | heuristic | expert.
    bot_level TEXT,
    -- Why a bot acts: seat | resigned | timeout | admin.
    bot_reason TEXT,
    timeouts_in_row INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_seats_user ON game_seats (user_id);
CREATE INDEX game_seats_invited ON game_seats (invited_user_id);

-- Every accepted action, in order: with the seed it replays the game.
CREATE TABLE game_actions (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    -- player | bot | timeout
    actor TEXT NOT NULL,
    user_id TEXT,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, seq)
);

-- The append-only event log. `data` holds private parts too; they are removed per viewer
-- when read.
CREATE TABLE game_events (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, seq)
);

-- Responses kept for retries with the same Idempotency-Key.
CREATE TABLE idempotency_keys (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
