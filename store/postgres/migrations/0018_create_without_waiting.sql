-- crtx_post (0011) again, creating only the accounts that do not exist.
-- An INSERT … ON CONFLICT DO NOTHING of a row that exists waits for any
-- transaction holding it: every completed closing names its creator's and
-- the treasury's accounts (credited later, by the roll-up), so each batch
-- of closings waited for the roll-up, which updates those very rows, to
-- commit. A plain read of what exists waits for nothing; the ON CONFLICT
-- stays for two transactions creating one account at once. Receivers
-- are taken in bytes of their address, the order of every other writer of
-- accounts (sqldb's LockAccounts), whatever the database's collation.

CREATE OR REPLACE FUNCTION crtx_post(p jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    env   text := p->>'environment';
    tseq  bigint;
    payer accounts;
    made  accounts;
BEGIN
    INSERT INTO ledger_txs (id, environment, kind, data, postings, refs, created_at, version)
        VALUES (p->>'id', env, p->>'kind', p->>'data', p->>'postings', p->>'refs', (p->>'created_at')::bigint,
            coalesce((p->>'version')::int, 1))
        RETURNING seq INTO tseq;
    -- One lookup by key for each: as a join, the planner, who cannot see
    -- how few there are, scans the environment's accounts.
    FOR made IN SELECT * FROM jsonb_populate_recordset(NULL::accounts, p->'create') LOOP
        PERFORM 1 FROM accounts WHERE environment = made.environment AND address = made.address;
        IF NOT FOUND THEN
            INSERT INTO accounts (environment, address, kind, ref, owner, may_go_negative, created_at)
                VALUES (made.environment, made.address, made.kind, made.ref, made.owner, made.may_go_negative, made.created_at)
                ON CONFLICT (environment, address) DO NOTHING;
        END IF;
    END LOOP;
    IF (p->>'unposted')::boolean THEN
        INSERT INTO unposted (environment, tx_seq) VALUES (env, tseq);
    END IF;
    INSERT INTO accounts (environment, address, kind, ref, owner, may_go_negative, created_at, balance)
        SELECT environment, address, kind, ref, owner, may_go_negative, created_at, balance
        FROM jsonb_populate_recordset(NULL::accounts, p->'receive') ORDER BY address COLLATE "C"
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
