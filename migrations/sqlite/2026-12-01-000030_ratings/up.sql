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

-- Players per quarter-point of ordinal; see the PostgreSQL migration. floor() without the
-- math functions: truncation, one less for negative fractions.
CREATE TABLE rating_buckets (
    mode TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    players INTEGER NOT NULL,
    PRIMARY KEY (mode, bucket)
);
CREATE TRIGGER ratings_buckets_insert AFTER INSERT ON ratings WHEN NEW.listed
BEGIN
    INSERT INTO rating_buckets (mode, bucket, players) VALUES (NEW.mode, (CAST(NEW.ordinal * 4 AS INTEGER) - (NEW.ordinal * 4 < CAST(NEW.ordinal * 4 AS INTEGER))), 1)
        ON CONFLICT (mode, bucket) DO UPDATE SET players = players + 1;
END;
CREATE TRIGGER ratings_buckets_update AFTER UPDATE OF mode, ordinal, listed ON ratings
    WHEN NOT (OLD.listed = NEW.listed AND OLD.mode = NEW.mode AND (CAST(OLD.ordinal * 4 AS INTEGER) - (OLD.ordinal * 4 < CAST(OLD.ordinal * 4 AS INTEGER))) = (CAST(NEW.ordinal * 4 AS INTEGER) - (NEW.ordinal * 4 < CAST(NEW.ordinal * 4 AS INTEGER))))
BEGIN
    UPDATE rating_buckets SET players = players - 1
        WHERE OLD.listed AND mode = OLD.mode AND bucket = (CAST(OLD.ordinal * 4 AS INTEGER) - (OLD.ordinal * 4 < CAST(OLD.ordinal * 4 AS INTEGER)));
    INSERT INTO rating_buckets (mode, bucket, players) SELECT NEW.mode, (CAST(NEW.ordinal * 4 AS INTEGER) - (NEW.ordinal * 4 < CAST(NEW.ordinal * 4 AS INTEGER))), 1
        WHERE NEW.listed
        ON CONFLICT (mode, bucket) DO UPDATE SET players = players + 1;
END;
CREATE TRIGGER ratings_buckets_delete AFTER DELETE ON ratings WHEN OLD.listed
BEGIN
    UPDATE rating_buckets SET players = players - 1
        WHERE mode = OLD.mode AND bucket = (CAST(OLD.ordinal * 4 AS INTEGER) - (OLD.ordinal * 4 < CAST(OLD.ordinal * 4 AS INTEGER)));
END;
