-- The openings (and, apart, the closings) of executions that arrive while
-- the last batch runs, sent as one statement: one commit, one round trip
-- and one call for the batch instead of one each. Each item runs in a
-- block of its own (a subtransaction), so a refused item writes nothing
-- and is answered with its SQLSTATE, constraint, table and message, as
-- the single call would have raised them, while the others commit.
-- Serialization failures and deadlocks fail the whole statement, which
-- then committed nothing and is run again whole.
--
-- Items are {"exec", "idem" (absent: none), "post", "key_max",
-- "wallet_max", "lock"} for an opening and {"exec", "content" (absent:
-- none), "post", "hook" (absent: none), "lock" (absent: none)} for a
-- closing; i is the item's place in items, from 0.
--
-- A batch first takes its wallets' account rows, all of them, in the one
-- order every writer of accounts uses (bytes of the address, whatever the
-- database's collation; sqldb's LockAccounts), before any item runs. An
-- item takes its Idempotency-Key's entry before its wallet's row, while
-- the batch holds the rows of the items before it: without this, two
-- replicas' batches sharing a wallet and a retried key could wait on each
-- other in a cycle. Items name the row as "lock" (the wallet's account
-- address): an opening's payer, a failed closing's refund.

CREATE FUNCTION crtx_execution_batch(closing boolean, items jsonb)
    RETURNS TABLE (i int, seq bigint, err_code text, err_constraint text, err_table text, err_message text)
    LANGUAGE plpgsql AS $$
DECLARE
    it jsonb;
BEGIN
    PERFORM 1 FROM accounts
        WHERE (environment, address) IN (
            SELECT x->'exec'->>'environment', x->>'lock' FROM jsonb_array_elements(items) x WHERE x ? 'lock')
        ORDER BY environment, address COLLATE "C" FOR NO KEY UPDATE;
    i := 0;
    FOR it IN SELECT value FROM jsonb_array_elements(items) LOOP
        seq := NULL; err_code := NULL; err_constraint := NULL; err_table := NULL; err_message := NULL;
        BEGIN
            IF closing THEN
                seq := crtx_close_execution(it->'exec', it->>'content', it->'post', nullif(it->'hook', 'null'::jsonb));
            ELSE
                seq := crtx_open_execution(it->'exec', nullif(it->'idem', 'null'::jsonb), it->'post',
                    coalesce((it->>'key_max')::int, 0), coalesce((it->>'wallet_max')::int, 0));
            END IF;
        EXCEPTION
            WHEN serialization_failure OR deadlock_detected THEN
                RAISE;
            WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS err_code = RETURNED_SQLSTATE, err_constraint = CONSTRAINT_NAME,
                    err_table = TABLE_NAME, err_message = MESSAGE_TEXT;
        END;
        RETURN NEXT;
        i := i + 1;
    END LOOP;
END $$;
