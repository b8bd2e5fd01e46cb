-- The session (refresh-token family) a stream ticket was issued in: a logout ends the
-- streams that session opened, with a ticket or with its access token.
ALTER TABLE stream_tickets ADD COLUMN session_id TEXT;
