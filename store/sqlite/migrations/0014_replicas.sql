-- A replica's heartbeats tell the others it is alive; the executions whose
-- owner stopped beating are taken over at once, not when each lease runs
-- out.
ALTER TABLE executions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE TABLE replicas (
    id           TEXT PRIMARY KEY,
    heartbeat_at INTEGER NOT NULL
);
