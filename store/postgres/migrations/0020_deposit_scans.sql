-- The deposit watcher reads a reference's transactions once: it keeps the
-- signature up to which it decided every one, and reads after it.
ALTER TABLE deposits ADD COLUMN scanned_until TEXT NOT NULL DEFAULT '';
