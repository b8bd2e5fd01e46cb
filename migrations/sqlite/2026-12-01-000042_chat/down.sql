ALTER TABLE users DROP COLUMN mute_reason;
ALTER TABLE users DROP COLUMN muted_until;
DROP TABLE chat_reports;
DROP TABLE chat_messages;
