DROP INDEX game_actions_created;
CREATE INDEX game_actions_created ON game_actions (created_at);
ALTER TABLE notifications ADD CONSTRAINT notifications_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE game_events ADD CONSTRAINT game_events_game_id_fkey
    FOREIGN KEY (game_id) REFERENCES games (id) ON DELETE CASCADE;
ALTER TABLE game_actions ADD CONSTRAINT game_actions_game_id_fkey
    FOREIGN KEY (game_id) REFERENCES games (id) ON DELETE CASCADE;
ALTER TABLE games RESET (fillfactor);
DROP INDEX games_wake;
CREATE INDEX games_deadline ON games (deadline) WHERE deadline IS NOT NULL;
CREATE INDEX games_reminder ON games (reminder_at) WHERE reminder_at IS NOT NULL;
ALTER TABLE games DROP COLUMN wake_at;
