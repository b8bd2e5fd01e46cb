-- Ratings (issue #19). Safe against the previous release: new tables, and new columns with
-- defaults that the old code neither reads nor writes.

-- A game counts for the ratings when `rated`; it was chosen at creation (default: no seat
-- started as a bot). Games from before this release were never rated.
ALTER TABLE games ADD COLUMN rated BOOLEAN NOT NULL DEFAULT FALSE;
-- The game a rematch of this finished game created (the first request makes it; later ones
-- join it).
ALTER TABLE games ADD COLUMN rematch_id TEXT REFERENCES games (id);

-- For the profile's average points per round: points taken and rounds played over every
-- finished game with a seat.
ALTER TABLE users ADD COLUMN points_taken BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN rounds_played BIGINT NOT NULL DEFAULT 0;

-- The current Weng-Lin rating of each user per mode (`solo` | `partnership`), written in the
-- transaction that finishes a rated game.
CREATE TABLE ratings (
    user_id TEXT NOT NULL REFERENCES users (id),
    mode TEXT NOT NULL,
    mu DOUBLE PRECISION NOT NULL,
    sigma DOUBLE PRECISION NOT NULL,
    -- mu - 3 sigma: what the boards order by.
    ordinal DOUBLE PRECISION NOT NULL,
    -- Rated games counted since the last reset.
    games INTEGER NOT NULL,
    -- False while the user is banned or deleted: such users leave the boards. Kept by the
    -- trigger below, so that no account code needs to know about boards.
    listed BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, mode)
);
-- The board order (ordinal descending, user id as the tie-break), listed players only: a
-- page is an index range scan, a rank an index-only count.
CREATE INDEX ratings_board ON ratings (mode, ordinal DESC, user_id) WHERE listed;

-- Each rating change: one row per rated player of a finished rated game, and one per
-- administrator reset (game_id NULL). `leekha verify` replays the games from these.
CREATE TABLE rating_history (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    mode TEXT NOT NULL,
    game_id TEXT REFERENCES games (id),
    at TIMESTAMP NOT NULL,
    mu DOUBLE PRECISION NOT NULL,
    sigma DOUBLE PRECISION NOT NULL,
    ordinal DOUBLE PRECISION NOT NULL,
    games INTEGER NOT NULL
);
CREATE INDEX rating_history_user ON rating_history (user_id, mode, at DESC, id);
CREATE INDEX rating_history_game ON rating_history (game_id);

CREATE FUNCTION ratings_listed() RETURNS trigger AS $$
BEGIN
    UPDATE ratings SET listed = (NEW.banned_at IS NULL AND NEW.deleted_at IS NULL)
        WHERE user_id = NEW.id;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER users_ratings_listed AFTER UPDATE OF banned_at, deleted_at ON users
    FOR EACH ROW WHEN (OLD.banned_at IS DISTINCT FROM NEW.banned_at
                       OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
    EXECUTE FUNCTION ratings_listed();

-- Players per quarter-point of ordinal (`bucket` = floor(4 * ordinal)), listed players only,
-- kept by the trigger below: a rank is the sum over the few hundred buckets above plus a
-- count inside one bucket, instead of a count of every player above (tens of thousands of
-- index entries deep in a board of 100,000).
CREATE TABLE rating_buckets (
    mode TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    players INTEGER NOT NULL,
    PRIMARY KEY (mode, bucket)
);

CREATE FUNCTION rating_buckets_count() RETURNS trigger AS $$
BEGIN
    -- Most updates stay in their bucket: leave the bucket rows (and their locks) alone.
    IF TG_OP = 'UPDATE' AND OLD.listed = NEW.listed AND OLD.mode = NEW.mode
       AND floor(OLD.ordinal * 4) = floor(NEW.ordinal * 4) THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.listed THEN
        UPDATE rating_buckets SET players = players - 1
            WHERE mode = OLD.mode AND bucket = floor(OLD.ordinal * 4)::integer;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.listed THEN
        INSERT INTO rating_buckets (mode, bucket, players)
            VALUES (NEW.mode, floor(NEW.ordinal * 4)::integer, 1)
            ON CONFLICT (mode, bucket) DO UPDATE SET players = rating_buckets.players + 1;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ratings_buckets AFTER INSERT OR UPDATE OR DELETE ON ratings
    FOR EACH ROW EXECUTE FUNCTION rating_buckets_count();
