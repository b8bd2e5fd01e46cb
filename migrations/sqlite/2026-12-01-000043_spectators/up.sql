-- Whether signed-in users without a seat may watch a public game (API 1.1: default true).
ALTER TABLE games ADD COLUMN allow_spectators BOOLEAN NOT NULL DEFAULT TRUE;

-- Who watches a game without a seat, until when: a spectator's view, event list or stream
-- renews its row; the game view counts the rows not yet expired. A row outlives its
-- watcher by at most its time to live, so a crashed instance leaves nothing for long.
CREATE TABLE game_watchers (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    until TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, user_id)
);
