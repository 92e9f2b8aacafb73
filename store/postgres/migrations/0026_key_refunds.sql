-- A failed execution's refund is taken back off its key's total spent, in
-- the closing that refunds it (crtx.Closing.Write does the same statement
-- by statement): a key's spent and its spend limit count what its calls
-- cost in the end. The key's row comes after the wallet's account row the
-- batch locked for the refund, as in an opening.
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
    IF e.status <> 'completed' THEN
        UPDATE api_keys SET total_spent = CASE WHEN total_spent > e.cost THEN total_spent - e.cost ELSE 0 END
            WHERE id = e.key_id;
    END IF;
    IF hook IS NOT NULL THEN
        INSERT INTO webhook_deliveries (execution_id, url, next_at, created_at)
            VALUES (hook->>'execution_id', hook->>'url', (hook->>'next_at')::bigint, (hook->>'created_at')::bigint)
            ON CONFLICT (execution_id) DO NOTHING;
    END IF;
    RETURN tseq;
END $$;
