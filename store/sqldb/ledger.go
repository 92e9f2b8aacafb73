package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crtx-market/crtx"
)

// The ledger: accounts, transactions and blocks.

func (t ledgerRows) EnsureAccounts(ctx context.Context, accounts ...crtx.Account) error {
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

func (t ledgerRows) Account(ctx context.Context, env crtx.Environment, address string) (crtx.Account, error) {
	a, err := scanAccount(t.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts
		WHERE environment = ? AND address = ?`, env, address))
	return a, notFound(err, "account")
}

func (t ledgerRows) Accounts(ctx context.Context, env crtx.Environment) ([]crtx.Account, error) {
	rows, err := t.query(ctx, `SELECT `+accountColumns+` FROM accounts WHERE environment = ? ORDER BY address`, env)
	return collect(rows, err, scanAccount)
}

func (t ledgerRows) Escrowed(ctx context.Context, env crtx.Environment, wallet string) (crtx.USDC, error) {
	// The wallet's executions in flight are few (executions_in_flight),
	// where its escrow accounts are one for every execution it ever made.
	var sum crtx.USDC
	err := t.queryRow(ctx, `SELECT CAST(coalesce(sum(cost), 0) AS BIGINT) FROM executions`+t.d.IndexedBy("executions_in_flight")+`
		WHERE status IN ('pending', 'running') AND wallet = ? AND environment = ?`, wallet, env).Scan(&sum)
	return sum, err
}

func (t executionRows) InFlight(ctx context.Context, wallet string, env crtx.Environment, keyID string) (all, key int, err error) {
	err = t.queryRow(ctx, `SELECT count(*), coalesce(sum(CASE WHEN key_id = ? THEN 1 ELSE 0 END), 0) FROM executions`+
		t.d.IndexedBy("executions_in_flight")+` WHERE status IN ('pending', 'running') AND wallet = ? AND environment = ?`,
		keyID, wallet, env).Scan(&all, &key)
	return all, key, err
}

// storedPosting is a posting as a transaction's row keeps it (JSON).
type storedPosting struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
}

func (t ledgerRows) InsertTransaction(ctx context.Context, lt *crtx.LedgerTx, accounts ...crtx.Account) error {
	p, err := PlanTransaction(lt, accounts...)
	if err != nil {
		return err
	}
	err = t.queryRow(ctx, `INSERT INTO ledger_txs (id, environment, kind, data, postings, refs, created_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
		lt.ID, lt.Environment, lt.Kind, p.Data, p.Postings, p.Refs, us(lt.CreatedAt), lt.Version).Scan(&lt.Seq)
	if err != nil {
		if t.d.IsUnique(err) {
			return fmt.Errorf("%w: %v", crtx.ErrConflict, err)
		}
		return err
	}
	// One statement each for the accounts, the balances and the index,
	// whatever their number: the writer's time goes by statements.
	if err := t.EnsureAccounts(ctx, p.Create...); err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	if p.Unposted {
		if _, err := t.exec(ctx, `INSERT INTO unposted (environment, tx_seq) VALUES (?, ?)`, lt.Environment, lt.Seq); err != nil {
			return fmt.Errorf("unposted: %w", err)
		}
	}
	if err := t.lockPlan(ctx, lt.Environment, p); err != nil {
		return err
	}
	if err := t.receive(ctx, lt, p.Receive); err != nil {
		return err
	}
	payers := make([]string, len(p.Pay))
	amounts := make([]crtx.USDC, len(p.Pay))
	for i, a := range p.Pay {
		payers[i], amounts[i] = a.Address, a.Balance
	}
	if err := t.addToBalances(ctx, lt, payers, amounts); err != nil {
		return err
	}
	return t.index(ctx, lt.Environment, lt.Seq, p.Index)
}

// lockPlan locks, where the database locks rows (PostgreSQL), every
// existing account a transaction receives in or pays from, in the one order
// every writer of accounts uses (LockAccounts: wallets first, as the
// execution batches take them, then the others, each in bytes of the
// address). Updated receivers first and payers next, two transactions
// that share two accounts, a receiver in one and a payer in the other (a
// withdrawal asked and another refunded, of one wallet), would each hold
// one and wait for the other.
func (t *tx) lockPlan(ctx context.Context, env crtx.Environment, p Plan) error {
	lock := t.d.LockAccounts()
	if lock == "" || len(p.Receive)+len(p.Pay) < 2 {
		return nil
	}
	args := []any{env}
	for _, a := range slices.Concat(p.Receive, p.Pay) {
		args = append(args, a.Address)
	}
	rows, err := t.query(ctx, `SELECT address FROM accounts WHERE environment = ? AND address IN `+placeholders(1, len(args)-1)+lock, args...)
	_, err = collect(rows, err, func(r interface{ Scan(...any) error }) (a string, err error) { return a, r.Scan(&a) })
	return err
}

// index lists the transaction seq among the transactions of each of
// addresses (AccountTransactions).
func (t *tx) index(ctx context.Context, env crtx.Environment, seq int64, addresses []string) error {
	if len(addresses) == 0 {
		return nil
	}
	args := make([]any, 0, 3*len(addresses))
	for _, addr := range addresses {
		args = append(args, env, addr, seq)
	}
	if _, err := t.exec(ctx, `INSERT INTO account_txs (environment, address, tx_seq) VALUES `+placeholders(len(addresses), 3), args...); err != nil {
		return fmt.Errorf("account index: %w", err)
	}
	return nil
}

// receive adds each account's Balance to its balance, creating it at that
// balance if it does not exist; the database refuses the statement if a
// balance it keeps non-negative would fall below zero.
func (t *tx) receive(ctx context.Context, lt *crtx.LedgerTx, accounts []crtx.Account) error {
	if len(accounts) == 0 {
		return nil
	}
	var upserts []any
	for _, a := range accounts {
		upserts = append(upserts, a.Environment, a.Address, a.Kind, a.Ref, a.Owner, a.MayGoNegative(), us(a.CreatedAt), a.Balance)
	}
	_, err := t.exec(ctx, `INSERT INTO accounts (environment, address, kind, ref, owner, may_go_negative, created_at, balance)
		VALUES `+placeholders(len(accounts), 8)+` ON CONFLICT (environment, address) DO UPDATE SET balance = accounts.balance + excluded.balance`, upserts...)
	if t.d.IsCheck(err) {
		return fmt.Errorf("transaction %s: %w", lt.ID, crtx.ErrInsufficientFunds)
	}
	return err
}

// addToBalances adds amounts to the balances of addresses, which must all
// exist, in one statement.
func (t *tx) addToBalances(ctx context.Context, lt *crtx.LedgerTx, addresses []string, amounts []crtx.USDC) error {
	n := len(addresses)
	if n == 0 {
		return nil
	}
	var cases strings.Builder
	args := make([]any, 0, 3*n+1)
	for i, a := range addresses {
		cases.WriteString(` WHEN ? THEN CAST(? AS BIGINT)`)
		args = append(args, a, amounts[i])
	}
	args = append(args, lt.Environment)
	for _, a := range addresses {
		args = append(args, a)
	}
	if lock := t.d.LockAccounts(); lock != "" && n > 1 {
		// An UPDATE locks its rows in the order its plan visits them.
		rows, err := t.query(ctx, `SELECT address FROM accounts WHERE environment = ? AND address IN `+placeholders(1, n)+lock, args[2*n:]...)
		if _, err := collect(rows, err, func(r interface{ Scan(...any) error }) (a string, err error) { return a, r.Scan(&a) }); err != nil {
			return err
		}
	}
	r, err := t.exec(ctx, `UPDATE accounts SET balance = balance + CASE address`+cases.String()+` END
		WHERE environment = ? AND address IN `+placeholders(1, n), args...)
	if t.d.IsCheck(err) {
		return fmt.Errorf("transaction %s: %w", lt.ID, crtx.ErrInsufficientFunds)
	}
	if err != nil {
		return err
	}
	if got, _ := r.RowsAffected(); got != int64(n) {
		return fmt.Errorf("transaction %s: %d of %d paying accounts exist: %w", lt.ID, got, n, crtx.ErrInsufficientFunds)
	}
	return nil
}

func (t ledgerRows) Unposted(ctx context.Context, env crtx.Environment, limit int) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `FROM unposted u JOIN ledger_txs t ON t.seq = u.tx_seq
		WHERE u.environment = ? ORDER BY u.tx_seq LIMIT ?`, env, limit)
}

func (t ledgerRows) PostCredits(ctx context.Context, env crtx.Environment, seqs []int64, credits []crtx.Credit) error {
	if len(seqs) == 0 {
		return nil
	}
	if err := t.eachSeq(ctx, "post", `DELETE FROM unposted WHERE environment = ? AND tx_seq IN `, []any{env}, seqs); err != nil {
		return err
	}
	// Each account once, by its sum; each (account, transaction) once in
	// the index.
	sums := map[string]crtx.USDC{}
	var addresses []string
	var entries []any
	for _, c := range credits {
		if c.Amount <= 0 {
			return fmt.Errorf("post: credit of %d to %s", c.Amount, c.Address)
		}
		if _, ok := sums[c.Address]; !ok {
			addresses = append(addresses, c.Address)
		}
		sums[c.Address] += c.Amount
		entries = append(entries, env, c.Address, c.Seq)
	}
	if len(addresses) == 0 {
		return nil
	}
	slices.Sort(addresses)
	amounts := make([]crtx.USDC, len(addresses))
	for i, a := range addresses {
		amounts[i] = sums[a]
	}
	if err := t.addToBalances(ctx, &crtx.LedgerTx{ID: "roll-up", Environment: env}, addresses, amounts); err != nil {
		return err
	}
	// SQLite binds at most 32766 values a statement: in chunks.
	const rows = 5000
	for i := 0; i < len(entries); i += 3 * rows {
		chunk := entries[i:min(i+3*rows, len(entries))]
		if _, err := t.exec(ctx, `INSERT INTO account_txs (environment, address, tx_seq) VALUES `+placeholders(len(chunk)/3, 3), chunk...); err != nil {
			return fmt.Errorf("account index: %w", err)
		}
	}
	return nil
}

const txColumns = `t.seq, t.id, t.environment, t.kind, t.data, t.postings, t.refs, t.created_at, coalesce(t.block_height, 0), t.version`

// queryTxs reads the transactions a query over ledger_txs (as t) selects.
func (t *tx) queryTxs(ctx context.Context, from string, args ...any) ([]crtx.LedgerTx, error) {
	rows, err := t.query(ctx, `SELECT `+txColumns+` `+from, args...)
	return collect(rows, err, scanTx)
}

func scanTx(row interface{ Scan(...any) error }) (crtx.LedgerTx, error) {
	var lt crtx.LedgerTx
	var data, postings, refs string
	var created int64
	if err := row.Scan(&lt.Seq, &lt.ID, &lt.Environment, &lt.Kind, &data, &postings, &refs, &created, &lt.BlockHeight, &lt.Version); err != nil {
		return lt, err
	}
	lt.CreatedAt = fromUS(created)
	var stored []storedPosting
	if err := errors.Join(json.Unmarshal([]byte(data), &lt.Data), json.Unmarshal([]byte(postings), &stored),
		json.Unmarshal([]byte(refs), &lt.Accounts)); err != nil {
		return lt, fmt.Errorf("transaction %s: %w", lt.ID, err)
	}
	lt.Postings = make([]crtx.Posting, len(stored))
	for i, p := range stored {
		lt.Postings[i] = crtx.Posting{From: p.From, To: p.To, Amount: crtx.USDC(p.Amount)}
	}
	if lt.Accounts == nil {
		lt.Accounts = []string{}
	}
	return lt, nil
}

func (t ledgerRows) Transaction(ctx context.Context, env crtx.Environment, id string) (crtx.LedgerTx, error) {
	txs, err := t.queryTxs(ctx, `FROM ledger_txs t WHERE t.environment = ? AND t.id = ?`, env, id)
	if err != nil {
		return crtx.LedgerTx{}, err
	}
	if len(txs) == 0 {
		return crtx.LedgerTx{}, fmt.Errorf("transaction %s: %w", id, crtx.ErrNotFound)
	}
	return txs[0], nil
}

func (t ledgerRows) AccountTransactions(ctx context.Context, env crtx.Environment, address string, limit int) ([]crtx.LedgerTx, error) {
	var kind crtx.AccountKind
	var ref string
	err := t.queryRow(ctx, `SELECT kind, ref FROM accounts WHERE environment = ? AND address = ?`, env, address).Scan(&kind, &ref)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if kind == crtx.AccountEscrow {
		// Every transaction that touches an escrow names its execution
		// (InsertTransaction sees to it); the few that name the execution
		// without touching the escrow are left out here.
		txs, err := t.queryTxs(ctx, `FROM ledger_txs t WHERE t.environment = ? AND `+t.d.JSONField("t.data", "execution_id")+` = ?
			ORDER BY t.seq DESC`, env, ref)
		if err != nil {
			return nil, err
		}
		out := txs[:0]
		for _, lt := range txs {
			if len(out) < limit && touches(lt, address) {
				out = append(out, lt)
			}
		}
		return out, nil
	}
	return t.queryTxs(ctx, `FROM account_txs a JOIN ledger_txs t ON t.seq = a.tx_seq
		WHERE a.environment = ? AND a.address = ? ORDER BY a.tx_seq DESC LIMIT ?`, env, address, limit)
}

// touches reports whether lt names address in a posting or a reference.
func touches(lt crtx.LedgerTx, address string) bool {
	for _, p := range lt.Postings {
		if p.From == address || p.To == address {
			return true
		}
	}
	return slices.Contains(lt.Accounts, address)
}

func (t ledgerRows) Airdrops(ctx context.Context, env crtx.Environment, wallet string, since time.Time) ([]crtx.LedgerTx, error) {
	// The kind is written out so that the partial index of airdrops serves.
	return t.queryTxs(ctx, `FROM ledger_txs t WHERE t.environment = ? AND t.kind = '`+string(crtx.TxAirdrop)+`' AND t.created_at >= ? AND `+
		t.d.JSONField("t.data", "wallet")+` = ? ORDER BY t.seq`, env, us(since), wallet)
}

func (t ledgerRows) Transactions(ctx context.Context, env crtx.Environment, afterSeq int64, limit int) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `FROM ledger_txs t WHERE t.environment = ? AND t.seq > ? ORDER BY t.seq LIMIT ?`, env, afterSeq, limit)
}

func (t ledgerRows) UnsealedTransactions(ctx context.Context, env crtx.Environment, limit int) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `FROM ledger_txs t WHERE t.environment = ? AND t.block_height IS NULL ORDER BY t.seq LIMIT ?`, env, limit)
}

const blockColumns = `environment, height, prev_hash, merkle_root, tx_count, sealed_at, hash, signature, version,
	anchor_signature, anchor_slot, anchor_cluster`

func scanBlock(row interface{ Scan(...any) error }) (crtx.Block, error) {
	var b crtx.Block
	var sealed, slot int64
	var a crtx.Anchor
	err := row.Scan(&b.Environment, &b.Height, &b.PrevHash, &b.MerkleRoot, &b.TxCount, &sealed, &b.Hash, &b.Signature, &b.Version,
		&a.Signature, &slot, &a.Cluster)
	b.SealedAt = fromUS(sealed)
	if a.Signature != "" {
		a.Slot = uint64(slot)
		b.Anchor = &a
	}
	return b, err
}

// anchorArgs are a block's anchor columns: empty until it is anchored.
func anchorArgs(a *crtx.Anchor) []any {
	if a == nil {
		return []any{"", int64(0), ""}
	}
	return []any{a.Signature, int64(a.Slot), a.Cluster}
}

func (t ledgerRows) LastBlock(ctx context.Context, env crtx.Environment) (crtx.Block, error) {
	b, err := scanBlock(t.queryRow(ctx, `SELECT `+blockColumns+` FROM blocks
		WHERE environment = ? ORDER BY height DESC LIMIT 1`, env))
	return b, notFound(err, "block")
}

func (t ledgerRows) Block(ctx context.Context, env crtx.Environment, height int64) (crtx.Block, error) {
	b, err := scanBlock(t.queryRow(ctx, `SELECT `+blockColumns+` FROM blocks
		WHERE environment = ? AND height = ?`, env, height))
	return b, notFound(err, "block")
}

func (t ledgerRows) LastAnchoredBlock(ctx context.Context, env crtx.Environment) (crtx.Block, error) {
	// The condition is written out so that the partial index blocks_anchored serves.
	b, err := scanBlock(t.queryRow(ctx, `SELECT `+blockColumns+` FROM blocks
		WHERE environment = ? AND anchor_signature <> '' ORDER BY height DESC LIMIT 1`, env))
	return b, notFound(err, "anchored block")
}

// SetBlockAnchor anchors a block once: the database refuses to change an
// anchor (blocks are append-only but for it). Recording the same anchor
// again is no change.
func (t ledgerRows) SetBlockAnchor(ctx context.Context, env crtx.Environment, height int64, a crtx.Anchor) error {
	if a.Signature == "" {
		return fmt.Errorf("block %d of %s: an anchor without a signature", height, env)
	}
	r, err := t.exec(ctx, `UPDATE blocks SET anchor_signature = ?, anchor_slot = ?, anchor_cluster = ?
		WHERE environment = ? AND height = ? AND anchor_signature = ''`, append(anchorArgs(&a), env, height)...)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 1 {
		return nil
	}
	b, err := t.Block(ctx, env, height)
	if err != nil {
		return err
	}
	if b.Anchor == nil || *b.Anchor != a {
		return fmt.Errorf("block %d of %s: anchored already by %s: %w", height, env, b.Anchor.Signature, crtx.ErrConflict)
	}
	return nil
}

func (t ledgerRows) InsertBlock(ctx context.Context, b crtx.Block, seqs []int64) error {
	if _, err := t.exec(ctx, `INSERT INTO blocks (`+blockColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		append([]any{b.Environment, b.Height, b.PrevHash, b.MerkleRoot, b.TxCount, us(b.SealedAt), b.Hash, b.Signature, b.Version},
			anchorArgs(b.Anchor)...)...); err != nil {
		return err
	}
	if len(seqs) == 0 {
		return nil
	}
	// Every transaction named, and no other, is sealed (seqs are unique).
	return t.eachSeq(ctx, "seal", `UPDATE ledger_txs SET block_height = ? WHERE environment = ? AND block_height IS NULL AND seq IN `,
		[]any{b.Height, b.Environment}, seqs)
}

// eachSeq runs q, which ends in "… IN ", with args and then the
// transactions seqs, and fails with ErrConflict unless it changed one row
// for each: how the roll-up and the sealer claim their transactions.
func (t *tx) eachSeq(ctx context.Context, what, q string, args []any, seqs []int64) error {
	list := make([]any, len(seqs))
	for i, seq := range seqs {
		list[i] = seq
	}
	in, list := inList(list)
	r, err := t.exec(ctx, q+in, append(args, list...)...)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n != int64(len(seqs)) {
		return fmt.Errorf("%s: %d of %d transactions were still to take: %w", what, n, len(seqs), crtx.ErrConflict)
	}
	return nil
}

func (t ledgerRows) BlockTransactions(ctx context.Context, env crtx.Environment, height int64) ([]crtx.LedgerTx, error) {
	return t.queryTxs(ctx, `FROM ledger_txs t WHERE t.environment = ? AND t.block_height = ? ORDER BY t.seq`, env, height)
}
