-- While set and in the future the user is away: bots play the user's seats. The scheduler
-- gives the seats back once it has passed.
ALTER TABLE users ADD COLUMN away_until TIMESTAMP;
CREATE INDEX users_away_until ON users (away_until) WHERE away_until IS NOT NULL;
