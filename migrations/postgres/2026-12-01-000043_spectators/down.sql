DROP TABLE game_watchers;
ALTER TABLE games DROP COLUMN allow_spectators;
