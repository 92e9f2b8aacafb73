-- A wallet's escrowed sum is read from its executions in flight
-- (Escrowed) and its available balance from its wallet account, so the
-- index of accounts by owner serves nothing, and grew by an escrow account
-- with every execution.
DROP INDEX accounts_owner;
