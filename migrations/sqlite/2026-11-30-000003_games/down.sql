DROP TABLE idempotency_keys;
DROP TABLE game_events;
DROP TABLE game_actions;
DROP TABLE game_seats;
DROP TABLE games;
