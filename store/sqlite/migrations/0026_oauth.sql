-- OAuth for MCP connectors: a connector's key carries its client, the end
-- of its access token (the key's secret, replaced at each refresh) and the
-- hash of its refresh token.
ALTER TABLE api_keys ADD COLUMN oauth_client TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN refresh_hash TEXT;
CREATE UNIQUE INDEX api_keys_refresh ON api_keys (refresh_hash);

-- Clients registered dynamically (RFC 7591). One that never obtains a
-- token (used_at NULL) lapses after a day and is deleted by a later
-- registration.
CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    used_at       INTEGER
);
CREATE INDEX oauth_clients_unused ON oauth_clients (created_at) WHERE used_at IS NULL;

-- Authorization codes, with what the person consented to; spent_key is
-- set when a code is presented (to the key it gave, or '' for none), and
-- expired codes are deleted.
CREATE TABLE oauth_codes (
    hash         TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL,
    client_name  TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    challenge    TEXT NOT NULL,
    wallet       TEXT NOT NULL,
    environment  TEXT NOT NULL CHECK (environment IN ('mainnet', 'devnet')),
    spend_limit  INTEGER CHECK (spend_limit IS NULL OR spend_limit > 0),
    expires_at   INTEGER NOT NULL,
    spent_key    TEXT
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);
