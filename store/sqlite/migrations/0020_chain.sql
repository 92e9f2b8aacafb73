-- Money that enters and leaves an environment on its Solana cluster, and
-- the memos that anchor its blocks there. Times are unix microseconds;
-- amounts are micro-USDC.

-- A deposit request: every transfer that names its reference is credited
-- to it, so credited may pass amount.
CREATE TABLE deposits (
    id          TEXT PRIMARY KEY,
    wallet      TEXT NOT NULL,
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount      INTEGER NOT NULL CHECK (amount > 0),
    reference   TEXT NOT NULL UNIQUE,
    memo        TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL CHECK (status IN ('awaiting_payment', 'credited', 'expired')),
    credited    INTEGER NOT NULL DEFAULT 0 CHECK (credited >= 0),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    checked_at  INTEGER NOT NULL
);
CREATE INDEX deposits_wallet ON deposits (wallet, environment, created_at DESC, id);
-- The watcher's queue, credited deposits too: a transfer that comes after the
-- amount was reached is credited as well.
CREATE INDEX deposits_watched ON deposits (environment, checked_at, created_at);

-- A transfer's signature is its key: one transfer is credited once, to
-- one deposit, whichever process reads it first.
CREATE TABLE deposit_payments (
    signature   TEXT PRIMARY KEY,
    deposit_id  TEXT NOT NULL REFERENCES deposits (id),
    environment TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount      INTEGER NOT NULL CHECK (amount > 0),
    slot        INTEGER NOT NULL CHECK (slot >= 0),
    tx_id       TEXT NOT NULL,
    credited_at INTEGER NOT NULL
);
CREATE INDEX deposit_payments_deposit ON deposit_payments (deposit_id, credited_at);

-- A withdrawal is its own durable work, leased like an execution: raw is
-- the signed transaction, stored before it is sent.
CREATE TABLE withdrawals (
    id                      TEXT PRIMARY KEY,
    wallet                  TEXT NOT NULL,
    environment             TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    amount                  INTEGER NOT NULL CHECK (amount > 0),
    destination             TEXT NOT NULL,
    status                  TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'confirmed', 'failed')),
    signature               TEXT NOT NULL DEFAULT '',
    raw                     BLOB NOT NULL DEFAULT x'',
    last_valid_block_height INTEGER NOT NULL DEFAULT 0 CHECK (last_valid_block_height >= 0),
    slot                    INTEGER NOT NULL DEFAULT 0 CHECK (slot >= 0),
    reason                  TEXT NOT NULL DEFAULT '',
    created_at              INTEGER NOT NULL,
    completed_at            INTEGER,
    attempts                INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_owner             TEXT NOT NULL DEFAULT '',
    lease_until             INTEGER NOT NULL
);
CREATE INDEX withdrawals_wallet ON withdrawals (wallet, environment, created_at DESC, id);
CREATE INDEX withdrawals_work ON withdrawals (lease_until) WHERE status IN ('pending', 'sent');
-- One transfer pays one withdrawal: two that signed the same transaction
-- would both be confirmed by the one payment.
CREATE UNIQUE INDEX withdrawals_signature ON withdrawals (signature) WHERE signature <> '';

-- A block's anchor is written after it is sealed, and once: the trigger
-- that kept blocks append-only now lets an unanchored block take an
-- anchor, and nothing else change. The anchor is not part of the hash.
ALTER TABLE blocks ADD COLUMN anchor_signature TEXT NOT NULL DEFAULT '';
ALTER TABLE blocks ADD COLUMN anchor_slot INTEGER NOT NULL DEFAULT 0;
ALTER TABLE blocks ADD COLUMN anchor_cluster TEXT NOT NULL DEFAULT '';
DROP TRIGGER blocks_append_only_update;
CREATE TRIGGER blocks_append_only_update BEFORE UPDATE ON blocks
WHEN OLD.anchor_signature <> '' OR NEW.anchor_signature = ''
  OR NEW.environment IS NOT OLD.environment OR NEW.height IS NOT OLD.height OR NEW.prev_hash IS NOT OLD.prev_hash
  OR NEW.merkle_root IS NOT OLD.merkle_root OR NEW.tx_count IS NOT OLD.tx_count OR NEW.sealed_at IS NOT OLD.sealed_at
  OR NEW.hash IS NOT OLD.hash OR NEW.signature IS NOT OLD.signature OR NEW.version IS NOT OLD.version
BEGIN SELECT RAISE(ABORT, 'blocks are append-only'); END;
CREATE INDEX blocks_anchored ON blocks (environment, height) WHERE anchor_signature <> '';
