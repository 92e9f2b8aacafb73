-- Each wallet's symmetric webhook secret (Standard Webhooks "v1"), made
-- on first use; after a rotation the previous one signs too until
-- previous_until.
CREATE TABLE webhook_secrets (
    wallet         TEXT PRIMARY KEY,
    secret         BLOB NOT NULL CHECK (length(secret) >= 24),
    previous       BLOB,
    previous_until INTEGER NOT NULL DEFAULT 0,
    rotated_at     INTEGER NOT NULL
);
