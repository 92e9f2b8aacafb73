-- One transaction may pay several deposits, each transfer instruction
-- naming its own reference: a payment is a part of a transaction. Part 0
-- is a transaction credited whole; parts 1 and on, its instructions. A
-- part is credited once (the key), and a transaction is never credited
-- both whole and in parts (CreditDeposit checks).
ALTER TABLE deposit_payments ADD COLUMN part INTEGER NOT NULL DEFAULT 0 CHECK (part >= 0);
ALTER TABLE deposit_payments DROP CONSTRAINT deposit_payments_pkey, ADD PRIMARY KEY (signature, part);
