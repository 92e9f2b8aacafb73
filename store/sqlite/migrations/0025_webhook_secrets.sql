-- Each wallet's symmetric webhook secret in each environment (Standard
-- Webhooks "v1"), made on first use; after a rotation the previous one
-- signs too until previous_until.
CREATE TABLE webhook_secrets (
    wallet         TEXT NOT NULL,
    environment    TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    secret         BLOB NOT NULL CHECK (length(secret) >= 24),
    previous       BLOB,
    previous_until INTEGER NOT NULL DEFAULT 0,
    rotated_at     INTEGER NOT NULL,
    PRIMARY KEY (wallet, environment)
);
