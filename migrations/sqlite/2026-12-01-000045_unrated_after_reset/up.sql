-- A rating reset makes a player new again, and a new player is on no board: see the
-- PostgreSQL migration.
DROP TRIGGER users_ratings_listed;
CREATE TRIGGER users_ratings_listed AFTER UPDATE OF banned_at, deleted_at ON users
BEGIN
    UPDATE ratings SET listed = (NEW.banned_at IS NULL AND NEW.deleted_at IS NULL AND games > 0)
        WHERE user_id = NEW.id;
END;

UPDATE ratings SET listed = FALSE WHERE games = 0 AND listed;
