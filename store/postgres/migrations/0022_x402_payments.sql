-- An x402 payment pays one execution. Its row claims its signature (the
-- fee payer's, which names the transaction), so a payment header is used
-- once; raw is the signed transaction, stored before it is sent; reply is
-- the creator's reply, kept until the payment settles. The payments in
-- flight from one token account are read together: simulated one by one,
-- they must all fit in its funds.
CREATE TABLE x402_payments (
    signature    TEXT PRIMARY KEY,
    environment  TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    execution_id TEXT NOT NULL UNIQUE,
    payer        TEXT NOT NULL,
    source       TEXT NOT NULL,
    amount       BIGINT NOT NULL CHECK (amount > 0),
    network      TEXT NOT NULL,
    raw          BYTEA NOT NULL,
    last_valid   BIGINT NOT NULL CHECK (last_valid >= 0),
    status       TEXT NOT NULL CHECK (status IN ('verified', 'sent', 'settled', 'void')),
    reply        TEXT NOT NULL DEFAULT '',
    slot         BIGINT NOT NULL DEFAULT 0 CHECK (slot >= 0),
    created_at   BIGINT NOT NULL,
    settled_at   BIGINT
);
CREATE INDEX x402_payments_in_flight ON x402_payments (source) WHERE status IN ('verified', 'sent');
