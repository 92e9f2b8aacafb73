-- Creators, listings, their tags and statistics, full-text search, and the
-- accounts a ledger transaction concerns without moving money.

CREATE TABLE ledger_refs (
    environment TEXT NOT NULL,
    address     TEXT NOT NULL,
    tx_seq      INTEGER NOT NULL REFERENCES ledger_txs (seq),
    idx         INTEGER NOT NULL,
    PRIMARY KEY (environment, address, tx_seq),
    FOREIGN KEY (environment, address) REFERENCES accounts (environment, address)
);
CREATE INDEX ledger_refs_tx ON ledger_refs (tx_seq, idx);
CREATE TRIGGER ledger_refs_append_only_update BEFORE UPDATE ON ledger_refs
BEGIN SELECT RAISE(ABORT, 'ledger references are append-only'); END;
CREATE TRIGGER ledger_refs_append_only_delete BEFORE DELETE ON ledger_refs
BEGIN SELECT RAISE(ABORT, 'ledger references are append-only'); END;

CREATE TABLE creators (
    wallet       TEXT PRIMARY KEY,
    display_name TEXT NOT NULL DEFAULT '',
    verified     INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1)),
    created_at   INTEGER NOT NULL
);

CREATE TABLE agents (
    id                 TEXT PRIMARY KEY,
    creator            TEXT NOT NULL REFERENCES creators (wallet),
    name               TEXT NOT NULL,
    tagline            TEXT NOT NULL,
    description        TEXT NOT NULL,
    tags               TEXT NOT NULL,
    input_schema       TEXT NOT NULL,
    output_schema      TEXT NOT NULL,
    pricing_model      TEXT NOT NULL,
    price              INTEGER NOT NULL CHECK (price > 0),
    endpoint_url       TEXT NOT NULL,
    signing_public_key TEXT NOT NULL,
    timeout_seconds    INTEGER NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 300),
    status             TEXT NOT NULL CHECK (status IN ('active', 'paused', 'delisted')),
    collateral         INTEGER NOT NULL CHECK (collateral >= 0),
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX agents_creator ON agents (creator, created_at);
CREATE INDEX agents_created ON agents (status, created_at DESC, id);
CREATE INDEX agents_price ON agents (status, price, id);

CREATE TABLE agent_tags (
    tag      TEXT NOT NULL,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    PRIMARY KEY (tag, agent_id)
);
CREATE INDEX agent_tags_agent ON agent_tags (agent_id);

CREATE TABLE agent_stats (
    agent_id    TEXT NOT NULL REFERENCES agents (id),
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    total       INTEGER NOT NULL DEFAULT 0 CHECK (total >= 0),
    finished    INTEGER NOT NULL DEFAULT 0 CHECK (finished >= 0),
    successful  INTEGER NOT NULL DEFAULT 0 CHECK (successful >= 0 AND successful <= finished),
    time_sum_ms INTEGER NOT NULL DEFAULT 0 CHECK (time_sum_ms >= 0),
    disputes    INTEGER NOT NULL DEFAULT 0 CHECK (disputes >= 0),
    PRIMARY KEY (agent_id, environment)
);
CREATE INDEX agent_stats_total ON agent_stats (environment, total DESC, agent_id);

-- Rows share the rowid of their agent.
CREATE VIRTUAL TABLE agents_fts USING fts5(name, tagline, description, tags, tokenize = 'porter unicode61');
