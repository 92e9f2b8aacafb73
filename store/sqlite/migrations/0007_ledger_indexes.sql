-- Fewer index entries per ledger transaction (two per execution each):
-- the kind index served only the airdrop rate limit, so it covers airdrops
-- alone; an unsealed transaction is in the unsealed index, so the block
-- index holds sealed ones only.
DROP INDEX ledger_txs_kind;
CREATE INDEX ledger_txs_airdrops ON ledger_txs (environment, created_at) WHERE kind = 'Airdrop';
DROP INDEX ledger_txs_block;
CREATE INDEX ledger_txs_block ON ledger_txs (environment, block_height, seq) WHERE block_height IS NOT NULL;
