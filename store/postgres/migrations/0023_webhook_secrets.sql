-- Each wallet's symmetric webhook secret in each environment (Standard
-- Webhooks "v1"), made on first use; after a rotation the previous one
-- signs too until previous_until.
CREATE TABLE webhook_secrets (
    wallet         TEXT NOT NULL,
    environment    TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    secret         BYTEA NOT NULL CHECK (length(secret) >= 24),
    previous       BYTEA,
    previous_until BIGINT NOT NULL DEFAULT 0,
    rotated_at     BIGINT NOT NULL,
    PRIMARY KEY (wallet, environment)
);
