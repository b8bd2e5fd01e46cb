DROP TABLE refresh_tokens;
DROP TABLE users;
