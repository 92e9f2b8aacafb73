-- An Idempotency-Key is scoped by wallet and environment: the same key sent
-- with a devnet key after a mainnet one is another request. Existing keys
-- take their execution's environment.
CREATE TABLE idempotency_keys_new (
    wallet       TEXT NOT NULL,
    environment  TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    execution_id TEXT NOT NULL DEFAULT '',
    status       INTEGER NOT NULL DEFAULT 0,
    body         BLOB,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (wallet, environment, key)
);
INSERT INTO idempotency_keys_new (wallet, environment, key, request_hash, execution_id, status, body, created_at)
    SELECT i.wallet, coalesce(e.environment, 'mainnet'), i.key, i.request_hash, i.execution_id, i.status, i.body, i.created_at
    FROM idempotency_keys i LEFT JOIN executions e ON e.id = i.execution_id;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_created ON idempotency_keys (created_at);
