DROP TRIGGER users_ratings_listed;
CREATE TRIGGER users_ratings_listed AFTER UPDATE OF banned_at, deleted_at ON users
BEGIN
    UPDATE ratings SET listed = (NEW.banned_at IS NULL AND NEW.deleted_at IS NULL)
        WHERE user_id = NEW.id;
END;

UPDATE ratings SET listed = TRUE
    WHERE games = 0
      AND user_id IN (SELECT id FROM users WHERE banned_at IS NULL AND deleted_at IS NULL);
