-- One transaction may pay several deposits, each transfer instruction
-- naming its own reference: a payment is a part of a transaction. Part 0
-- is a transaction credited whole; parts 1 and on, its instructions. A
-- part is credited once (the key), and a transaction is never credited
-- both whole and in parts (CreditDeposit checks).
CREATE TABLE deposit_payments_parts (
    signature   TEXT NOT NULL,
    part        INTEGER NOT NULL DEFAULT 0 CHECK (part >= 0),
    deposit_id  TEXT NOT NULL REFERENCES deposits (id),
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount      INTEGER NOT NULL CHECK (amount > 0),
    slot        INTEGER NOT NULL CHECK (slot >= 0),
    tx_id       TEXT NOT NULL,
    credited_at INTEGER NOT NULL,
    PRIMARY KEY (signature, part)
);
INSERT INTO deposit_payments_parts (signature, part, deposit_id, environment, amount, slot, tx_id, credited_at)
    SELECT signature, 0, deposit_id, environment, amount, slot, tx_id, credited_at FROM deposit_payments;
DROP TABLE deposit_payments;
ALTER TABLE deposit_payments_parts RENAME TO deposit_payments;
CREATE INDEX deposit_payments_deposit ON deposit_payments (deposit_id, credited_at);
