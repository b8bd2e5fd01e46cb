-- A rating reset makes a player new again, and a new player is on no board: a rating is
-- listed when its player is neither banned nor deleted and has played a rated game in the
-- mode since the last reset (`games > 0`). Unbanning a reset player keeps them off the board
-- until their next rated game.
CREATE OR REPLACE FUNCTION ratings_listed() RETURNS trigger AS $$
BEGIN
    UPDATE ratings SET listed = (NEW.banned_at IS NULL AND NEW.deleted_at IS NULL AND games > 0)
        WHERE user_id = NEW.id;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

UPDATE ratings SET listed = FALSE WHERE games = 0 AND listed;
