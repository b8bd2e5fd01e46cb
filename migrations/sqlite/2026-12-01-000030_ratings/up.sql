-- Ratings (issue #19); see the PostgreSQL migration for what each part is for.
ALTER TABLE games ADD COLUMN rated BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE games ADD COLUMN rematch_id TEXT REFERENCES games (id);
ALTER TABLE users ADD COLUMN points_taken BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN rounds_played BIGINT NOT NULL DEFAULT 0;

CREATE TABLE ratings (
    user_id TEXT NOT NULL REFERENCES users (id),
    mode TEXT NOT NULL,
    mu DOUBLE NOT NULL,
    sigma DOUBLE NOT NULL,
    ordinal DOUBLE NOT NULL,
    games INTEGER NOT NULL,
    listed BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, mode)
);
CREATE INDEX ratings_board ON ratings (mode, ordinal DESC, user_id) WHERE listed;

CREATE TABLE rating_history (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    mode TEXT NOT NULL,
    game_id TEXT REFERENCES games (id),
    at TIMESTAMP NOT NULL,
    mu DOUBLE NOT NULL,
    sigma DOUBLE NOT NULL,
    ordinal DOUBLE NOT NULL,
    games INTEGER NOT NULL
);
CREATE INDEX rating_history_user ON rating_history (user_id, mode, at DESC, id);
CREATE INDEX rating_history_game ON rating_history (game_id);

CREATE TRIGGER users_ratings_listed AFTER UPDATE OF banned_at, deleted_at ON users
BEGIN
    UPDATE ratings SET listed = (NEW.banned_at IS NULL AND NEW.deleted_at IS NULL)
        WHERE user_id = NEW.id;
END;
