-- The whole schema on PostgreSQL: sign-in, keys, the double-entry ledger,
-- listings, executions, webhooks and disputes. Times are unix
-- microseconds; amounts are micro-USDC.

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE auth_nonces (
    nonce TEXT PRIMARY KEY, wallet TEXT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT
);
CREATE INDEX auth_nonces_expiry ON auth_nonces (expires_at);

CREATE TABLE sessions (
    hash TEXT PRIMARY KEY, wallet TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id              TEXT PRIMARY KEY,
    hash            TEXT NOT NULL UNIQUE,
    wallet          TEXT NOT NULL,
    name            TEXT NOT NULL,
    environment     TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    prefix          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    last_used_at    BIGINT,
    execution_count BIGINT NOT NULL DEFAULT 0 CHECK (execution_count >= 0),
    total_spent     BIGINT NOT NULL DEFAULT 0 CHECK (total_spent >= 0),
    spend_limit     BIGINT CHECK (spend_limit IS NULL OR spend_limit >= 0),
    revoked_at      BIGINT,
    CHECK (spend_limit IS NULL OR total_spent <= spend_limit)
);
CREATE INDEX api_keys_wallet ON api_keys (wallet, created_at);

CREATE TABLE accounts (
    environment     TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    address         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    ref             TEXT NOT NULL,
    owner           TEXT NOT NULL DEFAULT '',
    balance         BIGINT NOT NULL DEFAULT 0,
    may_go_negative BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (environment, address),
    -- The database, not the code, keeps wallets, escrows and collateral >= 0.
    CHECK (may_go_negative OR balance >= 0)
);
CREATE INDEX accounts_owner ON accounts (environment, owner, kind);
CREATE INDEX accounts_kind_ref ON accounts (environment, kind, ref);

CREATE TABLE ledger_txs (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    environment  TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    kind         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    block_height BIGINT
);
CREATE INDEX ledger_txs_unsealed ON ledger_txs (environment, seq) WHERE block_height IS NULL;
CREATE INDEX ledger_txs_block ON ledger_txs (environment, block_height, seq);
CREATE INDEX ledger_txs_kind ON ledger_txs (environment, kind, created_at);

CREATE TABLE postings (
    tx_seq       BIGINT NOT NULL REFERENCES ledger_txs (seq),
    idx          BIGINT NOT NULL,
    environment  TEXT NOT NULL,
    from_address TEXT NOT NULL,
    to_address   TEXT NOT NULL,
    amount       BIGINT NOT NULL CHECK (amount > 0),
    PRIMARY KEY (tx_seq, idx),
    FOREIGN KEY (environment, from_address) REFERENCES accounts (environment, address),
    FOREIGN KEY (environment, to_address) REFERENCES accounts (environment, address)
);
CREATE INDEX postings_from ON postings (environment, from_address, tx_seq);
CREATE INDEX postings_to ON postings (environment, to_address, tx_seq);

CREATE TABLE ledger_refs (
    environment TEXT NOT NULL,
    address     TEXT NOT NULL,
    tx_seq      BIGINT NOT NULL REFERENCES ledger_txs (seq),
    idx         BIGINT NOT NULL,
    PRIMARY KEY (environment, address, tx_seq),
    FOREIGN KEY (environment, address) REFERENCES accounts (environment, address)
);
CREATE INDEX ledger_refs_tx ON ledger_refs (tx_seq, idx);

CREATE TABLE blocks (
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    height      BIGINT NOT NULL CHECK (height > 0),
    prev_hash   TEXT NOT NULL,
    merkle_root TEXT NOT NULL,
    tx_count    BIGINT NOT NULL,
    sealed_at   BIGINT NOT NULL,
    hash        TEXT NOT NULL,
    signature   TEXT NOT NULL,
    PRIMARY KEY (environment, height)
);

-- The ledger is append-only: postings, references and blocks never change,
-- and a transaction changes only once, when it is sealed into a block.
CREATE FUNCTION crtx_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$;
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings FOR EACH ROW EXECUTE FUNCTION crtx_append_only();
CREATE TRIGGER ledger_refs_append_only BEFORE UPDATE OR DELETE ON ledger_refs FOR EACH ROW EXECUTE FUNCTION crtx_append_only();
CREATE TRIGGER blocks_append_only BEFORE UPDATE OR DELETE ON blocks FOR EACH ROW EXECUTE FUNCTION crtx_append_only();
CREATE TRIGGER ledger_txs_no_delete BEFORE DELETE ON ledger_txs FOR EACH ROW EXECUTE FUNCTION crtx_append_only();
CREATE FUNCTION crtx_seal_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.block_height IS NOT NULL OR NEW.block_height IS NULL
       OR NEW.id IS DISTINCT FROM OLD.id OR NEW.environment IS DISTINCT FROM OLD.environment
       OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.data IS DISTINCT FROM OLD.data
       OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
        RAISE EXCEPTION 'a ledger transaction changes only when it is sealed';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER ledger_txs_seal_once BEFORE UPDATE ON ledger_txs FOR EACH ROW EXECUTE FUNCTION crtx_seal_once();

CREATE TABLE creators (
    wallet       TEXT PRIMARY KEY,
    display_name TEXT NOT NULL DEFAULT '',
    verified     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL
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
    price              BIGINT NOT NULL CHECK (price > 0),
    endpoint_url       TEXT NOT NULL,
    signing_public_key TEXT NOT NULL,
    timeout_seconds    BIGINT NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 300),
    status             TEXT NOT NULL CHECK (status IN ('active', 'paused', 'delisted')),
    collateral         BIGINT NOT NULL CHECK (collateral >= 0),
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    suspended_at       BIGINT,
    delisted_at        BIGINT,
    -- Full text: the name weighs most, then tags, tagline, description.
    search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', name), 'A') || setweight(to_tsvector('english', tags), 'B') ||
        setweight(to_tsvector('english', tagline), 'C') || setweight(to_tsvector('english', description), 'D')) STORED
);
CREATE INDEX agents_creator ON agents (creator, created_at);
CREATE INDEX agents_created ON agents (status, created_at DESC, id);
CREATE INDEX agents_price ON agents (status, price, id);
CREATE INDEX agents_search ON agents USING GIN (search);

CREATE TABLE agent_tags (
    tag TEXT NOT NULL, agent_id TEXT NOT NULL REFERENCES agents (id), PRIMARY KEY (tag, agent_id)
);
CREATE INDEX agent_tags_agent ON agent_tags (agent_id);

CREATE TABLE agent_stats (
    agent_id    TEXT NOT NULL REFERENCES agents (id),
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    total       BIGINT NOT NULL DEFAULT 0 CHECK (total >= 0),
    finished    BIGINT NOT NULL DEFAULT 0 CHECK (finished >= 0),
    successful  BIGINT NOT NULL DEFAULT 0 CHECK (successful >= 0 AND successful <= finished),
    time_sum_ms BIGINT NOT NULL DEFAULT 0 CHECK (time_sum_ms >= 0),
    disputes    BIGINT NOT NULL DEFAULT 0 CHECK (disputes >= 0),
    PRIMARY KEY (agent_id, environment)
);
CREATE INDEX agent_stats_total ON agent_stats (environment, total DESC, agent_id);

CREATE TABLE executions (
    id                 TEXT PRIMARY KEY,
    environment        TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    wallet             TEXT NOT NULL,
    key_id             TEXT NOT NULL,
    agent_id           TEXT NOT NULL REFERENCES agents (id),
    agent_name         TEXT NOT NULL,
    creator            TEXT NOT NULL,
    endpoint_url       TEXT NOT NULL,
    signing_public_key TEXT NOT NULL,
    task               TEXT NOT NULL,
    parameters         TEXT NOT NULL,
    timeout_seconds    BIGINT NOT NULL,
    async              BOOLEAN NOT NULL,
    webhook_url        TEXT NOT NULL DEFAULT '',
    cost               BIGINT NOT NULL CHECK (cost > 0),
    creator_amount     BIGINT NOT NULL CHECK (creator_amount >= 0),
    platform_amount    BIGINT NOT NULL CHECK (platform_amount >= 0),
    status             TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'disputed')),
    error_code         TEXT NOT NULL DEFAULT '',
    error_message      TEXT NOT NULL DEFAULT '',
    result_cid         TEXT NOT NULL DEFAULT '',
    result_hash        TEXT NOT NULL DEFAULT '',
    signature          TEXT NOT NULL DEFAULT '',
    tokens_used        BIGINT,
    execution_time_ms  BIGINT,
    initiated_at       BIGINT NOT NULL,
    dispatched_at      BIGINT,
    completed_at       BIGINT,
    deadline           BIGINT NOT NULL,
    lease_until        BIGINT NOT NULL,
    attempts           BIGINT NOT NULL DEFAULT 0,
    CHECK (creator_amount + platform_amount = cost)
);
CREATE INDEX executions_wallet ON executions (wallet, environment, initiated_at DESC, id);
CREATE INDEX executions_agent ON executions (agent_id, initiated_at);
CREATE INDEX executions_creator ON executions (creator, environment, initiated_at DESC, id);
CREATE INDEX executions_work ON executions (lease_until) WHERE status IN ('pending', 'running');

CREATE TABLE results (cid TEXT PRIMARY KEY, content TEXT NOT NULL, created_at BIGINT NOT NULL);

CREATE TABLE idempotency_keys (
    wallet       TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    execution_id TEXT NOT NULL DEFAULT '',
    status       BIGINT NOT NULL DEFAULT 0,
    body         BYTEA,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (wallet, key)
);
CREATE INDEX idempotency_created ON idempotency_keys (created_at);

CREATE TABLE webhook_deliveries (
    execution_id TEXT PRIMARY KEY REFERENCES executions (id),
    url          TEXT NOT NULL,
    attempts     BIGINT NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    delivered_at BIGINT,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE delivered_at IS NULL;

CREATE TABLE disputes (
    id            TEXT PRIMARY KEY,
    execution_id  TEXT NOT NULL UNIQUE REFERENCES executions (id),
    environment   TEXT NOT NULL,
    wallet        TEXT NOT NULL,
    agent_id      TEXT NOT NULL REFERENCES agents (id),
    creator       TEXT NOT NULL,
    reason        TEXT NOT NULL CHECK (reason IN ('hash_mismatch', 'fraud', 'other')),
    description   TEXT NOT NULL,
    evidence      TEXT NOT NULL,
    evidence_hash TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('open', 'upheld', 'rejected')),
    opened_at     BIGINT NOT NULL,
    respond_by    BIGINT NOT NULL,
    response      TEXT NOT NULL DEFAULT '',
    responded_at  BIGINT,
    resolved_at   BIGINT,
    slashed       BIGINT NOT NULL DEFAULT 0 CHECK (slashed >= 0),
    refunded      BIGINT NOT NULL DEFAULT 0 CHECK (refunded >= 0 AND refunded <= slashed)
);
CREATE INDEX disputes_status ON disputes (status, opened_at);
CREATE INDEX disputes_creator ON disputes (creator, opened_at);
CREATE INDEX disputes_agent ON disputes (agent_id, status);
