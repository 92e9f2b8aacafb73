-- Metered listings (CONTRACT §8): a listing's price per 1,000 tokens and
-- the most one call costs (0 for a price per call); an execution's hold,
-- its agent's prices as it opened, and the creator's signature of its
-- usage. Every execution before this one held its cost at its price.
ALTER TABLE agents ADD COLUMN price_per_1k BIGINT NOT NULL DEFAULT 0 CHECK (price_per_1k >= 0);
ALTER TABLE agents ADD COLUMN max_price BIGINT NOT NULL DEFAULT 0 CHECK (max_price >= 0);
ALTER TABLE executions ADD COLUMN held BIGINT NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN base_price BIGINT NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN price_per_1k BIGINT NOT NULL DEFAULT 0 CHECK (price_per_1k >= 0);
ALTER TABLE executions ADD COLUMN usage_signature TEXT NOT NULL DEFAULT '';
UPDATE executions SET held = cost, base_price = cost;

-- Each replica writes its release with its heartbeat (crtx.Release): a
-- replica of the release before writes none, and is at 0. A metered agent
-- is listed only once none is left, since such a replica would settle its
-- calls at the base price (market/listing.go).
ALTER TABLE replicas ADD COLUMN release INTEGER NOT NULL DEFAULT 0;

-- An opening is at its agent's terms when it holds the price of a call
-- priced per call, or at most the most of a metered one at its prices. A
-- replica of the release before sends a row without the columns added
-- here: it holds its cost, at its price.
CREATE OR REPLACE FUNCTION crtx_open_execution(exec jsonb, idem jsonb, post jsonb, key_max int, wallet_max int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    e      executions := jsonb_populate_record(NULL::executions,
               '{"owner": "", "private": false, "price_per_1k": 0, "usage_signature": ""}'::jsonb || exec);
    a      record;
    tseq   bigint;
    n_all  int;
    n_key  int;
BEGIN
    IF NOT exec ? 'held' THEN
        e.held := e.cost;
        e.base_price := e.cost;
    END IF;
    IF idem IS NOT NULL THEN
        INSERT INTO idempotency_keys (wallet, environment, key, request_hash, execution_id, created_at)
            VALUES (idem->>'wallet', idem->>'environment', idem->>'key', idem->>'request_hash', idem->>'execution_id',
                (idem->>'created_at')::bigint);
    END IF;
    SELECT status, suspended_at, price, pricing_model, price_per_1k, max_price, creator, name, endpoint_url,
        signing_public_key INTO a FROM agents WHERE id = e.agent_id;
    IF NOT FOUND OR a.status <> 'active' OR a.suspended_at IS NOT NULL OR a.price <> e.base_price
       OR a.price_per_1k <> e.price_per_1k OR e.cost <> e.held OR e.held < a.price
       OR e.held > (CASE WHEN a.pricing_model = 'metered' THEN a.max_price ELSE a.price END)
       OR (e.price_per_1k = 0 AND e.held <> a.price)
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

-- A closing writes what the call was charged (a metered call's charge,
-- under what it held) and the creator's signature of its usage; the key's
-- total spent gives back what the escrow returned: all of a failed call's
-- hold, the unused part of a completed metered call's (crtx.Closing.Write
-- does the same statement by statement).
CREATE OR REPLACE FUNCTION crtx_close_execution(exec jsonb, content text, post jsonb, hook jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    e    executions := jsonb_populate_record(NULL::executions, exec);
    back bigint;
    tseq bigint;
BEGIN
    UPDATE executions SET status = e.status, error_code = e.error_code, error_message = e.error_message,
        result_cid = e.result_cid, result_hash = e.result_hash, signature = e.signature, tokens_used = e.tokens_used,
        execution_time_ms = e.execution_time_ms, completed_at = e.completed_at, record_tx = e.record_tx,
        cost = CASE WHEN e.status = 'completed' THEN e.cost ELSE cost END,
        creator_amount = CASE WHEN e.status = 'completed' THEN e.creator_amount ELSE creator_amount END,
        platform_amount = CASE WHEN e.status = 'completed' THEN e.platform_amount ELSE platform_amount END,
        usage_signature = coalesce(e.usage_signature, '')
        WHERE id = e.id AND status IN ('pending', 'running');
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    IF content IS NOT NULL THEN
        INSERT INTO results (cid, content, created_at) VALUES (e.result_cid, content, e.completed_at)
            ON CONFLICT (cid) DO NOTHING;
    END IF;
    tseq := crtx_post(post);
    back := CASE WHEN e.status <> 'completed' THEN e.cost ELSE greatest(coalesce(e.held, e.cost) - e.cost, 0) END;
    IF back > 0 THEN
        UPDATE api_keys SET total_spent = CASE WHEN total_spent > back THEN total_spent - back ELSE 0 END
            WHERE id = e.key_id;
    END IF;
    IF hook IS NOT NULL THEN
        INSERT INTO webhook_deliveries (execution_id, url, next_at, created_at)
            VALUES (hook->>'execution_id', hook->>'url', (hook->>'next_at')::bigint, (hook->>'created_at')::bigint)
            ON CONFLICT (execution_id) DO NOTHING;
    END IF;
    RETURN tseq;
END $$;
