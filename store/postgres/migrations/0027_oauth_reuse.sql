-- A connector's refresh token rotated away is remembered with its key, so
-- that one presented again revokes that key (OAuth 2.1's refresh token
-- rotation); rows older than a refresh token's idle life are deleted.
CREATE TABLE oauth_spent_refresh (
    hash     TEXT PRIMARY KEY,
    key_id   TEXT NOT NULL,
    spent_at BIGINT NOT NULL
);
CREATE INDEX oauth_spent_refresh_age ON oauth_spent_refresh (spent_at);

-- When a code was presented: presented again within moments, it is the
-- client's own retry racing the first exchange, which keeps its key.
ALTER TABLE oauth_codes ADD COLUMN spent_at BIGINT;
