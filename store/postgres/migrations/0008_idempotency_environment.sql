-- An Idempotency-Key is scoped by wallet and environment: the same key sent
-- with a devnet key after a mainnet one is another request. Existing keys
-- take their execution's environment.
ALTER TABLE idempotency_keys ADD COLUMN environment TEXT NOT NULL DEFAULT 'mainnet'
    CHECK (environment IN ('mainnet', 'devnet'));
UPDATE idempotency_keys i SET environment = e.environment FROM executions e WHERE e.id = i.execution_id;
ALTER TABLE idempotency_keys ALTER COLUMN environment DROP DEFAULT;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (wallet, environment, key);
