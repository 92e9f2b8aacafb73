-- What an independent verifier needs on the ledger (docs/ledger.md,
-- docs/verify.md).
--
-- Each transaction and block names the encoding its hash is computed with:
-- 1 for those written before the RFC 8785 canonical form, which keep the
-- hashes they were sealed with; new rows name their version, and sealing
-- may not change it.
ALTER TABLE ledger_txs ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE blocks ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
DROP TRIGGER ledger_txs_seal_once;
CREATE TRIGGER ledger_txs_seal_once BEFORE UPDATE ON ledger_txs
WHEN OLD.block_height IS NOT NULL OR NEW.block_height IS NULL
  OR NEW.id IS NOT OLD.id OR NEW.environment IS NOT OLD.environment OR NEW.kind IS NOT OLD.kind
  OR NEW.data IS NOT OLD.data OR NEW.created_at IS NOT OLD.created_at OR NEW.seq IS NOT OLD.seq
  OR NEW.postings IS NOT OLD.postings OR NEW.refs IS NOT OLD.refs OR NEW.version IS NOT OLD.version
BEGIN SELECT RAISE(ABORT, 'a ledger transaction changes only when it is sealed'); END;

-- key_tx: the listing transaction that registered the agent's signing key;
-- an execution keeps it (listing_tx) with the key it is checked against,
-- and the id of the transaction that closed it (record_tx).
ALTER TABLE agents ADD COLUMN key_tx TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN listing_tx TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN record_tx TEXT NOT NULL DEFAULT '';

UPDATE agents SET key_tx = coalesce((SELECT t.id FROM ledger_txs t
    WHERE t.environment = 'mainnet' AND t.kind IN ('AgentListed', 'ListingUpdated')
      AND json_extract(t.data, '$.agent_id') = agents.id
      AND json_extract(t.data, '$.signing_public_key') = agents.signing_public_key
    ORDER BY t.seq LIMIT 1), '');
UPDATE executions SET record_tx = coalesce((SELECT t.id FROM ledger_txs t
    WHERE t.environment = executions.environment AND json_extract(t.data, '$.execution_id') = executions.id
      AND t.kind IN ('ExecutionRecord', 'EscrowRefunded') LIMIT 1), '')
    WHERE status IN ('completed', 'failed', 'disputed');
