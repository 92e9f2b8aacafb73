-- What an independent verifier needs on the ledger (docs/ledger.md,
-- docs/verify.md).
--
-- Each transaction and block names the encoding its hash is computed with:
-- 1 for those written before the RFC 8785 canonical form, which keep the
-- hashes they were sealed with; new rows name their version. Adding a
-- column with a default rewrites no row, so no append-only trigger fires;
-- sealing may not change the version, which the hash depends on.
ALTER TABLE ledger_txs ADD COLUMN version INT NOT NULL DEFAULT 1;
ALTER TABLE blocks ADD COLUMN version INT NOT NULL DEFAULT 1;
CREATE OR REPLACE FUNCTION crtx_seal_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.block_height IS NOT NULL OR NEW.block_height IS NULL
       OR NEW.id IS DISTINCT FROM OLD.id OR NEW.environment IS DISTINCT FROM OLD.environment
       OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.data IS DISTINCT FROM OLD.data
       OR NEW.created_at IS DISTINCT FROM OLD.created_at
       OR NEW.postings IS DISTINCT FROM OLD.postings OR NEW.refs IS DISTINCT FROM OLD.refs
       OR NEW.version IS DISTINCT FROM OLD.version THEN
        RAISE EXCEPTION 'a ledger transaction changes only when it is sealed';
    END IF;
    RETURN NEW;
END $$;

-- key_tx: the listing transaction that registered the agent's signing key;
-- an execution keeps it (listing_tx) with the key it is checked against,
-- and the id of the transaction that closed it (record_tx).
ALTER TABLE agents ADD COLUMN key_tx TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN listing_tx TEXT NOT NULL DEFAULT '', ADD COLUMN record_tx TEXT NOT NULL DEFAULT '';

UPDATE agents SET key_tx = coalesce((SELECT t.id FROM ledger_txs t
    WHERE t.environment = 'mainnet' AND t.kind IN ('AgentListed', 'ListingUpdated')
      AND (t.data::jsonb ->> 'agent_id') = agents.id
      AND (t.data::jsonb ->> 'signing_public_key') = agents.signing_public_key
    ORDER BY t.seq LIMIT 1), '');
UPDATE executions SET record_tx = coalesce((SELECT t.id FROM ledger_txs t
    WHERE t.environment = executions.environment AND (t.data::jsonb ->> 'execution_id') = executions.id
      AND t.kind IN ('ExecutionRecord', 'EscrowRefunded') LIMIT 1), '')
    WHERE status IN ('completed', 'failed', 'disputed');

-- crtx_post and crtx_close_execution (0009) again, writing the version and
-- the closing transaction's id. A crtxd from before sends no version: what
-- it writes it hashes with version 1.
CREATE OR REPLACE FUNCTION crtx_post(p jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    env   text := p->>'environment';
    tseq  bigint;
    payer accounts;
BEGIN
    INSERT INTO ledger_txs (id, environment, kind, data, postings, refs, created_at, version)
        VALUES (p->>'id', env, p->>'kind', p->>'data', p->>'postings', p->>'refs', (p->>'created_at')::bigint,
            coalesce((p->>'version')::int, 1))
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

CREATE OR REPLACE FUNCTION crtx_close_execution(exec jsonb, content text, post jsonb, hook jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    e    executions := jsonb_populate_record(NULL::executions, exec);
    tseq bigint;
BEGIN
    UPDATE executions SET status = e.status, error_code = e.error_code, error_message = e.error_message,
        result_cid = e.result_cid, result_hash = e.result_hash, signature = e.signature, tokens_used = e.tokens_used,
        execution_time_ms = e.execution_time_ms, completed_at = e.completed_at, record_tx = e.record_tx
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
