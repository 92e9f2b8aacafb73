// Package sqldb implements crtx.Store over database/sql for every engine:
// the SQL is shared, and a Dialect holds what differs (placeholders,
// full-text search, row locks, error codes). store/sqlite and
// store/postgres open their databases and hand them to it.
package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

type tx struct {
	q Querier
	d Dialect
	// stmts, when set, keeps prepared statements of the connection q runs
	// on (the group writer's); without it the driver prepares each time.
	stmts *stmtCache
	// detached statements ignore the caller's cancellation: in a group
	// commit an interrupted statement would roll back the other callers'
	// work with it.
	detached bool
}

// Querier runs statements: a *sql.Tx, or a *sql.Conn inside a transaction.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// on returns what runs q: a prepared statement when the transaction keeps
// them, else the transaction itself.
func (t *tx) on(ctx context.Context, q string) (context.Context, Querier, string) {
	if t.detached {
		ctx = context.WithoutCancel(ctx)
	}
	q = t.d.Rebind(q)
	if s := t.stmts.get(ctx, q); s != nil {
		return ctx, stmtQuerier{s}, ""
	}
	return ctx, t.q, q
}

func us(t time.Time) int64 { return t.UnixMicro() }

func fromUS(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullUS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromUS(v.Int64)
	return &t
}

func nullUS(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: us(*t), Valid: true}
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, crtx.ErrNotFound)
	}
	return err
}

func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx, on, q := t.on(ctx, q)
	r, err := on.ExecContext(ctx, q, args...)
	if err != nil && t.d.IsUnique(err) {
		return r, fmt.Errorf("%w: %v", crtx.ErrConflict, err)
	}
	return r, err
}

func (t *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx, on, q := t.on(ctx, q)
	return on.QueryContext(ctx, q, args...)
}

func (t *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	ctx, on, q := t.on(ctx, q)
	return on.QueryRowContext(ctx, q, args...)
}

// inList returns "(?, …)" for args, padded to a power of two by repeating
// the last one, which an IN list ignores: a few statement shapes, each
// prepared once, serve every length.
func inList(args []any) (string, []any) {
	if len(args) == 0 {
		return `(NULL)`, args
	}
	n := 1
	for n < len(args) {
		n *= 2
	}
	for len(args) < n {
		args = append(args, args[len(args)-1])
	}
	return placeholders(1, n), args
}

// querier lets a Dialect run statements the way the transaction does.
type querier struct{ t *tx }

func (q querier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.t.exec(ctx, query, args...)
}

func (q querier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.t.query(ctx, query, args...)
}

func (q querier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return q.t.queryRow(ctx, query, args...)
}

func (t *tx) TryLock(ctx context.Context, name string) (bool, error) {
	q := t.d.TryLock()
	if q == "" {
		return true, nil
	}
	var ok bool
	err := t.queryRow(ctx, q, name).Scan(&ok)
	return ok, err
}

func (t *tx) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := t.queryRow(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	return v, notFound(err, "meta "+key)
}

func (t *tx) SetMeta(ctx context.Context, key, value string) error {
	_, err := t.exec(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func (t *tx) InsertNonce(ctx context.Context, n crtx.Nonce) error {
	// Forget long-expired challenges as new ones arrive, so the table stays small.
	if _, err := t.exec(ctx, `DELETE FROM auth_nonces WHERE expires_at < ?`, us(n.ExpiresAt.Add(-24*time.Hour))); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO auth_nonces (nonce, wallet, expires_at) VALUES (?, ?, ?)`,
		n.Nonce, n.Wallet, us(n.ExpiresAt))
	return err
}

func (t *tx) UseNonce(ctx context.Context, nonce, wallet string, now time.Time) (bool, error) {
	r, err := t.exec(ctx, `UPDATE auth_nonces SET used_at = ?
		WHERE nonce = ? AND wallet = ? AND used_at IS NULL AND expires_at > ?`, us(now), nonce, wallet, us(now))
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

func (t *tx) InsertSession(ctx context.Context, s crtx.Session) error {
	_, err := t.exec(ctx, `INSERT INTO sessions (hash, wallet, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		s.Hash, s.Wallet, us(s.CreatedAt), us(s.ExpiresAt))
	return err
}

func (t *tx) SessionByHash(ctx context.Context, hash string) (crtx.Session, error) {
	s := crtx.Session{Hash: hash}
	var created, expires int64
	err := t.queryRow(ctx, `SELECT wallet, created_at, expires_at FROM sessions WHERE hash = ?`, hash).
		Scan(&s.Wallet, &created, &expires)
	s.CreatedAt, s.ExpiresAt = fromUS(created), fromUS(expires)
	return s, notFound(err, "session")
}

func (t *tx) DeleteSession(ctx context.Context, hash string) error {
	_, err := t.exec(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
	return err
}

const keyColumns = `id, hash, wallet, name, environment, prefix, created_at, last_used_at,
	execution_count, total_spent, spend_limit, revoked_at`

func scanKey(row interface{ Scan(...any) error }) (crtx.APIKey, error) {
	var k crtx.APIKey
	var created int64
	var lastUsed, revoked, limit sql.NullInt64
	err := row.Scan(&k.ID, &k.Hash, &k.Wallet, &k.Name, &k.Environment, &k.Prefix, &created, &lastUsed,
		&k.ExecutionCount, &k.TotalSpent, &limit, &revoked)
	k.CreatedAt = fromUS(created)
	k.LastUsedAt, k.RevokedAt = fromNullUS(lastUsed), fromNullUS(revoked)
	if limit.Valid {
		l := crtx.USDC(limit.Int64)
		k.SpendLimit = &l
	}
	return k, err
}

func (t *tx) InsertKey(ctx context.Context, k crtx.APIKey) error {
	var limit sql.NullInt64
	if k.SpendLimit != nil {
		limit = sql.NullInt64{Int64: int64(*k.SpendLimit), Valid: true}
	}
	_, err := t.exec(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.Wallet, k.Name, k.Environment, k.Prefix, us(k.CreatedAt), nullUS(k.LastUsedAt),
		k.ExecutionCount, k.TotalSpent, limit, nullUS(k.RevokedAt))
	return err
}

func (t *tx) KeyByHash(ctx context.Context, hash string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
	return k, notFound(err, "api key")
}

func (t *tx) KeyByID(ctx context.Context, id string) (crtx.APIKey, error) {
	k, err := scanKey(t.queryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	return k, notFound(err, "api key")
}

func (t *tx) KeysByWallet(ctx context.Context, wallet string) ([]crtx.APIKey, error) {
	rows, err := t.query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE wallet = ? ORDER BY created_at, id`, wallet)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := []crtx.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

func (t *tx) RevokeKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, us(at), id)
	return err
}

func (t *tx) TouchKey(ctx context.Context, id string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, us(at), id)
	return err
}

func (t *tx) EnsureAccounts(ctx context.Context, accounts ...crtx.Account) error {
	if len(accounts) == 0 {
		return nil
	}
	args := make([]any, 0, 7*len(accounts))
	for _, a := range accounts {
		args = append(args, a.Environment, a.Address, a.Kind, a.Ref, a.Owner, a.MayGoNegative(), us(a.CreatedAt))
	}
	_, err := t.exec(ctx, `INSERT INTO accounts (environment, address, kind, ref, owner, may_go_negative, created_at)
		VALUES `+placeholders(len(accounts), 7)+` ON CONFLICT (environment, address) DO NOTHING`, args...)
	return err
}

const accountColumns = `environment, address, kind, ref, owner, balance, created_at`

func scanAccount(row interface{ Scan(...any) error }) (crtx.Account, error) {
	var a crtx.Account
	var created int64
	err := row.Scan(&a.Environment, &a.Address, &a.Kind, &a.Ref, &a.Owner, &a.Balance, &created)
	a.CreatedAt = fromUS(created)
	return a, err
}

func (t *tx) Account(ctx context.Context, env crtx.Environment, address string) (crtx.Account, error) {
	a, err := scanAccount(t.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts
		WHERE environment = ? AND address = ?`, env, address))
	return a, notFound(err, "account")
}

func (t *tx) Accounts(ctx context.Context, env crtx.Environment) ([]crtx.Account, error) {
	rows, err := t.query(ctx, `SELECT `+accountColumns+` FROM accounts WHERE environment = ? ORDER BY address`, env)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []crtx.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (t *tx) OwnerBalance(ctx context.Context, env crtx.Environment, owner string, kind crtx.AccountKind) (crtx.USDC, error) {
	var sum crtx.USDC
	err := t.queryRow(ctx, `SELECT CAST(coalesce(sum(balance), 0) AS BIGINT) FROM accounts
		WHERE environment = ? AND owner = ? AND kind = ?`, env, owner, kind).Scan(&sum)
	return sum, err
}

func (t *tx) InsertTransaction(ctx context.Context, lt *crtx.LedgerTx) error {
	data, err := json.Marshal(lt.Data)
	if err != nil {
		return err
	}
	err = t.queryRow(ctx, `INSERT INTO ledger_txs (id, environment, kind, data, created_at) VALUES (?, ?, ?, ?, ?) RETURNING seq`,
		lt.ID, lt.Environment, lt.Kind, string(data), us(lt.CreatedAt)).Scan(&lt.Seq)
	if err != nil {
		if t.d.IsUnique(err) {
			return fmt.Errorf("%w: %v", crtx.ErrConflict, err)
		}
		return err
	}
	// One statement each for the references, the postings and the
	// balances, whatever their number: the writer's time goes by statements.
	if n := len(lt.Accounts); n > 0 {
		args := make([]any, 0, 4*n)
		for i, addr := range lt.Accounts {
			args = append(args, lt.Environment, addr, lt.Seq, i)
		}
		if _, err := t.exec(ctx, `INSERT INTO ledger_refs (environment, address, tx_seq, idx) VALUES `+placeholders(n, 4), args...); err != nil {
			return fmt.Errorf("account references: %w", err)
		}
	}
	if len(lt.Postings) == 0 {
		return nil
	}
	args := make([]any, 0, 6*len(lt.Postings))
	var addrs []string
	delta := map[string]crtx.USDC{}
	for i, p := range lt.Postings {
		args = append(args, lt.Seq, i, lt.Environment, p.From, p.To, p.Amount)
		for _, a := range []string{p.From, p.To} {
			if _, ok := delta[a]; !ok {
				addrs = append(addrs, a)
			}
		}
		delta[p.From] -= p.Amount
		delta[p.To] += p.Amount
	}
	if _, err := t.exec(ctx, `INSERT INTO postings (tx_seq, idx, environment, from_address, to_address, amount) VALUES `+
		placeholders(len(lt.Postings), 6), args...); err != nil {
		return fmt.Errorf("postings: %w", err)
	}
	// Each account moves by its net amount, all in one statement; the
	// database refuses the statement if any balance it keeps non-negative
	// would fall below zero.
	var cases strings.Builder
	args = args[:0]
	for _, a := range addrs {
		cases.WriteString(` WHEN ? THEN CAST(? AS BIGINT)`)
		args = append(args, a, delta[a])
	}
	args = append(args, lt.Environment)
	for _, a := range addrs {
		args = append(args, a)
	}
	r, err := t.exec(ctx, `UPDATE accounts SET balance = balance + CASE address`+cases.String()+` END
		WHERE environment = ? AND address IN `+placeholders(1, len(addrs)), args...)
	if t.d.IsCheck(err) {
		return fmt.Errorf("transaction %s: %w", lt.ID, crtx.ErrInsufficientFunds)
	}
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != int64(len(addrs)) {
		return fmt.Errorf("transaction %s: %d of %d accounts exist: %w", lt.ID, n, len(addrs), crtx.ErrNotFound)
	}
	return nil
}

// placeholders returns n rows of m placeholders each, "(?, ?), (?, ?)".
func placeholders(n, m int) string {
	row := `(?` + strings.Repeat(`, ?`, m-1) + `)`
	return row + strings.Repeat(`, `+row, n-1)
}

const txColumns = `seq, id, environment, kind, data, created_at, coalesce(block_height, 0)`

// queryTxs runs a query over ledger_txs and fills in each transaction's postings.
func (t *tx) queryTxs(ctx context.Context, q string, args ...any) ([]crtx.LedgerTx, error) {
	rows, err := t.query(ctx, `SELECT `+txColumns+` FROM ledger_txs `+q, args...)
	if err != nil {
		return nil, err
	}
	var out []crtx.LedgerTx
	for rows.Next() {
		var lt crtx.LedgerTx
		var data string
		var created int64
		if err := rows.Scan(&lt.Seq, &lt.ID, &lt.Environment, &lt.Kind, &data, &created, &lt.BlockHeight); err != nil {
			rows.Close()
			return nil, err
		}
		lt.CreatedAt = fromUS(created)
		if err := json.Unmarshal([]byte(data), &lt.Data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("transaction %s data: %w", lt.ID, err)
		}
		out = append(out, lt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	bySeq := make(map[int64]*crtx.LedgerTx, len(out))
	seqs := make([]any, len(out))
	for i := range out {
		out[i].Postings, out[i].Accounts = []crtx.Posting{}, []string{}
		bySeq[out[i].Seq] = &out[i]
		seqs[i] = out[i].Seq
	}
	in, seqs := inList(seqs)
	prow, err := t.query(ctx, `SELECT tx_seq, from_address, to_address, amount FROM postings
		WHERE tx_seq IN `+in+` ORDER BY tx_seq, idx`, seqs...)
	if err != nil {
		return nil, err
	}
	for prow.Next() {
		var seq int64
		var p crtx.Posting
		if err := prow.Scan(&seq, &p.From, &p.To, &p.Amount); err != nil {
			prow.Close()
			return nil, err
		}
		bySeq[seq].Postings = append(bySeq[seq].Postings, p)
	}
	prow.Close()
	if err := prow.Err(); err != nil {
		return nil, err
	}
	rrow, err := t.query(ctx, `SELECT tx_seq, address FROM ledger_refs WHERE tx_seq IN `+in+` ORDER BY tx_seq, idx`, seqs...)
	if err != nil {
		return nil, err
	}
	defer rrow.Close()
	for rrow.Next() {
		var seq int64
		var addr string
		if err := rrow.Scan(&seq, &addr); err != nil {
			return nil, err
		}
		bySeq[seq].Accounts = append(bySeq[seq].Accounts, addr)
	}
	return out, rrow.Err()
}

func (t *tx) Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error) {
	txs, err := t.queryTxs(ctx, `WHERE environment = ? AND id = ?`, env, id)
	if err != nil {
		return crtx.LedgerTx{}, err
	}
	if len(txs) == 0 {
		return crtx.LedgerTx{}, fmt.Errorf("transaction %s: %w", id, crtx.ErrNotFound)
	}
	return txs[0], nil
}

func (t *tx) AccountTransactions(ctx context.Context, env crtx.Environment, address string, limit int) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `WHERE seq IN (
		SELECT tx_seq FROM postings WHERE environment = ? AND from_address = ?
		UNION SELECT tx_seq FROM postings WHERE environment = ? AND to_address = ?
		UNION SELECT tx_seq FROM ledger_refs WHERE environment = ? AND address = ?)
		ORDER BY seq DESC LIMIT ?`, env, address, env, address, env, address, limit)
}

func (t *tx) TransactionsSince(ctx context.Context, env crtx.Environment, kind crtx.TxKind, key, value string, since time.Time) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `WHERE environment = ? AND kind = ? AND created_at >= ? AND `+t.d.JSONField("data", key)+` = ?
		ORDER BY seq`, env, kind, us(since), value)
}

func (t *tx) Transactions(ctx context.Context, env crtx.Environment, afterSeq int64, limit int) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `WHERE environment = ? AND seq > ? ORDER BY seq LIMIT ?`, env, afterSeq, limit)
}

func (t *tx) UnsealedTransactions(ctx context.Context, env crtx.Environment, limit int) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `WHERE environment = ? AND block_height IS NULL ORDER BY seq LIMIT ?`, env, limit)
}

const blockColumns = `environment, height, prev_hash, merkle_root, tx_count, sealed_at, hash, signature`

func scanBlock(row interface{ Scan(...any) error }) (crtx.Block, error) {
	var b crtx.Block
	var sealed int64
	err := row.Scan(&b.Environment, &b.Height, &b.PrevHash, &b.MerkleRoot, &b.TxCount, &sealed, &b.Hash, &b.Signature)
	b.SealedAt = fromUS(sealed)
	return b, err
}

func (t *tx) LastBlock(ctx context.Context, env crtx.Environment) (crtx.Block, error) {
	b, err := scanBlock(t.queryRow(ctx, `SELECT `+blockColumns+` FROM blocks
		WHERE environment = ? ORDER BY height DESC LIMIT 1`, env))
	return b, notFound(err, "block")
}

func (t *tx) Block(ctx context.Context, env crtx.Environment, height int64) (crtx.Block, error) {
	b, err := scanBlock(t.queryRow(ctx, `SELECT `+blockColumns+` FROM blocks
		WHERE environment = ? AND height = ?`, env, height))
	return b, notFound(err, "block")
}

func (t *tx) InsertBlock(ctx context.Context, b crtx.Block, txIDs []string) error {
	if _, err := t.exec(ctx, `INSERT INTO blocks (`+blockColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		b.Environment, b.Height, b.PrevHash, b.MerkleRoot, b.TxCount, us(b.SealedAt), b.Hash, b.Signature); err != nil {
		return err
	}
	if len(txIDs) == 0 {
		return nil
	}
	ids := make([]any, len(txIDs))
	for i, id := range txIDs {
		ids[i] = id
	}
	in, ids := inList(ids)
	r, err := t.exec(ctx, `UPDATE ledger_txs SET block_height = ? WHERE environment = ? AND block_height IS NULL AND id IN `+in,
		append([]any{b.Height, b.Environment}, ids...)...)
	if err != nil {
		return err
	}
	// Every transaction named, and no other, is sealed (the ids are unique).
	if n, _ := r.RowsAffected(); n != int64(len(txIDs)) {
		return fmt.Errorf("seal: %d of %d transactions were unsealed: %w", n, len(txIDs), crtx.ErrConflict)
	}
	return nil
}

func (t *tx) BlockTransactions(ctx context.Context, env crtx.Environment, height int64) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `WHERE environment = ? AND block_height = ? ORDER BY seq`, env, height)
}
