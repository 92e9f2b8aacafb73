-- Money that enters and leaves an environment on its Solana cluster, and
-- the memos that anchor its blocks there. Times are unix microseconds;
-- amounts are micro-USDC.

-- A deposit request: every transfer that names its reference is credited
-- to it, so credited may pass amount.
CREATE TABLE deposits (
    id          TEXT PRIMARY KEY,
    wallet      TEXT NOT NULL,
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount      BIGINT NOT NULL CHECK (amount > 0),
    reference   TEXT NOT NULL UNIQUE,
    memo        TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL CHECK (status IN ('awaiting_payment', 'credited', 'expired')),
    credited    BIGINT NOT NULL DEFAULT 0 CHECK (credited >= 0),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    checked_at  BIGINT NOT NULL
);
CREATE INDEX deposits_wallet ON deposits (wallet, environment, created_at DESC, id);
-- The watcher's queue, credited deposits too: a transfer that comes after the
-- amount was reached is credited as well.
CREATE INDEX deposits_watched ON deposits (environment, checked_at, created_at);

-- A transfer's signature is its key: one transfer is credited once, to
-- one deposit, whichever replica reads it first.
CREATE TABLE deposit_payments (
    signature   TEXT PRIMARY KEY,
    deposit_id  TEXT NOT NULL REFERENCES deposits (id),
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount      BIGINT NOT NULL CHECK (amount > 0),
    slot        BIGINT NOT NULL CHECK (slot >= 0),
    tx_id       TEXT NOT NULL,
    credited_at BIGINT NOT NULL
);
CREATE INDEX deposit_payments_deposit ON deposit_payments (deposit_id, credited_at);

-- A withdrawal is its own durable work, leased like an execution: raw is
-- the signed transaction, stored before it is sent.
CREATE TABLE withdrawals (
    id                      TEXT PRIMARY KEY,
    wallet                  TEXT NOT NULL,
    environment             TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount                  BIGINT NOT NULL CHECK (amount > 0),
    destination             TEXT NOT NULL,
    status                  TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'confirmed', 'failed')),
    signature               TEXT NOT NULL DEFAULT '',
    raw                     BYTEA NOT NULL DEFAULT '\x',
    last_valid_block_height BIGINT NOT NULL DEFAULT 0 CHECK (last_valid_block_height >= 0),
    slot                    BIGINT NOT NULL DEFAULT 0 CHECK (slot >= 0),
    reason                  TEXT NOT NULL DEFAULT '',
    created_at              BIGINT NOT NULL,
    completed_at            BIGINT,
    attempts                BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_owner             TEXT NOT NULL DEFAULT '',
    lease_until             BIGINT NOT NULL
);
CREATE INDEX withdrawals_wallet ON withdrawals (wallet, environment, created_at DESC, id);
CREATE INDEX withdrawals_work ON withdrawals (lease_until) WHERE status IN ('pending', 'sent');
-- One transfer pays one withdrawal: two that signed the same transaction
-- would both be confirmed by the one payment.
CREATE UNIQUE INDEX withdrawals_signature ON withdrawals (signature) WHERE signature <> '';

-- A block's anchor is written after it is sealed, and once: blocks stay
-- append-only, except that an unanchored block may take an anchor and
-- nothing else change. The anchor is not part of the hash. Adding columns
-- with defaults rewrites no row, so no trigger fires.
ALTER TABLE blocks ADD COLUMN anchor_signature TEXT NOT NULL DEFAULT '',
    ADD COLUMN anchor_slot BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN anchor_cluster TEXT NOT NULL DEFAULT '';
CREATE FUNCTION crtx_anchor_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.anchor_signature <> '' OR NEW.anchor_signature = ''
       OR NEW.environment IS DISTINCT FROM OLD.environment OR NEW.height IS DISTINCT FROM OLD.height
       OR NEW.prev_hash IS DISTINCT FROM OLD.prev_hash OR NEW.merkle_root IS DISTINCT FROM OLD.merkle_root
       OR NEW.tx_count IS DISTINCT FROM OLD.tx_count OR NEW.sealed_at IS DISTINCT FROM OLD.sealed_at
       OR NEW.hash IS DISTINCT FROM OLD.hash OR NEW.signature IS DISTINCT FROM OLD.signature
       OR NEW.version IS DISTINCT FROM OLD.version THEN
        RAISE EXCEPTION 'blocks are append-only';
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER blocks_append_only ON blocks;
CREATE TRIGGER blocks_append_only BEFORE DELETE ON blocks FOR EACH ROW EXECUTE FUNCTION crtx_append_only();
CREATE TRIGGER blocks_anchor_once BEFORE UPDATE ON blocks FOR EACH ROW EXECUTE FUNCTION crtx_anchor_once();
CREATE INDEX blocks_anchored ON blocks (environment, height) WHERE anchor_signature <> '';
