CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL,
    username TEXT NOT NULL,
    -- Lower-cased username: uniqueness ignores case.
    username_key TEXT NOT NULL UNIQUE,
    -- NULL for a guest that has not set a password yet.
    password_hash TEXT,
    role TEXT NOT NULL DEFAULT 'player',
    is_guest BOOLEAN NOT NULL DEFAULT FALSE,
    banned_at TIMESTAMP,
    ban_reason TEXT,
    deleted_at TIMESTAMP,
    games_played INTEGER NOT NULL DEFAULT 0,
    games_won INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

CREATE TABLE refresh_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Every token issued by rotation from one login shares the family of that login.
    family_id TEXT NOT NULL,
    -- SHA-256 of the token: a leaked table does not hand out sessions.
    token_hash TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    spent_at TIMESTAMP,
    revoked_at TIMESTAMP
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
