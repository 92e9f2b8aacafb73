-- A private execution's result is returned to its caller only: /ipfs/{cid}
-- serves content that a public execution names, found by this index.
ALTER TABLE executions ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
CREATE INDEX executions_published ON executions (result_cid) WHERE NOT private;
