-- Withdrawals are signed on the treasury's durable nonce accounts: a
-- withdrawal holds one from its signing until it is final (two transfers
-- on one nonce value would let only one land), and the next to take it
-- reads its nonce from a node past the slot where the last one landed.
-- last_valid_block_height stays for rows signed on a recent blockhash.
ALTER TABLE withdrawals ADD COLUMN nonce_account TEXT NOT NULL DEFAULT '';
ALTER TABLE withdrawals ADD COLUMN nonce TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX withdrawals_nonce_held ON withdrawals (environment, nonce_account)
    WHERE nonce_account <> '' AND status IN ('pending', 'sent');
CREATE INDEX withdrawals_nonce_slot ON withdrawals (environment, nonce_account, slot) WHERE nonce_account <> '';
