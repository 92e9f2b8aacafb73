-- Metered listings (CONTRACT §8): a listing's price per 1,000 tokens and
-- the most one call costs (0 for a price per call); an execution's hold,
-- its agent's prices as it opened, and the creator's signature of its
-- usage. Every execution before this one held its cost at its price.
ALTER TABLE agents ADD COLUMN price_per_1k INTEGER NOT NULL DEFAULT 0 CHECK (price_per_1k >= 0);
ALTER TABLE agents ADD COLUMN max_price INTEGER NOT NULL DEFAULT 0 CHECK (max_price >= 0);
ALTER TABLE executions ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN base_price INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN price_per_1k INTEGER NOT NULL DEFAULT 0 CHECK (price_per_1k >= 0);
ALTER TABLE executions ADD COLUMN usage_signature TEXT NOT NULL DEFAULT '';
UPDATE executions SET held = cost, base_price = cost;

-- Each replica writes its release with its heartbeat (crtx.Release): a
-- replica of the release before writes none, and is at 0. A metered agent
-- is listed only once none is left, since such a replica would settle its
-- calls at the base price (market/listing.go).
ALTER TABLE replicas ADD COLUMN release INTEGER NOT NULL DEFAULT 0;
