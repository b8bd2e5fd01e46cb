DROP INDEX game_actions_created;
DROP TABLE audit_log;
