-- A batch takes its wallets' account rows first, all of them, in the one
-- order every writer of accounts uses (bytes of the address, whatever the
-- database's collation; sqldb's LockAccounts), before any item runs. An
-- item otherwise took its Idempotency-Key's entry before its wallet's
-- row, while the batch held the rows of the items before it: two
-- replicas' batches sharing a wallet and a retried key could wait on each
-- other in a cycle. Items name the row as "lock" (the wallet's account
-- address): an opening's payer, a failed closing's refund.

CREATE FUNCTION crtx_lock_batch(items jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM accounts
        WHERE (environment, address) IN (
            SELECT it->'exec'->>'environment', it->>'lock' FROM jsonb_array_elements(items) it WHERE it ? 'lock')
        ORDER BY environment, address COLLATE "C" FOR NO KEY UPDATE;
END $$;

CREATE OR REPLACE FUNCTION crtx_open_executions(items jsonb)
    RETURNS TABLE (i int, seq bigint, err_code text, err_constraint text, err_table text, err_message text)
    LANGUAGE plpgsql AS $$
DECLARE
    it jsonb;
BEGIN
    PERFORM crtx_lock_batch(items);
    i := 0;
    FOR it IN SELECT value FROM jsonb_array_elements(items) LOOP
        seq := NULL; err_code := NULL; err_constraint := NULL; err_table := NULL; err_message := NULL;
        BEGIN
            seq := crtx_open_execution(it->'exec', nullif(it->'idem', 'null'::jsonb), it->'post',
                coalesce((it->>'key_max')::int, 0), coalesce((it->>'wallet_max')::int, 0));
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

CREATE OR REPLACE FUNCTION crtx_close_executions(items jsonb)
    RETURNS TABLE (i int, seq bigint, err_code text, err_constraint text, err_table text, err_message text)
    LANGUAGE plpgsql AS $$
DECLARE
    it jsonb;
BEGIN
    PERFORM crtx_lock_batch(items);
    i := 0;
    FOR it IN SELECT value FROM jsonb_array_elements(items) LOOP
        seq := NULL; err_code := NULL; err_constraint := NULL; err_table := NULL; err_message := NULL;
        BEGIN
            seq := crtx_close_execution(it->'exec', it->>'content', it->'post', nullif(it->'hook', 'null'::jsonb));
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
