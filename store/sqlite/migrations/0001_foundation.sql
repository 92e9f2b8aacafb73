-- Foundation: sign-in, API keys, and the double-entry ledger with its blocks.
-- Times are unix microseconds. Amounts are micro-USDC.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE auth_nonces (
    nonce      TEXT PRIMARY KEY,
    wallet     TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX auth_nonces_expiry ON auth_nonces (expires_at);

CREATE TABLE sessions (
    hash       TEXT PRIMARY KEY,
    wallet     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,
    hash            TEXT NOT NULL UNIQUE,
    wallet          TEXT NOT NULL,
    name            TEXT NOT NULL,
    environment     TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    prefix          TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    last_used_at    INTEGER,
    execution_count INTEGER NOT NULL DEFAULT 0 CHECK (execution_count >= 0),
    total_spent     INTEGER NOT NULL DEFAULT 0 CHECK (total_spent >= 0),
    spend_limit     INTEGER CHECK (spend_limit IS NULL OR spend_limit >= 0),
    revoked_at      INTEGER,
    CHECK (spend_limit IS NULL OR total_spent <= spend_limit)
);
CREATE INDEX api_keys_wallet ON api_keys (wallet, created_at);

CREATE TABLE accounts (
    environment     TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    address         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    ref             TEXT NOT NULL,
    owner           TEXT NOT NULL DEFAULT '',
    balance         INTEGER NOT NULL DEFAULT 0,
    may_go_negative INTEGER NOT NULL DEFAULT 0 CHECK (may_go_negative IN (0, 1)),
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (environment, address),
    -- The database, not the code, keeps wallets, escrows and collateral >= 0.
    CHECK (may_go_negative = 1 OR balance >= 0)
);
CREATE INDEX accounts_owner ON accounts (environment, owner, kind);

CREATE TABLE ledger_txs (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    environment  TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    kind         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    block_height INTEGER
);
CREATE INDEX ledger_txs_unsealed ON ledger_txs (environment, seq) WHERE block_height IS NULL;
CREATE INDEX ledger_txs_block ON ledger_txs (environment, block_height, seq);
CREATE INDEX ledger_txs_kind ON ledger_txs (environment, kind, created_at);

CREATE TABLE postings (
    tx_seq       INTEGER NOT NULL REFERENCES ledger_txs (seq),
    idx          INTEGER NOT NULL,
    environment  TEXT NOT NULL,
    from_address TEXT NOT NULL,
    to_address   TEXT NOT NULL,
    amount       INTEGER NOT NULL CHECK (amount > 0),
    PRIMARY KEY (tx_seq, idx),
    FOREIGN KEY (environment, from_address) REFERENCES accounts (environment, address),
    FOREIGN KEY (environment, to_address) REFERENCES accounts (environment, address)
);
CREATE INDEX postings_from ON postings (environment, from_address, tx_seq);
CREATE INDEX postings_to ON postings (environment, to_address, tx_seq);

CREATE TABLE blocks (
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    height      INTEGER NOT NULL CHECK (height > 0),
    prev_hash   TEXT NOT NULL,
    merkle_root TEXT NOT NULL,
    tx_count    INTEGER NOT NULL,
    sealed_at   INTEGER NOT NULL,
    hash        TEXT NOT NULL,
    signature   TEXT NOT NULL,
    PRIMARY KEY (environment, height)
);

-- The ledger is append-only: postings and blocks never change, and a
-- transaction changes only once, when it is sealed into a block.
CREATE TRIGGER postings_append_only_update BEFORE UPDATE ON postings
BEGIN SELECT RAISE(ABORT, 'postings are append-only'); END;
CREATE TRIGGER postings_append_only_delete BEFORE DELETE ON postings
BEGIN SELECT RAISE(ABORT, 'postings are append-only'); END;
CREATE TRIGGER blocks_append_only_update BEFORE UPDATE ON blocks
BEGIN SELECT RAISE(ABORT, 'blocks are append-only'); END;
CREATE TRIGGER blocks_append_only_delete BEFORE DELETE ON blocks
BEGIN SELECT RAISE(ABORT, 'blocks are append-only'); END;
CREATE TRIGGER ledger_txs_append_only_delete BEFORE DELETE ON ledger_txs
BEGIN SELECT RAISE(ABORT, 'ledger transactions are append-only'); END;
CREATE TRIGGER ledger_txs_seal_once BEFORE UPDATE ON ledger_txs
WHEN OLD.block_height IS NOT NULL OR NEW.block_height IS NULL
  OR NEW.id IS NOT OLD.id OR NEW.environment IS NOT OLD.environment OR NEW.kind IS NOT OLD.kind
  OR NEW.data IS NOT OLD.data OR NEW.created_at IS NOT OLD.created_at OR NEW.seq IS NOT OLD.seq
BEGIN SELECT RAISE(ABORT, 'a ledger transaction changes only when it is sealed'); END;
