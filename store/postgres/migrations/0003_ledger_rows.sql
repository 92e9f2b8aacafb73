-- A ledger transaction keeps its postings and references in its own row
-- (JSON, written once with it), and account_txs alone indexes which
-- transactions touch an account. Before, each posting was a row of a table
-- with three indexes (its key, its payer, its payee) and each reference a
-- row with two: an execution wrote eighteen B-tree entries for its three
-- postings, where it now writes five.
ALTER TABLE ledger_txs DISABLE TRIGGER ledger_txs_seal_once;
ALTER TABLE ledger_txs ADD COLUMN postings TEXT NOT NULL DEFAULT '[]', ADD COLUMN refs TEXT NOT NULL DEFAULT '[]';
UPDATE ledger_txs t SET
    postings = coalesce((SELECT json_agg(json_build_object('from', from_address, 'to', to_address, 'amount', amount) ORDER BY idx)::text
        FROM postings p WHERE p.tx_seq = t.seq), '[]'),
    refs = coalesce((SELECT json_agg(address ORDER BY idx)::text FROM ledger_refs r WHERE r.tx_seq = t.seq), '[]');
ALTER TABLE ledger_txs ENABLE TRIGGER ledger_txs_seal_once;

CREATE TABLE account_txs (
    environment TEXT NOT NULL,
    address     TEXT NOT NULL,
    tx_seq      BIGINT NOT NULL REFERENCES ledger_txs (seq),
    PRIMARY KEY (environment, address, tx_seq),
    FOREIGN KEY (environment, address) REFERENCES accounts (environment, address)
);
INSERT INTO account_txs (environment, address, tx_seq)
    SELECT environment, from_address, tx_seq FROM postings
    UNION SELECT environment, to_address, tx_seq FROM postings
    UNION SELECT environment, address, tx_seq FROM ledger_refs;
DROP TABLE postings;
DROP TABLE ledger_refs;
CREATE TRIGGER account_txs_append_only BEFORE UPDATE OR DELETE ON account_txs FOR EACH ROW EXECUTE FUNCTION crtx_append_only();

CREATE OR REPLACE FUNCTION crtx_seal_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.block_height IS NOT NULL OR NEW.block_height IS NULL
       OR NEW.id IS DISTINCT FROM OLD.id OR NEW.environment IS DISTINCT FROM OLD.environment
       OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.data IS DISTINCT FROM OLD.data
       OR NEW.created_at IS DISTINCT FROM OLD.created_at
       OR NEW.postings IS DISTINCT FROM OLD.postings OR NEW.refs IS DISTINCT FROM OLD.refs THEN
        RAISE EXCEPTION 'a ledger transaction changes only when it is sealed';
    END IF;
    RETURN NEW;
END $$;
