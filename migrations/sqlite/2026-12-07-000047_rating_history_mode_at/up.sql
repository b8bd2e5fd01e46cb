-- A mode's latest history row, read under the mode's board lock by every rating change so
-- that the history's times follow the order the changes were made in.
CREATE INDEX rating_history_mode_at ON rating_history (mode, at);
