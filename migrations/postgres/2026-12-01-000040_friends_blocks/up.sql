-- A friend request from user_id to other_id. Two users are friends when each has asked the
-- other (both rows exist); a single row is a pending request.
CREATE TABLE friend_requests (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    other_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, other_id)
);
CREATE INDEX friend_requests_other ON friend_requests (other_id);

-- user_id blocks blocked_id.
CREATE TABLE blocks (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    blocked_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, blocked_id)
);
CREATE INDEX blocks_blocked ON blocks (blocked_id);
