-- One webhook delivery per final execution that asked for one.
CREATE TABLE webhook_deliveries (
    execution_id TEXT PRIMARY KEY REFERENCES executions (id),
    url          TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL,
    delivered_at INTEGER,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE delivered_at IS NULL;
