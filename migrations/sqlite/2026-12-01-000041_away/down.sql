DROP INDEX users_away_until;
ALTER TABLE users DROP COLUMN away_until;
