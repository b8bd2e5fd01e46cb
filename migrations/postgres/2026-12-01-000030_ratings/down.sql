DROP TRIGGER users_ratings_listed ON users;
DROP FUNCTION ratings_listed();
DROP TABLE rating_history;
DROP TABLE ratings;
ALTER TABLE users DROP COLUMN rounds_played;
ALTER TABLE users DROP COLUMN points_taken;
ALTER TABLE games DROP COLUMN rematch_id;
ALTER TABLE games DROP COLUMN rated;
