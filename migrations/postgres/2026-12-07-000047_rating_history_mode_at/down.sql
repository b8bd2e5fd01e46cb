DROP INDEX rating_history_mode_at;
