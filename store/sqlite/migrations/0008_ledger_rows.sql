-- A ledger transaction keeps its postings and references in its own row
-- (JSON, written once with it), and account_txs alone indexes which
-- transactions touch an account. Before, each posting was a row of a table
-- with three indexes (its key, its payer, its payee) and each reference a
-- row with two: an execution wrote eighteen B-tree entries for its three
-- postings, where it now writes five.
DROP TRIGGER ledger_txs_seal_once;
ALTER TABLE ledger_txs ADD COLUMN postings TEXT NOT NULL DEFAULT '[]';
ALTER TABLE ledger_txs ADD COLUMN refs TEXT NOT NULL DEFAULT '[]';
UPDATE ledger_txs SET
    postings = coalesce((SELECT json_group_array(json_object('from', from_address, 'to', to_address, 'amount', amount))
        FROM (SELECT from_address, to_address, amount FROM postings WHERE tx_seq = ledger_txs.seq ORDER BY idx)), '[]'),
    refs = coalesce((SELECT json_group_array(address)
        FROM (SELECT address FROM ledger_refs WHERE tx_seq = ledger_txs.seq ORDER BY idx)), '[]');

CREATE TABLE account_txs (
    environment TEXT NOT NULL,
    address     TEXT NOT NULL,
    tx_seq      INTEGER NOT NULL REFERENCES ledger_txs (seq),
    PRIMARY KEY (environment, address, tx_seq),
    FOREIGN KEY (environment, address) REFERENCES accounts (environment, address)
) WITHOUT ROWID;
INSERT INTO account_txs (environment, address, tx_seq)
    SELECT environment, from_address, tx_seq FROM postings
    UNION SELECT environment, to_address, tx_seq FROM postings
    UNION SELECT environment, address, tx_seq FROM ledger_refs;
DROP TABLE postings;
DROP TABLE ledger_refs;

CREATE TRIGGER account_txs_append_only_update BEFORE UPDATE ON account_txs
BEGIN SELECT RAISE(ABORT, 'account_txs is append-only'); END;
CREATE TRIGGER account_txs_append_only_delete BEFORE DELETE ON account_txs
BEGIN SELECT RAISE(ABORT, 'account_txs is append-only'); END;
CREATE TRIGGER ledger_txs_seal_once BEFORE UPDATE ON ledger_txs
WHEN OLD.block_height IS NOT NULL OR NEW.block_height IS NULL
  OR NEW.id IS NOT OLD.id OR NEW.environment IS NOT OLD.environment OR NEW.kind IS NOT OLD.kind
  OR NEW.data IS NOT OLD.data OR NEW.created_at IS NOT OLD.created_at OR NEW.seq IS NOT OLD.seq
  OR NEW.postings IS NOT OLD.postings OR NEW.refs IS NOT OLD.refs
BEGIN SELECT RAISE(ABORT, 'a ledger transaction changes only when it is sealed'); END;
