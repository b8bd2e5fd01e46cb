-- Single-use tickets for event streams opened by clients that cannot send headers
-- (browser EventSource). Stored hashed; redeemed by deleting the row.
CREATE TABLE stream_tickets (
    ticket_hash TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX stream_tickets_expires_at ON stream_tickets (expires_at);
