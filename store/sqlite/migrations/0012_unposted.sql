-- The ledger transactions that end an execution and that the roll-up has
-- not posted yet: their credits to creators and the treasury, and their
-- agents' statistics, which every execution would otherwise write on the
-- same rows. A row is written with its transaction and deleted by the
-- roll-up, so the table holds a fraction of a second of executions. No
-- foreign key: it is written in the transaction that writes its ledger row.
CREATE TABLE unposted (
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    tx_seq      INTEGER NOT NULL,
    PRIMARY KEY (environment, tx_seq)
) WITHOUT ROWID;
