-- Executions whose input the agent refused (error code invalid_input) are
-- counted apart from its failures: the caller's fault, not the agent's.
ALTER TABLE agent_stats ADD COLUMN rejected BIGINT NOT NULL DEFAULT 0 CHECK (rejected >= 0);
