-- Server-wide settings kept in the database, e.g. a generated signing secret on SQLite.
CREATE TABLE server_settings (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
