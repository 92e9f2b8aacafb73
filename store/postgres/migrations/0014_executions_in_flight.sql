-- A wallet's executions in flight, by key: opening an execution counts
-- them against the key's and the wallet's limits, and a wallet's escrowed
-- sum adds their costs. Only executions in flight are in it, so it stays
-- as small as they are few, whatever the wallet's history.
CREATE INDEX executions_in_flight ON executions (wallet, environment, key_id) WHERE status IN ('pending', 'running');

-- crtx_open_execution with the in-flight limits (0: none): counted last,
-- when the debit of the wallet's account holds its row lock, so that two
-- openings of one wallet count one after the other and a burst cannot
-- pass a limit together. Each statement of the function reads what
-- committed before it (READ COMMITTED), the other opening's row included.
-- Refusals raise CX005 (the key's limit) and CX006 (the wallet's).
-- A replica of the release before sends a row without the columns added
-- since: the defaults below stand for them (jsonb_populate_record would
-- make a missing member NULL, whatever the column's DEFAULT).
CREATE FUNCTION crtx_open_execution(exec jsonb, idem jsonb, post jsonb, key_max int, wallet_max int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    e      executions := jsonb_populate_record(NULL::executions, '{"owner": "", "private": false}'::jsonb || exec);
    a      record;
    tseq   bigint;
    n_all  int;
    n_key  int;
BEGIN
    IF idem IS NOT NULL THEN
        INSERT INTO idempotency_keys (wallet, environment, key, request_hash, execution_id, created_at)
            VALUES (idem->>'wallet', idem->>'environment', idem->>'key', idem->>'request_hash', idem->>'execution_id',
                (idem->>'created_at')::bigint);
    END IF;
    SELECT status, suspended_at, price, creator, name, endpoint_url, signing_public_key INTO a
        FROM agents WHERE id = e.agent_id;
    IF NOT FOUND OR a.status <> 'active' OR a.suspended_at IS NOT NULL OR a.price <> e.cost
       OR a.creator <> e.creator OR a.name <> e.agent_name OR a.endpoint_url <> e.endpoint_url
       OR a.signing_public_key <> e.signing_public_key THEN
        RAISE EXCEPTION 'agent %: the terms changed', e.agent_id USING ERRCODE = 'CX001';
    END IF;
    INSERT INTO executions VALUES (e.*);
    tseq := crtx_post(post);
    UPDATE api_keys SET execution_count = execution_count + 1, total_spent = total_spent + e.cost
        WHERE id = e.key_id AND revoked_at IS NULL AND (spend_limit IS NULL OR total_spent + e.cost <= spend_limit);
    IF NOT FOUND THEN
        IF EXISTS (SELECT 1 FROM api_keys WHERE id = e.key_id AND revoked_at IS NULL) THEN
            RAISE EXCEPTION 'key %: spend limit', e.key_id USING ERRCODE = 'CX003';
        END IF;
        RAISE EXCEPTION 'key %: revoked or unknown', e.key_id USING ERRCODE = 'CX002';
    END IF;
    IF key_max > 0 OR wallet_max > 0 THEN
        SELECT count(*), count(*) FILTER (WHERE key_id = e.key_id) INTO n_all, n_key FROM executions
            WHERE wallet = e.wallet AND environment = e.environment AND status IN ('pending', 'running');
        IF key_max > 0 AND n_key > key_max THEN
            RAISE EXCEPTION 'key %: % executions in flight', e.key_id, n_key USING ERRCODE = 'CX005';
        END IF;
        IF wallet_max > 0 AND n_all > wallet_max THEN
            RAISE EXCEPTION 'wallet %: % executions in flight', e.wallet, n_all USING ERRCODE = 'CX006';
        END IF;
    END IF;
    RETURN tseq;
END $$;

-- The function without limits stays for replicas of the release before,
-- which run beside this one while an upgrade rolls.
CREATE OR REPLACE FUNCTION crtx_open_execution(exec jsonb, idem jsonb, post jsonb) RETURNS bigint LANGUAGE sql AS $$
    SELECT crtx_open_execution(exec, idem, post, 0, 0)
$$;
