-- Disputes, operator suspension of agents, and when an agent was delisted
-- (collateral release counts from it).
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
    opened_at     INTEGER NOT NULL,
    respond_by    INTEGER NOT NULL,
    response      TEXT NOT NULL DEFAULT '',
    responded_at  INTEGER,
    resolved_at   INTEGER,
    slashed       INTEGER NOT NULL DEFAULT 0 CHECK (slashed >= 0),
    refunded      INTEGER NOT NULL DEFAULT 0 CHECK (refunded >= 0 AND refunded <= slashed)
);
CREATE INDEX disputes_status ON disputes (status, opened_at);
CREATE INDEX disputes_creator ON disputes (creator, opened_at);
CREATE INDEX disputes_agent ON disputes (agent_id, status);

ALTER TABLE agents ADD COLUMN suspended_at INTEGER;
ALTER TABLE agents ADD COLUMN delisted_at INTEGER;
