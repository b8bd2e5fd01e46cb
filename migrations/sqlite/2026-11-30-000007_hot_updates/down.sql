DROP INDEX games_wake;
CREATE INDEX games_deadline ON games (deadline) WHERE deadline IS NOT NULL;
CREATE INDEX games_reminder ON games (reminder_at) WHERE reminder_at IS NOT NULL;
ALTER TABLE games DROP COLUMN wake_at;
