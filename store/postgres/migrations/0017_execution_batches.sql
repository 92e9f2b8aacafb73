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
-- "wallet_max"} for an opening and {"exec", "content" (absent: none),
-- "post", "hook" (absent: none)} for a closing; i is the item's place in
-- items, from 0.

CREATE FUNCTION crtx_open_executions(items jsonb)
    RETURNS TABLE (i int, seq bigint, err_code text, err_constraint text, err_table text, err_message text)
    LANGUAGE plpgsql AS $$
DECLARE
    it jsonb;
BEGIN
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

CREATE FUNCTION crtx_close_executions(items jsonb)
    RETURNS TABLE (i int, seq bigint, err_code text, err_constraint text, err_table text, err_message text)
    LANGUAGE plpgsql AS $$
DECLARE
    it jsonb;
BEGIN
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
