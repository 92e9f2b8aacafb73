-- An escrow account's transactions are found by its execution's id, not
-- through account_txs: escrow addresses are random, so their entries there
-- landed on a random page each (two per execution, a WAL frame each at
-- commit), while execution ids grow with time.
CREATE INDEX ledger_txs_execution ON ledger_txs (environment, json_extract(data, '$.execution_id'))
    WHERE json_extract(data, '$.execution_id') IS NOT NULL;
