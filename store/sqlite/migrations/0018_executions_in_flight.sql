-- A wallet's executions in flight, by key: opening an execution counts
-- them against the key's and the wallet's limits, and a wallet's escrowed
-- sum adds their costs. Only executions in flight are in it, so it stays
-- as small as they are few, whatever the wallet's history.
CREATE INDEX executions_in_flight ON executions (wallet, environment, key_id) WHERE status IN ('pending', 'running');
