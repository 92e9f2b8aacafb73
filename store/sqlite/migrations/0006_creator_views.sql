-- The creator's views read executions by creator.
CREATE INDEX executions_creator ON executions (creator, environment, initiated_at DESC, id);
