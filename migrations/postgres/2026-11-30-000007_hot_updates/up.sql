-- Every action rewrites the game row. PostgreSQL can do that in place (a HOT update, no new
-- index entries) only when no indexed column changes and the page has room. The deadline and
-- the reminder move with every turn, so they are no longer indexed; the scheduler finds games
-- by `wake_at` instead: a time at or before which it must look at the game (never later than
-- the deadline or the reminder), which an action leaves alone while it is still ahead and
-- not after them.
ALTER TABLE games ADD COLUMN wake_at TIMESTAMP;
UPDATE games SET wake_at = LEAST(deadline, reminder_at);
DROP INDEX games_deadline;
DROP INDEX games_reminder;
CREATE INDEX games_wake ON games (wake_at) WHERE wake_at IS NOT NULL;
ALTER TABLE games SET (fillfactor = 70);

-- The append-only logs are written only by the statement that updates their game (or, for
-- notifications, their user's feed counter) and nothing is ever deleted, so the foreign keys
-- checked nothing the writer had not just proved, at the cost of one trigger query per row.
ALTER TABLE game_actions DROP CONSTRAINT game_actions_game_id_fkey;
ALTER TABLE game_events DROP CONSTRAINT game_events_game_id_fkey;
ALTER TABLE notifications DROP CONSTRAINT notifications_user_id_fkey;

-- Rows arrive in time order: a block-range index serves "actions in the last hour" for a
-- fraction of a B-tree's cost per insert.
DROP INDEX game_actions_created;
CREATE INDEX game_actions_created ON game_actions USING brin (created_at);
