-- The scheduler finds games by `wake_at`: a time at or before which it must look at the game
-- (never later than the deadline or the reminder). See the PostgreSQL migration for why.
ALTER TABLE games ADD COLUMN wake_at TIMESTAMP;
UPDATE games SET wake_at = CASE
    WHEN deadline IS NULL THEN reminder_at
    WHEN reminder_at IS NULL OR deadline < reminder_at THEN deadline
    ELSE reminder_at END;
DROP INDEX games_deadline;
DROP INDEX games_reminder;
CREATE INDEX games_wake ON games (wake_at) WHERE wake_at IS NOT NULL;
