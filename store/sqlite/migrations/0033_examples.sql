-- A listing's example call (Agent.Example): the task and parameters its
-- page and code samples show, run by the listing's endpoint test. Empty
-- when the creator gave none.
ALTER TABLE agents ADD COLUMN example_task TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN example_parameters TEXT NOT NULL DEFAULT '';
