ALTER TABLE games DROP COLUMN round_plays;
