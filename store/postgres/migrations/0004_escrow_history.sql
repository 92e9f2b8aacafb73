-- An escrow account's transactions are found by its execution's id, not
-- through account_txs: escrow addresses are random, so their entries there
-- landed on a random page each (two per execution), while execution ids
-- grow with time.
CREATE INDEX ledger_txs_execution ON ledger_txs (environment, (data::jsonb ->> 'execution_id'))
    WHERE (data::jsonb ->> 'execution_id') IS NOT NULL;
