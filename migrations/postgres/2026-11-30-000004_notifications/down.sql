DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE notifications;
ALTER TABLE users DROP COLUMN webhook_secret;
ALTER TABLE users DROP COLUMN webhook_url;
ALTER TABLE users DROP COLUMN notification_count;
DROP INDEX games_reminder;
ALTER TABLE games DROP COLUMN reminder_at;
