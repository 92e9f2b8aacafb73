-- /metrics counts the deliveries waiting, those created within the retry
-- window. One given up is never delivered and stays in the partial index of
-- those due; these are read from the window's start, whatever was given up.
CREATE INDEX webhook_deliveries_waiting ON webhook_deliveries (created_at) WHERE delivered_at IS NULL;
CREATE INDEX a2a_push_configs_waiting ON a2a_push_configs (created_at) WHERE delivered_at IS NULL;
