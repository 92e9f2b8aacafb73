-- A wallet's escrowed sum is read from its executions in flight
-- (OwnerBalance), so escrow accounts, one per execution ever made, leave
-- the owner index: one index entry fewer for every execution, and a
-- wallet's balance no longer reads every escrow it ever had.
DROP INDEX accounts_owner;
CREATE INDEX accounts_owner ON accounts (environment, owner, kind) WHERE kind <> 'escrow';
