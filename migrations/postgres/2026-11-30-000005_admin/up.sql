-- What administrators did, and every full read of a game's hidden state. Append-only: rows
-- are inserted in the same transaction as the action they record and never changed.
CREATE TABLE audit_log (
    id TEXT PRIMARY KEY NOT NULL,
    admin_id TEXT NOT NULL REFERENCES users (id),
    -- ban_user | unban_user | change_role | read_game | abort_game | seat_to_bot
    action TEXT NOT NULL,
    -- user | game
    target_type TEXT NOT NULL,
    target_id TEXT NOT NULL,
    reason TEXT,
    -- Action-specific facts (JSON object), e.g. the role before and after.
    details TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX audit_log_created ON audit_log (created_at, id);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id);

CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

-- Admin statistics count the actions of the last hour and day.
CREATE INDEX game_actions_created ON game_actions (created_at);
