ALTER TABLE stream_tickets DROP COLUMN session_id;
