-- A private execution's result is returned to its caller only: /ipfs/{cid}
-- serves content that a public execution names, found by this index.
ALTER TABLE executions ADD COLUMN private BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX executions_published ON executions (result_cid) WHERE NOT private;
