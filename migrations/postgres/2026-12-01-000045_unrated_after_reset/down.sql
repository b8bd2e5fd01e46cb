CREATE OR REPLACE FUNCTION ratings_listed() RETURNS trigger AS $$
BEGIN
    UPDATE ratings SET listed = (NEW.banned_at IS NULL AND NEW.deleted_at IS NULL)
        WHERE user_id = NEW.id;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

UPDATE ratings SET listed = TRUE FROM users u
    WHERE u.id = ratings.user_id AND ratings.games = 0
      AND u.banned_at IS NULL AND u.deleted_at IS NULL;
