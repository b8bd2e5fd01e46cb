-- A user's webhook deliveries not tried yet, in feed order: a delivery's first attempt
-- waits while an earlier one of the same user has not had its own (one in flight on any
-- instance included), and the claim looks that up here.
CREATE INDEX webhook_deliveries_untried ON webhook_deliveries (user_id, seq)
    WHERE attempts = 0 AND delivered_at IS NULL AND failed_at IS NULL;
