-- An execution's first and last transactions as functions, so that each is
-- one statement, one round trip, in autocommit at READ COMMITTED: the
-- statements are those of the SQL engine (store/sqldb), the plans of the
-- ledger transactions are worked out in Go (sqldb.PlanTransaction), and the
-- rules are held by the same guarded writes (the balance CHECK, the key's
-- conditional update, the agent's terms, the in-flight status).
--
-- Refusals raise: check_violation (23514) on accounts, or CX004 (a paying
-- account that does not exist), for insufficient funds; unique_violation
-- (23505) on idempotency_keys_pkey for a taken Idempotency-Key; CX001 (the
-- agent's terms changed), CX002 (the key is revoked or unknown), CX003 (the
-- key's spend limit).

-- crtx_post writes a planned ledger transaction and returns its seq.
CREATE FUNCTION crtx_post(p jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    env   text := p->>'environment';
    tseq  bigint;
    payer accounts;
BEGIN
    INSERT INTO ledger_txs (id, environment, kind, data, postings, refs, created_at)
        VALUES (p->>'id', env, p->>'kind', p->>'data', p->>'postings', p->>'refs', (p->>'created_at')::bigint)
        RETURNING seq INTO tseq;
    INSERT INTO accounts (environment, address, kind, ref, owner, may_go_negative, created_at)
        SELECT environment, address, kind, ref, owner, may_go_negative, created_at
        FROM jsonb_populate_recordset(NULL::accounts, p->'create')
        ON CONFLICT (environment, address) DO NOTHING;
    IF (p->>'unposted')::boolean THEN
        INSERT INTO unposted (environment, tx_seq) VALUES (env, tseq);
    END IF;
    INSERT INTO accounts (environment, address, kind, ref, owner, may_go_negative, created_at, balance)
        SELECT environment, address, kind, ref, owner, may_go_negative, created_at, balance
        FROM jsonb_populate_recordset(NULL::accounts, p->'receive') ORDER BY address
        ON CONFLICT (environment, address) DO UPDATE SET balance = accounts.balance + excluded.balance;
    -- One update by key for each payer: a join would let the planner,
    -- who cannot see how few payers there are, scan the environment's
    -- accounts.
    FOR payer IN SELECT * FROM jsonb_populate_recordset(NULL::accounts, p->'pay') LOOP
        UPDATE accounts SET balance = balance + payer.balance WHERE environment = env AND address = payer.address;
        IF NOT FOUND THEN
            -- An account that pays and does not exist holds nothing.
            RAISE EXCEPTION 'transaction %: the paying account % does not exist', p->>'id', payer.address
                USING ERRCODE = 'CX004';
        END IF;
    END LOOP;
    INSERT INTO account_txs (environment, address, tx_seq)
        SELECT env, address, tseq FROM jsonb_array_elements_text(p->'index') AS address;
    RETURN tseq;
END $$;

-- crtx_open_execution: the Idempotency-Key claim (idem may be null), the
-- execution at its agent's current terms, its EscrowOpened (post), the
-- key's usage. Returns the EscrowOpened's seq.
CREATE FUNCTION crtx_open_execution(exec jsonb, idem jsonb, post jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    e    executions := jsonb_populate_record(NULL::executions, exec);
    a    record;
    tseq bigint;
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
    RETURN tseq;
END $$;

-- crtx_close_execution: the outcome, if the execution is still in flight
-- (else 0, and nothing is written), the result (content may be null), the
-- closing ledger transaction (post) and the webhook delivery (hook may be
-- null). Returns the ledger transaction's seq.
CREATE FUNCTION crtx_close_execution(exec jsonb, content text, post jsonb, hook jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    e    executions := jsonb_populate_record(NULL::executions, exec);
    tseq bigint;
BEGIN
    UPDATE executions SET status = e.status, error_code = e.error_code, error_message = e.error_message,
        result_cid = e.result_cid, result_hash = e.result_hash, signature = e.signature, tokens_used = e.tokens_used,
        execution_time_ms = e.execution_time_ms, completed_at = e.completed_at
        WHERE id = e.id AND status IN ('pending', 'running');
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    IF content IS NOT NULL THEN
        INSERT INTO results (cid, content, created_at) VALUES (e.result_cid, content, e.completed_at)
            ON CONFLICT (cid) DO NOTHING;
    END IF;
    tseq := crtx_post(post);
    IF hook IS NOT NULL THEN
        INSERT INTO webhook_deliveries (execution_id, url, next_at, created_at)
            VALUES (hook->>'execution_id', hook->>'url', (hook->>'next_at')::bigint, (hook->>'created_at')::bigint)
            ON CONFLICT (execution_id) DO NOTHING;
    END IF;
    RETURN tseq;
END $$;
