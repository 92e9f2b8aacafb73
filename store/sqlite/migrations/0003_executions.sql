-- Executions (each row is also its own work item), published results, and
-- idempotency keys.

CREATE TABLE executions (
    id                 TEXT PRIMARY KEY,
    environment        TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    wallet             TEXT NOT NULL,
    key_id             TEXT NOT NULL,
    agent_id           TEXT NOT NULL REFERENCES agents (id),
    agent_name         TEXT NOT NULL,
    creator            TEXT NOT NULL,
    endpoint_url       TEXT NOT NULL,
    signing_public_key TEXT NOT NULL,
    task               TEXT NOT NULL,
    parameters         TEXT NOT NULL,
    timeout_seconds    INTEGER NOT NULL,
    async              INTEGER NOT NULL,
    webhook_url        TEXT NOT NULL DEFAULT '',
    cost               INTEGER NOT NULL CHECK (cost > 0),
    creator_amount     INTEGER NOT NULL CHECK (creator_amount >= 0),
    platform_amount    INTEGER NOT NULL CHECK (platform_amount >= 0),
    status             TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'disputed')),
    error_code         TEXT NOT NULL DEFAULT '',
    error_message      TEXT NOT NULL DEFAULT '',
    result_cid         TEXT NOT NULL DEFAULT '',
    result_hash        TEXT NOT NULL DEFAULT '',
    signature          TEXT NOT NULL DEFAULT '',
    tokens_used        INTEGER,
    execution_time_ms  INTEGER,
    initiated_at       INTEGER NOT NULL,
    dispatched_at      INTEGER,
    completed_at       INTEGER,
    deadline           INTEGER NOT NULL,
    lease_until        INTEGER NOT NULL,
    attempts           INTEGER NOT NULL DEFAULT 0,
    CHECK (creator_amount + platform_amount = cost)
);
CREATE INDEX executions_wallet ON executions (wallet, environment, initiated_at DESC, id);
CREATE INDEX executions_agent ON executions (agent_id, initiated_at);
CREATE INDEX executions_work ON executions (lease_until) WHERE status IN ('pending', 'running');

CREATE TABLE results (
    cid        TEXT PRIMARY KEY,
    content    TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE idempotency_keys (
    wallet       TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    execution_id TEXT NOT NULL DEFAULT '',
    status       INTEGER NOT NULL DEFAULT 0,
    body         BLOB,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (wallet, key)
);
CREATE INDEX idempotency_created ON idempotency_keys (created_at);
